/**
 * Reading the `id` of a JSON-RPC message that is too large (or nested too deep) to be parsed,
 * so that the peer can be answered with an error carrying its id instead of `null` (and its
 * request fails at once instead of running into its timeout).
 */
import { LargeIntegerId } from "./large-id.js";
import type { JsonRpcId } from "./schema/jsonrpc.js";

/** How much of a message's start {@link sniffJsonRpcId} looks at. */
export const SNIFF_HEAD_BYTES = 512;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const SCALAR = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/;
const INTEGER = /^-?\d+(?=\s*[,}])/;

/**
 * Returns the top-level `id` member of the JSON object that `head` starts with, provided it is
 * a string or an integer and every member before it is a plain scalar (as in
 * `{"jsonrpc":"2.0","id":"…",…}`). Anything else, including a cut-off id, gives `undefined`:
 * the result is never a guess.
 */
export function sniffJsonRpcId(head: string): JsonRpcId | undefined {
  let i = 0;
  const skipSpace = () => {
    while (i < head.length && isSpace(head.charCodeAt(i))) i++;
  };
  /** Reads a JSON string starting at `i` (which must be at `"`); undefined when cut off or invalid. */
  const readString = (): string | undefined => {
    if (head.charCodeAt(i) !== 0x22) return undefined;
    const start = i;
    for (i++; i < head.length; i++) {
      const c = head.charCodeAt(i);
      if (c === 0x5c) i++;
      else if (c === 0x22) {
        i++;
        try {
          return JSON.parse(head.slice(start, i)) as string;
        } catch {
          return undefined;
        }
      }
    }
    return undefined;
  };
  skipSpace();
  if (head.charCodeAt(i) !== 0x7b) return undefined;
  i++;
  for (let member = 0; member < 16; member++) {
    skipSpace();
    const key = readString();
    if (key === undefined) return undefined;
    skipSpace();
    if (head.charCodeAt(i) !== 0x3a) return undefined;
    i++;
    skipSpace();
    if (key === "id") {
      if (head.charCodeAt(i) === 0x22) {
        const id = readString();
        if (id === undefined) return undefined;
        skipSpace();
        return head.charCodeAt(i) === 0x2c || head.charCodeAt(i) === 0x7d ? id : undefined;
      }
      const match = INTEGER.exec(head.slice(i, i + 32));
      if (match === null) return undefined;
      const id = Number(match[0]);
      // Past 2^53 the id is kept as its text, so that the error answer echoes it exactly.
      return Number.isSafeInteger(id) ? id : (new LargeIntegerId(match[0]) as unknown as JsonRpcId);
    }
    if (head.charCodeAt(i) === 0x22) {
      if (readString() === undefined) return undefined;
    } else {
      const match = SCALAR.exec(head.slice(i, i + 64));
      if (match === null) return undefined;
      i += match[0].length;
    }
    skipSpace();
    if (head.charCodeAt(i) !== 0x2c) return undefined;
    i++;
  }
  return undefined;
}

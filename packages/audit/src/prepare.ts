/**
 * What the log does to an entry before sealing it: the memoized redactor, the redaction of
 * nested members, and the `time` text. Split from the writer (log.ts), which calls them once per
 * record.
 */
import { SENSITIVE_KEY, redactSecrets, redactValue, type Redactor } from "@ahp/core";

/** Strings up to this length are remembered by {@link memoizeRedactor}. */
const MEMO_MAX_LENGTH = 512;
/** Distinct strings remembered (the memo starts over when full). */
const MEMO_MAX_ENTRIES = 4096;

/**
 * A redactor that remembers its answers for short strings. Most strings of a record repeat from
 * call to call (session and agent ids, event types, decision tags, reasons, rule ids), and running
 * every secret detector over each of them again was the largest part of a record's CPU cost.
 * Redactors are functions of the text alone, so a remembered answer is the answer.
 */
export function memoizeRedactor(redactor: Redactor): Redactor {
  const memo = new Map<string, string>();
  const skipsHex = redactor === redactSecrets;
  return (text) => {
    if (text.length > MEMO_MAX_LENGTH) return redactor(text);
    // Ids and digests (UUIDs, hex hashes) differ in every record, so the memo never holds them;
    // none of the built-in detectors can match text made of hex digits and hyphens only (each
    // needs a letter past `f`, or `:`, `=`, `/` or a space), so the default redactor leaves
    // them unchanged and is not run.
    if (skipsHex && hexOnly(text)) return text;
    let out = memo.get(text);
    if (out === undefined) {
      out = redactor(text);
      if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
      memo.set(text, out);
    }
    return out;
  };
}

/**
 * `redactValue(value, redactor)` for a record's nested member. A plain object of strings, numbers,
 * booleans and nulls (the connection, the batch position, a shadow decision) is copied in one
 * loop; anything else goes through `redactValue`, whose walk makes a set, closures and entry
 * arrays for every value.
 */
export function redactMember(value: object, redactor: Redactor): unknown {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return redactValue(value, redactor);
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  for (let i = 0; i < keys.length; i++) {
    const item = source[keys[i]!];
    if (item !== null && typeof item === "object") return redactValue(value, redactor);
  }
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = source[key];
    if (SENSITIVE_KEY.test(key.includes("-") ? key.replace(/-/g, "_") : key) && item !== null && item !== undefined && item !== "")
      out[key] = `[REDACTED:${key.toLowerCase()}]`;
    else out[key] = typeof item === "string" ? redactor(item) : item;
  }
  return out;
}

/** True when `text` is made of hex digits and hyphens only (request ids, trace ids, digests). */
function hexOnly(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46) || c === 0x2d)) return false;
  }
  return true;
}

/**
 * `new Date().toISOString()`, made once per millisecond: many records of a busy log share their
 * millisecond, and formatting the date was a visible part of a record's cost.
 */
export function isoClock(): () => string {
  let at = Number.NaN;
  let text = "";
  return () => {
    const now = Date.now();
    if (now !== at) {
      at = now;
      text = new Date(now).toISOString();
    }
    return text;
  };
}

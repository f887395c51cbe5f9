/**
 * The oracle's model: for one unit of input (an NDJSON line group, a WebSocket frame, an HTTP
 * body) what a conforming harness must answer. Written from the specification (§3.4
 * classification, the Recommended -32700/-32600 answers, the size and nesting limits), not from
 * the server's code, so that a server bug shows up as a disagreement.
 */
import { sniffJsonRpcId } from "@ahp/core";

export const DEFAULT_LIMITS = {
  maxMessageBytes: 8 * 1024 * 1024,
  maxJsonDepth: 128,
  maxBodyBytes: 2 * 1024 * 1024,
} as const;

export type Limits = typeof DEFAULT_LIMITS;

/** One answer the harness owes: its id must be one of `ids` (keys from {@link idKey}); `codes` restricts an error's code. */
export interface ExpectedAnswer {
  ids: string[];
  /** Allowed error codes; undefined: a result or any error. */
  codes?: number[];
  /** An error is required (no result). */
  error?: boolean;
  why: string;
}

/** What must happen to one unit. */
export type Expectation =
  | { kind: "answers"; answers: ExpectedAnswer[] }
  /** WebSocket: the harness closes the connection with this code. */
  | { kind: "close"; codes: number[]; why: string }
  /** HTTP: the status, and for JSON bodies the answer. */
  | { kind: "http"; statuses: number[]; answer?: ExpectedAnswer; emptyOr?: ExpectedAnswer; why: string };

type Id = string | number;

/** A stable key for an id as it comes back on the wire (`-0` is written `0`). */
export function idKey(id: unknown): string {
  if (id === null) return "null";
  if (typeof id === "string") return `s:${id}`;
  if (typeof id === "number") return `n:${JSON.stringify(id)}`;
  return `?:${JSON.stringify(id)}`;
}

const KNOWN_METHODS = new Set(["ahp/handshake", "ahp/event", "ahp/query", "ahp/batch"]);

type Classified =
  | { kind: "request"; id: Id; method: string }
  | { kind: "notification" }
  | { kind: "response" }
  | { kind: "invalid"; id?: Id };

function readId(m: Record<string, unknown>): Id | undefined {
  const id = m.id;
  if (typeof id === "string") return id;
  if (typeof id === "number" && Number.isInteger(id)) return id;
  return undefined;
}

/** Spec §3.4 with the Recommended integer ids. */
export function classify(value: unknown): Classified {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { kind: "invalid" };
  const m = value as Record<string, unknown>;
  const id = readId(m);
  const invalid = (): Classified => (id === undefined ? { kind: "invalid" } : { kind: "invalid", id });
  // Only "2.0" is a JSON-RPC 2.0 message (ADR 0154): any other version is invalid, answered -32600 when it has an id.
  if (m.jsonrpc !== "2.0") return invalid();
  if (typeof m.method !== "string") return "id" in m && ("result" in m || "error" in m) ? { kind: "response" } : invalid();
  if (!("params" in m)) return invalid();
  if (id !== undefined) return { kind: "request", id, method: m.method };
  return { kind: "notification" };
}

/** Nesting depth of arrays/objects outside strings exceeds `limit`. */
function tooDeep(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (++depth > limit) return true;
    } else if (c === "}" || c === "]") depth--;
  }
  return false;
}

type Decoded = { ok: true; value: unknown } | { ok: false; why: string; ids: string[] };

function decodeText(text: string, head: string, limits: Limits, sniff: boolean): Decoded {
  const ids = ["null"];
  const sniffed = sniff ? sniffJsonRpcId(head) : undefined;
  if (sniffed !== undefined) ids.push(idKey(sniffed));
  if (tooDeep(text, limits.maxJsonDepth)) return { ok: false, why: "nested too deep", ids };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, why: "not JSON", ids: ["null"] };
  }
}

/** The answers a decoded value is owed on a stream (NDJSON, WebSocket, in-memory). */
function streamAnswers(value: unknown): ExpectedAnswer[] {
  const c = classify(value);
  switch (c.kind) {
    case "request":
      return [
        {
          ids: [idKey(c.id)],
          ...(KNOWN_METHODS.has(c.method) ? {} : { codes: [-32601], error: true }),
          why: `request ${c.method}`,
        },
      ];
    case "invalid":
      return c.id === undefined ? [] : [{ ids: [idKey(c.id)], codes: [-32600], error: true, why: "invalid message with an id" }];
    default:
      return [];
  }
}

const decodeFailure = (d: { why: string; ids: string[] }): ExpectedAnswer => ({
  ids: d.ids,
  codes: [-32700, -32002],
  error: true,
  why: d.why,
});

/** NDJSON (stdio, Unix socket): the unit plus its newline may hold several lines. */
export function expectNdjson(unit: Uint8Array, limits: Limits = DEFAULT_LIMITS): Expectation {
  const answers: ExpectedAnswer[] = [];
  const bytes = Buffer.from(unit.buffer, unit.byteOffset, unit.byteLength);
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    const line = bytes.subarray(start, nl === -1 ? bytes.length : nl);
    if (line.length > limits.maxMessageBytes) {
      const sniffed = sniffJsonRpcId(line.subarray(0, 512).toString("utf8"));
      answers.push({
        ids: sniffed === undefined ? ["null"] : ["null", idKey(sniffed)],
        codes: [-32002],
        error: true,
        why: "line too large",
      });
    } else {
      const text = line.toString("utf8").trim();
      if (text.length > 0) {
        const decoded = decodeText(text, text.slice(0, 512), limits, true);
        if (decoded.ok) answers.push(...streamAnswers(decoded.value));
        else answers.push(decodeFailure(decoded));
      }
    }
    if (nl === -1) break;
    start = nl + 1;
  }
  return { kind: "answers", answers };
}

/** A text frame (WebSocket) or an injected text (in-memory pair). */
export function expectFrame(
  unit: Uint8Array,
  options: { binary?: boolean; websocket: boolean },
  limits: Limits = DEFAULT_LIMITS,
): Expectation {
  const bytes = Buffer.from(unit.buffer, unit.byteOffset, unit.byteLength);
  if (options.websocket) {
    if (bytes.length > limits.maxMessageBytes) return { kind: "close", codes: [1009], why: "frame larger than maxPayload" };
    if (options.binary) return { kind: "answers", answers: [] };
    if (!isValidUtf8(bytes)) return { kind: "close", codes: [1007], why: "text frame is not UTF-8" };
  }
  if (bytes.length > limits.maxMessageBytes) {
    return { kind: "answers", answers: [{ ids: ["null"], codes: [-32002], error: true, why: "message too large" }] };
  }
  const decoded = decodeText(bytes.toString("utf8"), "", limits, false);
  return { kind: "answers", answers: decoded.ok ? streamAnswers(decoded.value) : [decodeFailure(decoded)] };
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return true;
  const type = value.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** One HTTP POST to `/ahp` (spec §13.2 and the transport's documented table). */
export function expectHttp(unit: Uint8Array, contentType: string | undefined, limits: Limits = DEFAULT_LIMITS): Expectation {
  if (!isJsonContentType(contentType)) return { kind: "http", statuses: [415], why: "content type is not JSON" };
  const bytes = Buffer.from(unit.buffer, unit.byteOffset, unit.byteLength);
  if (bytes.length > limits.maxBodyBytes) return { kind: "http", statuses: [413], why: "body too large" };
  const decoded = decodeText(bytes.toString("utf8"), "", limits, false);
  if (!decoded.ok) return { kind: "http", statuses: [400], answer: { ...decodeFailure(decoded), ids: ["null"] }, why: decoded.why };
  const c = classify(decoded.value);
  switch (c.kind) {
    case "request": {
      const [answer] = streamAnswers(decoded.value);
      return { kind: "http", statuses: [200], answer: answer!, why: answer!.why };
    }
    case "notification":
      return {
        kind: "http",
        statuses: [204, 200],
        emptyOr: { ids: [idKey("")], codes: [-32603, -32004], error: true, why: "rejected notification" },
        why: "notification",
      };
    case "invalid":
      return {
        kind: "http",
        statuses: [200],
        answer: { ids: [idKey(c.id ?? "")], codes: [-32600], error: true, why: "invalid message" },
        why: "invalid message",
      };
    case "response":
      return {
        kind: "http",
        statuses: [200],
        answer: { ids: [idKey("")], codes: [-32600], error: true, why: "a response" },
        why: "a response",
      };
  }
}

function isValidUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Why a value is not a well-formed JSON-RPC 2.0 response, or undefined when it is. */
export function malformedAnswer(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "not an object";
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return "jsonrpc is not 2.0";
  if (!("id" in m) || !(m.id === null || typeof m.id === "string" || typeof m.id === "number")) return "bad id";
  const hasResult = "result" in m;
  const hasError = "error" in m;
  if (hasResult === hasError) return "must carry exactly one of result and error";
  if (hasResult && m.result === null) return "result is null";
  if (hasError) {
    const e = m.error as Record<string, unknown> | null;
    if (e === null || typeof e !== "object") return "error is not an object";
    if (!Number.isInteger(e.code)) return "error.code is not an integer";
    if (typeof e.message !== "string") return "error.message is not a string";
  }
  return undefined;
}

/**
 * Matches received answers against expected ones; returns the problems (empty when they agree).
 * Several units of a batch may share an id (mutations make ids collide), so answers are paired
 * with expectations by a maximum bipartite matching (an answer may fill a slot with its id that
 * accepts it), not greedily in arrival order.
 */
export function matchAnswers(expected: readonly ExpectedAnswer[], received: readonly unknown[]): string[] {
  const problems: string[] = [];
  const answers: Array<{ value: unknown; key: string; error?: { code: number } }> = [];
  for (const answer of received) {
    const bad = malformedAnswer(answer);
    if (bad !== undefined) {
      problems.push(`malformed answer (${bad}): ${preview(answer)}`);
      continue;
    }
    const m = answer as { id: unknown; error?: { code: number } };
    answers.push({ value: answer, key: idKey(m.id), ...(m.error === undefined ? {} : { error: m.error }) });
  }
  const slotsByKey = new Map<string, number[]>();
  expected.forEach((e, i) => {
    for (const key of e.ids) {
      const list = slotsByKey.get(key);
      if (list === undefined) slotsByKey.set(key, [i]);
      else list.push(i);
    }
  });
  const edges = answers.map((a) => (slotsByKey.get(a.key) ?? []).filter((i) => accepts(expected[i]!, a)));
  const slotOwner = new Array<number>(expected.length).fill(-1);
  const augment = (a: number, seen: Uint8Array): boolean => {
    for (const slot of edges[a]!) {
      if (seen[slot] === 1) continue;
      seen[slot] = 1;
      if (slotOwner[slot] === -1 || augment(slotOwner[slot]!, seen)) {
        slotOwner[slot] = a;
        return true;
      }
    }
    return false;
  };
  for (let a = 0; a < answers.length; a++) if (edges[a]!.length > 0) augment(a, new Uint8Array(expected.length));
  const matched = new Set(slotOwner.filter((a) => a !== -1));
  const free = new Set(expected.map((_, i) => i).filter((i) => slotOwner[i] === -1));
  for (let a = 0; a < answers.length; a++) {
    if (matched.has(a)) continue;
    const answer = answers[a]!;
    // An answer that fits no open slot: the wrong kind of answer for a request with its id, or no request was owed one.
    const slot = (slotsByKey.get(answer.key) ?? []).find((i) => free.has(i));
    if (slot === undefined) {
      problems.push(`unexpected answer (no request with id ${answer.key} was owed one): ${preview(answer.value)}`);
      continue;
    }
    free.delete(slot);
    const e = expected[slot]!;
    problems.push(
      e.codes === undefined
        ? `expected an error for ${e.why}, got ${preview(answer.value)}`
        : `expected ${e.error === true ? "" : "a result or "}code ${e.codes.join(" or ")} for ${e.why}, got ${preview(answer.value)}`,
    );
  }
  for (const i of free) problems.push(`no answer for ${expected[i]!.why} (id ${expected[i]!.ids.join(" or ")})`);
  return problems;
}

function accepts(e: ExpectedAnswer, answer: { error?: { code: number } }): boolean {
  if (answer.error === undefined) return e.error !== true;
  return e.codes === undefined || e.codes.includes(answer.error.code);
}

export function preview(value: unknown, max = 300): string {
  let text: string;
  try {
    text = typeof value === "string" ? value : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}…(${text.length} chars)` : text;
}

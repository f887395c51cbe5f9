/**
 * The audit record format (version 1) and its chain: every record carries `prev` (the SHA-256
 * of the previous record's canonical JSON, or the genesis value for the first record) and
 * `mac` = HMAC-SHA256(key, canonical JSON of the record without `mac`). See
 * docs/adr/0003-audit-log-chain.md.
 */
import { hash, timingSafeEqual } from "node:crypto";
import { canonicalJson, stringifiable } from "./canonical.js";
import type { AuditKey } from "./key.js";

/** The record format version (`v` of every record); a verifier refuses records of another version. */
export const AUDIT_FORMAT_VERSION = 1;

/**
 * - `decision`: a blocking event (or batch element) and the decision the handler returned;
 * - `event`: a non-blocking event (notification);
 * - `query`: an `ahp/query` call; `handshake`: an `ahp/handshake`;
 * - `failure`: a handler threw, timed out or was aborted (the server's fail-closed rules apply);
 * - `recovery`: written on reopen when the previous writer died mid-line (torn tail);
 * - `incident`: the writer's own account of a problem it survived (the log was unavailable for a
 *   while, the live file was deleted while open), with `data.incident` naming it;
 * - `note`: anything an application wants in the chain (`data`).
 */
export type AuditRecordKind = "decision" | "event" | "query" | "handshake" | "failure" | "recovery" | "incident" | "note";

/** What the first record a writer (one open of the log) appends says about that writer. */
export interface AuditWriterInfo {
  /** Process id of the writer. */
  pid: number;
  /** When a decision was released relative to its record (see `AuditSyncMode`). */
  sync: string;
  /** File name (no directory) of the signed checkpoints the writer keeps next to the log, when it keeps them. */
  checkpoint?: string;
}

/** The connection a record was received on: transport, peer and authenticated principal, never a credential. */
export interface AuditConnectionInfo {
  /** Server-side connection number. */
  id?: number;
  transport: string;
  remote?: string;
  /** Authenticated principal label (never a credential). */
  principal?: string;
}

/** A partial line left by a writer that died mid-write: its length and SHA-256 (of the bytes without `\n`). */
export interface TornLine {
  bytes: number;
  sha256: string;
}

/** What a caller appends: the record without its chain members. All strings are redacted before writing. */
export interface AuditEntry {
  kind: AuditRecordKind;
  /** RFC 3339; default: now. */
  time?: string;
  session?: string;
  agent?: string;
  event_type?: string;
  depth?: number;
  form?: "request" | "notification" | "batch";
  request_id?: string | number;
  batch?: { index: number; size: number };
  /** The decision tag (`allow`, `block`, typed variants such as `approve`, ...). */
  decision?: string;
  reason?: string;
  /** Matched rule id. */
  rule?: string;
  /** A shadow (candidate, never enforced) policy that disagreed with this decision: its decision and rule. */
  shadow?: { decision: string; rule?: string };
  /** Handler latency, microseconds. */
  latency_us?: number;
  /** Time the decider reported for itself (annotation), microseconds. */
  policy_us?: number;
  /** Failure text (message only). */
  error?: string;
  /** `failure` records of a handler that ran past the server's time limit: that limit (ms). */
  timeout_ms?: number;
  /**
   * `failure` records of a timed-out request answered with an error: the JSON-RPC error code the
   * agent got (a fail-closed decision is in `decision` and `reason` instead).
   */
  answer_error?: number;
  conn?: AuditConnectionInfo;
  /** SHA-256 of the canonical JSON of the payload (query payload for queries). */
  payload_sha256?: string;
  /** The redacted payload, only when the writer opted in. */
  payload?: unknown;
  /** Set when the redacted payload exceeded the size limit and was left out. */
  payload_truncated?: boolean;
  /** W3C trace id from the event metadata, for correlation. */
  trace_id?: string;
  query_type?: string;
  agent_framework?: string;
  agent_version?: string;
  /** `recovery` records: the torn lines (in order) that precede this record and are outside the chain. */
  torn?: TornLine[];
  /** Free-form data (`note` and `incident` records). */
  data?: Record<string, unknown>;
  /** The replica that wrote the record, when the writer was given one (every record of the chain carries it). */
  replica?: string;
  /** Only on the first record a writer appends after opening the log. */
  writer?: AuditWriterInfo;
}

/** One line of the log. */
export interface AuditRecord extends AuditEntry {
  v: typeof AUDIT_FORMAT_VERSION;
  /** 1 for the first record of a log, then +1 per record, across rotated files. */
  seq: number;
  time: string;
  /** Key id: first 8 hex digits of SHA-256 of the HMAC key. */
  kid: string;
  /** Hash of the previous record ({@link recordHash}), or {@link genesisHash} for seq 1. */
  prev: string;
  /** HMAC-SHA256(key, canonical JSON of the record without `mac`), hex. */
  mac: string;
}

/** The chain position to publish elsewhere (an external anchor against tail truncation). */
export interface AuditHead {
  seq: number;
  /** {@link recordHash} of the record with that seq. */
  hash: string;
}

/** SHA-256 of a UTF-8 string, lower-case hex. */
export const sha256Hex = (text: string): string => hash("sha256", text, "hex");
const sha256 = sha256Hex;

/** The `prev` of the first record of a log written with key `kid`. */
export const genesisHash = (kid: string): string => sha256(`ahp-audit/v${AUDIT_FORMAT_VERSION}/genesis/${kid}`);

/** SHA-256 of the canonical JSON of the complete record (with `mac`). */
export const recordHash = (record: AuditRecord): string => sha256(recordLine(record).slice(0, -1));

/** SHA-256 (hex) of the canonical JSON of any value. */
export const digestJson = (value: unknown): string => sha256(canonicalJson(value));

/**
 * The line of a sealed record, kept on the record itself under a symbol, non-enumerable (so it
 * is invisible to JSON, `Object.keys`, spreading and equality), instead of a side table: a
 * WeakMap entry per record made every garbage collection trace an ephemeron table as long as
 * the records lived.
 */
const LINE: unique symbol = Symbol("ahp-audit.line");
type WithLine = AuditRecord & { [LINE]?: string };

/** The line written for a record: its canonical JSON and `\n` (computed once per sealed record). */
export function recordLine(record: AuditRecord): string {
  let line = (record as WithLine)[LINE];
  if (line === undefined) {
    line = `${canonicalJson(record)}\n`;
    Object.defineProperty(record, LINE, { value: line });
  }
  return line;
}

/** The members the chain adds; an entry's own members of these names are replaced. */
const CHAIN_MEMBERS = new Set(["v", "seq", "kid", "prev", "mac"]);

/**
 * Adds the chain members to an entry. The MAC input and the written line are the same canonical
 * text, with `"mac"` in its sorted place in the line: both are joined from the `JSON.stringify`
 * of the members sorted before `mac` and of those after it, each serialized once.
 */
export function sealRecord(entry: AuditEntry & { time: string }, chain: { seq: number; prev: string; key: AuditKey }): AuditRecord {
  const source = entry as unknown as Record<string, unknown>;
  const keys: string[] = ["kid", "prev", "seq", "v"];
  for (const k of Object.keys(source)) if (source[k] !== undefined && !CHAIN_MEMBERS.has(k)) keys.push(k);
  keys.sort();
  const low: Record<string, unknown> = {};
  const high: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const first = k.charCodeAt(0);
    const value =
      k === "v"
        ? AUDIT_FORMAT_VERSION
        : k === "seq"
          ? chain.seq
          : k === "kid"
            ? chain.key.id
            : k === "prev"
              ? chain.prev
              : stringifiable(source[k]);
    // A member JSON.stringify would reorder (a name starting with a digit, or such a name inside).
    if (value === undefined || (first >= 0x30 && first <= 0x39)) return sealByMembers(source, keys, chain);
    setMember(k < "mac" ? low : high, k, value);
  }
  const before = JSON.stringify(low);
  const after = JSON.stringify(high);
  const lowText = before.length > 2 ? before.slice(1, -1) : "";
  const highText = after.length > 2 ? after.slice(1, -1) : "";
  const mac = chain.key.mac(`{${lowText}${lowText !== "" && highText !== "" ? "," : ""}${highText}}`);
  const line = `{${lowText}${lowText === "" ? "" : ","}"mac":"${mac}"${highText === "" ? "" : ","}${highText}}\n`;
  const record = low;
  record.mac = mac;
  for (const k of keys) if (k > "mac") setMember(record, k, high[k]);
  Object.defineProperty(record, LINE, { value: line });
  return record as unknown as AuditRecord;
}

/** Sets an own enumerable member, `__proto__` included (an assignment would set the prototype). */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** {@link sealRecord} member by member through `canonicalJson`, for entries `JSON.stringify` would reorder. */
function sealByMembers(source: Record<string, unknown>, keys: string[], chain: { seq: number; prev: string; key: AuditKey }): AuditRecord {
  const record: Record<string, unknown> = {};
  const parts: string[] = new Array<string>(keys.length);
  let at = keys.length;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const value =
      k === "v" ? AUDIT_FORMAT_VERSION : k === "seq" ? chain.seq : k === "kid" ? chain.key.id : k === "prev" ? chain.prev : source[k];
    setMember(record, k, value);
    parts[i] = `${JSON.stringify(k)}:${canonicalJson(value)}`;
    if (at === keys.length && k > "mac") at = i;
  }
  const mac = chain.key.mac(`{${parts.join(",")}}`);
  record.mac = mac;
  const macPart = `"mac":"${mac}"`;
  const before = parts.slice(0, at).join(",");
  const after = parts.slice(at).join(",");
  const line = `{${before}${before === "" ? "" : ","}${macPart}${after === "" ? "" : ","}${after}}\n`;
  Object.defineProperty(record, LINE, { value: line });
  return record as unknown as AuditRecord;
}

/** True when the record's `mac` is the HMAC of the rest under `key` (constant-time compare). */
export function checkRecordMac(record: AuditRecord, key: AuditKey): boolean {
  const { mac, ...rest } = record;
  if (typeof mac !== "string" || !/^[0-9a-f]{64}$/.test(mac)) return false;
  let expected: string;
  try {
    expected = key.mac(canonicalJson(rest));
  } catch {
    return false;
  }
  return timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(mac, "hex"));
}

const HASH = /^[0-9a-f]{64}$/;

/** Parses one line into a record, or explains why it is not one. */
export function parseRecord(text: string): { ok: true; record: AuditRecord } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, problem: "not a JSON object" };
  const r = value as Record<string, unknown>;
  if (r.v !== AUDIT_FORMAT_VERSION) return { ok: false, problem: `unknown format version ${JSON.stringify(r.v)}` };
  if (typeof r.seq !== "number" || !Number.isSafeInteger(r.seq) || r.seq < 1)
    return { ok: false, problem: "seq is not a positive integer" };
  if (typeof r.kid !== "string" || !/^[0-9a-f]{8}$/.test(r.kid)) return { ok: false, problem: "kid is not 8 hex digits" };
  if (typeof r.prev !== "string" || !HASH.test(r.prev)) return { ok: false, problem: "prev is not a SHA-256 hex digest" };
  if (typeof r.mac !== "string" || !HASH.test(r.mac)) return { ok: false, problem: "mac is not a SHA-256 hex digest" };
  if (typeof r.time !== "string") return { ok: false, problem: "time is missing" };
  if (typeof r.kind !== "string") return { ok: false, problem: "kind is missing" };
  return { ok: true, record: value as AuditRecord };
}

/** `"<seq>:<hash>"`, the text form of a head (for `--expect-head`). */
export const formatAuditHead = (head: AuditHead): string => `${head.seq}:${head.hash}`;

/** Parses `"<seq>:<hash>"`; returns undefined when malformed. */
export function parseAuditHead(text: string): AuditHead | undefined {
  const match = /^\s*(\d{1,15}):([0-9a-fA-F]{64})\s*$/.exec(text);
  if (match === null) return undefined;
  const seq = Number(match[1]);
  if (!Number.isSafeInteger(seq) || seq < 1) return undefined;
  return { seq, hash: match[2]!.toLowerCase() };
}

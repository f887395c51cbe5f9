/**
 * The wire codec: one JSON-RPC message per text frame. Decoding is a plain JSON parse with size
 * and nesting limits plus classification; unknown fields pass through untouched (a TypeScript
 * peer has no runtime decoder, so unknown keys are preserved, as the round-trip fixtures expect of
 * TypeScript). Encoding drops `undefined` members, so an absent optional is omitted and never
 * sent as `null`; an explicit `null` the caller put in stays `null`.
 *
 * Browser-safe (no Node imports).
 */
import { AgentHostErrorCode } from "./constants.js";
import type { ActionEnvelope, ActionOrigin, JsonRpcErrorObject, JsonRpcId, StateAction } from "./types.js";

/** Limits applied while decoding an inbound frame (size in UTF-8 bytes, JSON nesting depth); unset means unlimited. */
export interface DecodeLimits {
  /** Largest text in UTF-8 bytes. */
  maxBytes?: number;
  /** Deepest nesting of arrays and objects. */
  maxDepth?: number;
}

/** A frame that cannot be handled, with the JSON-RPC error code to answer with. */
export class WireError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "WireError";
  }
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** Kinds of limit failure, for callers that close the connection on them. */
export class LimitError extends WireError {
  constructor(
    readonly limit: "bytes" | "depth",
    message: string,
  ) {
    super(AgentHostErrorCode.InvalidRequest, message);
    this.name = "LimitError";
  }
}

const encoder = typeof TextEncoder === "undefined" ? undefined : new TextEncoder();

/** UTF-8 length of a string (exact). */
export function utf8Length(text: string): number {
  if (encoder !== undefined) return encoder.encode(text).length;
  return unescape(encodeURIComponent(text)).length;
}

/** True when `text` nests arrays/objects deeper than `limit` (brackets inside strings ignored). */
export function nestingExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Parses one frame. Throws {@link LimitError} past a limit and {@link WireError} -32700 for malformed JSON. */
export function decodeFrame(text: string, limits: DecodeLimits = {}, byteLength?: number): unknown {
  const maxBytes = limits.maxBytes ?? 1024 * 1024;
  if (text.length * 3 > maxBytes) {
    const bytes = byteLength ?? utf8Length(text);
    if (bytes > maxBytes) throw new LimitError("bytes", `Frame of ${bytes} bytes exceeds the limit of ${maxBytes}`);
  }
  const maxDepth = limits.maxDepth ?? 64;
  if (text.length > maxDepth * 2 && nestingExceeds(text, maxDepth)) {
    throw new LimitError("depth", `JSON nested deeper than ${maxDepth}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new WireError(AgentHostErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
  }
}

/** Encodes one message: `undefined` members are left out; everything else passes through. */
export function encodeFrame(message: unknown): string {
  return JSON.stringify(message);
}

/** A decoded value re-encoded as its canonical JSON value (what goes on the wire). */
export function roundTrip<T>(value: T): T {
  return JSON.parse(encodeFrame(value)) as T;
}

/** What {@link classify} found in a decoded value, with the fields each kind needs. */
export type Classified =
  | { kind: "request"; id: JsonRpcId; method: string; params: unknown }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "response"; id: JsonRpcId | null; result?: unknown; error?: JsonRpcErrorObject }
  | { kind: "invalid"; id?: JsonRpcId };

/** Sorts a decoded value into request, notification, response or invalid. */
export function classify(value: unknown): Classified {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { kind: "invalid" };
  const m = value as Record<string, unknown>;
  const id = m.id;
  const validId = typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
  if (m.jsonrpc !== "2.0") return validId ? { kind: "invalid", id: id } : { kind: "invalid" };
  if (typeof m.method === "string") {
    if (validId) return { kind: "request", id: id, method: m.method, params: m.params };
    if (id === undefined) return { kind: "notification", method: m.method, params: m.params };
    return { kind: "invalid" };
  }
  if ("result" in m || "error" in m) {
    return { kind: "response", id: validId ? id : null, result: m.result, error: m.error as JsonRpcErrorObject };
  }
  return validId ? { kind: "invalid", id: id } : { kind: "invalid" };
}

/** Builds an action envelope; `origin` and `rejectionReason` keys exist only when given. */
export function envelope(
  channel: string,
  serverSeq: number,
  action: StateAction,
  origin?: ActionOrigin,
  rejectionReason?: string,
): ActionEnvelope {
  const out: ActionEnvelope = { channel, serverSeq, action };
  if (origin !== undefined) out.origin = { clientId: origin.clientId, clientSeq: origin.clientSeq };
  if (rejectionReason !== undefined) out.rejectionReason = rejectionReason;
  return out;
}

/** Builds a JSON-RPC 2.0 request. */
export const request = (id: JsonRpcId, method: string, params: unknown) => ({ jsonrpc: "2.0" as const, id, method, params });
/** Builds a JSON-RPC 2.0 notification (no id, no response). */
export const notification = (method: string, params: unknown) => ({ jsonrpc: "2.0" as const, method, params });
/** Builds a JSON-RPC 2.0 success response to request `id`. */
export const success = (id: JsonRpcId, result: unknown) => ({ jsonrpc: "2.0" as const, id, result });
/** Builds a JSON-RPC 2.0 error response to request `id` (null when the request's id is unknown). */
export const failure = (id: JsonRpcId | null, error: JsonRpcErrorObject) => ({ jsonrpc: "2.0" as const, id, error });

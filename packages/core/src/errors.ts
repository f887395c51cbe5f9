/**
 * Two error families:
 * - {@link AhpError}: a JSON-RPC error that travels on the wire (numeric code).
 * - {@link AhpLocalError}: a local failure of this process (string code), never serialized.
 *
 * Both are branded with a `Symbol.for` key so that `isInstance` works across two copies of
 * this package (an ESM and a CJS build, or two versions) where `instanceof` would not.
 */

/** Every numeric error code used on the AHP wire. */
export const AhpErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** AHP: the client's protocol major version is not supported. */
  UnsupportedVersion: -32000,
  /** AHP (this implementation): the handshake is required before this call (opt-in gating). */
  HandshakeRequired: -32001,
  /** AHP (this implementation): the message exceeds a configured size or nesting limit. */
  MessageTooLarge: -32002,
  /** AHP (this implementation): the server is shutting down. */
  ServerClosing: -32003,
} as const;
export type AhpErrorCode = (typeof AhpErrorCode)[keyof typeof AhpErrorCode];

const WIRE_BRAND = Symbol.for("@ahp/core.AhpError");
const LOCAL_BRAND = Symbol.for("@ahp/core.AhpLocalError");

/** The `error` member of a JSON-RPC error response. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error: raised by a server towards a peer, or received by a client from one. */
export class AhpError extends Error {
  readonly code: number;
  readonly data?: unknown;
  declare readonly [WIRE_BRAND]: true;

  constructor(code: number, message: string, options?: { data?: unknown; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AhpError";
    this.code = code;
    if (options?.data !== undefined) this.data = options.data;
    Object.defineProperty(this, WIRE_BRAND, { value: true });
  }

  /** True for any AhpError, including one created by another copy of this package. */
  static isInstance(value: unknown): value is AhpError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[WIRE_BRAND] === true;
  }

  /** The wire form (`error` member of a response). Never carries a stack. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  static fromJSON(error: JsonRpcErrorObject): AhpError {
    return new AhpError(error.code, error.message, error.data === undefined ? undefined : { data: error.data });
  }
}

/** String codes of local failures. */
export type AhpLocalErrorCode =
  /** No response within the per-call timeout. */
  | "TIMEOUT"
  /** The transport closed (or the peer went away) while the call was pending. */
  | "CONNECTION_CLOSED"
  /** The client or server is not connected to a transport. */
  | "NOT_CONNECTED"
  /** The caller aborted through its AbortSignal. */
  | "ABORTED"
  /** The transport failed to write the message. */
  | "SEND_FAILED"
  /** A message exceeded the configured size or nesting limit. */
  | "MESSAGE_TOO_LARGE"
  /** An AHP operation was attempted before a successful handshake (spec §12.2). */
  | "HANDSHAKE_REQUIRED"
  /** The peer answered with something that violates the protocol (spec §12.7 steps 1–4). */
  | "PROTOCOL_ERROR"
  /** The peer's result did not decode into the expected type (spec §12.7 step 5). */
  | "INVALID_RESPONSE"
  /** The caller asked for something the protocol forbids (wrong form, unbatchable event, bad event). */
  | "INVALID_ARGUMENT"
  /** A harness limit (batch size, max depth) would be exceeded; checked before sending. */
  | "LIMIT_EXCEEDED"
  /** The peer speaks an unsupported protocol major version. */
  | "UNSUPPORTED_VERSION"
  /** The transport failed (connect refused, HTTP status, child process died, ...). */
  | "TRANSPORT_ERROR";

/** A local failure. Never sent on the wire. */
export class AhpLocalError extends Error {
  readonly code: AhpLocalErrorCode;
  /** Extra structured detail (exit code, HTTP status, ...). Never contains credentials. */
  readonly details?: Record<string, unknown>;
  declare readonly [LOCAL_BRAND]: true;

  constructor(code: AhpLocalErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AhpLocalError";
    this.code = code;
    if (options?.details !== undefined) this.details = options.details;
    Object.defineProperty(this, LOCAL_BRAND, { value: true });
  }

  static isInstance(value: unknown): value is AhpLocalError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[LOCAL_BRAND] === true;
  }
}

/** Normalises any thrown value to an Error without losing it. */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === "string" ? value : safeString(value));
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Reports of limits that acted. Every place a server-side limit refuses, delays or cuts
 * something (a connection, a request, a frame) reports it through the `onerror` callback it
 * already has, as an {@link AhpLimitError}: an ordinary error for code that only logs, and a
 * {@link LimitRejection} (which limit, its value, the peer) for code that counts (metrics) or
 * writes structured logs. A report never carries payload contents or credentials.
 */
import { AhpLocalError, type AhpLocalErrorCode } from "./errors.js";

/**
 * Names of the limits, as metric label values (`ahp_limit_rejections_total{limit}`):
 *
 * - `max_in_flight`: requests handled at once on one connection;
 * - `max_connections`: connections served at once by one listener;
 * - `max_message_bytes`: size of one message (a line, a WebSocket frame);
 * - `max_body_bytes`: size of one HTTP request body;
 * - `max_json_depth`: nesting of one JSON text;
 * - `max_header_bytes`: size of HTTP request headers;
 * - `batch_size`: events in one `ahp/batch` (the advertised `batch_size`);
 * - `max_depth`: an event's `depth` (the advertised `max_depth`);
 * - `request_timeout`: an HTTP request (or WebSocket upgrade) not received in time (Node does not
 *   tell the headers timeout from the whole-request one; the value is the headers timeout, the
 *   message names both);
 * - `outbound_stall`: a peer that took none of the bytes written to it for the write-stall deadline
 *   (action `closed_write_stall` on every socket listener; `dropped` for a WebSocket peer whose
 *   answers waited in the harness that long);
 * - `idle_timeout`: a connection silent (no message, nothing in flight) for its idle timeout, or a
 *   connection to the WebSocket listener that did not upgrade in time;
 * - `open_files`: the process ran short of file descriptors: counted (fewer than the reserve free;
 *   the value is the descriptor limit; actions `closed_longest_idle`, `none_idle`, `refused`), or
 *   an accept that failed with EMFILE or ENFILE (the value is the back-off in ms; actions
 *   `backed_off`, `refused_backing_off`).
 */
export type LimitName =
  | "max_in_flight"
  | "max_connections"
  | "max_message_bytes"
  | "max_body_bytes"
  | "max_json_depth"
  | "max_header_bytes"
  | "batch_size"
  | "max_depth"
  | "request_timeout"
  | "outbound_stall"
  | "idle_timeout"
  | "open_files";

/** One limit that acted: what a log line or a metric needs, never payload contents or secrets. */
export interface LimitRejection {
  /** Transport name (`stdio`, `unix`, `ws`, `http`, ...). */
  readonly transport: string;
  readonly limit: LimitName;
  /** The limit's configured value (a count, bytes or milliseconds). */
  readonly value: number;
  /** What the harness did: `paused`, `refused`, `answered_413`, `closed`, `answered_error`, ... */
  readonly action: string;
  /** Peer address when known. */
  readonly remote?: string;
  /** The AhpServer connection id, when the limit acted on an open connection. */
  readonly connection?: number;
}

const LIMIT_BRAND = Symbol.for("@ahp/core.LimitRejection");

/** A limit that acted, reported through an `onerror` callback (see the module comment). */
export class AhpLimitError extends AhpLocalError {
  /** Which limit acted, its value, the peer. */
  readonly rejection: LimitRejection;

  constructor(
    code: AhpLocalErrorCode,
    message: string,
    rejection: LimitRejection,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(code, message, options);
    this.name = "AhpLimitError";
    this.rejection = rejection;
    Object.defineProperty(this, LIMIT_BRAND, { value: rejection });
  }
}

/** The limit report an error carries ({@link AhpLimitError}, also from another copy of this package), or undefined. */
export function limitRejectionOf(error: unknown): LimitRejection | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  return (error as Record<symbol, LimitRejection | undefined>)[LIMIT_BRAND];
}

/** Which frame limit refused a frame, attached to the wire error the decoder produced. */
export interface FrameLimit {
  readonly limit: "max_message_bytes" | "max_json_depth";
  readonly value: number;
}

const FRAME_LIMIT = Symbol.for("@ahp/core.FrameLimit");

/** Marks a decoder's error with the frame limit that caused it (not serialized). Returns `error`. */
export function markFrameLimit<E extends object>(error: E, limit: FrameLimit): E {
  Object.defineProperty(error, FRAME_LIMIT, { value: limit });
  return error;
}

/** The frame limit a decoder's error was marked with, or undefined (malformed JSON, other errors). */
export function frameLimitOf(error: unknown): FrameLimit | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  return (error as Record<symbol, FrameLimit | undefined>)[FRAME_LIMIT];
}

/**
 * An {@link AhpLimitError} for `rejection`, with a message that says which limit acted, its value,
 * the peer and what was done (`code` defaults to `LIMIT_EXCEEDED`; `what` is put in front).
 */
export function limitError(rejection: LimitRejection, what?: string, code: AhpLocalErrorCode = "LIMIT_EXCEEDED"): AhpLimitError {
  const where = [
    rejection.transport,
    rejection.connection === undefined ? undefined : `connection ${rejection.connection}`,
    rejection.remote === undefined ? undefined : `from ${rejection.remote}`,
  ]
    .filter((part) => part !== undefined)
    .join(" ");
  const message = `${what === undefined ? "" : `${what}: `}limit ${rejection.limit} (${rejection.value}) on ${where}: ${rejection.action}`;
  return new AhpLimitError(code, message, rejection, { details: { limit: rejection.limit, value: rejection.value } });
}

/** The rejection for a limit that acted on a server connection (transport and peer from its info). */
export function connectionLimit(
  connection: { readonly id: number; readonly info: { readonly transport: string; readonly remote?: string } },
  limit: LimitName,
  value: number,
  action: string,
): LimitRejection {
  const { transport, remote } = connection.info;
  return remote === undefined
    ? { transport, limit, value, action, connection: connection.id }
    : { transport, limit, value, action, connection: connection.id, remote };
}

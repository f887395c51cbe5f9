/** The message-level transport contract shared by every AHP transport. */
import type { AhpError } from "./errors.js";
import type { JsonRpcId, JsonRpcMessage } from "./schema/jsonrpc.js";

/** Options of one `Transport.send`: a signal that aborts a send still waiting for buffer space. */
export interface TransportSendOptions {
  /** Aborts a send that is waiting for buffer space. */
  signal?: AbortSignal;
}

/** What a transport could still tell about a frame it failed to decode. */
export interface ParseErrorContext {
  /**
   * The message's `id`, when the frame was refused for its size or nesting and the id could be
   * read from its start: a server answers with this id, a client fails that pending request.
   */
  id?: JsonRpcId;
}

/** Facts about the connection that handlers may want (never credentials). */
export interface TransportInfo {
  /** Short transport name: `memory`, `stdio`, `http`, `ws`, `unix`, ... */
  transport: string;
  /** Peer address when there is one (`127.0.0.1:53211`, a socket path, a pid). */
  remote?: string;
  /** The authenticated principal's label when the transport verified credentials (never the secret). */
  principal?: string;
}

/**
 * One connection between an agent and a harness, at the level of parsed JSON-RPC messages.
 * Framing, encoding and size limits are the transport's job.
 *
 * Lifecycle: set the callbacks, then `start()`; `send()` any number of times; `close()` is
 * idempotent and fires `onclose` exactly once (also when the peer closes first).
 */
export interface Transport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void>;
  /**
   * Optional: sends `message` like `send()` but without a promise per message, for callers that
   * only need to hear of a failure. `onFailure(error, context)` is called at most once, after the
   * call returned, when the message cannot be encoded or written (with the error `send()` would
   * have rejected with); nothing is called on success. The client and server engines use it
   * when it is there (one promise less per message on the hot path), `send()` otherwise. Code
   * that replaces `send()` on a transport object to see or change what it writes must replace
   * or remove `post()` as well, or the engines write past it.
   */
  post?<C>(message: JsonRpcMessage, onFailure: (error: Error, context: C) => void, context: C): void;
  close(): Promise<void>;
  /** A decoded JSON value arrived (not yet classified: it may be anything). */
  onmessage?: ((message: unknown) => void) | undefined;
  /**
   * A frame could not be decoded (not JSON, too large, nested too deep). The connection stays
   * open. A server answers it with a JSON-RPC error whose id is `null` (or `context.id`).
   */
  onparseerror?: ((error: AhpError, context?: ParseErrorContext) => void) | undefined;
  /** A non-fatal problem; the connection may still be usable. */
  onerror?: ((error: Error) => void) | undefined;
  /** The connection is gone. `error` is the cause when it did not close cleanly. */
  onclose?: ((error?: Error) => void) | undefined;
  readonly sessionId?: string | undefined;
  readonly info?: TransportInfo | undefined;
}

/** Limits every decoding transport applies. */
export interface MessageLimits {
  /** Largest accepted message in bytes (UTF-8). Default 8 MiB. */
  maxMessageBytes?: number;
  /** Deepest accepted nesting of JSON arrays/objects. Default 128. */
  maxJsonDepth?: number;
}

/** The largest message (UTF-8 bytes) a transport accepts when `maxMessageBytes` is not given: 8 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** The deepest nesting of JSON arrays and objects a decoding transport accepts when `maxJsonDepth` is not given. */
export const DEFAULT_MAX_JSON_DEPTH = 128;

/**
 * The harness side of one NDJSON stream connection (stdio, a Unix socket, any byte stream pair).
 *
 * End of input means "no more requests": the answers to requests already received are still
 * written (up to `drainTimeoutMs`), then the transport closes, so `printf '<request>\n' |
 * harness` prints its response. The stdio and Unix socket server transports are this class with
 * their own streams and teardown.
 */
import type { Readable, Writable } from "node:stream";
import { AhpLocalError } from "./errors.js";
import { InFlightRequests } from "./in-flight.js";
import { NdjsonStreamTransport, type NdjsonWriteOptions } from "./ndjson-stream.js";
import type { JsonRpcMessage } from "./schema/jsonrpc.js";
import type { MessageLimits, Transport, TransportInfo, TransportSendOptions } from "./transport.js";

/** Default `drainTimeoutMs` of the NDJSON server connections: after the agent ended its side, how long answers still owed are awaited before closing. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

/**
 * Options of {@link NdjsonServerTransport}: the streams, message limits, write grouping, and how long answers may still be written
 * after end of input.
 */
export interface NdjsonServerTransportOptions extends MessageLimits, NdjsonWriteOptions {
  readable: Readable;
  writable: Writable;
  info: TransportInfo;
  /** After end of input, how long to wait for the answers to requests already received (ms). Default 30000. */
  drainTimeoutMs?: number;
  /**
   * What the readable's `close` event means: `drain` (default) — the same as end of input;
   * `close` — the connection is gone (a socket): close at once.
   */
  onReadableClose?: "drain" | "close";
  /** Teardown after the streams are released (end a socket, stop reading stdin). */
  onRelease?: () => Promise<void> | void;
}

/**
 * The harness side of one NDJSON stream connection. After end of input it still writes the answers to requests already received (for
 * up to `drainTimeoutMs`), then closes.
 */
export class NdjsonServerTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info: TransportInfo;
  /** Resolves once the transport closed (end of input and answers written, or close()), with the cause if any. */
  readonly closed: Promise<Error | undefined>;

  readonly #readable: Readable;
  readonly #inner: NdjsonStreamTransport;
  readonly #inFlight = new InFlightRequests();
  readonly #drainTimeoutMs: number;
  readonly #closeOnReadableClose: boolean;
  #started = false;
  #inputEnded = false;
  #resolveClosed!: (error: Error | undefined) => void;

  constructor(options: NdjsonServerTransportOptions) {
    this.#readable = options.readable;
    this.info = options.info;
    this.#drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    this.#closeOnReadableClose = options.onReadableClose === "close";
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    const inner = new NdjsonStreamTransport({
      readable: options.readable,
      writable: options.writable,
      ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
      ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
      ...(options.flushLines === undefined ? {} : { flushLines: options.flushLines }),
      info: this.info,
      closeOnEnd: false,
      onClose: () => {
        this.#readable.off("end", this.#onInputEnd);
        this.#readable.off("close", this.#onReadableClose);
        this.#inFlight.clear();
        return options.onRelease?.();
      },
    });
    inner.onmessage = (message) => {
      this.#inFlight.received(message);
      this.onmessage?.(message);
    };
    inner.onparseerror = (error, context) => {
      if (this.onparseerror !== undefined) this.onparseerror(error, context);
      else this.onerror?.(error);
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = (error) => {
      try {
        this.onclose?.(error);
      } finally {
        this.#resolveClosed(error);
      }
    };
    this.#inner = inner;
  }

  async start(): Promise<void> {
    if (this.#started) throw new AhpLocalError("INVALID_ARGUMENT", `${this.constructor.name}: already started`);
    this.#started = true;
    await this.#inner.start();
    // Registered after the inner transport's listeners, so a last line without a newline has
    // been delivered (and counted) before the drain starts.
    this.#readable.on("end", this.#onInputEnd);
    this.#readable.on("close", this.#onReadableClose);
    // A stream that had already ended may have emitted 'end' before these listeners existed.
    if (this.#readable.readableEnded || (!this.#closeOnReadableClose && this.#readable.destroyed)) this.#onInputEnd();
  }

  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    const write = this.#inner.send(message, options);
    this.#inFlight.writing(message, write);
    return write;
  }

  /** As `send()`, without a promise (see {@link Transport.post}). */
  post<C>(message: JsonRpcMessage, onFailure: (error: Error, context: C) => void, context: C): void {
    this.#inner.post(message, onFailure, context);
    this.#inFlight.writing(message);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  readonly #onInputEnd = (): void => {
    if (this.#inputEnded) return;
    this.#inputEnded = true;
    // Every request answered, then the answers' writes confirmed, within drainTimeoutMs in all.
    const started = performance.now();
    void this.#inFlight
      .idle(this.#drainTimeoutMs)
      .then((answered) => (answered ? this.#writesSettled(this.#drainTimeoutMs - (performance.now() - started)) : undefined))
      .then(() => this.#inner.close());
  };

  /** Resolves once every write handed to the stream was confirmed, or after `ms` (no limit when not finite). */
  #writesSettled(ms: number): Promise<void> {
    const settled = this.#inner.settled();
    if (!Number.isFinite(ms)) return settled;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      void settled.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  readonly #onReadableClose = (hadError?: boolean): void => {
    if (!this.#closeOnReadableClose) return this.#onInputEnd();
    if (hadError === true) return; // the 'error' event already closed the transport with its cause
    void this.#inner.close();
  };
}

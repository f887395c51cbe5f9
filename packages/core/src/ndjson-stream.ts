/**
 * A {@link Transport} over any pair of byte streams with NDJSON framing. The stdio and Unix
 * socket transports are thin wrappers around it.
 */
import type { Readable, Writable } from "node:stream";
import { AhpLocalError, toError } from "./errors.js";
import { stringifyMessage } from "./json-text.js";
import { NdjsonDecoder } from "./ndjson.js";
import type { JsonRpcMessage } from "./schema/jsonrpc.js";
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  type MessageLimits,
  type Transport,
  type TransportInfo,
  type TransportSendOptions,
} from "./transport.js";

/** How an NDJSON stream transport groups its writes. */
export interface NdjsonWriteOptions {
  /**
   * Lines queued during one job are written together at the next tick (those queued while a
   * received chunk is delivered, e.g. synchronous answers, once that chunk is done), or as soon
   * as this many are queued (default 8): the peer starts on the first lines of a burst while the
   * rest are produced. `Infinity` writes each burst in one piece; `1` writes every line at once.
   */
  flushLines?: number;
}

/**
 * Options of {@link NdjsonStreamTransport}: the two streams, message limits, write grouping, and close behaviour (by default the end
 * of the readable closes the transport).
 */
export interface NdjsonStreamTransportOptions extends MessageLimits, NdjsonWriteOptions {
  readable: Readable;
  writable: Writable;
  info?: TransportInfo;
  /** Called by close() after the streams are released (e.g. to end a socket or kill a child). */
  onClose?: () => Promise<void> | void;
  /** When true (default) the end of the readable stream closes the transport. */
  closeOnEnd?: boolean;
  /**
   * Turns a failed send's error into the one its caller sees (e.g. why the peer went away
   * instead of EPIPE). Called only on failure; the promise it returns must reject.
   */
  sendFailure?: (error: Error) => Promise<never>;
}

/** The default `flushLines` of NDJSON stream transports: queued lines are written at the next tick or as soon as this many are waiting. */
export const DEFAULT_FLUSH_LINES = 8;

/**
 * A {@link Transport} over a readable and a writable byte stream with NDJSON framing. Lines sent during one job are written
 * together; a line that cannot be decoded is reported through `onparseerror` and the connection stays open.
 */
export class NdjsonStreamTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info?: TransportInfo;

  readonly #readable: Readable;
  readonly #writable: Writable;
  readonly #decoder: NdjsonDecoder;
  readonly #maxMessageBytes: number;
  readonly #onCloseHook?: () => Promise<void> | void;
  readonly #closeOnEnd: boolean;
  #started = false;
  #closed = false;
  #closing?: Promise<void>;
  /**
   * Lines waiting to be written. Lines sent during one job go out together (one write call, and
   * usually one system call), at the next tick or as soon as `flushLines` of them are queued.
   */
  #queue: QueuedLine[] = [];
  /** Batches handed to the writable and not yet confirmed; close() fails them instead of leaving them pending. */
  readonly #inFlight = new Set<QueuedLine[]>();
  /** Callers of settled() waiting for the queue and the writes in flight to empty. */
  #settledWaiters: Array<() => void> = [];
  /** The writable asked for a drain: nothing more is written until it comes. */
  #awaitingDrain = false;
  /** A flush is due at the next tick. */
  #flushScheduled = false;
  /** A received chunk is being delivered: lines queued meanwhile are written when it is done. */
  #delivering = false;
  #flushAfterChunk = false;
  readonly #flushLines: number;
  readonly #sendFailure?: (error: Error) => Promise<never>;
  #closeCause?: Error;

  constructor(options: NdjsonStreamTransportOptions) {
    this.#readable = options.readable;
    this.#writable = options.writable;
    this.#decoder = new NdjsonDecoder(options);
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (options.info !== undefined) this.info = options.info;
    if (options.onClose !== undefined) this.#onCloseHook = options.onClose;
    this.#closeOnEnd = options.closeOnEnd ?? true;
    this.#flushLines = options.flushLines ?? DEFAULT_FLUSH_LINES;
    if (options.sendFailure !== undefined) this.#sendFailure = options.sendFailure;
    if (!(this.#flushLines >= 1)) throw new AhpLocalError("INVALID_ARGUMENT", `flushLines must be at least 1, got ${this.#flushLines}`);
  }

  get closed(): boolean {
    return this.#closed;
  }

  async start(): Promise<void> {
    if (this.#started) throw new AhpLocalError("INVALID_ARGUMENT", "transport already started");
    this.#started = true;
    this.#readable.on("data", this.#onData);
    this.#readable.on("error", this.#onStreamError);
    this.#readable.on("end", this.#onEnd);
    this.#readable.on("close", this.#onEnd);
    this.#writable.on("error", this.#onStreamError);
  }

  readonly #onData = (chunk: Buffer | string): void => {
    this.#delivering = true;
    try {
      for (const frame of this.#decoder.push(chunk)) this.#deliver(frame);
    } finally {
      this.#delivering = false;
      // The answers given while the chunk was delivered leave now, in one write: no tick later.
      if (this.#flushAfterChunk) {
        this.#flushAfterChunk = false;
        if (!this.#awaitingDrain) this.#flush();
      }
    }
  };

  #deliver(frame: ReturnType<NdjsonDecoder["push"]>[number]): void {
    if (this.#closed) return;
    if (frame.ok) {
      try {
        this.onmessage?.(frame.value);
      } catch (error) {
        this.onerror?.(toError(error));
      }
    } else if (this.onparseerror !== undefined) {
      if (frame.id === undefined) this.onparseerror(frame.error);
      else this.onparseerror(frame.error, { id: frame.id });
    } else this.onerror?.(frame.error);
  }

  readonly #onEnd = (): void => {
    for (const frame of this.#decoder.end()) this.#deliver(frame);
    if (this.#closeOnEnd) void this.#shutdown(this.#closeCause);
  };

  readonly #onStreamError = (error: Error): void => {
    this.#closeCause ??= new AhpLocalError("CONNECTION_CLOSED", `stream error: ${error.message}`, { cause: error });
    this.onerror?.(error);
    void this.#shutdown(this.#closeCause);
  };

  /** Marks the cause that the next close reports (used by wrappers, e.g. "child exited with code 1"). */
  setCloseCause(error: Error): void {
    this.#closeCause ??= error;
  }

  #closedError(): Error {
    return this.#closeCause ?? new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
  }

  /**
   * Writes one message as a line. Resolves once its bytes were handed on by the writable (its
   * write callback). While the writable asks for a drain, later sends wait, so a slow reader
   * holds senders back instead of letting lines pile up in memory.
   */
  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#closed) return this.#failed(this.#closedError());
    let line: string;
    try {
      line = `${stringifyMessage(message, this.#maxMessageBytes)}\n`;
    } catch (error) {
      return this.#failed(toError(error));
    }
    const signal = options?.signal;
    if (signal?.aborted) return this.#failed(new AhpLocalError("ABORTED", "send aborted", { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      const entry: QueuedLine = { line, resolve, reject, settled: false };
      if (signal !== undefined) {
        entry.signal = signal;
        entry.onAbort = () => {
          const index = this.#queue.indexOf(entry);
          if (index !== -1) this.#queue.splice(index, 1); // not written yet: it never will be
          settleLine(entry, new AhpLocalError("ABORTED", "send aborted", { cause: signal.reason }), this.#sendFailure);
          this.#wakeSettled(); // it may have been the last line settled() waited for
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.#enqueue(entry);
    });
  }

  /**
   * As {@link send}, without a promise: `onFailure(error, context)` is called once, after this
   * call returned, when the message cannot be encoded or written (see {@link Transport.post}).
   */
  post<C>(message: JsonRpcMessage, onFailure: (error: Error, context: C) => void, context: C): void {
    let line: string;
    try {
      if (this.#closed) throw this.#closedError();
      line = `${stringifyMessage(message, this.#maxMessageBytes)}\n`;
    } catch (error) {
      const failure = toError(error);
      this.#failed(failure).then(undefined, (e: unknown) => onFailure(toError(e), context));
      return;
    }
    this.#enqueue({ line, onFailure: onFailure as (error: Error, context: unknown) => void, context, settled: false });
  }

  /**
   * Resolves once every line handed to {@link send} or {@link post} so far has been written (its
   * write confirmed) or has failed.
   */
  settled(): Promise<void> {
    if (this.#queue.length === 0 && this.#inFlight.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#settledWaiters.push(resolve));
  }

  #wakeSettled(): void {
    if (this.#settledWaiters.length === 0 || this.#queue.length > 0 || this.#inFlight.size > 0) return;
    const waiters = this.#settledWaiters;
    this.#settledWaiters = [];
    for (const waiter of waiters) waiter();
  }

  #enqueue(entry: QueuedLine): void {
    this.#queue.push(entry);
    if (this.#awaitingDrain) return;
    if (this.#queue.length >= this.#flushLines) this.#flush();
    else if (this.#delivering) this.#flushAfterChunk = true;
    else if (!this.#flushScheduled) {
      // Write once the current job and its microtasks are done, so that every line produced
      // meanwhile (a burst of sends, answers that came from async handlers) goes out in one write.
      this.#flushScheduled = true;
      process.nextTick(this.#scheduledFlush);
    }
  }

  #failed(error: Error): Promise<never> {
    return this.#sendFailure === undefined ? Promise.reject(error) : this.#sendFailure(error);
  }

  readonly #scheduledFlush = (): void => {
    this.#flushScheduled = false;
    if (!this.#awaitingDrain) this.#flush();
  };

  /**
   * Hands the queued lines to the writable in one write: at least one line, more while they fit
   * in the writable's high-water mark (so the writable never holds much more than that; UTF-16
   * units are counted, which equals bytes for ASCII).
   */
  #flush(): void {
    while (this.#queue.length > 0 && !this.#awaitingDrain && !this.#closed) this.#writeBatch();
  }

  #writeBatch(): void {
    const queue = this.#queue;
    const budget = this.#writable.writableHighWaterMark;
    let text = queue[0]!.line;
    let count = 1;
    while (count < queue.length && text.length + queue[count]!.line.length <= budget) text += queue[count++]!.line;
    const batch = count === queue.length ? queue : queue.slice(0, count);
    this.#queue = count === queue.length ? [] : queue.slice(count);
    this.#inFlight.add(batch);
    let ok: boolean;
    try {
      ok = this.#writable.write(text, (error) => this.#written(batch, error ?? undefined));
    } catch (error) {
      this.#written(batch, toError(error));
      return;
    }
    if (!ok) {
      this.#awaitingDrain = true;
      this.#writable.once("drain", this.#onDrain);
      this.#writable.once("close", this.#onWritableClose);
    }
  }

  #written(batch: QueuedLine[], error: Error | undefined): void {
    if (!this.#inFlight.delete(batch)) return; // already failed by close
    const failure = error === undefined ? undefined : new AhpLocalError("SEND_FAILED", `write failed: ${error.message}`, { cause: error });
    for (const entry of batch) settleLine(entry, failure, this.#sendFailure);
    this.#wakeSettled();
  }

  readonly #onDrain = (): void => {
    this.#writable.off("close", this.#onWritableClose);
    this.#awaitingDrain = false;
    this.#flush();
  };

  /** The writable closed while we waited for it: nothing queued or in flight will be confirmed. */
  readonly #onWritableClose = (): void => {
    this.#writable.off("drain", this.#onDrain);
    this.#failWrites(this.#closedError());
  };

  #failWrites(error: Error): void {
    const pending = [...[...this.#inFlight].flat(), ...this.#queue];
    this.#inFlight.clear();
    this.#queue = [];
    for (const entry of pending) settleLine(entry, error, this.#sendFailure);
    this.#wakeSettled();
  }

  async close(): Promise<void> {
    await this.#shutdown();
  }

  #shutdown(cause?: Error): Promise<void> {
    this.#closing ??= (async () => {
      // Lines sent before close() whose write was due at the next tick are handed over now, as if
      // they had been written at once (the writable may still deliver them, e.g. socket.end()).
      const writable = this.#writable;
      if (this.#queue.length > 0 && !this.#awaitingDrain && !writable.writableEnded && !writable.destroyed) {
        this.#flush();
      }
      this.#closed = true;
      // Sends still waiting for the writable (drain, write callback) fail now with the close cause.
      this.#failWrites(cause ?? this.#closedError());
      this.#writable.off("drain", this.#onDrain);
      this.#writable.off("close", this.#onWritableClose);
      this.#readable.off("data", this.#onData);
      this.#readable.off("end", this.#onEnd);
      this.#readable.off("close", this.#onEnd);
      try {
        await this.#onCloseHook?.();
      } catch (error) {
        this.onerror?.(toError(error));
      }
      this.onclose?.(cause ?? this.#closeCause);
    })();
    return this.#closing;
  }
}

/**
 * One line waiting to be written, or written and waiting for confirmation: from send() (its
 * promise's resolve and reject) or from post() (a failure callback and its context).
 */
interface QueuedLine {
  line: string;
  resolve?: () => void;
  reject?: (error: Error) => void;
  onFailure?: (error: Error, context: unknown) => void;
  context?: unknown;
  settled: boolean;
  signal?: AbortSignal;
  onAbort?: () => void;
}

function settleLine(entry: QueuedLine, error: Error | undefined, sendFailure?: (error: Error) => Promise<never>): void {
  if (entry.settled) return;
  entry.settled = true;
  if (entry.onAbort !== undefined) entry.signal?.removeEventListener("abort", entry.onAbort);
  if (error === undefined) {
    entry.resolve?.();
    return;
  }
  // Always called after the send() or post() call returned (from a write callback or a close).
  const fail = entry.reject ?? ((e: Error) => entry.onFailure?.(e, entry.context));
  if (sendFailure === undefined) fail(error);
  else sendFailure(error).then(undefined, (e: unknown) => fail(toError(e)));
}

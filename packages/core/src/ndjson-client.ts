/**
 * The agent side of one NDJSON stream connection: a state machine (new → opening → open →
 * closed) around {@link NdjsonStreamTransport}. Subclasses open the byte streams (spawn a
 * harness, connect a socket) and say why the peer went away; everything else — start/close
 * semantics, a failed write reporting the real cause instead of EPIPE, `closed` — is here once.
 */
import type { Readable, Writable } from "node:stream";
import { AhpLocalError, toError } from "./errors.js";
import { NdjsonStreamTransport, type NdjsonWriteOptions } from "./ndjson-stream.js";
import type { JsonRpcMessage } from "./schema/jsonrpc.js";
import type { MessageLimits, Transport, TransportInfo, TransportSendOptions } from "./transport.js";

/** The byte streams of an opened connection. */
export interface NdjsonStreams {
  readable: Readable;
  writable: Writable;
  info: TransportInfo;
  /** Runs once when the transport closes for any reason (end a socket, stop a child process). */
  release: () => Promise<void> | void;
}

type State = "new" | "opening" | "open" | "closed";

/**
 * Base class of agent-side NDJSON stream transports (a spawned harness, a socket). Subclasses implement `openStreams()`; start,
 * send, close and reporting why the peer went away are handled here.
 */
export abstract class NdjsonClientTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  /** Resolves once the transport is closed (and released), with the cause when it did not close cleanly. */
  readonly closed: Promise<Error | undefined>;

  readonly #name: string;
  readonly #limits: MessageLimits & NdjsonWriteOptions;
  #info: TransportInfo;
  #state: State = "new";
  #opening?: Promise<void>;
  #inner?: NdjsonStreamTransport;
  #closeRequested = false;
  #closeError: Error | undefined;
  #finished = false;
  #resolveClosed!: (error: Error | undefined) => void;

  protected constructor(name: string, info: TransportInfo, limits: MessageLimits & NdjsonWriteOptions = {}) {
    this.#name = name;
    this.#info = info;
    this.#limits = limits;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  get info(): TransportInfo {
    return this.#info;
  }

  /** True between a successful open and the close. */
  protected get isOpen(): boolean {
    return this.#state === "open";
  }

  /** Opens the byte streams. A throw (preferably an AhpLocalError) fails start() and closes the transport with it. */
  protected abstract openStreams(): Promise<NdjsonStreams>;

  /** The error pending calls fail with when the peer went away; `cause` is the stream error, if any. */
  protected abstract peerClosed(cause: Error | undefined): Error;

  /** Sees every incoming message before `onmessage`. */
  protected observe(_message: unknown): void {}

  /** Runs once when the transport is closed, before `onclose`. */
  protected finished(_error: Error | undefined): void {}

  start(): Promise<void> {
    if (this.#state !== "new") return Promise.reject(new AhpLocalError("INVALID_ARGUMENT", `${this.#name}: already started`));
    this.#state = "opening";
    this.#opening = this.#open();
    return this.#opening;
  }

  async #open(): Promise<void> {
    let streams: NdjsonStreams;
    try {
      streams = await this.openStreams();
    } catch (error) {
      const failure = toError(error);
      this.#finish(failure);
      throw failure;
    }
    this.#info = streams.info;
    const inner: NdjsonStreamTransport = new NdjsonStreamTransport({
      readable: streams.readable,
      writable: streams.writable,
      ...(this.#limits.maxMessageBytes === undefined ? {} : { maxMessageBytes: this.#limits.maxMessageBytes }),
      ...(this.#limits.maxJsonDepth === undefined ? {} : { maxJsonDepth: this.#limits.maxJsonDepth }),
      ...(this.#limits.flushLines === undefined ? {} : { flushLines: this.#limits.flushLines }),
      info: streams.info,
      closeOnEnd: true,
      onClose: streams.release,
      // A write that failed because the peer went away reports why it went away, not just EPIPE.
      sendFailure: (error): Promise<never> => this.#sendFailed(inner, error),
    });
    inner.onmessage = (message) => {
      this.observe(message);
      this.onmessage?.(message);
    };
    inner.onparseerror = (error, context) => {
      if (this.onparseerror !== undefined) this.onparseerror(error, context);
      else this.onerror?.(error);
    };
    inner.onerror = (error) => this.onerror?.(error);
    // A close() while the peer is already going away keeps the real cause.
    inner.onclose = (cause) => this.#finish(this.#closeRequested ? undefined : this.peerClosed(cause));
    this.#inner = inner;
    this.#state = "open";
    await inner.start();
  }

  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    const inner = this.#inner;
    if (inner === undefined) {
      return Promise.reject(
        this.#closeError ??
          (this.#state === "closed"
            ? new AhpLocalError("CONNECTION_CLOSED", "Connection closed")
            : new AhpLocalError("NOT_CONNECTED", `${this.#name}: not started`)),
      );
    }
    return inner.send(message, options);
  }

  /** As `send()`, without a promise (see {@link Transport.post}). */
  post<C>(message: JsonRpcMessage, onFailure: (error: Error, context: C) => void, context: C): void {
    const inner = this.#inner;
    if (inner !== undefined) inner.post(message, onFailure, context);
    else this.send(message).then(undefined, (error: unknown) => onFailure(toError(error), context));
  }

  /** The error a failed send reports: why the peer went away when it did, not just EPIPE. */
  async #sendFailed(inner: NdjsonStreamTransport, error: unknown): Promise<never> {
    if (AhpLocalError.isInstance(error) && (error.code === "SEND_FAILED" || error.code === "CONNECTION_CLOSED")) {
      if (!inner.closed) void inner.close();
      await this.closed;
      throw this.#closeError ?? error;
    }
    throw error;
  }

  async close(): Promise<void> {
    if (this.#state === "new") {
      this.#finish(undefined);
      return;
    }
    if (this.#inner === undefined || !this.#inner.closed) this.#closeRequested = true;
    if (this.#state === "opening") await this.#opening?.catch(() => undefined);
    await this.#inner?.close();
    await this.closed;
  }

  #finish(error: Error | undefined): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#state = "closed";
    this.#closeError = error;
    try {
      this.finished(error);
      this.onclose?.(error);
    } finally {
      this.#resolveClosed(error);
    }
  }
}

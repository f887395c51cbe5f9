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

type State = "new" | "opening" | "open" | "dormant" | "closed";

/** How long a reopened connection waits for the answer to the repeated handshake (ms). */
const REHANDSHAKE_TIMEOUT_MS = 10_000;

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
  /** Reopen mode: requests sent and not yet answered, by id (sent again when the peer closed an idle connection under them). */
  readonly #pending: Map<unknown, JsonRpcMessage> | undefined;
  /** Reopen mode: the last handshake request that was answered with a result, repeated on a reopened connection. */
  #handshake: Record<string, unknown> | undefined;
  #handshakeSent: Record<string, unknown> | undefined;
  #reopening: Promise<void> | undefined;
  #reopens = 0;
  /** Answers to repeated handshakes, kept from `onmessage`. */
  readonly #replays = new Map<string, (message: Record<string, unknown>) => void>();

  /**
   * `reopen`: a connection the peer closed while no request was waiting for an answer (a harness
   * closing an idle connection, as {@link mayReopen} tells) is reopened for the next send instead of closing the transport,
   * and the last successful handshake is repeated on it before anything else. Right for a socket;
   * a spawned process that exited cannot be reopened.
   */
  protected constructor(name: string, info: TransportInfo, limits: MessageLimits & NdjsonWriteOptions = {}, reopen = false) {
    this.#name = name;
    this.#info = info;
    this.#limits = limits;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    this.#pending = reopen ? new Map() : undefined;
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

  /** Reopen mode: whether the connection the peer just closed may be reopened (e.g. the peer said it closed an idle connection). Default true. */
  protected mayReopen(): boolean {
    return true;
  }

  /**
   * Reopen mode: whether the requests still unanswered when the peer closed the connection may be
   * sent again on a new one. Only when the peer said it closed an idle connection: it decided so
   * with nothing in flight and reads nothing after that decision, so a request that crossed the
   * close was never handled. Default false (a request the peer may have handled is failed, never
   * repeated).
   */
  protected mayReplay(): boolean {
    return false;
  }

  /** Runs once when the transport is closed, before `onclose`. */
  protected finished(_error: Error | undefined): void {}

  start(): Promise<void> {
    if (this.#state !== "new") return Promise.reject(new AhpLocalError("INVALID_ARGUMENT", `${this.#name}: already started`));
    this.#state = "opening";
    this.#opening = this.#open();
    return this.#opening;
  }

  /** Opens the byte streams and attaches a stream transport to them; a failure to open closes this transport with it. */
  async #open(): Promise<void> {
    let streams: NdjsonStreams;
    try {
      streams = await this.openStreams();
    } catch (error) {
      const failure = toError(error);
      this.#finish(failure);
      throw failure;
    }
    await this.#attach(streams);
  }

  async #attach(streams: NdjsonStreams): Promise<void> {
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
      if (this.#pending !== undefined && this.#settled(message)) return;
      this.observe(message);
      this.onmessage?.(message);
    };
    inner.onparseerror = (error, context) => {
      if (this.onparseerror !== undefined) this.onparseerror(error, context);
      else this.onerror?.(error);
    };
    inner.onerror = (error) => this.onerror?.(error);
    // A close() while the peer is already going away keeps the real cause.
    inner.onclose = (cause) => {
      if (!this.#closeRequested && this.#pending !== undefined && this.#inner === inner) {
        const outstanding = this.#pending.size;
        if (outstanding === 0 ? this.mayReopen() : this.mayReplay()) {
          // Closed by the peer as idle: reopen on the next send, or now to send again the
          // requests that crossed the close (the peer never read them).
          this.#inner = undefined;
          this.#state = "dormant";
          if (outstanding > 0) this.#reopen().catch(() => undefined);
          return;
        }
      }
      if (this.#inner === inner || this.#inner === undefined) this.#finish(this.#closeRequested ? undefined : this.peerClosed(cause));
    };
    this.#inner = inner;
    this.#state = "open";
    await inner.start();
  }

  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    const inner = this.#inner;
    if (this.#pending !== undefined) {
      if (this.#state === "dormant" || this.#reopening !== undefined) return this.#reopen().then(() => this.send(message, options));
      this.#track(message);
    }
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
    if (inner !== undefined && this.#reopening === undefined) {
      if (this.#pending !== undefined) this.#track(message);
      inner.post(message, onFailure, context);
    } else this.send(message).then(undefined, (error: unknown) => onFailure(toError(error), context));
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

  /** Reopen mode: remembers requests until answered, and the handshake to repeat. */
  #track(message: JsonRpcMessage): void {
    const m = message as Record<string, unknown>;
    if (typeof m.method !== "string" || m.id === undefined || m.id === null) return;
    this.#pending!.set(m.id, message);
    if (m.method === "ahp/handshake") this.#handshakeSent = m;
  }

  /** Reopen mode: an incoming answer settles its request; true when it was a repeated handshake's answer (kept from `onmessage`). */
  #settled(message: unknown): boolean {
    if (message === null || typeof message !== "object") return false;
    const m = message as Record<string, unknown>;
    if ("method" in m || !("id" in m)) return false;
    const replay = typeof m.id === "string" ? this.#replays.get(m.id) : undefined;
    if (replay !== undefined) {
      replay(m);
      return true;
    }
    this.#pending!.delete(m.id);
    if (this.#handshakeSent !== undefined && m.id === this.#handshakeSent.id && "result" in m) this.#handshake = this.#handshakeSent;
    return false;
  }

  /** Reopens a connection the peer closed while idle, and repeats the handshake on it. */
  #reopen(): Promise<void> {
    this.#reopening ??= (async () => {
      try {
        this.#state = "opening";
        await this.#open();
        if (this.#handshake !== undefined) await this.#rehandshake(this.#handshake);
        await this.#replay();
      } finally {
        this.#reopening = undefined;
      }
    })();
    return this.#reopening;
  }

  /** Sends again, in their order, the requests left unanswered by a connection the peer closed as idle. */
  async #replay(): Promise<void> {
    const inner = this.#inner!;
    await Promise.all([...this.#pending!.values()].map((message) => inner.send(message)));
  }

  async #rehandshake(handshake: Record<string, unknown>): Promise<void> {
    const id = `${String(handshake.id)}#reopen-${++this.#reopens}`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.#replays.set(id, resolve);
      timer = setTimeout(
        () =>
          reject(new AhpLocalError("TIMEOUT", `${this.#name}: no answer to the repeated handshake within ${REHANDSHAKE_TIMEOUT_MS} ms`)),
        REHANDSHAKE_TIMEOUT_MS,
      );
    });
    try {
      await this.#inner!.send({ ...handshake, id } as JsonRpcMessage);
      const reply = await answer;
      if (!("result" in reply)) throw new AhpLocalError("PROTOCOL_ERROR", `${this.#name}: the reopened connection refused the handshake`);
    } catch (error) {
      const failure = toError(error);
      void this.#inner?.close();
      this.#finish(failure);
      throw failure;
    } finally {
      clearTimeout(timer);
      this.#replays.delete(id);
    }
  }

  async close(): Promise<void> {
    if (this.#state === "dormant" || this.#state === "new") {
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

/**
 * The agent side of a Unix domain socket (spec §13.4): connects to a socket path and speaks
 * NDJSON, exactly as stdio. Connect failures reject `start()`; a harness that goes away closes
 * the transport at once with the cause, so pending requests fail immediately (spec §14 item 9).
 */
import { createConnection, type Socket } from "node:net";
import {
  AhpErrorCode,
  AhpLocalError,
  NdjsonStreamTransport,
  toError,
  type JsonRpcMessage,
  type MessageLimits,
  type Transport,
  type TransportInfo,
  type TransportSendOptions,
} from "@ahp/core";
import { errnoCode, finishSocket, noop } from "./socket.js";

export interface UnixSocketClientTransportOptions extends MessageLimits {
  /** Path of the harness's socket. */
  path: string;
  /** How long `start()` waits for the connection (ms). Default 10000. */
  connectTimeoutMs?: number;
  /** `close()` flushes what was written, then closes; it destroys the socket when that takes longer than this (ms). Default 2000. */
  closeGraceMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_SOCKET_CLOSE_GRACE_MS = 2000;

type State = "new" | "connecting" | "open" | "closed";

export class UnixSocketClientTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info: TransportInfo;
  /** Resolves once the transport is closed, with the cause when it did not close cleanly. */
  readonly closed: Promise<Error | undefined>;

  readonly #options: UnixSocketClientTransportOptions;
  #state: State = "new";
  #connecting?: Promise<void>;
  #socket?: Socket;
  #inner?: NdjsonStreamTransport;
  #closeRequested = false;
  /** A -32003 notice the harness sent with id `null` (e.g. "too many connections") before it closed. */
  #peerNotice?: string;
  #closeError?: Error;
  #finished = false;
  #resolveClosed!: (error: Error | undefined) => void;

  constructor(options: UnixSocketClientTransportOptions) {
    if (typeof options?.path !== "string" || options.path.length === 0) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketClientTransport: `path` must be a non-empty string");
    }
    this.#options = options;
    this.info = { transport: "unix", remote: options.path };
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  start(): Promise<void> {
    if (this.#state !== "new") {
      return Promise.reject(new AhpLocalError("INVALID_ARGUMENT", "UnixSocketClientTransport: already started"));
    }
    this.#state = "connecting";
    this.#connecting = this.#connect();
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    const path = this.#options.path;
    const timeoutMs = this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const socket = createConnection({ path });
    const failure = await new Promise<Error | undefined>((resolve) => {
      const timer = setTimeout(() => {
        done();
        const error = Object.assign(new Error(`connect timed out after ${timeoutMs} ms`), { code: "ETIMEDOUT" });
        socket.destroy();
        resolve(error);
      }, timeoutMs);
      const onConnect = () => {
        done();
        resolve(undefined);
      };
      const onError = (error: Error) => {
        done();
        resolve(error);
      };
      const done = () => {
        clearTimeout(timer);
        socket.off("connect", onConnect);
        socket.off("error", onError);
      };
      socket.once("connect", onConnect);
      socket.once("error", onError);
    });
    if (failure !== undefined) {
      socket.on("error", noop);
      socket.destroy();
      const code = errnoCode(failure);
      const error = new AhpLocalError("TRANSPORT_ERROR", `cannot connect to harness at ${path}: ${failure.message}`, {
        cause: failure,
        details: { path, ...(code === undefined ? {} : { code }) },
      });
      this.#finish(error);
      throw error;
    }
    this.#socket = socket;
    const graceMs = this.#options.closeGraceMs ?? DEFAULT_SOCKET_CLOSE_GRACE_MS;
    const inner = new NdjsonStreamTransport({
      readable: socket,
      writable: socket,
      ...(this.#options.maxMessageBytes === undefined ? {} : { maxMessageBytes: this.#options.maxMessageBytes }),
      ...(this.#options.maxJsonDepth === undefined ? {} : { maxJsonDepth: this.#options.maxJsonDepth }),
      info: this.info,
      closeOnEnd: true,
      onClose: () => finishSocket(socket, graceMs),
    });
    inner.onmessage = (message) => {
      if (isNullIdError(message)) this.#peerNotice = (message as { error: { message: string } }).error.message;
      this.onmessage?.(message);
    };
    inner.onparseerror = (error, context) => {
      if (this.onparseerror !== undefined) this.onparseerror(error, context);
      else this.onerror?.(error);
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = (cause) => this.#finish(this.#closeRequested ? undefined : this.#peerClosed(cause));
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
            : new AhpLocalError("NOT_CONNECTED", "UnixSocketClientTransport: not started")),
      );
    }
    return inner.send(message, options).catch((error: unknown) => this.#sendFailed(inner, error));
  }

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
    if (this.#state === "connecting") await this.#connecting?.catch(noop);
    await this.#inner?.close();
    await this.closed;
  }

  #peerClosed(cause: Error | undefined): AhpLocalError {
    const path = this.#options.path;
    const root = cause === undefined ? undefined : ((cause as { cause?: unknown }).cause ?? cause);
    const code = errnoCode(root);
    let message = `harness at ${path} closed the connection`;
    if (this.#peerNotice !== undefined) message += `: ${this.#peerNotice}`;
    else if (cause !== undefined) message += ` (${toError(root).message})`;
    return new AhpLocalError("CONNECTION_CLOSED", message, {
      ...(cause === undefined ? {} : { cause }),
      details: {
        path,
        ...(code === undefined ? {} : { code }),
        ...(this.#peerNotice === undefined ? {} : { peerError: this.#peerNotice }),
      },
    });
  }

  #finish(error: Error | undefined): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#state = "closed";
    this.#closeError = error;
    try {
      this.onclose?.(error);
    } finally {
      this.#resolveClosed(error);
    }
  }
}

/** A -32003 notice with id `null`: the harness says why it is about to close the connection. */
function isNullIdError(message: unknown): boolean {
  if (message === null || typeof message !== "object") return false;
  const m = message as Record<string, unknown>;
  if (m.id !== null || m.error === null || typeof m.error !== "object") return false;
  const error = m.error as Record<string, unknown>;
  return error.code === AhpErrorCode.ServerClosing && typeof error.message === "string";
}

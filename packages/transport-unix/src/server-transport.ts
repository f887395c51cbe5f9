/**
 * The harness side of one accepted socket connection. When the agent half-closes (ends its
 * output), the answers to the requests already received are still written before this side
 * ends too; the server that accepts sockets must be created with `allowHalfOpen: true`.
 */
import type { Socket } from "node:net";
import {
  AhpLocalError,
  InFlightRequests,
  NdjsonStreamTransport,
  type JsonRpcMessage,
  type MessageLimits,
  type Transport,
  type TransportInfo,
  type TransportSendOptions,
} from "@ahp/core";
import { endSocket } from "./socket.js";

export interface UnixSocketServerTransportOptions extends MessageLimits {
  info?: TransportInfo;
  /** After the agent ended its side, how long to wait for pending answers before closing (ms). Default 30000. */
  drainTimeoutMs?: number;
  /** `close()` ends the socket and waits this long for the agent to close before destroying it (ms). Default 2000. */
  closeGraceMs?: number;
}

export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

export class UnixSocketServerTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info: TransportInfo;
  /** Resolves once the connection is closed, with the cause when it did not close cleanly. */
  readonly closed: Promise<Error | undefined>;

  readonly #socket: Socket;
  readonly #inner: NdjsonStreamTransport;
  readonly #inFlight = new InFlightRequests();
  readonly #drainTimeoutMs: number;
  #started = false;
  #inputEnded = false;
  #resolveClosed!: (error: Error | undefined) => void;

  constructor(socket: Socket, options: UnixSocketServerTransportOptions = {}) {
    this.#socket = socket;
    this.info = options.info ?? { transport: "unix" };
    this.#drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    const graceMs = options.closeGraceMs ?? 2000;
    const inner = new NdjsonStreamTransport({
      readable: socket,
      writable: socket,
      ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
      ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
      info: this.info,
      closeOnEnd: false,
      onClose: () => {
        this.#socket.off("end", this.#onInputEnd);
        this.#socket.off("close", this.#onSocketClose);
        this.#inFlight.clear();
        return endSocket(socket, graceMs);
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
    if (this.#started) throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServerTransport: already started");
    this.#started = true;
    await this.#inner.start();
    // After the inner transport's listeners: a last line without newline is delivered first.
    this.#socket.on("end", this.#onInputEnd);
    this.#socket.on("close", this.#onSocketClose);
    // A socket whose input had already ended may have emitted 'end' before these listeners existed.
    if (this.#socket.readableEnded) this.#onInputEnd();
  }

  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    const write = this.#inner.send(message, options);
    this.#inFlight.writing(message, write);
    return write;
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  readonly #onInputEnd = (): void => {
    if (this.#inputEnded) return;
    this.#inputEnded = true;
    void this.#inFlight.idle(this.#drainTimeoutMs).then(() => this.#inner.close());
  };

  readonly #onSocketClose = (hadError: boolean): void => {
    if (hadError) return; // the 'error' event already closed the transport with its cause
    void this.#inner.close();
  };
}

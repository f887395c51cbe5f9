/**
 * The harness side of stdio (spec §13.1): NDJSON on this process's stdin/stdout. Only JSON-RPC
 * lines are ever written to stdout (logs belong on stderr). End of stdin means "no more
 * requests": the answers to requests already received are still written, then the transport
 * closes — so `printf '<request>\n' | harness` prints its response, as with the reference.
 */
import type { Readable, Writable } from "node:stream";
import {
  AhpLocalError,
  InFlightRequests,
  NdjsonStreamTransport,
  type AhpServer,
  type JsonRpcMessage,
  type MessageLimits,
  type Transport,
  type TransportInfo,
  type TransportSendOptions,
} from "@ahp/core";

export interface StdioServerTransportOptions extends MessageLimits {
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. Never ended by the transport. */
  stdout?: Writable;
  /**
   * After end of input, how long to wait for the answers to requests already received before
   * closing (ms). Default 30000. Handlers time out on their own (the server's `handlerTimeoutMs`).
   */
  drainTimeoutMs?: number;
}

export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

export class StdioServerTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info: TransportInfo = { transport: "stdio" };
  /** Resolves once the transport closed (end of input and answers written, or close()), with the cause if any. */
  readonly closed: Promise<Error | undefined>;

  readonly #stdin: Readable;
  readonly #inner: NdjsonStreamTransport;
  readonly #inFlight = new InFlightRequests();
  readonly #drainTimeoutMs: number;
  #started = false;
  #inputEnded = false;
  #resolveClosed!: (error: Error | undefined) => void;

  constructor(options: StdioServerTransportOptions = {}) {
    this.#stdin = options.stdin ?? process.stdin;
    this.#drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    const inner = new NdjsonStreamTransport({
      readable: this.#stdin,
      writable: options.stdout ?? process.stdout,
      ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
      ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
      info: this.info,
      closeOnEnd: false,
      onClose: () => this.#release(),
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
    if (this.#started) throw new AhpLocalError("INVALID_ARGUMENT", "StdioServerTransport: already started");
    this.#started = true;
    await this.#inner.start();
    // Registered after the inner transport's listeners, so a last line without a newline has
    // been delivered (and counted) before the drain starts.
    this.#stdin.on("end", this.#onInputEnd);
    this.#stdin.on("close", this.#onInputEnd);
    // A stream that had already ended may have emitted 'end' before these listeners existed.
    if (this.#stdin.readableEnded || this.#stdin.destroyed) this.#onInputEnd();
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

  #release(): void {
    this.#stdin.off("end", this.#onInputEnd);
    this.#stdin.off("close", this.#onInputEnd);
    // Stop reading so that an open stdin no longer keeps the process alive.
    this.#stdin.pause();
    this.#inFlight.clear();
  }
}

export interface ServeStdioOptions extends StdioServerTransportOptions {
  /** Aborting closes the connection. */
  signal?: AbortSignal;
}

/**
 * Serves `server` on this process's stdin/stdout. Resolves once the agent ended stdin and the
 * answers to its requests were written (or `signal` aborted, or stdout broke), with the close
 * cause when there was one.
 */
export async function serveStdio(server: AhpServer, options: ServeStdioOptions = {}): Promise<Error | undefined> {
  const transport = new StdioServerTransport(options);
  const signal = options.signal;
  await server.connect(transport);
  const onAbort = () => void transport.close();
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await transport.closed;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** Two in-memory transports wired to each other, for tests, embedding and benchmarks. */
import { AhpLocalError, toError } from "./errors.js";
import { parseJsonText, stringifyMessage } from "./json-text.js";
import type { JsonRpcMessage } from "./schema/jsonrpc.js";
import type { MessageLimits, Transport, TransportInfo } from "./transport.js";

/** Options of {@link createLinkedPair}: message limits, and how a message is copied from one end to the other. */
export interface LinkedPairOptions extends MessageLimits {
  /**
   * `json` (default): every message is stringified and parsed, exactly as on a wire (limits
   * apply, objects are never shared). `clone`: `structuredClone`. `none`: the same object is
   * handed over (fastest; the receiver must not mutate it).
   */
  encoding?: "json" | "clone" | "none";
}

/**
 * One end of an in-process connection made by {@link createLinkedPair}. By default messages pass through JSON text, so limits apply
 * as on a wire; messages that arrive before start() are queued.
 */
export class InMemoryTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info: TransportInfo = { transport: "memory" };

  peer?: InMemoryTransport;
  #started = false;
  #closed = false;
  #queue: unknown[] = [];
  readonly #options: LinkedPairOptions;

  constructor(options: LinkedPairOptions = {}) {
    this.#options = options;
  }

  async start(): Promise<void> {
    this.#started = true;
    const queued = this.#queue;
    this.#queue = [];
    for (const message of queued) this.#receive(message);
  }

  async send(message: JsonRpcMessage): Promise<void> {
    this.#post(message);
  }

  /** As `send()`, without a promise (see {@link Transport.post}). */
  post<C>(message: JsonRpcMessage, onFailure: (error: Error, context: C) => void, context: C): void {
    try {
      this.#post(message);
    } catch (error) {
      queueMicrotask(() => onFailure(toError(error), context));
    }
  }

  /** Encodes `message` and delivers it to the peer in a microtask; throws when it cannot. */
  #post(message: JsonRpcMessage): void {
    if (this.#closed) throw new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
    const peer = this.peer;
    if (peer === undefined || peer.#closed) throw new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
    let payload: unknown;
    switch (this.#options.encoding ?? "json") {
      case "json":
        payload = stringifyMessage(message, this.#options.maxMessageBytes);
        break;
      case "clone":
        payload = structuredClone(message);
        break;
      default:
        payload = message;
    }
    queueMicrotask(() => peer.#deliver(payload));
  }

  #deliver(payload: unknown): void {
    if (this.#closed) return;
    if (!this.#started) {
      this.#queue.push(payload);
      return;
    }
    this.#receive(payload);
  }

  #receive(payload: unknown): void {
    let value = payload;
    if ((this.#options.encoding ?? "json") === "json") {
      try {
        value = parseJsonText(payload as string, this.#options);
      } catch (error) {
        this.onparseerror?.(error as never);
        return;
      }
    }
    this.onmessage?.(value);
  }

  /** Delivers a raw text frame as if a foreign peer had written it (for tests of bad input). */
  injectText(text: string): void {
    queueMicrotask(() => {
      if (this.#closed) return;
      try {
        this.onmessage?.(parseJsonText(text, this.#options));
      } catch (error) {
        this.onparseerror?.(error as never);
      }
    });
  }

  async close(): Promise<void> {
    this.#closeWith();
    const peer = this.peer;
    if (peer !== undefined && !peer.#closed) queueMicrotask(() => peer.#closeWith());
  }

  #closeWith(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.onclose?.(error);
  }

  /** Simulates the connection dying with a cause (both ends see it). */
  fail(error: Error): void {
    this.#closeWith(error);
    const peer = this.peer;
    if (peer !== undefined) queueMicrotask(() => peer.#closeWith(error));
  }
}

/** Returns `[agentSide, harnessSide]`, connected to each other. */
export function createLinkedPair(options: LinkedPairOptions = {}): [InMemoryTransport, InMemoryTransport] {
  const a = new InMemoryTransport(options);
  const b = new InMemoryTransport(options);
  a.peer = b;
  b.peer = a;
  return [a, b];
}

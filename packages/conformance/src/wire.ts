/**
 * A message-level test client: sends exactly the JSON objects it is given through a client-side
 * {@link Transport} (numeric ids, missing params, wrong `jsonrpc`, ...) and records everything
 * that comes back, so the harness is tested as a foreign agent would hit it.
 */
import { randomUUID } from "node:crypto";
import type { JsonRpcMessage, Transport } from "@ahp/core";
import type { ConformanceErrorRecord, ConformanceRecord, LogWait } from "./log.js";
import { CONFORMANCE_QUERY } from "./server.js";
import { queryParams, request } from "./fixtures.js";

export type WireMessage = Record<string, unknown>;

interface Waiter {
  matches: (message: unknown) => boolean;
  resolve: (message: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export const isRecord = (value: unknown): value is WireMessage => value !== null && typeof value === "object" && !Array.isArray(value);

/** True for a response (no `method`) whose `id` is exactly `id`. */
export const isResponseTo =
  (id: unknown) =>
  (message: unknown): boolean =>
    isRecord(message) && !("method" in message) && "id" in message && message.id === id;

export class WireClient {
  /** Every value received, in arrival order. */
  readonly received: unknown[] = [];
  /** Frames the transport could not decode. */
  readonly parseErrors: Error[] = [];
  readonly transport: Transport;
  readonly timeoutMs: number;
  readonly #waiters = new Set<Waiter>();
  readonly #tag = randomUUID().slice(0, 8);
  #counter = 0;
  #closed = false;
  #closeCause?: Error;

  private constructor(transport: Transport, timeoutMs: number) {
    this.transport = transport;
    this.timeoutMs = timeoutMs;
  }

  /** Takes over the transport's callbacks and starts it. */
  static async open(transport: Transport, options: { timeoutMs?: number } = {}): Promise<WireClient> {
    const client = new WireClient(transport, options.timeoutMs ?? 5000);
    transport.onmessage = (message) => client.#onMessage(message);
    transport.onparseerror = (error) => client.parseErrors.push(error);
    transport.onerror = () => undefined;
    transport.onclose = (error) => client.#onClose(error);
    await transport.start();
    return client;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** A fresh request id (unique per client). */
  id(label = "r"): string {
    return `${label}-${this.#tag}-${++this.#counter}`;
  }

  /** Sends one value exactly as given. */
  send(message: unknown): Promise<void> {
    return this.transport.send(message as JsonRpcMessage);
  }

  /** Position in `received`, for {@link since}. */
  mark(): number {
    return this.received.length;
  }

  since(mark: number): unknown[] {
    return this.received.slice(mark);
  }

  /**
   * Resolves with the first message matching `matches` received at or after position `from`
   * (default: only future messages); rejects after `timeoutMs` or when the connection closes.
   */
  waitFor(
    matches: (message: unknown) => boolean,
    description: string,
    options: { timeoutMs?: number; from?: number } = {},
  ): { promise: Promise<unknown>; cancel: () => void } {
    const from = options.from ?? this.received.length;
    for (let i = from; i < this.received.length; i++) {
      if (matches(this.received[i])) return { promise: Promise.resolve(this.received[i]), cancel: () => undefined };
    }
    if (this.#closed) {
      return { promise: Promise.reject(this.#closedError(description)), cancel: () => undefined };
    }
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    let waiter!: Waiter;
    const promise = new Promise<unknown>((resolve, reject) => {
      waiter = {
        matches,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(new Error(`no ${description} within ${timeoutMs}ms`));
        }, timeoutMs),
      };
      this.#waiters.add(waiter);
    });
    return {
      promise,
      cancel: () => {
        if (!this.#waiters.delete(waiter)) return;
        clearTimeout(waiter.timer);
        waiter.resolve(undefined);
      },
    };
  }

  /** Sends a request object (any `id`) and resolves with the response carrying that id. */
  async call(message: { id: unknown } & Record<string, unknown>, options: { timeoutMs?: number } = {}): Promise<WireMessage> {
    const wait = this.waitFor(isResponseTo(message.id), `response to id ${JSON.stringify(message.id)}`, options);
    try {
      await this.send(message);
    } catch (error) {
      wait.cancel();
      throw error;
    }
    return (await wait.promise) as WireMessage;
  }

  /** Sends a request and returns its `result`; throws with the response when it is an error. */
  async result(message: { id: unknown } & Record<string, unknown>): Promise<unknown> {
    const response = await this.call(message);
    if (!("result" in response)) throw new Error(`expected a result, got ${JSON.stringify(response)}`);
    return response.result;
  }

  /** `ahp/query` and its `answer`. */
  async query(sessionId: string, queryType: string, payload: unknown): Promise<unknown> {
    const result = await this.result(request(this.id("q"), "ahp/query", queryParams(sessionId, queryType, payload)));
    if (!isRecord(result)) throw new Error(`query result is not an object: ${JSON.stringify(result)}`);
    return result.answer;
  }

  /**
   * The harness's records for `sessionId`, once they are complete (see `conformance/log`).
   * On a stream connection the answer also marks that everything sent before it was processed.
   */
  async log(sessionId: string, wait: Omit<LogWait, "session_id"> = {}): Promise<ConformanceRecord[]> {
    // Half the response timeout: a log that never completes is answered (and then fails an assertion) before the call times out.
    const answer = (await this.query(sessionId, CONFORMANCE_QUERY.log, {
      session_id: sessionId,
      timeout_ms: Math.floor(this.timeoutMs / 2),
      ...wait,
    })) as {
      records: ConformanceRecord[];
    };
    return answer.records;
  }

  /** Problems the server reported after error number `since`. */
  async errors(since = 0): Promise<{ errors: ConformanceErrorRecord[]; last: number }> {
    return (await this.query("conformance", CONFORMANCE_QUERY.errors, { since })) as { errors: ConformanceErrorRecord[]; last: number };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.transport.close();
    this.#onClose(undefined);
  }

  #onMessage(message: unknown): void {
    this.received.push(message);
    for (const waiter of [...this.#waiters]) {
      if (!waiter.matches(message)) continue;
      this.#waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.resolve(message);
    }
  }

  #closedError(description: string): Error {
    return new Error(`connection closed while waiting for ${description}`, this.#closeCause ? { cause: this.#closeCause } : undefined);
  }

  #onClose(error: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeCause = error;
    for (const waiter of [...this.#waiters]) {
      this.#waiters.delete(waiter);
      clearTimeout(waiter.timer);
      waiter.reject(this.#closedError("a response"));
    }
  }
}

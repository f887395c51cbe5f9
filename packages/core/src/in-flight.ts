/**
 * Bookkeeping for a graceful end of input on a server-side stream connection.
 *
 * When the agent ends its side (end of stdin, a half-closed socket) it may still be waiting for
 * answers to the requests it already wrote: `printf '<request>\n' | harness` must print the
 * response. A stream transport counts the requests it received and the answers it wrote, and
 * on end of input waits for {@link InFlightRequests.idle} before it closes.
 */
import { LargeIntegerId } from "./large-id.js";
import type { JsonRpcId } from "./schema/jsonrpc.js";

/**
 * Counts the requests a server-side stream connection received and the answers it wrote, so that on end of input the transport can
 * wait until every request is answered before closing.
 */
export class InFlightRequests {
  readonly #ids = new Map<JsonRpcId, number>();
  #requests = 0;
  /** The latest write; writes complete in order, so once it settled every earlier one has. */
  #lastWrite: Promise<unknown> | undefined;
  #waiters: Array<() => void> = [];

  /** Requests received and not yet answered. */
  get size(): number {
    return this.#requests;
  }

  /** Records an incoming message; counts it when it is a request (a `method` and a string or integer `id`). */
  received(message: unknown): void {
    const id = requestId(message);
    if (id === undefined) return;
    this.#ids.set(id, (this.#ids.get(id) ?? 0) + 1);
    this.#requests++;
  }

  /**
   * Records an outgoing message (and its write, when there is a promise for it): a response
   * answers the request with its id.
   */
  writing(message: unknown, write?: Promise<unknown>): void {
    if (write !== undefined) this.#lastWrite = write;
    const id = responseId(message);
    if (id === undefined) return;
    const count = this.#ids.get(id);
    if (count === undefined) return;
    if (count <= 1) this.#ids.delete(id);
    else this.#ids.set(id, count - 1);
    if (--this.#requests === 0) this.#wake();
  }

  /**
   * Resolves `true` once every counted request has been answered and the last write settled, or
   * `false` when `timeoutMs` passes first. The timer is cleared either way.
   */
  idle(timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (value: boolean) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        resolve(value);
      };
      const answered = () => {
        const last = this.#lastWrite;
        if (last === undefined) finish(true);
        else
          last.then(
            () => finish(true),
            () => finish(true),
          );
      };
      if (timeoutMs >= 0 && Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          this.#waiters = this.#waiters.filter((w) => w !== answered);
          finish(false);
        }, timeoutMs);
      }
      if (this.#requests === 0) answered();
      else this.#waiters.push(answered);
    });
  }

  /** Forgets everything and releases waiters (used when the connection closes). */
  clear(): void {
    this.#ids.clear();
    this.#requests = 0;
    this.#lastWrite = undefined;
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter();
  }
}

function requestId(message: unknown): JsonRpcId | undefined {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  if (typeof m.method !== "string") return undefined;
  const id = m.id;
  if (id instanceof LargeIntegerId) return id as unknown as JsonRpcId; // the answer carries this same object
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : undefined;
}

function responseId(message: unknown): JsonRpcId | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const m = message as Record<string, unknown>;
  if ("method" in m) return undefined;
  const id = m.id;
  if (id instanceof LargeIntegerId) return id as unknown as JsonRpcId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

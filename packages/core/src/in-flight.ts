/**
 * Bookkeeping for a graceful end of input on a server-side stream connection.
 *
 * When the agent ends its side (end of stdin, a half-closed socket) it may still be waiting for
 * answers to the requests it already wrote: `printf '<request>\n' | harness` must print the
 * response. A stream transport counts the requests it received and the writes it has in
 * progress, and on end of input waits for {@link InFlightRequests.idle} before it closes.
 */
import type { JsonRpcId } from "./schema/jsonrpc.js";

export class InFlightRequests {
  readonly #ids = new Map<JsonRpcId, number>();
  #requests = 0;
  #writes = 0;
  #waiters: Array<() => void> = [];

  /** Requests received and not yet answered. */
  get size(): number {
    return this.#requests;
  }

  /** Writes started and not yet settled. */
  get writes(): number {
    return this.#writes;
  }

  /** Records an incoming message; counts it when it is a request (a `method` and a string or integer `id`). */
  received(message: unknown): void {
    const id = requestId(message);
    if (id === undefined) return;
    this.#ids.set(id, (this.#ids.get(id) ?? 0) + 1);
    this.#requests++;
  }

  /** Call before writing `message`; pair with {@link written}. */
  writing(): void {
    this.#writes++;
  }

  /** Call once the write of `message` settled (written or failed): a response answers its request. */
  written(message: unknown): void {
    if (this.#writes > 0) this.#writes--;
    const id = responseId(message);
    if (id !== undefined) {
      const count = this.#ids.get(id);
      if (count !== undefined) {
        if (count <= 1) this.#ids.delete(id);
        else this.#ids.set(id, count - 1);
        this.#requests--;
      }
    }
    if (this.#requests === 0 && this.#writes === 0) this.#wake();
  }

  /**
   * Resolves `true` once every counted request has been answered and every write settled, or
   * `false` when `timeoutMs` passes first. The timer is cleared either way.
   */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.#requests === 0 && this.#writes === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter = () => {
        if (timer !== undefined) clearTimeout(timer);
        resolve(true);
      };
      this.#waiters.push(waiter);
      if (timeoutMs >= 0 && Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs);
      }
    });
  }

  /** Forgets everything and releases waiters (used when the connection closes). */
  clear(): void {
    this.#ids.clear();
    this.#requests = 0;
    this.#writes = 0;
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
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : undefined;
}

function responseId(message: unknown): JsonRpcId | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const m = message as Record<string, unknown>;
  if ("method" in m) return undefined;
  const id = m.id;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

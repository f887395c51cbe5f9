/**
 * A minimal JSON-RPC 2.0 requester over any `@ahp/core` Transport, for the bridge. It hands back
 * the raw `result` (the bridge validates AHP decisions itself per spec §5.5, including deny
 * salvage and `metadata` on every variant, which a schema-decoding client would strip), and it
 * keeps the hook command's import graph free of schema libraries.
 */
import type { Transport } from "@ahp/core";
import { EngineFailure } from "../errors.js";

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: EngineFailure) => void;
  timer?: ReturnType<typeof setTimeout>;
  cleanup: () => void;
}

/** Options of an {@link RpcChannel}. */
export interface RpcOptions {
  /** Engine id used in failures. */
  readonly engineId?: string;
  /** Request id generator; default: a random UUID v4 ({@link newRequestId}). */
  readonly generateId?: () => string;
  /** Non-fatal problems (undecodable frames, stray responses). */
  readonly onerror?: (error: Error) => void;
}

const defaultId = (): string => {
  // UUID v4 without importing node:crypto's randomUUID at module load.
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const h = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};
/** Returns a random UUID v4, the default JSON-RPC request id of {@link RpcChannel} (uses `globalThis.crypto`). */
export const newRequestId = defaultId;

/**
 * A minimal JSON-RPC 2.0 requester over an `@ahp/core` `Transport`, used by {@link AhpBridge} to
 * reach the harness. It hands back the raw `result` so the bridge validates decisions itself
 * (spec §5.5). Every failure rejects with an {@link EngineFailure}: `transport` (cannot connect,
 * send failed, connection closed: all pending requests fail at once), `timeout`, `protocol`
 * (id mismatch, wrong `jsonrpc`, no `result`) or `engine_error` (a JSON-RPC error object).
 */
export class RpcChannel {
  readonly #transport: Transport;
  readonly #options: RpcOptions;
  readonly #pending = new Map<string | number, Pending>();
  #started?: Promise<void>;
  #closed?: EngineFailure;

  /** Wraps `transport`; nothing is sent until {@link RpcChannel.start} or the first request. */
  constructor(transport: Transport, options: RpcOptions = {}) {
    this.#transport = transport;
    this.#options = options;
  }

  /** `true` once the connection closed or {@link RpcChannel.close} was called; later calls reject. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** Starts the transport (idempotent). Rejects with an `EngineFailure("transport")` when it cannot connect. */
  start(): Promise<void> {
    this.#started ??= (async () => {
      const t = this.#transport;
      t.onmessage = (message) => this.#onMessage(message);
      t.onparseerror = (error) => this.#options.onerror?.(error);
      t.onerror = (error) => this.#options.onerror?.(error);
      t.onclose = (error) => this.#onClose(error);
      try {
        await t.start();
      } catch (error) {
        const failure = this.#failure("transport", `cannot connect: ${messageOf(error)}`, error);
        this.#closed = failure;
        throw failure;
      }
    })();
    return this.#started;
  }

  #failure(cause: ConstructorParameters<typeof EngineFailure>[0], message: string, error?: unknown): EngineFailure {
    return new EngineFailure(cause, message, {
      ...(this.#options.engineId === undefined ? {} : { engineId: this.#options.engineId }),
      ...(error === undefined ? {} : { cause: error }),
    });
  }

  /** Sends a request; resolves with `{id, result}` or rejects with an EngineFailure. */
  async request(
    method: string,
    params: unknown,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<{ id: string | number; result: unknown }> {
    await this.start();
    if (this.#closed !== undefined) throw this.#closed;
    const id = (this.#options.generateId ?? defaultId)();
    const { timeoutMs, signal } = options;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const pending = this.#pending.get(id);
        if (pending === undefined) return;
        this.#pending.delete(id);
        pending.cleanup();
        const reason: unknown = signal?.reason;
        reject(EngineFailure.isInstance(reason) ? reason : this.#failure("timeout", "request aborted", reason));
      };
      const pending: Pending = {
        resolve: (result) => resolve({ id, result }),
        reject,
        cleanup: () => {
          if (pending.timer !== undefined) clearTimeout(pending.timer);
          signal?.removeEventListener("abort", onAbort);
        },
      };
      if (signal?.aborted) {
        const reason: unknown = signal.reason;
        reject(EngineFailure.isInstance(reason) ? reason : this.#failure("timeout", "request aborted", reason));
        return;
      }
      if (timeoutMs !== undefined && timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        pending.timer = setTimeout(() => {
          this.#pending.delete(id);
          pending.cleanup();
          reject(this.#failure("timeout", `no response within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, pending);
      this.#transport.send({ jsonrpc: "2.0", id, method, params }).catch((error: unknown) => {
        if (!this.#pending.delete(id)) return;
        pending.cleanup();
        reject(this.#failure("transport", `send failed: ${messageOf(error)}`, error));
      });
    });
  }

  /** Sends a notification; resolves once written. */
  async notify(method: string, params: unknown): Promise<void> {
    await this.start();
    if (this.#closed !== undefined) throw this.#closed;
    try {
      await this.#transport.send({ jsonrpc: "2.0", method, params });
    } catch (error) {
      throw this.#failure("transport", `send failed: ${messageOf(error)}`, error);
    }
  }

  #onMessage(message: unknown): void {
    if (typeof message !== "object" || message === null || Array.isArray(message)) return;
    const m = message as Record<string, unknown>;
    if ("method" in m) return; // AHP 2.4 has no harness-to-agent requests
    const id = m.id;
    const pending = typeof id === "string" || typeof id === "number" ? this.#pending.get(id) : undefined;
    if (pending === undefined) {
      // A response we cannot match: with exactly one call in flight it is an id mismatch (§5.9).
      if (this.#pending.size === 1 && ("result" in m || "error" in m)) {
        const [onlyKey, only] = [...this.#pending][0]!;
        this.#pending.delete(onlyKey);
        only.cleanup();
        only.reject(this.#failure("protocol", `response id mismatch: expected ${JSON.stringify(onlyKey)}, got ${JSON.stringify(id)}`));
        return;
      }
      this.#options.onerror?.(new Error(`response with unknown id ${JSON.stringify(id)} ignored`));
      return;
    }
    this.#pending.delete(id as string | number);
    pending.cleanup();
    if (m.jsonrpc !== "2.0") {
      pending.reject(this.#failure("protocol", `invalid JSON-RPC version ${JSON.stringify(m.jsonrpc)}`));
      return;
    }
    if (m.error !== undefined && m.error !== null) {
      const e = m.error as { code?: unknown; message?: unknown };
      const code = typeof e.code === "number" ? e.code : "?";
      const text = typeof e.message === "string" ? e.message : JSON.stringify(m.error);
      pending.reject(this.#failure("engine_error", `JSON-RPC error ${code}: ${text}`));
      return;
    }
    if (m.result === undefined || m.result === null) {
      pending.reject(this.#failure("protocol", "response without a result"));
      return;
    }
    pending.resolve(m.result);
  }

  #onClose(error?: Error): void {
    const failure = this.#failure("transport", error === undefined ? "connection closed" : `connection closed: ${error.message}`, error);
    this.#closed ??= failure;
    for (const pending of this.#pending.values()) {
      pending.cleanup();
      pending.reject(failure);
    }
    this.#pending.clear();
  }

  /** Fails every pending request with `connection closed` and closes the transport (best effort; never rejects). */
  async close(): Promise<void> {
    if (this.#closed === undefined) this.#closed = this.#failure("transport", "connection closed");
    for (const pending of this.#pending.values()) {
      pending.cleanup();
      pending.reject(this.#closed);
    }
    this.#pending.clear();
    try {
      await this.#transport.close();
    } catch {
      // closing is best effort
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `RedisActionStream`: the shared log of Agent Host replication (ADR 0085) on one Redis Stream.
 * Every replica appends its entries with `XADD` (trimmed with `MAXLEN ~`) on one connection, so
 * its own entries stay in order, and tails the stream with `XREAD BLOCK` on a second, dedicated
 * connection, so a blocked read never delays an append. Structurally an `ActionRelay` of
 * `@ahp/agent-host` (this package does not depend on it).
 */
import type { RedisClientType } from "@redis/client";
import { redisClient, scrub, withTimeout, type RedisConnectionOptions } from "./connection.js";
import { redactRedisUrl } from "./store.js";

/** Where the stream is and how to reach it. */
export interface RedisActionStreamOptions extends RedisConnectionOptions {
  /** The stream's key, one per deployment. Default `ahp:agent-host:actions`. */
  key?: string;
  /** Entries kept (approximately, `MAXLEN ~`). Default 10 000, the Agent Host's replay log. */
  maxLen?: number;
  /** An append not acknowledged within this time fails. Default 1000 ms. */
  commandTimeoutMs?: number;
  /** How long one `XREAD` blocks (the reader loops). Default 5000 ms. */
  blockMs?: number;
  /** Connection problems (never carries the password). Library code never logs. */
  onerror?: (error: Error) => void;
}

/** Counters of a stream since it was created. */
export interface RedisActionStreamStats {
  /** Entries appended. */
  appended: number;
  /** Appends that failed (unreachable, timed out). */
  appendFailures: number;
  /** Entries read from the stream (every replica's). */
  read: number;
  /** Whether appends can succeed now. */
  connected: boolean;
}

/** The subscriber of a {@link RedisActionStream}: the same shape as `ActionRelayListener` of `@ahp/agent-host`. */
export interface RedisActionStreamListener {
  /** Entries in stream order. */
  entries(entries: readonly string[]): void;
  /** Tailing started or resumed after the connection was lost (entries of that time may be missing). */
  connected(): void;
}

/** One Redis Stream that every harness replica appends its Agent Host entries to and tails (see the package README). */
export class RedisActionStream {
  readonly #writer: RedisClientType;
  readonly #reader: RedisClientType;
  readonly #key: string;
  readonly #maxLen: string;
  readonly #timeoutMs: number;
  readonly #blockMs: number;
  readonly #url: string;
  readonly #options: RedisActionStreamOptions;
  readonly #stats = { appended: 0, appendFailures: 0, read: 0 };
  readonly #connecting: Array<Promise<void>> = [];
  #listener: RedisActionStreamListener | undefined;
  #loop: Promise<void> | undefined;
  #closed = false;

  /** Creates the stream's two connections and starts connecting; appends fail until the server is reachable. */
  constructor(options: RedisActionStreamOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new TypeError(`invalid Redis URL ${JSON.stringify(redactRedisUrl(options.url))}: expected redis://HOST:PORT[/DB]`);
    }
    if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:")
      throw new TypeError(`invalid Redis URL ${JSON.stringify(redactRedisUrl(options.url))}: the scheme must be redis: or rediss:`);
    const maxLen = options.maxLen ?? 10_000;
    if (!Number.isInteger(maxLen) || maxLen < 1) throw new RangeError("maxLen must be a positive integer");
    this.#options = options;
    this.#url = redactRedisUrl(options.url);
    this.#key = options.key ?? "ahp:agent-host:actions";
    this.#maxLen = String(maxLen);
    this.#timeoutMs = options.commandTimeoutMs ?? 1000;
    this.#blockMs = options.blockMs ?? 5000;
    this.#writer = this.#client();
    this.#reader = this.#client();
  }

  #client(): RedisClientType {
    // Appends fail at once while the connection is down: the Agent Host re-announces its state when it is back.
    const client = redisClient(this.#options, () => this.#closed);
    client.on("error", (error: unknown) => this.#report(error));
    this.#connecting.push(
      client.connect().then(
        () => undefined,
        (error: unknown) => this.#report(error),
      ),
    );
    return client;
  }

  /** Whether appends can succeed now. */
  get connected(): boolean {
    return !this.#closed && this.#writer.isReady && this.#reader.isReady;
  }

  /** Resolves true once both connections are up, or false when `timeoutMs` passes first. */
  async ready(timeoutMs = this.#options.connectTimeoutMs ?? 2000): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (!this.connected && Date.now() < until && !this.#closed) await delay(20);
    return this.connected;
  }

  /** Appends, failures and entries read so far, and whether the stream is usable now. */
  stats(): RedisActionStreamStats {
    return { ...this.#stats, connected: this.connected };
  }

  /** Appends entries in order (pipelined on one connection). Rejects when the server cannot be reached in time. */
  async publish(entries: readonly string[]): Promise<void> {
    if (entries.length === 0) return;
    try {
      if (this.#closed) throw new Error("the action stream is closed");
      if (!this.#writer.isReady) throw new Error(`not connected to ${this.#url}`);
      const sent = entries.map((entry) => this.#writer.sendCommand(["XADD", this.#key, "MAXLEN", "~", this.#maxLen, "*", "e", entry]));
      await this.#withTimeout(Promise.all(sent));
      this.#stats.appended += entries.length;
    } catch (error) {
      this.#stats.appendFailures += entries.length;
      throw new Error(`Redis ${this.#url}: ${scrub(error instanceof Error ? error.message : String(error), this.#options.password)}`, {
        cause: error,
      });
    }
  }

  /** Starts tailing the stream from its current end; one subscriber per stream. Returns a function that stops it. */
  subscribe(listener: RedisActionStreamListener): () => void {
    if (this.#listener !== undefined) throw new Error("the action stream already has a subscriber");
    this.#listener = listener;
    this.#loop = this.#tail();
    return () => {
      this.#listener = undefined;
    };
  }

  async #tail(): Promise<void> {
    // Starts at the stream's end; after an outage resumes after the last entry read (nothing missed
    // unless trimmed meanwhile) and tells the listener, which re-announces what it may have lost.
    let last: string | undefined;
    let announce = true;
    const min = this.#options.reconnect?.minDelayMs ?? 50;
    let backoff = min;
    while (!this.#closed && this.#listener !== undefined) {
      try {
        if (!this.#reader.isReady || !this.#writer.isReady) {
          await delay(backoff);
          backoff = Math.min(backoff * 2, this.#options.reconnect?.maxDelayMs ?? 2000);
          continue;
        }
        if (last === undefined) {
          const top = await this.#withTimeout(this.#reader.sendCommand(["XREVRANGE", this.#key, "+", "-", "COUNT", "1"]));
          last = firstId(top) ?? "0-0";
        }
        if (announce) {
          announce = false;
          backoff = min;
          this.#listener?.connected();
        }
        const reply = await this.#reader.sendCommand([
          "XREAD",
          "COUNT",
          "1000",
          "BLOCK",
          String(this.#blockMs),
          "STREAMS",
          this.#key,
          last,
        ]);
        const batch = parseRead(reply);
        if (batch.length === 0) continue;
        last = batch[batch.length - 1]![0];
        this.#stats.read += batch.length;
        this.#listener?.entries(batch.map((b) => b[1]));
      } catch (error) {
        if (this.#closed) return;
        this.#report(error);
        announce = true;
        await delay(backoff);
        backoff = Math.min(backoff * 2, this.#options.reconnect?.maxDelayMs ?? 2000);
      }
    }
  }

  #withTimeout<T>(promise: Promise<T>): Promise<T> {
    return withTimeout(promise, this.#timeoutMs, this.#url);
  }

  #report(error: unknown): void {
    this.#options.onerror?.(
      new Error(`Redis ${this.#url}: ${scrub(error instanceof Error ? error.message : String(error), this.#options.password)}`, {
        cause: error,
      }),
    );
  }

  /** Deletes the stream (tests, a fresh deployment). */
  async reset(): Promise<void> {
    if (!(await this.ready())) throw new Error(`not connected to ${this.#url}`);
    await this.#writer.sendCommand(["DEL", this.#key]);
  }

  /** Stops tailing, lets pending appends finish, closes both connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listener = undefined;
    await Promise.all(this.#connecting);
    // The reader may be blocked in XREAD: drop its connection instead of waiting for the block to end.
    this.#reader.destroy();
    await this.#loop?.catch(() => undefined);
    if (this.#writer.isOpen) {
      try {
        await this.#writer.close();
      } catch {
        this.#writer.destroy();
      }
    } else this.#writer.destroy();
  }
}

const delay = (ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref?.();
  });

/** The id of the first entry of an `XRANGE`/`XREVRANGE` reply. */
function firstId(reply: unknown): string | undefined {
  if (!Array.isArray(reply) || reply.length === 0) return undefined;
  const entry: unknown = reply[0];
  return Array.isArray(entry) ? String(entry[0]) : undefined;
}

/** `[id, entry text]` pairs of an `XREAD` reply for one stream (RESP2 arrays or RESP3 maps). */
function parseRead(reply: unknown): Array<[string, string]> {
  if (reply === null || reply === undefined) return [];
  let streams: unknown[] = [];
  if (Array.isArray(reply)) streams = reply.map((s: unknown): unknown => (Array.isArray(s) ? (s[1] as unknown) : undefined));
  else if (reply instanceof Map) streams = [...(reply.values() as Iterable<unknown>)];
  else if (typeof reply === "object") streams = Object.values(reply);
  const out: Array<[string, string]> = [];
  for (const entries of streams) {
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) {
      if (!Array.isArray(entry)) continue;
      const id = String(entry[0]);
      const fields: unknown = entry[1];
      let text: string | undefined;
      if (Array.isArray(fields)) {
        for (let i = 0; i + 1 < fields.length; i += 2) if (String(fields[i]) === "e") text = String(fields[i + 1]);
      } else if (fields instanceof Map) text = fields.get("e") === undefined ? undefined : String(fields.get("e"));
      else if (fields !== null && typeof fields === "object") {
        const value = (fields as Record<string, unknown>).e;
        text = value === undefined ? undefined : String(value);
      }
      if (text !== undefined) out.push([id, text]);
    }
  }
  return out;
}

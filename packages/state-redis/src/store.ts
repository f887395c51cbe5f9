/**
 * `RedisStateStore`: the policy's rate-limit buckets and session counters on one Redis server,
 * shared by every harness replica that points at it. One `EVALSHA` per step (the script is
 * loaded once per connection and called by its SHA; a server that lost it gets it again).
 */
import type { RedisClientType } from "@redis/client";
import {
  PolicyStateError,
  type CounterDelta,
  type PolicyStateStore,
  type SessionSnapshot,
  type StateStep,
  type StateStepResult,
} from "@ahp/policy";
import { DELTA_ARGS, NAME_SEPARATOR, SNAPSHOT_FIELDS, STEP_SCRIPT } from "./script.js";
import { createHash } from "node:crypto";
import { redisClient, scrub, withTimeout, type RedisConnectionOptions } from "./connection.js";

/** Where the Redis server is, how to reach it, and how long to wait. */
export interface RedisStateStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key (default `ahp:policy:`): harness deployments that share a server use different prefixes. */
  keyPrefix?: string;
  /** Idle time after which a session's or agent's state expires (default 1 h, as the in-memory engine). */
  ttlMs?: number;
  /** A step not answered within this time fails (and the decision that needed it fails closed). Default 1000 ms. */
  commandTimeoutMs?: number;
  /** Connection problems and recoveries (never carries the password). Library code never logs. */
  onerror?: (error: Error) => void;
  /** The connection became usable (`ready`) or stopped being so (`down`). */
  onstatus?: (status: "ready" | "down", detail: { url: string; error?: string }) => void;
}

/** Counters of a store since it was created. */
export interface RedisStateStoreStats {
  /** Steps sent (one round trip each). */
  steps: number;
  /** Steps that failed (unreachable, timed out, script error). */
  failures: number;
  /** Times the script was loaded: once per connection, and again if the server lost it. */
  scriptLoads: number;
  /** Whether the connection is usable now. */
  ready: boolean;
}

/** The answer of {@link RedisStateStore.ping}: the server answered (and how fast), or why not. */
export type RedisPing = { ok: true; latencyMs: number } | { ok: false; error: string };

const SHA = createHash("sha1").update(STEP_SCRIPT).digest("hex");

/** The URL without its password, for logs. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "(invalid Redis URL)";
  }
}

/** Policy state on one Redis server, shared by every replica that points at it (see the package README). */
export class RedisStateStore implements PolicyStateStore {
  readonly #client: RedisClientType;
  readonly #prefix: string;
  readonly #ttl: string;
  readonly #timeoutMs: number;
  readonly #options: RedisStateStoreOptions;
  readonly #url: string;
  readonly #stats = { steps: 0, failures: 0, scriptLoads: 0 };
  #closed = false;
  #connecting: Promise<void> | undefined;

  /** Creates the store and starts connecting; steps fail (closed) until the server is reachable. */
  constructor(options: RedisStateStoreOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new TypeError(
        `invalid Redis URL ${JSON.stringify(redactRedisUrl(options.url))}: expected redis://HOST:PORT[/DB] or rediss://…`,
      );
    }
    if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
      throw new TypeError(`invalid Redis URL ${JSON.stringify(redactRedisUrl(options.url))}: the scheme must be redis: or rediss:`);
    }
    const ttl = options.ttlMs ?? 3_600_000;
    if (!Number.isInteger(ttl) || ttl < 1) throw new RangeError("ttlMs must be a positive integer");
    this.#options = options;
    this.#url = redactRedisUrl(options.url);
    this.#prefix = options.keyPrefix ?? "ahp:policy:";
    this.#ttl = String(ttl);
    this.#timeoutMs = options.commandTimeoutMs ?? 1000;
    // Fail at once when the connection is down instead of queueing: a decision must not wait for a reconnect.
    this.#client = redisClient(options, () => this.#closed);
    this.#client.on("error", (error: unknown) => this.#report(error));
    this.#client.on("ready", () => {
      options.onstatus?.("ready", { url: this.#url });
      // Loaded once per connection; steps call it by SHA (and load it again on NOSCRIPT).
      this.#stats.scriptLoads++;
      this.#client.sendCommand(["SCRIPT", "LOAD", STEP_SCRIPT]).catch((error: unknown) => this.#report(error));
    });
    this.#client.on("end", () => options.onstatus?.("down", { url: this.#url }));
    this.#client.on("reconnecting", () => options.onstatus?.("down", { url: this.#url }));
    this.#connecting = this.#client.connect().then(
      () => undefined,
      (error: unknown) => this.#report(error),
    );
  }

  /** Resolves true once connected, or false when `timeoutMs` (default: the connect timeout) passes first. */
  async ready(timeoutMs = this.#options.connectTimeoutMs ?? 2000): Promise<boolean> {
    if (this.#client.isReady) return true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#connecting, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    return this.#client.isReady;
  }

  stats(): RedisStateStoreStats {
    return { ...this.#stats, ready: this.#client.isReady };
  }

  /**
   * One `PING` round trip: whether the server answers now, within `timeoutMs` (default: the command
   * timeout), and how long it took. Never throws; the error never carries the password.
   */
  async ping(timeoutMs = this.#timeoutMs): Promise<RedisPing> {
    if (this.#closed) return { ok: false, error: "the state store is closed" };
    if (!this.#client.isReady) return { ok: false, error: `not connected to ${this.#url}` };
    const started = performance.now();
    try {
      await withTimeout(this.#client.sendCommand(["PING"]), timeoutMs, this.#url);
      return { ok: true, latencyMs: performance.now() - started };
    } catch (error) {
      return { ok: false, error: scrub(error instanceof Error ? error.message : String(error), this.#options.password) };
    }
  }

  async step(step: StateStep): Promise<StateStepResult> {
    this.#stats.steps++;
    const keys = [this.#prefix + "s:" + step.sessionId, this.#prefix + "a:" + step.agentId, this.#prefix + "g"];
    const args: string[] = [this.#ttl, step.readSession === true ? "1" : "0", String(step.takes.length)];
    for (const t of step.takes) {
      args.push(
        t.scope === "session" ? "s" : t.scope === "agent" ? "a" : "g",
        t.key,
        String(t.rate),
        String(t.intervalMs),
        String(t.burst),
      );
    }
    pushDelta(args, step.record);
    pushDelta(args, step.recordIfAllTaken);
    let reply: unknown;
    try {
      reply = await this.#eval(keys, args);
    } catch (error) {
      this.#stats.failures++;
      throw this.#failure(error);
    }
    return parseReply(reply, step.readSession === true);
  }

  async #eval(keys: string[], args: string[]): Promise<unknown> {
    if (this.#closed) throw new Error("the state store is closed");
    if (!this.#client.isReady) throw new Error(`not connected to ${this.#url}`);
    try {
      return await this.#withTimeout(this.#client.sendCommand(["EVALSHA", SHA, String(keys.length), ...keys, ...args]));
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      this.#stats.scriptLoads++;
      await this.#withTimeout(this.#client.sendCommand(["SCRIPT", "LOAD", STEP_SCRIPT]));
      return this.#withTimeout(this.#client.sendCommand(["EVALSHA", SHA, String(keys.length), ...keys, ...args]));
    }
  }

  #withTimeout<T>(promise: Promise<T>): Promise<T> {
    return withTimeout(promise, this.#timeoutMs, this.#url);
  }

  #failure(error: unknown): PolicyStateError {
    const message = error instanceof Error ? error.message : String(error);
    return new PolicyStateError(`policy state store unavailable: ${scrub(message, this.#options.password)}`, { cause: error });
  }

  #report(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.#options.onerror?.(new PolicyStateError(`Redis ${this.#url}: ${scrub(message, this.#options.password)}`, { cause: error }));
  }

  /** Deletes every key under this store's prefix. */
  async reset(): Promise<void> {
    if (!(await this.ready())) throw this.#failure(new Error(`not connected to ${this.#url}`));
    let cursor = "0";
    do {
      const reply = await this.#client.sendCommand<[string, string[]]>([
        "SCAN",
        cursor,
        "MATCH",
        `${globEscape(this.#prefix)}*`,
        "COUNT",
        "500",
      ]);
      cursor = String(reply[0]);
      if (reply[1].length > 0) await this.#client.sendCommand(["UNLINK", ...reply[1]]);
    } while (cursor !== "0");
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#connecting;
    if (this.#client.isOpen) {
      try {
        await this.#client.close();
      } catch {
        this.#client.destroy();
      }
    } else {
      this.#client.destroy();
    }
  }
}

function pushDelta(args: string[], d: CounterDelta | undefined): void {
  if (d === undefined) {
    for (let i = 0; i < DELTA_ARGS; i++) args.push("0");
    return;
  }
  const r = d.reported;
  args.push(
    "1",
    String(d.events ?? 0),
    String(d.prompts ?? 0),
    String(d.actions ?? 0),
    String(d.errors ?? 0),
    String(d.tokens ?? 0),
    d.heartbeatTokens === undefined ? "-1" : String(d.heartbeatTokens),
    r === undefined ? "0" : "1",
    String(r?.total_actions ?? 0),
    String(r?.total_tokens ?? 0),
    String(r?.duration_ms ?? 0),
    String(r?.error_count ?? 0),
    d.closeBackground === true ? "1" : "0",
    d.startBackground === true ? "1" : "0",
    names(d.rewritten),
    names(d.downloads),
  );
}

/** File names for the script, NUL-joined; a name that is empty or holds a NUL is no file name and is left out. */
function names(list: readonly string[] | undefined): string {
  if (list === undefined || list.length === 0) return "";
  return list.filter((n) => n !== "" && !n.includes(NAME_SEPARATOR)).join(NAME_SEPARATOR);
}

function parseReply(reply: unknown, read: boolean): StateStepResult {
  if (!Array.isArray(reply) || reply.length < 3)
    throw new PolicyStateError(`unexpected reply from the state script: ${JSON.stringify(reply)}`);
  const failed = Number(reply[0]);
  const waitMs = Number(reply[1]);
  const now = Number(reply[2]);
  if (!read) return { now, failed, waitMs };
  const f = (i: number): string => String(reply[3 + i] ?? "");
  const n = (i: number): number => (f(i) === "" ? 0 : Number(f(i)));
  const at = (name: (typeof SNAPSHOT_FIELDS)[number]) => SNAPSHOT_FIELDS.indexOf(name);
  const session: SessionSnapshot = {
    firstSeen: f(at("fs")) === "" ? now : n(at("fs")),
    events: n(at("ev")),
    prompts: n(at("pr")),
    actions: n(at("ac")),
    errors: n(at("er")),
    tokens: n(at("tk")),
    heartbeatTokens: n(at("hbt")),
    backgroundRuns: n(at("bgr")),
    backgroundMs: n(at("bgms")),
    backgroundSince: f(at("bgs")) === "" ? undefined : n(at("bgs")),
    reported:
      f(at("rf")) === "1"
        ? { total_actions: n(at("ra")), total_tokens: n(at("rt")), duration_ms: n(at("rd")), error_count: n(at("re")) }
        : undefined,
    downloads: f(at("dl")) === "" ? [] : f(at("dl")).split(NAME_SEPARATOR),
  };
  return { now, failed, waitMs, session };
}

const globEscape = (s: string): string => s.replace(/[*?[\]\\]/g, "\\$&");

/**
 * Bounded per-session and per-agent state: counters for quotas and budgets, token buckets for
 * rate limits. Kept in least-recently-used maps with an idle time-to-live: at most
 * `maxSessions` sessions and `maxAgents` agents, and an entry not touched for `ttlMs` is
 * dropped (its counters start again at zero). No timers: expiry happens on access.
 */
import type { AhpEvent, EventType } from "@ahp/core";

/** Changes one event makes to its session's counters. Zero fields change nothing. */
export interface CounterDelta {
  events?: number;
  prompts?: number;
  actions?: number;
  errors?: number;
  tokens?: number;
  /** A heartbeat's `tokens_used`: the counter keeps the highest value seen. */
  heartbeatTokens?: number;
  /** The agent's own `context.session_stats`, replacing the last one reported. */
  reported?: { total_actions: number; total_tokens: number; duration_ms: number; error_count: number };
  /** Ends the background time of the last allowed idle event (every event but a heartbeat). */
  closeBackground?: boolean;
  /** An allowed idle event: one more background run, whose time starts now. */
  startBackground?: boolean;
  /**
   * An allowed action downloaded these files (base names, lower case): the session remembers the
   * newest `MAX_SESSION_DOWNLOADS` (32) of them, for `runs_download` in later actions.
   */
  downloads?: readonly string[];
  /** An allowed action wrote these files itself (base names, lower case): they are no longer downloads. Applied before `downloads`. */
  rewritten?: readonly string[];
}

/** Token bucket in integer "credit" units (one token = `interval` units) so that waits are exact. */
export class TokenBucket {
  #units: number;
  #updated: number;
  constructor(
    readonly rate: number,
    readonly intervalMs: number,
    readonly burst: number,
    now: number,
  ) {
    this.#units = burst * intervalMs;
    this.#updated = now;
  }

  /** Takes one token: returns 0 when one was available, else the ms until one will be (>= 1). */
  take(now: number): number {
    const capacity = this.burst * this.intervalMs;
    const elapsed = Math.max(0, now - this.#updated);
    this.#units = Math.min(capacity, this.#units + elapsed * this.rate);
    this.#updated = Math.max(this.#updated, now);
    if (this.#units >= this.intervalMs) {
      this.#units -= this.intervalMs;
      return 0;
    }
    return Math.max(1, Math.ceil((this.intervalMs - this.#units) / this.rate));
  }

  /** Tokens available now (fractional), without taking one. */
  available(now: number): number {
    const capacity = this.burst * this.intervalMs;
    const units = Math.min(capacity, this.#units + Math.max(0, now - this.#updated) * this.rate);
    return units / this.intervalMs;
  }
}

export class SessionState {
  readonly firstSeen: number;
  events = 0;
  prompts = 0;
  actions = 0;
  errors = 0;
  tokens = 0;
  /** Highest `tokens_used` a heartbeat reported. */
  heartbeatTokens = 0;
  backgroundRuns = 0;
  backgroundMs = 0;
  /** When the background work started by the last allowed idle event began (until the next event). */
  backgroundSince: number | undefined;
  /** Last `context.session_stats` the agent reported. */
  reported: { total_actions: number; total_tokens: number; duration_ms: number; error_count: number } | undefined;
  readonly buckets = new Map<string, TokenBucket>();
  /**
   * Base names (lower case) of the files allowed actions of the session downloaded and nothing
   * has rewritten since, oldest first; at most {@link MAX_SESSION_DOWNLOADS}. A later action that
   * runs one is a staged download-and-run (`runs_download`).
   */
  downloads: string[] = [];
  constructor(now: number) {
    this.firstSeen = now;
  }
}

/** Most downloaded file names a session remembers (the oldest is forgotten first). */
export const MAX_SESSION_DOWNLOADS = 32;

export class AgentState {
  readonly buckets = new Map<string, TokenBucket>();
}

interface Entry<V> {
  value: V;
  lastSeen: number;
}

/** A map bounded by size (least recently used evicted) and idle time. */
export class LruStore<V> {
  readonly #map = new Map<string, Entry<V>>();
  constructor(
    readonly maxEntries: number,
    readonly ttlMs: number,
    readonly create: (now: number) => V,
  ) {}

  get size(): number {
    return this.#map.size;
  }

  /** Gets (or creates) the entry and marks it as most recently used. */
  #lastKey: string | undefined;
  #last: Entry<V> | undefined;

  get(key: string, now: number): V {
    // Fast path: the same key as the previous call is already the most recent entry.
    const last = this.#last;
    if (key === this.#lastKey && last !== undefined && now - last.lastSeen <= this.ttlMs && this.#map.get(key) === last) {
      last.lastSeen = Math.max(last.lastSeen, now);
      return last.value;
    }
    let entry = this.#map.get(key);
    if (entry !== undefined) {
      this.#map.delete(key);
      if (now - entry.lastSeen > this.ttlMs) entry = undefined;
    }
    if (entry === undefined) entry = { value: this.create(now), lastSeen: now };
    entry.lastSeen = Math.max(entry.lastSeen, now);
    this.#map.set(key, entry);
    this.#evict(now);
    this.#lastKey = key;
    this.#last = entry;
    return entry.value;
  }

  /** The entry when present and not expired, without touching it. */
  peek(key: string, now: number): V | undefined {
    const entry = this.#map.get(key);
    if (entry === undefined || now - entry.lastSeen > this.ttlMs) return undefined;
    return entry.value;
  }

  has(key: string, now: number): boolean {
    return this.peek(key, now) !== undefined;
  }

  clear(): void {
    this.#map.clear();
    this.#lastKey = undefined;
    this.#last = undefined;
  }

  #evict(now: number): void {
    // Oldest first (Map keeps insertion order and every access re-inserts).
    for (const [key, entry] of this.#map) {
      if (this.#map.size > this.maxEntries || now - entry.lastSeen > this.ttlMs) this.#map.delete(key);
      else break;
    }
  }
}

export interface StateLimits {
  maxSessions: number;
  maxAgents: number;
  ttlMs: number;
}

/**
 * Default bounds of per-session and per-agent state: 10000 sessions, 10000 agents (least recently
 * used evicted first), and state idle for 1 h dropped. A `PolicyEngine` uses them unless its options
 * or the policy's `settings` (`max_sessions`, `max_agents`, `state_ttl_ms`) say otherwise, a
 * `MemoryStateStore` unless its `limits` do. Frozen.
 */
export const DEFAULT_STATE_LIMITS: Readonly<StateLimits> = Object.freeze({
  maxSessions: 10_000,
  maxAgents: 10_000,
  ttlMs: 3_600_000,
});

/** Everything an engine remembers between events. It survives policy reloads. */
export class PolicyState {
  readonly sessions: LruStore<SessionState>;
  readonly agents: LruStore<AgentState>;
  readonly global = new Map<string, TokenBucket>();
  constructor(readonly limits: StateLimits) {
    this.sessions = new LruStore(limits.maxSessions, limits.ttlMs, (now) => new SessionState(now));
    this.agents = new LruStore(limits.maxAgents, limits.ttlMs, () => new AgentState());
  }
}

/** What an event changes in its session's counters whatever its decision. */
export function eventDelta(event: AhpEvent): CounterDelta {
  const type = event.event_type;
  const d: CounterDelta = { events: 1, closeBackground: type !== "heartbeat" };
  const stats = event.context?.session_stats;
  if (stats !== undefined && stats !== null) d.reported = { ...stats };
  switch (type) {
    case "pre_prompt":
      d.prompts = 1;
      break;
    case "error":
      d.errors = 1;
      break;
    case "post_response":
      d.tokens = readTokens(event.payload);
      break;
    case "heartbeat": {
      const p = event.payload as { tokens_used?: unknown } | null;
      if (p !== null && typeof p === "object" && typeof p.tokens_used === "number") d.heartbeatTokens = p.tokens_used;
      break;
    }
    default:
      break;
  }
  return d;
}

const decisionTag = (d: unknown): unknown => (d !== null && typeof d === "object" ? (d as { decision?: unknown }).decision : undefined);

/** What an event's final decision adds: an allowed (or modified) action, or the start of background work. */
export function decisionDelta(type: EventType, decision: unknown): CounterDelta | undefined {
  if (type === "pre_action") {
    const tag = decisionTag(decision);
    return tag === "allow" || tag === "modify" ? { actions: 1 } : undefined;
  }
  if (type === "idle") return decisionTag(decision) === "allow" ? { startBackground: true } : undefined;
  return undefined;
}

/** Applies counter changes to a session at time `now`. */
export function applyDelta(s: SessionState, d: CounterDelta, now: number): void {
  if (d.closeBackground === true && s.backgroundSince !== undefined) {
    s.backgroundMs += Math.max(0, now - s.backgroundSince);
    s.backgroundSince = undefined;
  }
  if (d.events !== undefined) s.events += d.events;
  if (d.reported !== undefined) s.reported = { ...d.reported };
  if (d.prompts !== undefined) s.prompts += d.prompts;
  if (d.actions !== undefined) s.actions += d.actions;
  if (d.errors !== undefined) s.errors += d.errors;
  if (d.tokens !== undefined) s.tokens += d.tokens;
  if (d.heartbeatTokens !== undefined) s.heartbeatTokens = Math.max(s.heartbeatTokens, d.heartbeatTokens);
  if (d.startBackground === true) {
    s.backgroundRuns++;
    s.backgroundSince = now;
  }
  if (d.rewritten !== undefined && s.downloads.length > 0) s.downloads = s.downloads.filter((f) => !d.rewritten!.includes(f));
  if (d.downloads !== undefined) s.downloads = rememberDownloads(s.downloads, d.downloads);
}

/** `known` with `added` appended (an existing name moves to the end), cut to the newest {@link MAX_SESSION_DOWNLOADS}. */
export function rememberDownloads(known: readonly string[], added: readonly string[]): string[] {
  const out = known.filter((f) => !added.includes(f));
  for (const f of added) if (!out.includes(f)) out.push(f);
  return out.length > MAX_SESSION_DOWNLOADS ? out.slice(out.length - MAX_SESSION_DOWNLOADS) : out;
}

/** Tokens a `post_response` payload reports (`usage.total_tokens`, input + output, prompt + completion, or a flat count). */
export function readTokens(payload: unknown): number {
  if (payload === null || typeof payload !== "object") return 0;
  const p = payload as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
  const usage = Object.hasOwn(p, "usage") ? (p.usage as Record<string, unknown> | null) : null;
  if (usage !== null && typeof usage === "object") {
    if (typeof usage.total_tokens === "number") return num(usage.total_tokens);
    const io = num(usage.input_tokens) + num(usage.output_tokens);
    if (io > 0) return io;
    return num(usage.prompt_tokens) + num(usage.completion_tokens);
  }
  return num(p.total_tokens) || num(p.tokens_used) || num(p.tokens);
}

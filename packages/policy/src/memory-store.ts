/**
 * The shared-state interface over the engine's own in-memory state: the reference semantics of
 * a {@link PolicyStateStore} (the Redis store must decide exactly as this one does), and a
 * store for tests and for hosts that want the asynchronous evaluation path in one process.
 */
import { DEFAULT_STATE_LIMITS, PolicyState, TokenBucket, applyDelta, type SessionState, type StateLimits } from "./state.js";
import type { PolicyStateStore, SessionSnapshot, StateStep, StateStepResult } from "./state-store.js";

/** Options of the in-memory policy state store (the default): a clock and the bounds of its session and agent maps. */
export interface MemoryStateStoreOptions {
  /** Current time in ms (tests inject a fake clock). Default `Date.now`. */
  clock?: () => number;
  /** Bounds of the session and agent maps (defaults as the engine's). */
  limits?: Partial<StateLimits>;
}

/** A {@link PolicyStateStore} in this process's memory: the reference semantics, and the store for tests. */
export class MemoryStateStore implements PolicyStateStore {
  readonly #state: PolicyState;
  readonly #clock: () => number;
  #closed = false;

  constructor(options: MemoryStateStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#state = new PolicyState({ ...DEFAULT_STATE_LIMITS, ...options.limits });
  }

  async step(step: StateStep): Promise<StateStepResult> {
    if (this.#closed) throw new Error("the state store is closed");
    const now = this.#clock();
    const session = this.#state.sessions.get(step.sessionId, now);
    const snapshot = step.readSession === true ? snapshotOf(session) : undefined;
    let failed = -1;
    let waitMs = 0;
    for (let i = 0; i < step.takes.length; i++) {
      const t = step.takes[i]!;
      const buckets =
        t.scope === "global"
          ? this.#state.global
          : t.scope === "agent"
            ? this.#state.agents.get(step.agentId, now).buckets
            : session.buckets;
      let bucket = buckets.get(t.key);
      if (bucket === undefined) {
        bucket = new TokenBucket(t.rate, t.intervalMs, t.burst, now);
        buckets.set(t.key, bucket);
      }
      const wait = bucket.take(now);
      if (wait > 0) {
        failed = i;
        waitMs = wait;
        break;
      }
    }
    if (step.record !== undefined) applyDelta(session, step.record, now);
    if (failed < 0 && step.recordIfAllTaken !== undefined) applyDelta(session, step.recordIfAllTaken, now);
    return snapshot === undefined ? { now, failed, waitMs } : { now, failed, waitMs, session: snapshot };
  }

  async reset(): Promise<void> {
    this.#state.sessions.clear();
    this.#state.agents.clear();
    this.#state.global.clear();
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}

function snapshotOf(s: SessionState): SessionSnapshot {
  return {
    firstSeen: s.firstSeen,
    events: s.events,
    prompts: s.prompts,
    actions: s.actions,
    errors: s.errors,
    tokens: s.tokens,
    heartbeatTokens: s.heartbeatTokens,
    backgroundRuns: s.backgroundRuns,
    backgroundMs: s.backgroundMs,
    backgroundSince: s.backgroundSince,
    reported: s.reported === undefined ? undefined : { ...s.reported },
    downloads: [...s.downloads],
  };
}

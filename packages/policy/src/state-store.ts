/**
 * A shared store for the policy's state (rate-limit buckets and per-session counters), for
 * several harness replicas that must agree on it.
 *
 * Without a store the engine keeps its state in its own memory and evaluates synchronously
 * (see `state.ts`). With a store, every evaluation that touches state becomes one atomic
 * {@link StateStep} on the store: the buckets the evaluation reaches are taken in order until
 * one is empty, and the session's counters are updated for the event, in the same step. A
 * policy whose rules read session counters first reads them (one more step, only when such a
 * rule is reached).
 */
import type { CounterDelta, SessionState } from "./state.js";

export type { CounterDelta } from "./state.js";

/** One rate-limit bucket to take a token from. */
export interface BucketTake {
  /** Whose bucket: the event's session, its agent, or one for all. */
  readonly scope: "session" | "agent" | "global";
  /** The rule's bucket key (rule id and configuration). */
  readonly key: string;
  /** Tokens per interval. */
  readonly rate: number;
  readonly intervalMs: number;
  /** Bucket capacity in tokens. */
  readonly burst: number;
}

/** One atomic step on the store. */
export interface StateStep {
  readonly sessionId: string;
  readonly agentId: string;
  /** Buckets taken in order; the first empty one stops the step (later ones are not taken). */
  readonly takes: readonly BucketTake[];
  /** Applied whatever the takes gave. */
  readonly record?: CounterDelta;
  /** Applied only when every take succeeded (the changes that depend on the decision that follows). */
  readonly recordIfAllTaken?: CounterDelta;
  /** Return the session's counters as they were before this step. */
  readonly readSession?: boolean;
}

/** The session's counters as the store holds them. */
export interface SessionSnapshot {
  firstSeen: number;
  events: number;
  prompts: number;
  actions: number;
  errors: number;
  tokens: number;
  heartbeatTokens: number;
  backgroundRuns: number;
  backgroundMs: number;
  backgroundSince: number | undefined;
  reported: { total_actions: number; total_tokens: number; duration_ms: number; error_count: number } | undefined;
  /** Files the session downloaded (see `CounterDelta.downloads`); absent from stores that do not keep them. */
  downloads?: string[];
}

/** What a step gave: the store's time, the first empty bucket and its wait, and the counters when asked for. */
export interface StateStepResult {
  /** The store's clock (ms since the epoch) when the step ran: replicas with skewed clocks agree on it. */
  readonly now: number;
  /** Index in `takes` of the first empty bucket, or -1 when every take succeeded. */
  readonly failed: number;
  /** Milliseconds until the failed bucket has a token (>= 1), or 0. */
  readonly waitMs: number;
  /** Present when `readSession` was asked for. */
  readonly session?: SessionSnapshot;
}

/** Where the policy keeps the state it shares between replicas. */
export interface PolicyStateStore {
  /** Runs one step atomically. Rejects (with the cause) when the store cannot be reached in time. */
  step(step: StateStep): Promise<StateStepResult>;
  /** Drops every bucket and counter this store holds for the policy. */
  reset(): Promise<void>;
  /** Releases connections; pending steps reject. */
  close(): Promise<void>;
}

/** The store could not run a step: decisions that needed it fail closed. */
export class PolicyStateError extends Error {
  readonly code = "state_unavailable" as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PolicyStateError";
  }
}

/** A snapshot as the `SessionState` the rule conditions read. */
export function sessionFromSnapshot(s: SessionSnapshot, create: (firstSeen: number) => SessionState): SessionState {
  const state = create(s.firstSeen);
  state.events = s.events;
  state.prompts = s.prompts;
  state.actions = s.actions;
  state.errors = s.errors;
  state.tokens = s.tokens;
  state.heartbeatTokens = s.heartbeatTokens;
  state.backgroundRuns = s.backgroundRuns;
  state.backgroundMs = s.backgroundMs;
  state.backgroundSince = s.backgroundSince;
  state.reported = s.reported;
  if (s.downloads !== undefined) state.downloads = [...s.downloads];
  return state;
}

/**
 * The policy engine: evaluates events against the current compiled policy (first matching
 * rule wins, in file order), keeps the bounded per-session/per-agent state, reports every
 * evaluation to `onDecision`, and swaps policies atomically.
 *
 * Evaluation is synchronous: a swap is one reference assignment, and an evaluation reads the
 * policy reference once, so every decision comes from exactly one policy version even while
 * reloads happen concurrently.
 */
import { EVENT_TABLE, type AhpEvent, type AhpEventInput, type EventType } from "@ahp/core";
import { EvalContext, type CompiledRule, type SessionCounters } from "./compile.js";
import { CompiledPolicy, loadPolicy, loadPolicyFile, type LoadPolicyOptions, type PolicySource } from "./load.js";
import { DEFAULT_STATE_LIMITS, PolicyState, SessionState, TokenBucket, applyDelta, decisionDelta, eventDelta } from "./state.js";
import {
  PolicyStateError,
  sessionFromSnapshot,
  type BucketTake,
  type CounterDelta,
  type PolicyStateStore,
  type StateStep,
} from "./state-store.js";
import type { DecisionSource, PolicyEvaluation, PolicyMatchOutcome } from "./evaluation.js";
import { ShadowPolicy, type ShadowDisagreement } from "./shadow.js";
import { watchPolicyFile, type PolicyWatcher, type WatchPolicyOptions } from "./watch.js";

export type { DecisionSource, PolicyEvaluation, PolicyMatchOutcome } from "./evaluation.js";

/**
 * Options of a {@link PolicyEngine}: how its policy is loaded and compiled (file, format,
 * workspace root, match length), its clock, the state it keeps and the callbacks it reports to.
 */
export interface PolicyEngineOptions extends LoadPolicyOptions {
  /** Current time in ms (tests inject a fake clock). Default `Date.now`. */
  clock?: () => number;
  /** Called after every evaluation. Exceptions it throws go to `onerror`. */
  onDecision?: (evaluation: PolicyEvaluation) => void;
  /** Non-fatal problems (a throwing onDecision, failed reloads of a watcher). Library code never logs. */
  onerror?: (error: Error) => void;
  /** Most sessions with state (default: the policy's `settings.max_sessions`, else 10000). */
  maxSessions?: number;
  /** Most agents with state (default: `settings.max_agents`, else 10000). */
  maxAgents?: number;
  /** Idle time after which a session's or agent's state is dropped (default: `settings.state_ttl_ms`, else 1 h). */
  stateTtlMs?: number;
  /**
   * Keep rate-limit buckets and session counters in a shared store (for several harness
   * replicas) instead of this engine's memory. Evaluation is then asynchronous
   * ({@link PolicyEngine.evaluateShared}; `createPolicyHandler` switches to it by itself).
   */
  stateStore?: PolicyStateStore;
  /**
   * Shadow mode: a candidate policy (or an engine holding one) that decides every event beside
   * this engine's policy and is never enforced. It keeps its own state, in memory. When its
   * decision tag differs from the enforced one, the event is annotated with the candidate's
   * decision and rule (the audit log records it) and `onShadowDisagreement` is called. To reload
   * the candidate, pass an engine made with `PolicyEngine.fromFile` and `watch()` it.
   */
  shadow?: PolicySource | PolicyEngine;
  /** Called for each event on which the shadow policy disagrees with the enforced decision. */
  onShadowDisagreement?: (disagreement: ShadowDisagreement) => void;
}

/** What decides a shared evaluation when no rule does: a known decision, or a handler called afterwards. */
export type SharedFallback = { decision: unknown; source: DecisionSource } | { handler: () => unknown };

/** Thrown (preallocated) when planning reaches a rule that reads session counters before they were read. */
const NEEDS_SESSION = new Error("the session's counters are needed");

const takeOf = (rule: CompiledRule): BucketTake => {
  const rl = rule.rateLimit!;
  return { scope: rl.scope, key: rl.key, rate: rl.rate, intervalMs: rl.intervalMs, burst: rl.burst };
};

/**
 * Evaluates AHP events against a compiled policy: the first rule whose events and `match` fit
 * decides (rate-limited rules only when their bucket is empty), else the policy's default.
 * Keeps per-session and per-agent state (counters, token buckets) in memory or in a shared
 * store, and swaps in new policy versions atomically (`swap`, `reload`, `watch`): an
 * evaluation in progress finishes with the version it started with.
 */
export class PolicyEngine {
  #policy: CompiledPolicy;
  readonly #options: PolicyEngineOptions;
  readonly #clock: () => number;
  readonly #state: PolicyState;
  readonly #store: PolicyStateStore | undefined;
  readonly #shadow: ShadowPolicy<PolicyEngine> | undefined;
  #file: string | undefined;

  constructor(policy: PolicySource, options: PolicyEngineOptions = {}) {
    this.#options = options;
    this.#policy = loadPolicy(policy, options);
    this.#file = this.#policy.file;
    this.#clock = options.clock ?? Date.now;
    const s = this.#policy.data.settings;
    this.#state = new PolicyState({
      maxSessions: options.maxSessions ?? s.maxSessions ?? DEFAULT_STATE_LIMITS.maxSessions,
      maxAgents: options.maxAgents ?? s.maxAgents ?? DEFAULT_STATE_LIMITS.maxAgents,
      ttlMs: options.stateTtlMs ?? s.stateTtlMs ?? DEFAULT_STATE_LIMITS.ttlMs,
    });
    this.#store = options.stateStore;
    if (options.shadow !== undefined) {
      const candidate =
        options.shadow instanceof PolicyEngine
          ? options.shadow
          : new PolicyEngine(options.shadow, {
              ...(options.clock === undefined ? {} : { clock: options.clock }),
              ...(options.workspaceRoot === undefined ? {} : { workspaceRoot: options.workspaceRoot }),
              ...(options.maxMatchLength === undefined ? {} : { maxMatchLength: options.maxMatchLength }),
              ...(options.onerror === undefined ? {} : { onerror: options.onerror }),
            });
      this.#shadow = new ShadowPolicy(candidate, options.onShadowDisagreement, options.onerror);
    }
  }

  /** The shadow (candidate) policy evaluated beside this one, when the engine has one (`shadow` option). */
  get shadow(): ShadowPolicy<PolicyEngine> | undefined {
    return this.#shadow;
  }

  /** The shared state store, when the engine keeps its state in one (evaluation is then {@link evaluateShared}). */
  get stateStore(): PolicyStateStore | undefined {
    return this.#store;
  }

  /** Loads the policy file and returns an engine that can `reload()` and `watch()` it. */
  static async fromFile(file: string, options: Omit<PolicyEngineOptions, "file"> = {}): Promise<PolicyEngine> {
    const policy = await loadPolicyFile(file, options);
    return new PolicyEngine(policy, options);
  }

  /** The policy in force. */
  get policy(): CompiledPolicy {
    return this.#policy;
  }

  /** The file `reload()` reads, if any. */
  get file(): string | undefined {
    return this.#file;
  }

  /** State limits in force (fixed for the engine's lifetime). */
  get limits(): { maxSessions: number; maxAgents: number; ttlMs: number } {
    return { ...this.#state.limits };
  }

  /** Number of sessions and agents with state. */
  get stateSize(): { sessions: number; agents: number } {
    return { sessions: this.#state.sessions.size, agents: this.#state.agents.size };
  }

  /**
   * Compiles `policy` and puts it in force atomically. Throws {@link PolicyError} (and keeps
   * the current policy) when it is invalid. Session state, counters and buckets are kept; a
   * rate limit whose configuration changed starts with a full bucket.
   */
  swap(policy: PolicySource): CompiledPolicy {
    const next = loadPolicy(policy, { ...this.#options, ...(this.#file === undefined ? {} : { file: this.#file }) });
    this.#policy = next;
    if (next.file !== undefined) this.#file = next.file;
    // Global buckets of rules that no longer exist would otherwise stay forever.
    const keys = new Set(next.data.rules.flatMap((r) => (r.rateLimit === undefined ? [] : [r.rateLimit.key])));
    for (const key of this.#state.global.keys()) if (!keys.has(key)) this.#state.global.delete(key);
    return next;
  }

  /**
   * Reads the policy file again and swaps it in. On an invalid file the current policy stays
   * in force and the {@link PolicyError} (with file, line, column and rule) is thrown.
   */
  async reload(file?: string): Promise<CompiledPolicy> {
    const target = file ?? this.#file;
    if (target === undefined) throw new Error("this engine has no policy file to reload; pass one or create it with PolicyEngine.fromFile");
    const next = await loadPolicyFile(target, this.#options);
    this.#file = target;
    return this.swap(next);
  }

  /** Watches the engine's policy file and swaps every valid new version in (see {@link watchPolicyFile}). */
  watch(options: Omit<WatchPolicyOptions, "engine"> = {}): PolicyWatcher {
    const file = this.#file;
    if (file === undefined) throw new Error("this engine has no policy file to watch; create it with PolicyEngine.fromFile");
    return watchPolicyFile(file, { onError: this.#options.onerror, ...options, engine: this });
  }

  /**
   * Matches an event against the rules (first match wins). Consumes rate-limit tokens but
   * records nothing else; call {@link complete} with the final decision afterwards. Most
   * callers want {@link evaluate} or the handlers of `createPolicyHandler`.
   */
  match(event: AhpEvent): PolicyMatchOutcome {
    const start = performance.now();
    const policy = this.#policy; // one read: the whole evaluation uses this version
    const rules = policy.data.byType.get(event.event_type);
    let decision: unknown;
    let ruleId: string | undefined;
    let facts: EvalContext | undefined;
    if (rules !== undefined) {
      const now = this.#clock();
      let session: SessionState | undefined;
      const ctx = new EvalContext(event, now, policy.data.settings, () => (session ??= this.#state.sessions.get(event.session_id, now)));
      for (const rule of rules) {
        if (!rule.test(ctx)) continue;
        if (rule.rateLimit !== undefined) {
          const wait = this.#take(rule, ctx, now);
          if (wait === 0) continue;
          decision = rule.decide(event.event_type, ctx, wait);
        } else decision = rule.decide(event.event_type, ctx);
        ruleId = rule.id;
        break;
      }
      facts = ctx;
    }
    return { decision, ruleId, latencyNs: Math.round((performance.now() - start) * 1e6), policy, facts };
  }

  #take(rule: CompiledRule, ctx: EvalContext, now: number): number {
    const rl = rule.rateLimit!;
    const buckets =
      rl.scope === "global"
        ? this.#state.global
        : rl.scope === "agent"
          ? this.#state.agents.get(ctx.event.agent_id, now).buckets
          : ctx.session().buckets;
    let bucket = buckets.get(rl.key);
    if (bucket === undefined) {
      bucket = new TokenBucket(rl.rate, rl.intervalMs, rl.burst, now);
      buckets.set(rl.key, bucket);
    }
    return bucket.take(now);
  }

  /** The policy's decision when no rule matches an event of this type: `default` for generic events, none for typed ones. */
  fallback(type: EventType): unknown {
    return EVENT_TABLE[type].specialized ? undefined : this.#policy.data.defaultDecision;
  }

  /**
   * Records the final decision of an event (session counters, background budget) and reports
   * the evaluation to `onDecision`.
   */
  complete(
    event: AhpEvent,
    outcome: PolicyMatchOutcome,
    decision: unknown,
    source: DecisionSource,
    notification = false,
  ): PolicyEvaluation {
    this.#record(event, decision, outcome.facts as EvalContext | undefined);
    return this.#report({
      decision,
      ruleId: outcome.ruleId,
      source,
      latencyNs: outcome.latencyNs,
      event,
      notification,
      policy: outcome.policy.name,
    });
  }

  #report(evaluation: PolicyEvaluation): PolicyEvaluation {
    this.#shadow?.observe(evaluation);
    const report = this.#options.onDecision;
    if (report !== undefined) {
      try {
        report(evaluation);
      } catch (error) {
        this.#options.onerror?.(error instanceof Error ? error : new Error(String(error)));
      }
    }
    return evaluation;
  }

  /**
   * Evaluates one event with the state in the shared store: the rules are matched here, and the
   * rate-limit buckets they reach are taken and the session's counters updated in one atomic
   * step on the store (a rule that reads session counters adds one read before it). When no rule
   * decides, `noMatch` does. When the store cannot be reached, an event whose decision needed it
   * gets its type's fail-closed decision (source `state_unavailable`) and `onerror` a
   * {@link PolicyStateError}; an event that only updates counters keeps its decision and the
   * lost update is reported the same way.
   */
  async evaluateShared(event: AhpEvent, noMatch: SharedFallback, notification = false): Promise<PolicyEvaluation> {
    const store = this.#store;
    if (store === undefined) throw new Error("this engine has no state store; pass stateStore in its options");
    const start = performance.now();
    const policy = this.#policy; // one read: the whole evaluation uses this version
    const type = event.event_type;
    const rules = policy.data.byType.get(type) ?? [];
    let now = this.#clock();
    let session: SessionState | undefined;
    const needSession = (): never => {
      throw NEEDS_SESSION;
    };
    const plan = () => {
      const ctx = new EvalContext(event, now, policy.data.settings, () => session ?? needSession());
      const limited: CompiledRule[] = [];
      let decisive: CompiledRule | undefined;
      let decision: unknown;
      for (const rule of rules) {
        if (!rule.test(ctx)) continue;
        if (rule.rateLimit !== undefined) limited.push(rule);
        else {
          decisive = rule;
          decision = rule.decide(type, ctx);
          break;
        }
      }
      // A line copying a file learns from the session's downloads (a copy of one is one): read them.
      if (type === "pre_action" && ctx.shellTexts.length > 0 && ctx.hasCopier) ctx.session();
      return { ctx, limited, decisive, decision };
    };
    const report = (decision: unknown, ruleId: string | undefined, source: DecisionSource) =>
      this.#report({
        decision,
        ruleId,
        source,
        latencyNs: Math.round((performance.now() - start) * 1e6),
        event,
        notification,
        policy: policy.name,
      });
    const unavailable = (error: unknown) => {
      const cause = error instanceof Error ? error : new Error(String(error));
      const failure =
        cause instanceof PolicyStateError ? cause : new PolicyStateError(`policy state store unavailable: ${cause.message}`, { cause });
      this.#options.onerror?.(failure);
      return failure;
    };
    const failClosed = (error: unknown) => {
      const failure = unavailable(error);
      const decision = notification ? undefined : EVENT_TABLE[type].failClosed?.(failure.message);
      return report(decision, undefined, "state_unavailable");
    };

    let p: ReturnType<typeof plan>;
    try {
      p = plan();
    } catch (error) {
      if (error !== NEEDS_SESSION) throw error;
      try {
        const read = await store.step({ sessionId: event.session_id, agentId: event.agent_id, takes: [], readSession: true });
        now = read.now;
        session = sessionFromSnapshot(read.session!, (t) => new SessionState(t));
      } catch (failure) {
        return failClosed(failure);
      }
      p = plan();
    }

    const known = p.decisive !== undefined ? p.decision : "handler" in noMatch ? undefined : noMatch.decision;
    const learned = type === "pre_action" ? p.ctx.learned(session) : undefined;
    const ifAllTaken = p.decisive !== undefined || !("handler" in noMatch) ? withLearned(decisionDelta(type, known), learned) : undefined;
    const step: StateStep = {
      sessionId: event.session_id,
      agentId: event.agent_id,
      takes: p.limited.map(takeOf),
      record: eventDelta(event),
      ...(ifAllTaken === undefined ? {} : { recordIfAllTaken: ifAllTaken }),
    };
    let failed = -1;
    let waitMs = 0;
    try {
      ({ failed, waitMs } = await store.step(step));
    } catch (error) {
      if (step.takes.length > 0) return failClosed(error);
      unavailable(error);
    }

    if (failed >= 0) {
      const rule = p.limited[failed]!;
      return report(rule.decide(type, p.ctx, waitMs), rule.id, "rule");
    }
    if (p.decisive !== undefined) return report(p.decision, p.decisive.id, "rule");
    if (!("handler" in noMatch)) return report(noMatch.decision, undefined, noMatch.source);
    let decision: unknown;
    let evaluation: PolicyEvaluation;
    try {
      decision = await noMatch.handler();
    } finally {
      evaluation = report(decision, undefined, "handler");
      const more = withLearned(decisionDelta(type, decision), learned);
      if (more !== undefined) {
        await store.step({ sessionId: event.session_id, agentId: event.agent_id, takes: [], record: more }).catch(unavailable);
      }
    }
    return evaluation;
  }

  /**
   * Evaluates one event: the first matching rule decides; otherwise the policy's `default`
   * for generic events, `allow` for idle, and no decision for the other typed points and for
   * notifications. Records and reports the result.
   */
  evaluate(event: AhpEvent | AhpEventInput, options: { notification?: boolean } = {}): PolicyEvaluation {
    const e = normalizeEvent(event);
    const outcome = this.match(e);
    if (outcome.decision !== undefined) return this.complete(e, outcome, outcome.decision, "rule", options.notification);
    if (options.notification) return this.complete(e, outcome, undefined, "none", true);
    const fallback = this.fallback(e.event_type);
    if (fallback !== undefined) return this.complete(e, outcome, fallback, "default");
    return this.complete(e, outcome, e.event_type === "idle" ? { decision: "allow" } : undefined, "none");
  }

  /** The counters a `session` condition would see now for this session (undefined when it has no state). */
  sessionCounters(sessionId: string): SessionCounters | undefined {
    const now = this.#clock();
    const s = this.#state.sessions.peek(sessionId, now);
    if (s === undefined) return undefined;
    const ctx = new EvalContext(
      { event_type: "heartbeat", session_id: sessionId, agent_id: "", timestamp: "", depth: 0, payload: null },
      now,
      this.#policy.data.settings,
      () => s,
    );
    return { ...ctx.counters };
  }

  /** Drops all session, agent and rate-limit state. */
  resetState(): void {
    this.#state.sessions.clear();
    this.#state.agents.clear();
    this.#state.global.clear();
  }

  #record(event: AhpEvent, decision: unknown, facts: EvalContext | undefined): void {
    const now = this.#clock();
    const s = this.#state.sessions.get(event.session_id, now);
    applyDelta(s, eventDelta(event), now);
    const more = decisionDelta(event.event_type, decision);
    if (more === undefined) return;
    applyDelta(s, more, now);
    // An allowed action: the files it downloads, and the downloads it rewrote itself.
    if (facts !== undefined && more.actions !== undefined && event.event_type === "pre_action") {
      const learned = facts.learned(s);
      if (learned !== undefined) applyDelta(s, learned, now);
    }
  }
}

/** The changes of an allowed action with what the session learns from it (nothing when the action was not allowed). */
function withLearned(delta: CounterDelta | undefined, learned: CounterDelta | undefined): CounterDelta | undefined {
  return delta === undefined || learned === undefined || delta.actions === undefined ? delta : { ...delta, ...learned };
}

/** A cheap structural check (events from AhpServer are already validated; events from code may not be). */
function normalizeEvent(event: AhpEvent | AhpEventInput): AhpEvent {
  const e = event as Partial<AhpEvent> | null;
  if (
    e === null ||
    typeof e !== "object" ||
    typeof e.event_type !== "string" ||
    !Object.hasOwn(EVENT_TABLE, e.event_type) ||
    typeof e.session_id !== "string" ||
    typeof e.agent_id !== "string" ||
    typeof e.depth !== "number"
  ) {
    throw new TypeError("evaluate() needs an AHP event with event_type, session_id, agent_id and depth");
  }
  return event;
}

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
import { DEFAULT_STATE_LIMITS, PolicyState, TokenBucket, type SessionState } from "./state.js";
import { watchPolicyFile, type PolicyWatcher, type WatchPolicyOptions } from "./watch.js";

/** Who produced the final decision of an evaluation. */
export type DecisionSource =
  /** A policy rule matched. */
  | "rule"
  /** No rule matched; the policy's `default` decided (generic events). */
  | "default"
  /** No rule matched; a composed user handler decided. */
  | "handler"
  /** No rule matched and nobody else decided: the protocol default (`allow` for idle) or no decision (typed points, notifications). */
  | "none";

/** One evaluation, as reported to `onDecision` (for the audit log and metrics). */
export interface PolicyEvaluation {
  /** The decision sent back; undefined for notifications without a matching rule and unanswered typed points. */
  decision: unknown;
  /** Id of the matching rule, when one matched. */
  ruleId: string | undefined;
  source: DecisionSource;
  /** Time spent evaluating the policy (not the user handler), in nanoseconds. */
  latencyNs: number;
  event: AhpEvent;
  /** The event arrived as a notification: the decision (if a rule matched) could not be sent. */
  notification: boolean;
  /** `name` of the policy that decided. */
  policy: string | undefined;
}

/** Result of matching an event against the rules, before anything is recorded. */
export interface PolicyMatchOutcome {
  /** Decision of the matching rule, or undefined when none matched. */
  decision: unknown;
  ruleId: string | undefined;
  latencyNs: number;
  /** The policy version that was used. */
  policy: CompiledPolicy;
}

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
}

function readTokens(payload: unknown): number {
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

const decisionTag = (d: unknown): unknown => (d !== null && typeof d === "object" ? (d as { decision?: unknown }).decision : undefined);

export class PolicyEngine {
  #policy: CompiledPolicy;
  readonly #options: PolicyEngineOptions;
  readonly #clock: () => number;
  readonly #state: PolicyState;
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
    }
    return { decision, ruleId, latencyNs: Math.round((performance.now() - start) * 1e6), policy };
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
    this.#record(event, decision);
    const evaluation: PolicyEvaluation = {
      decision,
      ruleId: outcome.ruleId,
      source,
      latencyNs: outcome.latencyNs,
      event,
      notification,
      policy: outcome.policy.name,
    };
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

  #record(event: AhpEvent, decision: unknown): void {
    const now = this.#clock();
    const s = this.#state.sessions.get(event.session_id, now);
    const type = event.event_type;
    if (s.backgroundSince !== undefined && type !== "heartbeat") {
      s.backgroundMs += Math.max(0, now - s.backgroundSince);
      s.backgroundSince = undefined;
    }
    s.events++;
    const stats = event.context?.session_stats;
    if (stats !== undefined && stats !== null) s.reported = { ...stats };
    switch (type) {
      case "pre_prompt":
        s.prompts++;
        break;
      case "pre_action": {
        const tag = decisionTag(decision);
        if (tag === "allow" || tag === "modify") s.actions++;
        break;
      }
      case "error":
        s.errors++;
        break;
      case "post_response":
        s.tokens += readTokens(event.payload);
        break;
      case "heartbeat": {
        const p = event.payload as { tokens_used?: unknown } | null;
        if (p !== null && typeof p === "object" && typeof p.tokens_used === "number")
          s.heartbeatTokens = Math.max(s.heartbeatTokens, p.tokens_used);
        break;
      }
      case "idle":
        if (decisionTag(decision) === "allow") {
          s.backgroundRuns++;
          s.backgroundSince = now;
        }
        break;
      default:
        break;
    }
  }
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

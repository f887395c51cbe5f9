/**
 * The harness face (§7): the bridge is an AHP agent. Gates before suspend and resume
 * (`pre_action`), the decisions that park a session (§7.3), what the bridge reports
 * (`session_start`, `run_lifecycle`, `heartbeat`, `error`, `session_end`; never an invented
 * RunStatus), the failure policy (§7.5) and the wake-up poll (§7.6). Talks through an
 * `AhpClient` over any transport; knows nothing of ACP connections.
 */
import { RequestError } from "@agentclientprotocol/sdk";
import {
  AhpLocalError,
  createEvent,
  findRuleId,
  newId,
  type AhpClient,
  type AhpEventInput,
  type EventType,
  type RunStatus,
} from "@ahp/core";
import type { Clock } from "./clock.js";
import { gateRefused, harnessUnavailable } from "./errors.js";
import type { ResumeConditions } from "./validation.js";

/** A harness call that failed: what the bridge was doing (`phase`) and why; on a fail-closed phase the client gets -31003. */
export interface HarnessFailure {
  /** What the bridge was doing. */
  phase: "suspend" | "resume" | "action" | "report" | "poll";
  sessionId: string;
  error: Error;
  /** What the bridge did about it. */
  outcome: "proceeded" | "rejected" | "stayed_suspended" | "dropped";
}

/**
 * How the bridge talks to its harness: the AHP client, the clock, the gate failure policy, how long
 * to wait on a deferral, when a deferral parks the session instead.
 */
export interface HarnessLinkOptions {
  /** A connected, handshaken client. */
  client: AhpClient;
  /** `agent_id` of the events. Default: the client's. */
  agentId?: string;
  clock: Clock;
  /** Suspend gate failure: `proceed` (default, pausing is the safe direction) or `reject` (`-31003`). */
  suspendGateFailure?: "proceed" | "reject";
  /** Longest inline wait on `defer` decisions for the suspend gate. Default 30 000. */
  maxGateWaitMs?: number;
  /** A `defer`/`retry` at or above this parks the session instead of waiting inline (§7.3). Default 60 000. */
  parkThresholdMs?: number;
  /** With an escalation park, also a `fail` timeout after this many minutes. */
  escalationTimeoutMinutes?: number;
  /**
   * Per-call timeout of the AHP requests that a harness may hold for a person (the gates), in ms,
   * or a function read at each call (e.g. the handshake's advertised `timeout_ms`, known once the
   * client connected). Default: the client's.
   */
  timeoutMs?: number | (() => number | undefined);
  /**
   * Settles once `client` is connected, when the link is made before that: gates wait for it,
   * reports stay queued until then (a rejection fails the gates as a harness that cannot answer).
   */
  ready?: Promise<unknown>;
  /** Every harness failure and what the bridge did (the CLI logs these). */
  onFailure?: (failure: HarnessFailure) => void;
}

/** What the suspend gate asks the harness about (§7.2): the session, mode, reason, conditions and who asked. */
export interface SuspendGateArgs {
  sessionId: string;
  reason?: string;
  mode: string;
  resumeWhen?: ResumeConditions;
  initiator: string;
  initiatorDetail: string;
}

/** What the resume gate asks the harness about: the session, the handle, the cause and the resume input. */
export interface ResumeGateArgs {
  sessionId: string;
  handle: string;
  cause: string;
  input?: unknown;
  continueTranscript: boolean;
}

/**
 * A suspend gate that let the suspend through; `modified` holds the harness's changes to reason,
 * mode or conditions.
 */
export type SuspendGateResult = { proceed: true; modified?: Record<string, unknown> };
/**
 * A resume gate's answer: go on (possibly with input the harness changed), or the error the resumer
 * gets and when to retry.
 */
export type ResumeGateResult =
  | { proceed: true; input?: unknown; hasInput?: boolean; continueTranscript?: boolean }
  | { proceed: false; error: RequestError; retryAfterMs?: number };

/** How a turn action fared at the harness (§7.3). */
export type ActionOutcome =
  | { kind: "allow"; modifiedPayload?: unknown }
  | { kind: "refuse"; reason: string; rule?: string }
  | { kind: "skip"; reason: string; rule?: string }
  | { kind: "park"; park: ParkSpec };

/** A harness-driven park: what to suspend with and what to re-send on resume. */
export interface ParkSpec {
  reason: string;
  resumeWhen: ResumeConditions;
  eventType: EventType;
  eventId: string;
  waitingOn: string;
  event: AhpEventInput;
}

const ceilMinutes = (ms: number) => Math.max(1, Math.ceil(ms / 60_000));

/** Waits on the bridge clock (never the wall clock directly). */
export const sleep = (clock: Clock, ms: number): Promise<void> => new Promise((resolve) => clock.setTimeout(resolve, Math.max(0, ms)));

const isHarnessDown = (error: unknown): boolean => AhpLocalError.isInstance(error) || !(error instanceof RequestError);

/**
 * The bridge's side of AHP (§7): gates suspends, resumes and turn actions, sends lifecycle reports
 * (queued to the end of the event-loop turn), applies the failure policy and polls for wake-ups of
 * harness-owned parks.
 */
export class HarnessLink {
  readonly #client: AhpClient;
  readonly #agentId: string | undefined;
  #ready: Promise<unknown> | undefined;
  readonly #o: HarnessLinkOptions;
  readonly #startedAt: number;
  #events = 0;
  readonly #reports: Array<{ sessionId: string; event: AhpEventInput }> = [];
  #flushScheduled = false;

  constructor(options: HarnessLinkOptions) {
    this.#client = options.client;
    this.#agentId = options.agentId;
    const ready = options.ready;
    if (ready !== undefined) {
      this.#ready = ready;
      ready.then(
        () => {
          this.#ready = undefined;
          this.flush();
        },
        () => undefined,
      );
    }
    this.#o = options;
    this.#startedAt = options.clock.now();
  }

  get parkThresholdMs(): number {
    return this.#o.parkThresholdMs ?? 60_000;
  }

  /** Builds an event of this bridge for an ACP session. */
  event(type: EventType, sessionId: string, payload: unknown, metadata?: Record<string, unknown>, id?: string): AhpEventInput {
    const fields = {
      sessionId,
      agentId: this.#agentId ?? this.#client.agentId,
      timestamp: new Date(this.#o.clock.now()).toISOString(),
      ...(metadata === undefined ? {} : { metadata }),
    };
    const event = createEvent(type, payload as never, fields) as AhpEventInput;
    // A correlation id the bridge re-sends unchanged when it asks again after a park (§7.3).
    if (id !== undefined) (event as { metadata?: Record<string, unknown> }).metadata = { ...(event.metadata ?? {}), acp_event_id: id };
    return event;
  }

  async #call(event: AhpEventInput): Promise<unknown> {
    if (this.#ready !== undefined) await this.#ready;
    this.flush();
    this.#events++;
    const t = this.#o.timeoutMs;
    const timeoutMs = typeof t === "function" ? t() : t;
    return this.#client.request(event, timeoutMs === undefined ? {} : { timeoutMs });
  }

  #fail(failure: HarnessFailure): void {
    this.#o.onFailure?.(failure);
  }

  /**
   * Fire-and-forget report; a failure is reported through `onFailure`, never thrown. The event is
   * built (and timestamped) now and sent once the current turn of the event loop is over, so a
   * report never delays the ACP message that caused it; reports and gates keep their order (a
   * gate sends the reports queued before it first).
   */
  notify(type: EventType, sessionId: string, payload: unknown, metadata?: Record<string, unknown>): void {
    this.#events++;
    this.#reports.push({ sessionId, event: this.event(type, sessionId, payload, metadata) });
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Sends the queued reports now (in the order they were made). */
  flush(): void {
    this.#flushScheduled = false;
    if (this.#ready !== undefined) return; // sent once the client is connected
    for (const { sessionId, event } of this.#reports.splice(0)) {
      this.#client
        .notify(event)
        .catch((error: unknown) => this.#fail({ phase: "report", sessionId, error: error as Error, outcome: "dropped" }));
    }
  }

  runLifecycle(
    sessionId: string,
    runId: string,
    status: RunStatus,
    extra: { prompt?: string; startedAt?: string; updatedAt: string; error?: string },
    metadata?: Record<string, unknown>,
  ): void {
    const payload: Record<string, unknown> = { run_id: runId, session_id: sessionId, status, updated_at: extra.updatedAt };
    if (extra.prompt !== undefined) payload.prompt = extra.prompt;
    if (extra.startedAt !== undefined) payload.started_at = extra.startedAt;
    if (extra.error !== undefined) payload.error = extra.error;
    this.notify("run_lifecycle", sessionId, payload, metadata);
  }

  heartbeat(sessionId: string, currentState: string, metadata?: Record<string, unknown>): void {
    this.notify(
      "heartbeat",
      sessionId,
      { uptime_ms: Math.max(0, this.#o.clock.now() - this.#startedAt), total_events_processed: this.#events, current_state: currentState },
      metadata,
    );
  }

  /** The suspend gate (§7.2). Throws the `-31002`/`-31003` error the suspender gets. */
  async gateSuspend(args: SuspendGateArgs): Promise<SuspendGateResult> {
    const arguments_ = {
      sessionId: args.sessionId,
      reason: args.reason ?? null,
      mode: args.mode,
      resumeWhen: args.resumeWhen ?? null,
      initiator: args.initiator,
      initiatorDetail: args.initiatorDetail,
    };
    const event = this.event("pre_action", args.sessionId, {
      action_type: "session_suspend",
      tool_name: "acp/session/suspend",
      arguments: arguments_,
    });
    const deadline = this.#o.clock.now() + (this.#o.maxGateWaitMs ?? 30_000);
    for (;;) {
      let decision: Record<string, unknown>;
      try {
        decision = (await this.#call(event)) as Record<string, unknown>;
      } catch (error) {
        if (!isHarnessDown(error)) throw error;
        if ((this.#o.suspendGateFailure ?? "proceed") === "proceed") {
          this.#fail({ phase: "suspend", sessionId: args.sessionId, error: error as Error, outcome: "proceeded" });
          return { proceed: true };
        }
        this.#fail({ phase: "suspend", sessionId: args.sessionId, error: error as Error, outcome: "rejected" });
        throw harnessUnavailable("suspend", (error as Error).message);
      }
      switch (decision.decision) {
        case "allow":
          return decision.modified_payload === undefined || decision.modified_payload === null
            ? { proceed: true }
            : { proceed: true, modified: argumentsOf(decision.modified_payload) };
        case "modify":
          return { proceed: true, modified: argumentsOf(decision.modified_payload) };
        case "block":
          throw gateRefused("blocked", { detail: decision.reason });
        case "escalate":
          throw gateRefused("escalated", { decision: decision });
        case "defer": {
          const retry = Number(decision.retry_after_ms ?? 0);
          if (this.#o.clock.now() + retry > deadline) throw gateRefused("deferred", { retryAfterMs: retry });
          await sleep(this.#o.clock, retry);
          continue;
        }
        default:
          throw gateRefused("blocked", { detail: `unexpected decision ${String(decision.decision)}` });
      }
    }
  }

  /** The resume gate (§7.2): fails closed (`-31003`) when the harness cannot answer. */
  async gateResume(args: ResumeGateArgs): Promise<ResumeGateResult> {
    const arguments_: Record<string, unknown> = {
      sessionId: args.sessionId,
      handle: args.handle,
      cause: args.cause,
      continueTranscript: args.continueTranscript,
    };
    if (args.input !== undefined) arguments_.input = args.input;
    const event = this.event("pre_action", args.sessionId, {
      action_type: "session_resume",
      tool_name: "acp/session/resume",
      arguments: arguments_,
    });
    let decision: Record<string, unknown>;
    try {
      decision = (await this.#call(event)) as Record<string, unknown>;
    } catch (error) {
      if (!isHarnessDown(error)) return { proceed: false, error: error as RequestError };
      this.#fail({ phase: "resume", sessionId: args.sessionId, error: error as Error, outcome: "stayed_suspended" });
      return { proceed: false, error: harnessUnavailable("resume", (error as Error).message) };
    }
    switch (decision.decision) {
      case "allow":
        if (decision.modified_payload === undefined || decision.modified_payload === null) return { proceed: true };
      // falls through: an allow with a modified payload is a modify
      case "modify": {
        const a = argumentsOf(decision.modified_payload);
        const out: ResumeGateResult = { proceed: true };
        if ("input" in a) {
          out.input = a.input;
          out.hasInput = a.input !== null && a.input !== undefined;
        }
        if (typeof a.continueTranscript === "boolean") out.continueTranscript = a.continueTranscript;
        return out;
      }
      case "block":
        return { proceed: false, error: gateRefused("blocked", { detail: decision.reason }) };
      case "defer": {
        const retryAfterMs = Number(decision.retry_after_ms ?? 0);
        return { proceed: false, error: gateRefused("deferred", { retryAfterMs }), retryAfterMs };
      }
      case "escalate":
        return { proceed: false, error: gateRefused("escalated", { decision }) };
      default:
        return { proceed: false, error: gateRefused("blocked", { detail: `unexpected decision ${String(decision.decision)}` }) };
    }
  }

  /**
   * Asks the harness about a turn action (§7.3) and says what to do: go on, refuse, skip, or park
   * the session. Short deferrals and retries wait inline and ask again. A harness that cannot
   * answer refuses the action (fail closed).
   */
  async gateAction(
    sessionId: string,
    type: "pre_action" | "pre_prompt" | "confirmation" | "rate_limit",
    payload: unknown,
    eventId: string = newId(),
  ): Promise<ActionOutcome> {
    const event = this.event(type, sessionId, payload, undefined, eventId);
    for (;;) {
      let decision: Record<string, unknown>;
      try {
        decision = (await this.#call(event)) as Record<string, unknown>;
      } catch (error) {
        this.#fail({ phase: "action", sessionId, error: error as Error, outcome: "rejected" });
        return { kind: "refuse", reason: `harness unavailable: ${(error as Error).message}` };
      }
      const outcome = this.#classify(type, event, eventId, payload, decision);
      if (outcome === "retry") continue;
      if (typeof outcome === "number") {
        await sleep(this.#o.clock, outcome);
        continue;
      }
      if ("proceedAfterMs" in outcome) {
        // rate_limit `retry`: wait, then the action itself is the retry.
        await sleep(this.#o.clock, outcome.proceedAfterMs);
        return { kind: "allow" };
      }
      return outcome;
    }
  }

  /** Re-sends a parked event (same correlation id) and classifies the new decision. */
  async reask(park: ParkSpec): Promise<ActionOutcome> {
    let decision: Record<string, unknown>;
    try {
      decision = (await this.#call(park.event)) as Record<string, unknown>;
    } catch (error) {
      this.#fail({ phase: "action", sessionId: String(park.event.session_id), error: error as Error, outcome: "stayed_suspended" });
      throw harnessUnavailable("resume", (error as Error).message);
    }
    const outcome = this.#classify(park.eventType, park.event, park.eventId, park.event.payload, decision);
    if (outcome === "retry" || typeof outcome === "number") return { kind: "park", park };
    if ("proceedAfterMs" in outcome) return { kind: "allow" };
    return outcome;
  }

  #classify(
    type: string,
    event: AhpEventInput,
    eventId: string,
    payload: unknown,
    d: Record<string, unknown>,
  ): ActionOutcome | number | "retry" | { proceedAfterMs: number } {
    const park = (reason: string, resumeWhen: ResumeConditions, waitingOn: string): ActionOutcome => ({
      kind: "park",
      park: { reason, resumeWhen, eventType: type as EventType, eventId, waitingOn, event },
    });
    const threshold = this.parkThresholdMs;
    const meta = (d.metadata as Record<string, unknown> | undefined)?.acp_suspend as
      | { reason?: string; resumeWhen?: ResumeConditions }
      | undefined;
    switch (d.decision) {
      case "allow":
      case "approve":
        if (meta !== undefined) return park(meta.reason ?? "harness_requested", meta.resumeWhen ?? {}, "metadata");
        return d.modified_payload === undefined ? { kind: "allow" } : { kind: "allow", modifiedPayload: d.modified_payload };
      case "modify":
        return { kind: "allow", modifiedPayload: d.modified_payload };
      case "block":
      case "reject":
      case "skip": {
        const rule = findRuleId({ result: d });
        const kind = d.decision === "skip" ? "skip" : "refuse";
        const reason = String(d.reason ?? (kind === "skip" ? "skipped by the harness" : "blocked by the harness"));
        return rule === undefined ? { kind, reason } : { kind, reason, rule };
      }
      case "defer": {
        const ms = Number(d.retry_after_ms ?? 0);
        if (ms < threshold) return ms;
        return park("harness_deferred", { timeout: { durationMinutes: ceilMinutes(ms), onTimeout: "resume_with_input" } }, "defer");
      }
      case "retry": {
        const ms = Number(d.retry_after_ms ?? 0);
        if (ms < threshold) return { proceedAfterMs: ms };
        return park("rate_limit_retry", { timeout: { durationMinutes: ceilMinutes(ms), onTimeout: "resume_with_input" } }, "rate_limit");
      }
      case "queue": {
        const p = payload as { limit_type?: unknown; retry_after_ms?: unknown };
        const limit = typeof p.limit_type === "string" ? p.limit_type : "custom";
        const rw: ResumeConditions = { onEvent: `harness.rate_limit.${limit}` };
        const ms = Number(p.retry_after_ms ?? 0);
        if (ms > 0) rw.timeout = { durationMinutes: ceilMinutes(ms), onTimeout: "resume_with_input" };
        return park("rate_limit_queued", rw, "rate_limit");
      }
      case "escalate": {
        if (type === "confirmation") return park("awaiting_confirmation", { onEvent: `harness.confirmation.${eventId}` }, "confirmation");
        const rw: ResumeConditions = { onEvent: `harness.escalation.${eventId}` };
        if (this.#o.escalationTimeoutMinutes !== undefined)
          rw.timeout = { durationMinutes: this.#o.escalationTimeoutMinutes, onTimeout: "fail" };
        return park(`escalated: ${String(d.reason ?? "")}`, rw, "escalation");
      }
      default:
        return { kind: "refuse", reason: `unexpected decision ${String(d.decision)}` };
    }
  }

  /**
   * §7.6: asks the harness whether a harness-owned park may resume. Returns the answer when it
   * says `resume: true`, else undefined (also when the harness cannot answer).
   */
  async poll(sessionId: string, handle: string, waitingOn: string): Promise<{ input?: unknown; continueTranscript?: boolean } | undefined> {
    try {
      if (this.#ready !== undefined) await this.#ready;
      // `ahp/query` carries the client's own session id; the ACP session travels in the payload (see README).
      const response = await this.#client.query("acp_suspension_status", { session_id: sessionId, handle, waiting_on: waitingOn });
      const answer = (response as { answer?: { resume?: unknown; input?: unknown; continueTranscript?: unknown } }).answer;
      if (answer?.resume !== true) return undefined;
      const out: { input?: unknown; continueTranscript?: boolean } = {};
      if (answer.input !== undefined) out.input = answer.input;
      if (typeof answer.continueTranscript === "boolean") out.continueTranscript = answer.continueTranscript;
      return out;
    } catch (error) {
      this.#fail({ phase: "poll", sessionId, error: error as Error, outcome: "stayed_suspended" });
      return undefined;
    }
  }
}

function argumentsOf(modified: unknown): Record<string, unknown> {
  if (typeof modified !== "object" || modified === null) return {};
  const m = modified as Record<string, unknown>;
  const args = m.arguments;
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : m;
}

/**
 * The bridge's face towards the agent: the connection to it, self-parks (T7), the drain over
 * the agent (first-class, tunnel or emulated, §6.5), and what the agent sends back (updates,
 * permission requests gated by the harness, await_resumption, its exit). `bridge.ts` adds the
 * client-facing request handling.
 */
import { RequestError } from "@agentclientprotocol/sdk";
import { newId } from "@ahp/core";
import { isoAt } from "./clock.js";
import { META, METHODS } from "./constants.js";
import { SuspendCore, type SuspendInit } from "./core.js";
import type { CoreOptions } from "./session-core.js";
import { DownstreamAgent, type DownstreamConnector } from "./downstream.js";
import { invalidParams, isMethodNotFound, unknownSession } from "./errors.js";
import { DIGEST_CHARS, keyCount } from "./internal.js";
import type { ParkSpec } from "./harness.js";
import { keepRefusal, permissionPayload, refusalAnswer, refusalUpdate, type Refusal } from "./permission.js";
import { type ClientLink, type EarlyUpdate, type Session, type SuspendResult } from "./session.js";
import { isSuspending } from "./state-machine.js";
import { validateAwaitResumptionRequest, validateResumeConditions, type ResumeConditions } from "./validation.js";

/** The `sessionUpdate` tags of ACP v1 stable: anything else never reaches a client (§2.5 item 4). */
export const STANDARD_UPDATES = new Set([
  "user_message_chunk",
  "agent_message_chunk",
  "agent_thought_chunk",
  "tool_call",
  "tool_call_update",
  "plan",
  "available_commands_update",
  "current_mode_update",
  "config_option_update",
  "session_info_update",
  "usage_update",
  "notice",
  "compaction_update",
  "compaction_summary_chunk",
]);

const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));
/** How many allowed tool calls a session remembers until the agent reports them finished. */
const MAX_ALLOWED_TOOLS = 1024;

/**
 * Options of {@link AcpBridgeEngine}: the machinery's options plus how to reach the agent, probing,
 * the agent-exit callback and which AHP event a permission request becomes.
 */
export interface BridgeCoreOptions extends CoreOptions {
  /** Opens the connection to the agent (called again to restart it after it died). */
  agent: DownstreamConnector;
  /** Try the suspend methods on agents that did not advertise them. Default false. */
  probeUnadvertised?: boolean;
  /** Called when the agent's connection ends; suspended sessions are kept. */
  onAgentExit?: (info: { error: unknown; suspended: string[] }) => void;
  /** Which AHP event a `session/request_permission` of the agent becomes (§7.3). Default `pre_action`. */
  permissionEvent?: "pre_action" | "confirmation";
  /**
   * Called once the answer to a client's `initialize` is ready (a host can start work the answer
   * does not need, e.g. its harness, only then, so that the client does not wait for it).
   */
  onInitialized?: () => void;
}

/** What {@link AcpBridgeEngine.guard} decided about an action. */
export type GuardOutcome =
  | { outcome: "proceed"; modifiedPayload?: unknown }
  | { outcome: "refuse" | "skip"; reason: string; rule?: string }
  | { outcome: "park"; reason: string; waitingOn: string };

/**
 * The bridge without a transport: answers the client's ACP requests (sessions, prompts, suspend,
 * resume, close, delete, load), drains turns over the agent, and handles what the agent sends.
 * {@link AcpBridge} adds `connect`.
 */
/**
 * The bridge's agent side without the client-facing requests: the agent connection, the drain,
 * self-parks and what the agent sends. {@link AcpBridgeEngine} adds the requests of the client.
 */
export class AgentFace extends SuspendCore {
  protected readonly bo: BridgeCoreOptions;
  /** The client connection opened last: where an update for a session the bridge does not hold goes. */
  protected lastLink: ClientLink | undefined;
  /** Requests in flight that open a session whose id the bridge learns only from the answer (`session/new`). */
  #opening = 0;
  /** Updates read meanwhile for a session the bridge does not hold yet, in wire order. */
  readonly #unplaced: EarlyUpdate[] = [];

  constructor(options: BridgeCoreOptions) {
    super(options);
    this.bo = options;
    this.downstream = new DownstreamAgent(
      options.agent,
      {
        onUpdate: (params, line) => {
          try {
            this.onAgentUpdate(params, line);
          } catch (error) {
            this.report(error);
          }
        },
        onRequest: (method, params, signal) => this.onAgentRequest(method, params, signal),
        onNotification: (method, params) => this.onAgentNotification(method, params),
        onClose: (error) => this.onAgentClose(error),
      },
      { ...(options.probeUnadvertised ? { probeUnadvertised: true } : {}) },
    );
  }

  /** The connection to the agent (for tests and advanced hosts). */
  get agent(): DownstreamAgent {
    return this.downstream;
  }

  protected session(sessionId: unknown): Session {
    const s = typeof sessionId === "string" ? this.sessions.get(sessionId) : undefined;
    if (s === undefined || s.state === "deleted") throw unknownSession(String(sessionId));
    // The client names the session: it has the answer that opened it, so held updates go first.
    if (s.early !== undefined) this.releaseEarly(s);
    return s;
  }

  /** The session the agent knows as `downstreamId` (runs for every update the agent sends). */
  protected byAgentId(downstreamId: unknown): Session | undefined {
    if (typeof downstreamId !== "string") return undefined;
    // Usually the agent's id is the session's own: no scan over every session held.
    const same = this.sessions.get(downstreamId);
    if (same !== undefined && same.downstreamId === downstreamId && same.state !== "deleted") return same;
    for (const s of this.sessions.values()) if (s.downstreamId === downstreamId && s.state !== "deleted") return s;
    return undefined;
  }

  // ------------------------------------------------------------------ self-park (T7)

  /**
   * Parks a running session on the agent's behalf (the harness decided, or the agent asked with
   * await_resumption). With an aware client, `_ahpHarness/session/await_resumption` goes out first
   * and its handle is used (O2). Resolves once the suspension has committed.
   */
  async selfPark(
    sessionId: string,
    options: {
      reason: string;
      conditions?: unknown;
      summary?: string;
      initiatorDetail?: "self" | "harness" | "trigger";
      park?: ParkSpec;
      agentEndsTurn?: boolean;
      proposedHandle?: string;
    },
  ): Promise<SuspendResult> {
    const s = this.session(sessionId);
    const c = validateResumeConditions(options.conditions, "conditions", { resumeCauses: this.resumeCauses });
    if (!c.ok) throw invalidParams(c.error.reason, c.error.field, c.error.detail);
    const { conditions: _raw, agentEndsTurn, ...rest } = options;
    const init = await this.selfParkInit(s, { ...rest, ...(c.value === undefined ? {} : { conditions: c.value }) });
    if (agentEndsTurn) init.agentEndsTurn = true;
    return this.startSuspend(s, init);
  }

  protected async selfParkInit(
    s: Session,
    o: {
      reason: string;
      conditions?: ResumeConditions;
      summary?: string;
      initiatorDetail?: "self" | "harness" | "trigger";
      park?: ParkSpec;
      proposedHandle?: string;
    },
  ): Promise<SuspendInit> {
    const init: SuspendInit = {
      mode: "finish_step",
      initiator: "agent",
      initiatorDetail: o.initiatorDetail ?? "self",
      self: true,
      skipGate: o.park !== undefined,
      reason: o.reason,
    };
    if (o.conditions !== undefined) init.resumeWhen = o.conditions;
    if (o.summary !== undefined) init.summary = o.summary;
    if (o.park !== undefined) init.park = o.park;
    if (o.proposedHandle !== undefined) init.proposedHandle = o.proposedHandle;
    const link = s.link;
    if (link?.caps.awaitResumption && !link.closed && s.state === "active.running") {
      const proposed = o.proposedHandle ?? `sus_${newId()}`;
      const request: Record<string, unknown> = {
        sessionId: s.id,
        reason: o.reason,
        _meta: { [META.suspend]: { proposedHandle: proposed } },
      };
      if (o.conditions !== undefined) request.conditions = o.conditions;
      if (o.summary !== undefined) request.summary = o.summary;
      try {
        const r = await link.ctx.request<Record<string, unknown>>(METHODS.tunnelAwaitResumption, request);
        init.proposedHandle = typeof r.handle === "string" && r.handle !== "" ? r.handle : proposed;
        if (obj(obj(r._meta)?.[META.suspend])?.conditionsAccepted === true) init.clientOwnsConditions = true;
      } catch (error) {
        if (!isMethodNotFound(error)) this.report(error);
      }
    }
    return init;
  }

  // ------------------------------------------------------------------ the drain over the agent

  protected sendCancel(s: Session): void {
    const turn = s.turn;
    if (turn === undefined || turn.cancelSent) return;
    turn.cancelSent = true;
    if (this.downstream.alive)
      this.downstream.notify("session/cancel", { sessionId: s.downstreamId }).catch((e: unknown) => this.report(e));
  }

  protected override async drain(s: Session): Promise<void> {
    const sus = s.suspension;
    if (sus === undefined || s.turn === undefined) return;
    if (sus.emulated === undefined) {
      if (sus.initiator === "agent") sus.emulated = true;
      else {
        sus.emulated = true;
        const params: Record<string, unknown> = { sessionId: s.downstreamId, mode: sus.mode };
        if (sus.reason !== undefined) params.reason = sus.reason;
        const carriage = this.downstream.suspendCarriage(params);
        // An aware agent answers after its turn ended: the drain goes on meanwhile.
        const first = await Promise.race([carriage.then((c) => c.kind), nextMacrotask().then(() => "pending" as const)]);
        if (first === "first_class" || first === "tunnel") {
          sus.emulated = false;
          void carriage.then((c) => {
            if (c.kind === "first_class" || c.kind === "tunnel") sus.downstreamHandle = String(c.result.handle);
          });
          return;
        }
        if (first === "pending") {
          const c = await carriage.catch(() => ({ kind: "emulate" as const }));
          if (c.kind === "first_class" || c.kind === "tunnel") {
            sus.emulated = false;
            sus.downstreamHandle = String(c.result.handle);
            return;
          }
          if (c.kind === "cancel") sus.emulated = "cancel";
        } else if (first === "cancel") sus.emulated = "cancel";
      }
    }
    if (sus.emulated === false || s.turn === undefined) return;
    if (sus.mode === "interrupt_immediate" || sus.emulated === "cancel") return this.sendCancel(s);
    if (sus.mode === "finish_step") {
      const running = [...s.turn.toolCalls.values()].some((st) => st === "in_progress");
      if (!running) {
        sus.emulatedBoundary = true;
        this.sendCancel(s);
      }
    }
  }

  // ------------------------------------------------------------------ what the agent sends

  /**
   * An update from the agent. `line`, when given, is the notification's line as the agent sent it
   * (nothing but `jsonrpc`, `method` and `params`): when `params` is just the session's own id and
   * the update, that line is forwarded byte for byte.
   */
  protected onAgentUpdate(raw: unknown, line?: string): void {
    const p = obj(raw);
    const s = this.byAgentId(p?.sessionId);
    if (s === undefined) {
      // Maybe the session being opened: its answer has not been handled yet.
      if (this.#opening > 0) this.#unplaced.push(line === undefined ? { params: raw } : { params: raw, line });
      else this.forwardUnheld(raw, line);
      return;
    }
    if (s.early !== undefined) {
      s.early.push(line === undefined ? { params: raw } : { params: raw, line });
      return;
    }
    const u = obj(p?.update);
    if (u === undefined) {
      this.report(new Error("dropped a session/update without an update object from the agent"));
      return;
    }
    if (s.replaying === "discard") return;
    const tag = String(u.sessionUpdate);
    if (!STANDARD_UPDATES.has(tag)) {
      this.report(new Error(`dropped a non-standard session/update (${tag}) from the agent`));
      return;
    }
    if (s.state === "suspended" && s.replaying !== "forward") return; // O4
    const turn = s.turn;
    if (turn !== undefined && typeof u.toolCallId === "string") {
      if (tag === "tool_call") turn.toolCalls.set(u.toolCallId, typeof u.status === "string" ? u.status : "pending");
      else if (tag === "tool_call_update" && typeof u.status === "string") turn.toolCalls.set(u.toolCallId, u.status);
    }
    if (tag === "agent_message_chunk") {
      const text = obj(u.content)?.text;
      if (typeof text === "string") {
        // Cut back to the last DIGEST_CHARS once it holds twice that: one copy per ~2000 characters, not per update.
        const digest = s.digest + text;
        s.digest = digest.length > 2 * DIGEST_CHARS ? digest.slice(-DIGEST_CHARS) : digest;
      }
    }
    if (tag === "tool_call_update" && (u.status === "completed" || u.status === "failed") && typeof u.toolCallId === "string")
      this.reportFinished(s, u.toolCallId, u.status);
    const refused = tag === "tool_call_update" && typeof u.toolCallId === "string" ? s.refused?.get(u.toolCallId) : undefined;
    if (refused !== undefined) this.emit(s, keepRefusal(u, refused));
    else if (line !== undefined && p!.sessionId === s.id && keyCount(p!) === 2) this.emitLine(s, u, line);
    else this.emit(s, u);
    const sus = s.suspension;
    if (
      turn !== undefined &&
      sus !== undefined &&
      isSuspending(s.state) &&
      sus.emulated === true &&
      sus.mode === "finish_step" &&
      tag === "tool_call_update" &&
      (u.status === "completed" || u.status === "failed")
    ) {
      sus.emulatedBoundary = true;
      this.sendCancel(s);
    }
  }

  /**
   * An update for a session the bridge does not hold (the client opened it some other way, or the
   * agent made it): it goes to the client as it came, never dropped without a trace.
   */
  protected forwardUnheld(raw: unknown, line?: string): void {
    const link = this.lastLink;
    if (link === undefined || link.closed) {
      this.report(new Error("dropped a session/update for a session the bridge does not hold: no client is attached"));
      return;
    }
    if (line !== undefined && link.writeLine?.(line) === true) return;
    link.ctx.notify("session/update", raw as never).catch((e: unknown) => this.report(e));
  }

  /**
   * Sends a request that opens a session the bridge learns of from its answer (`session/new`):
   * the agent's updates read before that answer is handled are kept, in order, for
   * {@link AgentFace.holdEarly}.
   */
  protected async opening<R>(method: string, params: unknown): Promise<R> {
    this.#opening++;
    try {
      return await this.downstream.request<R>(method, params);
    } catch (error) {
      this.#opening--;
      this.releaseUnplaced();
      throw error;
    }
  }

  /**
   * Called right after the answer of {@link AgentFace.opening}, once `s` is registered: the
   * session's updates kept meanwhile (and any that come before the answer reached the client) are
   * held and forwarded in order after the answer.
   */
  protected holdEarly(s: Session, fromOpening: boolean): void {
    if (fromOpening) this.#opening--;
    const mine: EarlyUpdate[] = [];
    const rest: EarlyUpdate[] = [];
    for (const e of this.#unplaced.splice(0)) (obj(e.params)?.sessionId === s.downstreamId ? mine : rest).push(e);
    this.#unplaced.push(...rest);
    s.early = [...(s.early ?? []), ...mine];
    this.releaseUnplaced();
    // The answer is handed to the client's connection in this turn of the event loop (the SDK
    // sends it as the handler's promise settles): the updates follow it.
    setImmediate(() => this.releaseEarly(s));
  }

  /** Forwards a session's held updates, in order, and stops holding. */
  protected releaseEarly(s: Session): void {
    const held = s.early;
    s.early = undefined;
    if (held === undefined) return;
    for (const e of held) {
      try {
        this.onAgentUpdate(e.params, e.line);
      } catch (error) {
        this.report(error);
      }
    }
  }

  /** With no session being opened any more, updates kept for none of them go on as {@link AgentFace.forwardUnheld}. */
  protected releaseUnplaced(): void {
    if (this.#opening > 0) return;
    for (const e of this.#unplaced.splice(0)) {
      const s = this.byAgentId(obj(e.params)?.sessionId);
      if (s === undefined) this.forwardUnheld(e.params, e.line);
      else this.onAgentUpdate(e.params, e.line);
    }
  }

  protected onAgentNotification(method: string, params: unknown): void {
    const s = this.byAgentId(obj(params)?.sessionId);
    const link = s?.link;
    if (link !== undefined && !link.closed)
      link.ctx.notify(method, { ...obj(params), sessionId: s!.id }).catch((e: unknown) => this.report(e));
  }

  protected async onAgentRequest(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    if (method === METHODS.tunnelAwaitResumption || method === METHODS.awaitResumption) return this.onAgentAwaitResumption(params);
    const p = obj(params) ?? {};
    const s = this.byAgentId(p.sessionId);
    if (method === "session/request_permission") {
      if (s === undefined) return { outcome: { outcome: "cancelled" } };
      const gated = await this.gatePermission(s, p);
      if (gated !== undefined) return gated;
    }
    const link = s?.link;
    if (s === undefined || link === undefined || link.closed)
      throw RequestError.internalError({ detail: "no client is attached to this session" });
    return link.ctx.request(method, { ...p, sessionId: s.id }, { cancellationSignal: signal });
  }

  /**
   * §7.3 for hosts that embed the bridge: asks the harness about an action of a running turn
   * (`pre_action`, `pre_prompt`, `confirmation`, `rate_limit`) and parks the session when the
   * answer says so (long defer, escalate, queue, ...). Short deferrals wait inline.
   */
  async guard(
    sessionId: string,
    type: "pre_action" | "pre_prompt" | "confirmation" | "rate_limit",
    payload: unknown,
  ): Promise<GuardOutcome> {
    const s = this.session(sessionId);
    const h = this.harness;
    if (h === undefined) return { outcome: "proceed" };
    const key = JSON.stringify(payload);
    if (s.approvals.delete(key)) return { outcome: "proceed" };
    const o = await h.gateAction(s.id, type, payload);
    if (o.kind === "allow")
      return o.modifiedPayload === undefined ? { outcome: "proceed" } : { outcome: "proceed", modifiedPayload: o.modifiedPayload };
    if (o.kind === "refuse" || o.kind === "skip")
      return o.rule === undefined ? { outcome: o.kind, reason: o.reason } : { outcome: o.kind, reason: o.reason, rule: o.rule };
    const park = o.park;
    this.selfPark(s.id, { reason: park.reason, conditions: park.resumeWhen, initiatorDetail: "harness", park }).catch((e: unknown) =>
      this.report(e),
    );
    return { outcome: "park", reason: park.reason, waitingOn: park.waitingOn };
  }

  /** §7.3: a tool call the agent wants to run goes to the harness first; some answers park the session. */
  protected async gatePermission(s: Session, p: Record<string, unknown>): Promise<unknown> {
    const cancelled = { outcome: { outcome: "cancelled" } };
    if (isSuspending(s.state)) {
      if (s.suspension?.mode !== "wait_for_completion") {
        this.sendCancel(s);
        return cancelled;
      }
      return undefined;
    }
    if (this.harness === undefined) return undefined;
    const tc = obj(p.toolCall) ?? {};
    const options = Array.isArray(p.options) ? (p.options as Array<{ optionId: string; kind: string; name?: string }>) : [];
    const title = String(tc.title ?? tc.kind ?? "tool");
    const action = this.bo.permissionEvent === "confirmation" ? undefined : permissionPayload(tc, s.cwd);
    const verdict =
      action === undefined
        ? await this.guard(s.id, "confirmation", {
            session_id: s.id,
            confirmation_type: "user_confirm",
            message: title,
            options: options.map((o) => o.name ?? o.optionId),
          })
        : await this.guard(s.id, "pre_action", action);
    if (verdict.outcome === "proceed") {
      if (action !== undefined && typeof tc.toolCallId === "string" && tc.toolCallId !== "") {
        const allowed = (s.allowedTools ??= new Map());
        // Bounded: an agent that never reports its tool calls finished cannot grow this without end.
        if (allowed.size >= MAX_ALLOWED_TOOLS) allowed.delete(allowed.keys().next().value);
        allowed.set(tc.toolCallId, verdict.modifiedPayload === undefined ? action : { ...action, ...obj(verdict.modifiedPayload) });
      }
      return undefined;
    }
    if (verdict.outcome === "refuse" || verdict.outcome === "skip") {
      // A harness refusal, not the user's: the client is told why (ADR 0142); the agent gets its
      // reject option with the decision in `_meta`.
      const refusal: Refusal = {
        decision: verdict.outcome === "skip" ? "skip" : "block",
        reason: verdict.reason,
        ...(verdict.rule === undefined ? {} : { rule: verdict.rule }),
      };
      if (typeof tc.toolCallId === "string") {
        (s.refused ??= new Map()).set(tc.toolCallId, refusal);
        this.emit(s, refusalUpdate(tc.toolCallId, refusal));
      }
      return refusalAnswer(options, refusal);
    }
    return cancelled;
  }

  /**
   * A tool call the harness allowed has finished: the harness learns how it went (`post_action`,
   * `result.status` `completed` or `failed`), so its record and any view of it (the Agent Host)
   * show the call done rather than cut short at the turn's end.
   */
  protected reportFinished(s: Session, toolCallId: string, status: "completed" | "failed"): void {
    const action = s.allowedTools?.get(toolCallId);
    if (action === undefined) return;
    s.allowedTools!.delete(toolCallId);
    this.harness?.notify("post_action", s.id, { ...action, result: { status, success: status === "completed" } });
  }

  /** An aware agent parks itself (T7); the bridge, as its client, owns the conditions (§5.7). */
  protected async onAgentAwaitResumption(params: unknown): Promise<unknown> {
    const v = validateAwaitResumptionRequest(params, { resumeCauses: this.resumeCauses });
    if (!v.ok) throw invalidParams(v.error.reason, v.error.field, v.error.detail);
    const s = this.byAgentId(v.value.sessionId);
    if (s === undefined) throw unknownSession(v.value.sessionId);
    const proposed = obj(v.value._meta?.[META.suspend])?.proposedHandle;
    const init = await this.selfParkInit(s, {
      reason: v.value.reason,
      initiatorDetail: "self",
      ...(v.value.conditions === undefined ? {} : { conditions: v.value.conditions }),
      ...(v.value.summary === undefined ? {} : { summary: v.value.summary }),
      ...(typeof proposed === "string" && proposed !== "" ? { proposedHandle: proposed } : {}),
    });
    init.skipGate = false;
    init.agentEndsTurn = true;
    const committed = this.startSuspend(s, init);
    committed.catch((e: unknown) => this.report(e));
    await Promise.resolve();
    const handle = s.suspension?.handle ?? init.proposedHandle ?? "";
    return { handle, suspendedAt: isoAt(this.clock.now()), _meta: { [META.suspend]: { conditionsAccepted: true } } };
  }

  protected onAgentClose(error: unknown): void {
    const suspended: string[] = [];
    for (const s of this.sessions.values()) {
      s.downstreamLost = true;
      if (s.state === "suspended") {
        suspended.push(s.id);
        this.harness?.notify("error", s.id, {
          reason: "agent_exited",
          handle: s.suspension?.handle ?? null,
          message: "the agent exited while the session was suspended; the suspension is kept",
        });
      }
    }
    if (!this.isClosed) this.bo.onAgentExit?.({ error, suspended });
  }

  /** Makes the agent hold the session again (after a restart of the agent or of the bridge). */
  protected async reattach(s: Session): Promise<void> {
    if (!this.downstream.alive) await this.downstream.restart();
    s.replaying = "discard";
    try {
      await this.downstream.reattach(s.downstreamId, s.cwd, s.mcpServers, s.additionalDirectories);
      await nextMacrotask();
      s.downstreamLost = false;
    } finally {
      s.replaying = undefined;
    }
  }

  protected override async restoreDownstream(
    s: Session,
    r: { continueTranscript: boolean; hasInput: boolean; input: unknown; handle: string },
  ): Promise<void> {
    const sus = s.suspension;
    if (s.downstreamLost || !this.downstream.alive) await this.reattach(s);
    if (!r.continueTranscript && this.o.emulateFreshTranscript && sus?.emulated !== false) {
      const fresh = await this.downstream.request<{ sessionId: string }>("session/new", {
        cwd: s.cwd,
        mcpServers: s.mcpServers,
        ...(s.additionalDirectories ? { additionalDirectories: s.additionalDirectories } : {}),
      });
      s.downstreamId = fresh.sessionId;
      return;
    }
    if (sus?.emulated === false && sus.downstreamHandle !== undefined && this.downstream.caps.resume) {
      const meta = {
        [META.resume]: {
          handle: sus.downstreamHandle,
          continueTranscript: r.continueTranscript,
          ...(r.hasInput ? { input: r.input } : {}),
        },
      };
      await this.downstream.request("session/resume", { sessionId: s.downstreamId, cwd: s.cwd, mcpServers: s.mcpServers, _meta: meta });
    }
  }
}

/**
 * The ACP bridge: the upstream face's request handling (`initialize`, sessions, prompts,
 * suspend, resume, close, delete, load), the drain over the downstream agent (first-class,
 * tunnel or emulated, §6.5), and what the agent sends back (updates, permission requests gated
 * by the harness, await_resumption, its exit).
 */
import {
  PROTOCOL_VERSION,
  type AgentContext,
  type InitializeRequest,
  type InitializeResponse,
  type PromptRequest,
  type PromptResponse,
} from "@agentclientprotocol/sdk";
import { newId } from "@ahp/core";
import { isoAt } from "./clock.js";
import { DESCRIPTOR_VERSION, META } from "./constants.js";
import { invalidParams, stateConflict, unknownSession } from "./errors.js";
import { NO_CLIENT_CAPS, newSession, type ClientCaps, type ClientLink, type Session, type SuspendResult } from "./session.js";
import { isSuspending, transition, type BridgeEvent } from "./state-machine.js";
import { validateResumeEnrichment } from "./validation.js";
import { AgentFace } from "./agent-face.js";

const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Reads what a client advertised (§6.1). */
export function readClientCaps(params: InitializeRequest): ClientCaps {
  const caps = obj(params.clientCapabilities) ?? {};
  const d = obj(obj(caps._meta)?.[META.suspend]);
  const notices = obj(caps.session)?.notices;
  const lifecycle = Array.isArray(d?.lifecycle) ? (d.lifecycle as unknown[]) : [];
  return {
    aware: d !== undefined,
    notices: notices !== undefined && notices !== null,
    firstClassLifecycle: lifecycle.includes("first_class"),
    awaitResumption: d?.awaitResumption === true,
    agentInitiatedTurns: d?.agentInitiatedTurns === true,
  };
}

/**
 * The bridge without a transport: answers the client's ACP requests (sessions, prompts, suspend,
 * resume, close, delete, load), drains turns over the agent, and handles what the agent sends.
 * {@link AcpBridge} adds `connect`.
 */
export class AcpBridgeEngine extends AgentFace {
  #freshTranscript = false;
  #linkSeq = 0;

  /** Loads the stored suspensions; a corrupt record stops the start (SuspensionStoreError). */
  async start(): Promise<void> {
    this.restore(await this.store.loadAll());
  }

  newLink(ctx: AgentContext): ClientLink {
    const link: ClientLink = { id: ++this.#linkSeq, ctx, caps: { ...NO_CLIENT_CAPS }, closed: false };
    this.lastLink = link;
    return link;
  }

  /** The client connection ended: its sessions keep their state (T22, T23). */
  detach(link: ClientLink): void {
    link.closed = true;
    for (const s of this.sessions.values()) {
      if (s.link !== link) continue;
      s.link = undefined;
      this.apply(s, "transport_drop");
    }
  }
  // ------------------------------------------------------------------ upstream requests

  async initialize(params: InitializeRequest, link: ClientLink): Promise<InitializeResponse> {
    link.caps = readClientCaps(params);
    const clientCaps = obj(params.clientCapabilities) ?? {};
    const downInit = await this.downstream.start({
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {
        ...clientCaps,
        _meta: {
          ...(obj(clientCaps._meta) ?? {}),
          [META.suspend]: {
            version: DESCRIPTOR_VERSION,
            awaitResumption: true,
            lifecycle: ["meta"],
            agentInitiatedTurns: false,
            firstClass: false,
          },
        },
      },
      ...(params.clientInfo ? { clientInfo: params.clientInfo } : {}),
    });
    const caps = obj(downInit.agentCapabilities) ?? {};
    const agentDescriptor = this.downstream.caps.suspend;
    this.#freshTranscript = this.o.emulateFreshTranscript === true || agentDescriptor?.freshTranscript === true;
    const agentCapabilities: Record<string, unknown> = {
      ...caps,
      loadSession: caps.loadSession === true,
      sessionCapabilities: { ...(obj(caps.sessionCapabilities) ?? {}), resume: {}, close: {} },
      _meta: { ...(obj(caps._meta) ?? {}), [META.suspend]: this.descriptor(this.#freshTranscript) },
    };
    if (this.o.rootCapabilityFlags) {
      agentCapabilities.supportsSuspend = true;
      agentCapabilities.supportsAwaitResumption = true;
      agentCapabilities.resumeCauses = [...this.resumeCauses];
    }
    const out: Record<string, unknown> = { protocolVersion: PROTOCOL_VERSION, agentCapabilities };
    if (downInit.authMethods !== undefined) out.authMethods = downInit.authMethods;
    if (downInit.agentInfo !== undefined) out.agentInfo = downInit.agentInfo;
    const onInitialized = this.bo.onInitialized;
    // After this turn of the event loop: the answer is on its way first.
    if (onInitialized !== undefined) setImmediate(onInitialized);
    return out as InitializeResponse;
  }

  async newSession(params: Record<string, unknown>, link: ClientLink): Promise<Record<string, unknown>> {
    const response = await this.opening<Record<string, unknown>>("session/new", params);
    const id = String(response.sessionId);
    const s = newSession(
      id,
      String(params.cwd),
      (params.mcpServers as unknown[] | undefined) ?? [],
      params.additionalDirectories as string[] | undefined,
    );
    s.link = link;
    this.sessions.set(id, s);
    this.holdEarly(s, true);
    this.harness?.notify("session_start", id, { session_id: id, cwd: s.cwd });
    return response;
  }

  async loadSession(params: Record<string, unknown>, link: ClientLink): Promise<Record<string, unknown>> {
    const id = String(params.sessionId);
    let s = this.sessions.get(id);
    if (s === undefined || s.state === "deleted") {
      s = newSession(id, String(params.cwd), (params.mcpServers as unknown[] | undefined) ?? []);
      this.sessions.set(id, s);
    }
    this.apply(s, "load");
    s.link = link;
    s.cwd = String(params.cwd);
    if (!this.downstream.alive) await this.downstream.restart();
    s.replaying = "forward";
    let response: Record<string, unknown>;
    try {
      response =
        (await this.downstream.request<Record<string, unknown> | null>("session/load", { ...params, sessionId: s.downstreamId })) ?? {};
      s.downstreamLost = false;
    } finally {
      await nextMacrotask();
      s.replaying = undefined;
    }
    // T24: the replay ends with the suspension it is in.
    if (s.state === "suspended" && s.suspension !== undefined) this.lifecycle(s, this.suspendedEvent(s, s.suspension));
    return response;
  }

  suspend(params: unknown, link: ClientLink): Promise<SuspendResult> {
    return this.suspendRequest(params, link);
  }

  status(params: unknown): Record<string, unknown> {
    const s = this.session(obj(params)?.sessionId);
    const out: Record<string, unknown> = { state: s.state };
    const sus = s.suspension;
    if (sus !== undefined && (s.state === "suspended" || s.state === "resuming" || isSuspending(s.state) || s.state === "failed")) {
      out.handle = sus.handle;
      if (sus.suspendedAtMs !== undefined) out.suspendedAt = isoAt(sus.suspendedAtMs);
      if (sus.reason !== undefined) out.reason = sus.reason;
      if (sus.resumeWhen !== undefined) out.resumeWhen = sus.resumeWhen;
    }
    return out;
  }

  async resumeSession(params: Record<string, unknown>, link: ClientLink): Promise<Record<string, unknown>> {
    const e = validateResumeEnrichment(params._meta, { freshTranscript: this.#freshTranscript });
    if (!e.ok) throw invalidParams(e.error.reason, e.error.field, e.error.detail);
    const enr = e.value;
    const id = String(params.sessionId);
    const known = this.sessions.get(id);
    if (known === undefined || known.state === "deleted") {
      if (enr?.handle !== undefined || known?.state === "deleted") throw unknownSession(id);
      // A session the bridge never saw: plain ACP resume through to the agent, then keep it. It is
      // held from the start, so its updates are kept until the answer has gone out (then follow it).
      if (!this.downstream.alive) await this.downstream.restart();
      const s = newSession(id, String(params.cwd), (params.mcpServers as unknown[] | undefined) ?? []);
      s.link = link;
      s.early = [];
      this.sessions.set(id, s);
      let response: Record<string, unknown>;
      try {
        response = (await this.downstream.request<Record<string, unknown> | null>("session/resume", params)) ?? {};
      } catch (error) {
        if (this.sessions.get(id) === s) this.sessions.delete(id);
        const held = s.early;
        s.early = undefined;
        for (const e of held ?? []) this.forwardUnheld(e.params, e.line);
        throw error;
      }
      this.holdEarly(s, false);
      return response;
    }
    const s = known;
    s.cwd = String(params.cwd);
    s.link = link;
    const handle = enr?.handle;
    let event: BridgeEvent;
    if (handle !== undefined) {
      if (!s.issued.has(handle)) event = "resume_unknown_handle";
      else if (s.consumed.has(handle) || s.suspension?.handle !== handle) event = "resume_consumed_handle";
      else event = "resume";
    } else if (enr !== undefined && (enr.hasInput || enr.continueTranscript !== undefined)) {
      event = s.state === "suspended" || s.state === "resuming" ? "resume" : "resume_enrichment_without_handle";
    } else {
      const suspendedLike = s.state === "suspended" || s.state === "resuming";
      event = suspendedLike && (this.o.plainResumeWakes ?? true) && s.state === "suspended" ? "resume" : "plain_resume";
    }
    const t = transition(s.state, event);
    if (!t.ok) throw this.rowError(s, t, handle);
    if (event !== "resume") {
      // T15 (and I23–I25): a plain re-attach.
      if (s.state === "resuming") {
        while (s.state === "resuming") await nextMacrotask();
      }
      if (s.state === "closed") this.apply(s, "plain_resume");
      if (s.downstreamLost || !this.downstream.alive) await this.reattach(s);
      if (s.state === "suspended") return { _meta: { [META.resume]: { state: "suspended", handle: s.suspension?.handle } } };
      this.traceRow(s.id, "T15", s.state, s.state);
      return {};
    }
    const outcome = await this.wake(s, {
      explicit: true,
      cause: "explicit_resume",
      hasInput: enr?.hasInput ?? false,
      ...(enr?.hasInput ? { input: enr.input } : {}),
      continueTranscript: enr?.continueTranscript ?? true,
    });
    return { _meta: { [META.resume]: outcome } };
  }

  async prompt(params: PromptRequest, link: ClientLink, signal: AbortSignal): Promise<PromptResponse> {
    const held = this.sessions.get(params.sessionId);
    // A session the bridge does not hold is the agent's to answer for.
    if (held === undefined) return (await this.forward("session/prompt", params, signal)) as PromptResponse;
    const s = this.session(params.sessionId);
    s.link = link;
    while (s.committing !== undefined) await s.committing.catch(() => undefined);
    const t = transition(s.state, "prompt");
    if (!t.ok) throw this.rowError(s, t);
    if (t.row.id === "T9") {
      // P1: an aware client is told; a stock client's prompt is the wake-up (implicit resume).
      if (link.caps.aware && (this.o.promptWhileSuspended ?? "reject") === "reject")
        throw stateConflict("prompt_while_suspended", s.state, s.suspension?.handle);
      await this.wake(s, { explicit: true, cause: "explicit_resume", hasInput: true, input: params.prompt, continueTranscript: true });
      s.queuedInput = undefined; // the prompt is the input: it runs as the turn
    }
    if (s.downstreamLost || !this.downstream.alive) await this.reattach(s);
    this.apply(s, "prompt");
    s.turn = { toolCalls: new Map(), cancelSent: false };
    s.refused = undefined;
    const h = this.harness;
    if (s.runId === undefined) {
      s.runId = `run_${newId()}`;
      s.runStartedAt = isoAt(this.clock.now());
    }
    const text = params.prompt
      .map((b) => (b.type === "text" ? b.text : ""))
      .join(" ")
      .slice(0, 2000);
    h?.runLifecycle(s.id, s.runId, "executing", {
      prompt: text,
      startedAt: s.runStartedAt ?? isoAt(this.clock.now()),
      updatedAt: isoAt(this.clock.now()),
    });
    const down: Record<string, unknown> = { ...params, sessionId: s.downstreamId };
    const queued = s.queuedInput;
    if (queued !== undefined) {
      // P2 on_next_prompt: the resume input leads the next prompt (text block + _meta copy).
      s.queuedInput = undefined;
      const lead: string[] = [];
      if (queued.digest !== undefined) lead.push(queued.digest);
      if (queued.hasInput) lead.push(`Resume input: ${typeof queued.input === "string" ? queued.input : JSON.stringify(queued.input)}`);
      down.prompt = [...(lead.length > 0 ? [{ type: "text", text: lead.join("\n") }] : []), ...params.prompt];
      down._meta = {
        ...(obj(params._meta) ?? {}),
        [META.resume]: { ...(queued.hasInput ? { input: queued.input } : {}), ...(queued.digest ? { digest: queued.digest } : {}) },
      };
    }
    let response: PromptResponse | undefined;
    // Boxed so that a rejection is rethrown as it came, whatever value it carries.
    let failure: { error: unknown } | undefined;
    try {
      response = await this.downstream.request<PromptResponse>("session/prompt", down, signal);
    } catch (error) {
      failure = { error };
    }
    // Updates read before the response must be forwarded before it: through the SDK their
    // handlers run as microtasks, so wait them out; raw updates were handled at read time.
    if (!this.downstream.rawUpdates) await nextMacrotask();
    const turn = s.turn;
    s.turn = undefined;
    if (isSuspending(s.state) && s.suspension !== undefined) {
      const sus = s.suspension;
      if (sus.mode === "interrupt_immediate" && turn !== undefined) {
        for (const [toolCallId, status] of turn.toolCalls) {
          if (status === "pending")
            this.emit(s, {
              sessionUpdate: "tool_call_update",
              toolCallId,
              status: "failed",
              _meta: { [META.suspend]: { skipped: true, handle: sus.handle } },
            });
        }
      }
      const stopReason =
        sus.mode === "interrupt_immediate" ? "cancelled" : sus.mode === "finish_step" ? "end_turn" : (response?.stopReason ?? "end_turn");
      sus.stopReason = stopReason;
      const stored = await this.turnEndedWhileSuspending(s);
      this.apply(s, "turn_end");
      if (stored) setImmediate(() => this.commitPending(s));
      if (failure !== undefined) throw failure.error;
      const meta = { ...(obj(response?._meta) ?? {}), ...(stored ? { [META.suspend]: { handle: sus.handle, state: "suspended" } } : {}) };
      return { ...response, stopReason, _meta: meta };
    }
    if (s.state === "active.running") this.apply(s, "turn_end");
    const status = failure !== undefined ? "failed" : response?.stopReason === "cancelled" ? "cancelled" : "completed";
    h?.runLifecycle(s.id, s.runId, status, {
      updatedAt: isoAt(this.clock.now()),
      ...(s.runStartedAt ? { startedAt: s.runStartedAt } : {}),
    });
    s.runId = undefined;
    s.runStartedAt = undefined;
    if (failure !== undefined) throw failure.error;
    return response!;
  }

  cancel(params: Record<string, unknown>): void {
    const s = this.sessions.get(String(params.sessionId));
    if (s === undefined) {
      this.downstream.notify("session/cancel", params).catch((e: unknown) => this.report(e));
      return;
    }
    const t = this.apply(s, "cancel");
    if (t.ok && t.row.id === "T10") this.escalateDrain(s, false);
    else if (s.state === "active.running") this.sendCancel(s);
  }

  async closeSession(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const s = this.sessions.get(String(params.sessionId));
    if (s?.early !== undefined) this.releaseEarly(s);
    if (s === undefined || s.state === "deleted") return ((await this.forward("session/close", params)) ?? {}) as Record<string, unknown>;
    const wasSuspension = s.state === "suspended" || isSuspending(s.state);
    this.apply(s, "close");
    this.discard(s, wasSuspension, "closed");
    if (wasSuspension) await this.persist(s, "closed").catch((e: unknown) => this.report(e));
    if (this.downstream.alive && this.downstream.caps.close)
      await this.downstream.request("session/close", { ...params, sessionId: s.downstreamId }).catch(() => undefined);
    return {};
  }

  async deleteSession(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const s = this.sessions.get(String(params.sessionId));
    if (s === undefined) return ((await this.forward("session/delete", params)) ?? {}) as Record<string, unknown>;
    if (s.state !== "deleted") {
      const wasSuspension = s.state === "suspended" || isSuspending(s.state);
      this.apply(s, "delete");
      this.discard(s, wasSuspension, "deleted");
      await this.store.remove(s.id).catch((e: unknown) => this.report(e));
    }
    if (this.downstream.alive && this.downstream.caps.delete) {
      await this.downstream.request("session/delete", { ...params, sessionId: s?.downstreamId ?? params.sessionId }).catch(() => undefined);
    }
    return {};
  }

  /** T20/T21: cancel the drain, disarm, lifecycle `discarded`, AHP `cancelled` + `session_end`. */
  protected discard(s: Session, wasSuspension: boolean, why: "closed" | "deleted"): void {
    this.disarm(s);
    if (s.turn !== undefined) this.sendCancel(s);
    const pending = s.pending;
    if (pending !== undefined) setImmediate(() => this.commitPending(s));
    const at = isoAt(this.clock.now());
    if (wasSuspension && s.suspension !== undefined)
      this.lifecycle(s, { event: "discarded", handle: s.suspension.handle, at, reason: why, state: s.state });
    if (this.harness !== undefined) {
      if (s.runId !== undefined || wasSuspension) this.harness.runLifecycle(s.id, s.runId ?? `run_${s.id}`, "cancelled", { updatedAt: at });
      this.harness.notify("session_end", s.id, { session_id: s.id, reason: why });
    }
    s.runId = undefined;
  }

  /** Any other request: through to the agent with the agent's session id. */
  async forward(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    const p = obj(params);
    const s = p !== undefined ? this.sessions.get(String(p.sessionId)) : undefined;
    if (s?.early !== undefined) this.releaseEarly(s);
    const out = s !== undefined ? { ...p, sessionId: s.downstreamId } : params;
    if (!this.downstream.alive) await this.downstream.restart();
    return this.downstream.request(method, out, signal);
  }

  forwardNotification(method: string, params: unknown): void {
    if (this.downstream.alive) this.downstream.notify(method, params).catch((e: unknown) => this.report(e));
  }

  /** Stops timers and the agent connection. Stored suspensions stay on disk. */
  async close(): Promise<void> {
    this.markClosed();
    this.harness?.flush();
    this.downstream.close();
    await this.store.close?.();
  }
}

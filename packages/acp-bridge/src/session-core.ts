/**
 * The base of the bridge's machinery: sessions, their state transitions and wire errors, the
 * `session/update` output and lifecycle events, and the suspension records. `core.ts` builds the
 * suspend/resume machinery on it.
 */
import { RequestError } from "@agentclientprotocol/sdk";
import { isoAt, type Clock } from "./clock.js";
import { DESCRIPTOR_VERSION, META, RESUME_CAUSES, type ResumeCause } from "./constants.js";
import { stateConflict, suspensionDiscarded, unknownSession } from "./errors.js";
import type { DownstreamAgent } from "./downstream.js";
import type { HarnessLink, ParkSpec } from "./harness.js";
import type { StoredSuspension } from "./schema.js";
import type { Session, SuspendResult, Suspension } from "./session.js";
import { transition, type BridgeEvent, type TransitionResult } from "./state-machine.js";
import type { SuspensionStore } from "./store.js";
import { echoConditions, type ResumeConditions, type TriggerValidator } from "./validation.js";

/** How many of the latest applied rows a bridge keeps in its trace (at least). */
export const TRACE_KEPT = 1024;

/**
 * Options of the suspend/resume machinery: clock, store, harness, drain deadline, the policies
 * P1–P3, resume causes, trigger checks and timers while suspended.
 */
export interface CoreOptions {
  clock: Clock;
  store: SuspensionStore;
  harness?: HarnessLink;
  /** Deadline of a drain before it escalates to `interrupt_immediate` (§5.4). Default 120 000. */
  maxQuiesceMs?: number;
  /** P1 for aware clients (stock clients always get an implicit resume). Default `reject`. */
  promptWhileSuspended?: "reject" | "resume";
  /** P3: a plain `session/resume` on a suspended session wakes it. Default true. */
  plainResumeWakes?: boolean;
  /** Start a fresh agent session seeded with a digest on `continueTranscript: false` (§6.5). Default false. */
  emulateFreshTranscript?: boolean;
  /** Write the RFC's root capability flags too (for RFC-native clients). Default false. */
  rootCapabilityFlags?: boolean;
  /** Resume causes the bridge honours (V10). Default all four. */
  resumeCauses?: readonly ResumeCause[];
  triggerValidator?: TriggerValidator;
  /** Host matcher for `trigger` conditions (S35): true when `payload` satisfies `trigger`. */
  triggerMatcher?: (trigger: Record<string, unknown>, payload: unknown) => boolean;
  /** Poll period of harness-owned parks (§7.6). Default 5 000; 0 disables. */
  harnessPollMs?: number;
  /** Periodic `heartbeat` while suspended (§7.4). Default off. */
  heartbeatWhileSuspendedMs?: number;
  /** Non-fatal problems (undeliverable output, failed reports, failed wake-ups). */
  onerror?: (error: Error) => void;
}

/** Thrown for a move the state table does not allow: a bug, never expected on any input. */
export class IllegalTransitionError extends Error {
  override name = "IllegalTransitionError";
}

/**
 * Sessions and what every part of the bridge shares about them: options, the state transitions
 * and their wire errors, `session/update` output and lifecycle events, and the suspension records
 * (write and restore). {@link SuspendCore} adds suspending, timers and resuming.
 */
export abstract class SessionCore {
  protected readonly sessions = new Map<string, Session>();
  protected readonly o: CoreOptions;
  protected readonly clock: Clock;
  protected readonly store: SuspensionStore;
  protected readonly harness: HarnessLink | undefined;
  /** Set by the bridge once the agent connection exists. */
  protected downstream!: DownstreamAgent;
  /**
   * The latest rows applied, oldest first (`id` of the row per session), for tests and
   * diagnostics: at least the last {@link TRACE_KEPT}, at most twice that, so a long-running
   * bridge does not grow with every turn.
   */
  readonly trace: Array<{ sessionId: string; row: string; from: string; to: string }> = [];
  #closedBridge = false;

  constructor(options: CoreOptions) {
    this.o = options;
    this.clock = options.clock;
    this.store = options.store;
    this.harness = options.harness;
  }

  get resumeCauses(): readonly ResumeCause[] {
    return this.o.resumeCauses ?? RESUME_CAUSES;
  }

  /** Current state of a session (undefined when unknown). */
  stateOf(sessionId: string): Session["state"] | undefined {
    return this.sessions.get(sessionId)?.state;
  }

  /** The current suspension handle of a session. */
  handleOf(sessionId: string): string | undefined {
    return this.sessions.get(sessionId)?.suspension?.handle;
  }

  protected report(error: unknown): void {
    this.o.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  // ------------------------------------------------------------------ transitions

  protected apply(s: Session, event: BridgeEvent): TransitionResult {
    const t = transition(s.state, event);
    if (!t.ok && "illegal" in t) throw new IllegalTransitionError(`no transition for ${event} in ${s.state} (session ${s.id})`);
    if (t.ok) {
      this.traceRow(s.id, t.row.id, s.state, t.to);
      s.state = t.to;
    }
    return t;
  }

  /** Appends to {@link trace}, dropping the oldest {@link TRACE_KEPT} rows once it holds twice that. */
  protected traceRow(sessionId: string, row: string, from: string, to: string): void {
    const trace = this.trace;
    trace.push({ sessionId, row, from, to });
    if (trace.length >= 2 * TRACE_KEPT) trace.splice(0, trace.length - TRACE_KEPT);
  }

  /** The wire error of a refusing row. */
  protected rowError(s: Session, t: TransitionResult, handle?: string): RequestError {
    if (t.ok || t.row === undefined) {
      this.report(new IllegalTransitionError(`no transition in ${s.state} (session ${s.id})`));
      return new RequestError(-32603, "Internal error");
    }
    const e = t.error;
    if (t.row.id === "T6" && (s.state === "closed" || s.state === "deleted")) return unknownSession(s.id);
    if (e.code === -32002) {
      if (e.reason === "suspension_discarded") return suspensionDiscarded(s.id, handle ?? "");
      return new RequestError(-32002, "Resource not found", {
        reason: e.reason,
        sessionId: s.id,
        ...(handle === undefined ? {} : { handle }),
      });
    }
    return stateConflict(e.reason, s.state, handle ?? s.suspension?.handle);
  }

  // ------------------------------------------------------------------ output

  /** Sends a `session/update` to the client bound to the session; undeliverable output is dropped. */
  protected emit(s: Session, update: Record<string, unknown>): void {
    const link = s.link;
    if (link === undefined || link.closed) return;
    const params = { sessionId: s.id, update };
    // Straight to the client's stream when nothing the SDK holds could be overtaken (ADR 0110).
    if (link.write?.({ jsonrpc: "2.0", method: "session/update", params }) === true) return;
    link.ctx.notify("session/update", params as never).catch((error: unknown) => this.report(error));
  }

  /** As {@link SessionCore.emit} for an update whose whole notification `line` already reads right for the client. */
  protected emitLine(s: Session, update: Record<string, unknown>, line: string): void {
    const link = s.link;
    if (link === undefined || link.closed) return;
    if (link.writeLine?.(line) === true) return;
    this.emit(s, update);
  }

  /** A lifecycle event through the safe carrier, plus the first-class form and a notice where the client asked (§6.4). */
  protected lifecycle(s: Session, event: Record<string, unknown>): void {
    this.emit(s, { sessionUpdate: "session_info_update", _meta: { [META.lifecycle]: event } });
    const caps = s.link?.caps;
    if (caps?.firstClassLifecycle && (event.event === "suspended" || event.event === "resumed")) {
      const { event: kind, ...fields } = event;
      this.emit(s, { sessionUpdate: kind, ...fields });
    }
    if (caps?.notices && (event.event === "suspended" || event.event === "resumed")) {
      const paused = event.event === "suspended";
      const notice: Record<string, unknown> = {
        sessionUpdate: "notice",
        severity: "info",
        title: paused ? "Session paused" : "Session resumed",
      };
      if (paused && typeof event.reason === "string") notice.description = event.reason;
      this.emit(s, notice);
    }
  }

  protected suspendedEvent(s: Session, sus: Suspension): Record<string, unknown> {
    const e: Record<string, unknown> = {
      event: "suspended",
      handle: sus.handle,
      initiator: sus.initiator,
      initiatorDetail: sus.initiatorDetail,
      suspendedAt: isoAt(sus.suspendedAtMs ?? this.clock.now()),
      state: "suspended",
    };
    if (sus.reason !== undefined) e.reason = sus.reason;
    const rw = echoConditions(sus.resumeWhen);
    if (rw !== undefined) e.resumeWhen = rw;
    if (sus.escalated) e.escalated = true;
    return e;
  }

  protected result(s: Session, sus: Suspension): SuspendResult {
    const own: Record<string, unknown> = { state: "suspended", initiatorDetail: sus.initiatorDetail, mode: sus.mode };
    if (sus.stopReason !== undefined) own.stopReason = sus.stopReason;
    if (sus.emulated !== undefined) own.emulated = sus.emulated;
    if (sus.emulatedBoundary) own.emulatedBoundary = true;
    if (sus.escalated) own.escalated = true;
    const r: SuspendResult = {
      handle: sus.handle,
      suspendedAt: isoAt(sus.suspendedAtMs ?? this.clock.now()),
      _meta: { [META.suspend]: own },
    };
    if (sus.reason !== undefined) r.reason = sus.reason;
    const rw = echoConditions(sus.resumeWhen);
    if (rw !== undefined) r.resumeWhen = rw;
    if (sus.summary !== undefined) r.summary = sus.summary;
    return r;
  }

  // ------------------------------------------------------------------ persistence

  protected record(s: Session, state: StoredSuspension["state"], sus = s.suspension): StoredSuspension {
    const r: StoredSuspension = {
      v: 1,
      sessionId: s.id,
      state,
      cwd: s.cwd,
      mcpServers: s.mcpServers,
      issuedHandles: [...s.issued],
      consumedHandles: [...s.consumed],
    };
    if (s.additionalDirectories !== undefined) r.additionalDirectories = s.additionalDirectories;
    if (s.runId !== undefined) r.runId = s.runId;
    if (s.downstreamId !== s.id) (r as Record<string, unknown>).downstreamId = s.downstreamId;
    if (s.queuedInput !== undefined) {
      r.pendingInput = s.queuedInput.input ?? null;
      if (s.queuedInput.digest !== undefined) (r as Record<string, unknown>).digest = s.queuedInput.digest;
    }
    if (sus !== undefined && (state === "suspended" || state === "failed")) {
      r.handle = sus.handle;
      r.initiator = sus.initiator;
      r.initiatorDetail = sus.initiatorDetail;
      r.mode = sus.mode;
      r.suspendedAt = isoAt(sus.suspendedAtMs ?? this.clock.now());
      if (sus.reason !== undefined) r.reason = sus.reason;
      if (sus.resumeWhen !== undefined) r.resumeWhen = sus.resumeWhen;
      if (sus.timeoutInput !== undefined) r.timeoutInput = sus.timeoutInput;
      if (sus.stopReason !== undefined) r.stopReason = sus.stopReason;
      if (sus.summary !== undefined) r.summary = sus.summary;
      if (sus.emulated !== undefined) r.emulated = sus.emulated;
      if (sus.downstreamHandle !== undefined) r.downstreamHandle = sus.downstreamHandle;
      if (sus.park !== undefined)
        r.park = {
          eventType: sus.park.eventType,
          eventId: sus.park.eventId,
          waitingOn: sus.park.waitingOn,
          event: sus.park.event,
          reason: sus.park.reason,
          resumeWhen: sus.park.resumeWhen,
        };
      if (sus.clientOwnsConditions) (r as Record<string, unknown>).clientOwnsConditions = true;
    }
    return r;
  }

  protected async persist(s: Session, state: StoredSuspension["state"], sus = s.suspension): Promise<void> {
    try {
      await this.store.save(this.record(s, state, sus));
    } catch (error) {
      throw new RequestError(-32603, "Internal error", { reason: "store_unavailable", detail: (error as Error).message });
    }
  }

  /** Rebuilds sessions from stored records (at start): suspensions come back armed. */
  protected restore(records: StoredSuspension[]): void {
    for (const r of records) {
      const x = r as StoredSuspension & { downstreamId?: string; digest?: string; clientOwnsConditions?: boolean };
      const s: Session = {
        id: r.sessionId,
        downstreamId: x.downstreamId ?? r.sessionId,
        cwd: r.cwd,
        ...(r.additionalDirectories ? { additionalDirectories: r.additionalDirectories } : {}),
        mcpServers: r.mcpServers ?? [],
        state: r.state === "active" ? "active.idle" : r.state,
        version: 0,
        issued: new Set(r.issuedHandles),
        consumed: new Set(r.consumedHandles),
        timers: [],
        downstreamLost: true,
        digest: "",
        approvals: new Set(),
        ...(r.runId ? { runId: r.runId } : {}),
      };
      if (r.pendingInput !== undefined)
        s.queuedInput = { input: r.pendingInput, hasInput: r.pendingInput !== null, ...(x.digest ? { digest: x.digest } : {}) };
      if ((r.state === "suspended" || r.state === "failed") && r.handle) {
        const sus: Suspension = {
          handle: r.handle,
          initiator: r.initiator ?? "client",
          initiatorDetail: r.initiatorDetail ?? "client",
          mode: r.mode ?? "finish_step",
          suspendedAtMs: r.suspendedAt ? Date.parse(r.suspendedAt) : this.clock.now(),
        };
        if (r.reason) sus.reason = r.reason;
        if (r.resumeWhen) sus.resumeWhen = r.resumeWhen as ResumeConditions;
        if (r.timeoutInput !== undefined) sus.timeoutInput = r.timeoutInput;
        if (r.stopReason) sus.stopReason = r.stopReason;
        if (r.summary) sus.summary = r.summary;
        if (r.emulated !== undefined && r.emulated !== null) sus.emulated = r.emulated;
        if (r.downstreamHandle) sus.downstreamHandle = r.downstreamHandle;
        if (r.park) sus.park = r.park as unknown as ParkSpec;
        if (x.clientOwnsConditions) sus.clientOwnsConditions = true;
        s.suspension = sus;
      }
      this.sessions.set(s.id, s);
      if (s.state === "suspended") this.arm(s);
    }
  }

  /** The descriptor of §6.1 for `agentCapabilities._meta`. */
  protected descriptor(freshTranscript: boolean): Record<string, unknown> {
    return {
      version: DESCRIPTOR_VERSION,
      supportsSuspend: true,
      supportsAwaitResumption: true,
      resumeCauses: [...this.resumeCauses],
      modes: ["finish_step", "interrupt_immediate", "wait_for_completion"],
      freshTranscript,
      firstClass: false,
    };
  }

  protected get isClosed(): boolean {
    return this.#closedBridge;
  }

  protected markClosed(): void {
    this.#closedBridge = true;
    for (const s of this.sessions.values()) this.disarm(s);
  }

  /** Arms the conditions and timers of a suspended session (after a restore). */
  protected abstract arm(s: Session): void;

  /** Stops the timers of a session. */
  protected abstract disarm(s: Session): void;
}

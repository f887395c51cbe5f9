/**
 * The suspend/resume machinery shared by both faces: sessions, the compare-and-set resume, the
 * drain and the commit, conditions and timers, persistence, lifecycle output and AHP reports.
 * Sessions, records and output live in `session-core.ts`; ACP request handling lives in
 * `bridge.ts`, which extends this class.
 */
import { randomBytes } from "node:crypto";
import { RequestError } from "@agentclientprotocol/sdk";
import { newId } from "@ahp/core";
import { DeadlineTimer, isoAt } from "./clock.js";
import { type InitiatorDetail, type SuspendMode } from "./constants.js";
import { invalidParams, suspensionDiscarded, unknownSession } from "./errors.js";
import { DIGEST_CHARS } from "./internal.js";
import type { ParkSpec } from "./harness.js";
import type { ClientLink, HeldWake, Session, SuspendResult, Suspension } from "./session.js";
import { transition, type BridgeEvent } from "./state-machine.js";
import { SessionCore } from "./session-core.js";
import { echoConditions, strongerMode, validateSuspendRequest, type ResumeConditions } from "./validation.js";

/** A wake-up of a suspended session: its cause and resume input, and whether a client asked for it explicitly. */
export interface WakeRequest extends HeldWake {
  /** An explicit resume by a client (a loser gets an error) rather than a condition. */
  explicit: boolean;
}

const rand = () => randomBytes(9).toString("base64url");

/**
 * The suspend/resume machinery without ACP request handling: sessions and their transitions, the
 * drain and the commit, the compare-and-set resume, conditions and timers, persistence, lifecycle
 * output and AHP reports. {@link AcpBridgeEngine} builds on it.
 */
export class SuspendCore extends SessionCore {
  // ------------------------------------------------------------------ suspend

  /** Validated suspend (client `session/suspend`, T1–T6). */
  async suspendRequest(params: unknown, link?: ClientLink): Promise<SuspendResult> {
    const v = validateSuspendRequest(params, {
      resumeCauses: this.resumeCauses,
      ...(this.o.triggerValidator ? { triggerValidator: this.o.triggerValidator } : {}),
    });
    if (!v.ok) throw invalidParams(v.error.reason, v.error.field, v.error.detail);
    const s = this.sessions.get(v.value.sessionId);
    if (s === undefined || s.state === "deleted") throw unknownSession(v.value.sessionId);
    if (link !== undefined) s.link = link;
    const init: SuspendInit = { mode: v.value.mode, initiator: "client", initiatorDetail: "client", self: false };
    if (v.value.reason !== undefined) init.reason = v.value.reason;
    if (v.value.resumeWhen !== undefined) init.resumeWhen = v.value.resumeWhen;
    if (v.value.timeoutInput !== undefined) init.timeoutInput = v.value.timeoutInput;
    return this.startSuspend(s, init);
  }

  protected async startSuspend(s: Session, init: SuspendInit): Promise<SuspendResult> {
    const event: BridgeEvent = init.self ? "self_park" : "suspend";
    let t = transition(s.state, event);
    if (!t.ok) throw this.rowError(s, t);
    if (t.row.id === "T4" || (t.row.id === "I29" && s.state === "suspended")) return this.result(s, s.suspension!); // idempotent, no gate
    if (t.row.id === "T3" || t.row.id === "I29") return this.coalesce(s, init);
    let req = init;
    if (this.harness !== undefined && !init.skipGate) {
      const gate = await this.harness.gateSuspend({
        sessionId: s.id,
        mode: req.mode,
        initiator: req.initiator,
        initiatorDetail: req.initiatorDetail,
        ...(req.reason === undefined ? {} : { reason: req.reason }),
        ...(req.resumeWhen === undefined ? {} : { resumeWhen: req.resumeWhen }),
      });
      if (gate.modified !== undefined) req = this.modifiedSuspend(s, req, gate.modified);
      // The state may have moved while the harness decided.
      t = transition(s.state, event);
      if (!t.ok) throw this.rowError(s, t);
      if (t.row.id === "T4" || (t.row.id === "I29" && s.state === "suspended")) return this.result(s, s.suspension!);
      if (t.row.id === "T3" || t.row.id === "I29") return this.coalesce(s, req);
    }
    const handle = req.proposedHandle ?? `sus_${rand()}`;
    const sus: Suspension = { handle, initiator: req.initiator, initiatorDetail: req.initiatorDetail, mode: req.mode };
    if (req.reason !== undefined) sus.reason = req.reason;
    if (req.resumeWhen !== undefined) sus.resumeWhen = req.resumeWhen;
    if (req.timeoutInput !== undefined) sus.timeoutInput = req.timeoutInput;
    if (req.summary !== undefined) sus.summary = req.summary;
    if (req.park !== undefined) sus.park = req.park;
    if (req.clientOwnsConditions) sus.clientOwnsConditions = true;
    if (req.agentEndsTurn) sus.emulated = false;
    if (s.state === "active.idle") {
      // T1 (or a self-park with no turn): commit at once. Nothing says "suspended" before the record is on disk.
      sus.suspendedAtMs = this.clock.now();
      s.issued.add(handle);
      s.suspension = sus;
      this.apply(s, "commit");
      const writing = this.persist(s, "suspended", sus);
      s.committing = writing;
      try {
        await writing;
      } catch (error) {
        s.issued.delete(handle);
        s.suspension = undefined;
        if ((s.state as string) === "suspended") this.apply(s, "commit_failed");
        throw error;
      } finally {
        s.committing = undefined;
      }
      this.committed(s, sus);
      return this.result(s, sus);
    }
    // T2 / T7: drain the turn, commit when it has ended.
    s.suspension = sus;
    s.issued.add(handle);
    this.apply(s, event);
    const done = new Promise<SuspendResult>((resolve, reject) => (s.pending = { waiters: [{ resolve, reject }] }));
    if (s.link?.caps.aware)
      this.lifecycle(s, { event: "suspend_requested", handle, mode: sus.mode, initiatorDetail: sus.initiatorDetail, state: s.state });
    this.apply(s, "quiesce");
    const maxQuiesceMs = this.o.maxQuiesceMs ?? 120_000;
    s.pending!.deadline = new DeadlineTimer(this.clock, this.clock.now() + maxQuiesceMs, () => this.escalateDrain(s, true));
    this.drain(s).catch((error: unknown) => this.report(error));
    return done;
  }

  /** The harness rewrote the suspend (§7.2 modify): take its fields, validate them again (§4). */
  protected modifiedSuspend(s: Session, req: SuspendInit, modified: Record<string, unknown>): SuspendInit {
    const candidate: Record<string, unknown> = { sessionId: s.id, mode: req.mode };
    if (req.reason !== undefined) candidate.reason = req.reason;
    if (req.resumeWhen !== undefined) candidate.resumeWhen = req.resumeWhen;
    for (const key of ["reason", "mode", "resumeWhen"]) if (key in modified) candidate[key] = modified[key];
    const v = validateSuspendRequest(candidate, { resumeCauses: this.resumeCauses });
    if (!v.ok) throw invalidParams(v.error.reason, v.error.field, `harness modification: ${v.error.detail}`);
    const out: SuspendInit = { ...req, mode: v.value.mode };
    delete out.reason;
    delete out.resumeWhen;
    if (v.value.reason !== undefined) out.reason = v.value.reason;
    if (v.value.resumeWhen !== undefined) out.resumeWhen = v.value.resumeWhen;
    return out;
  }

  /** T3: a second suspend while draining shares the result; a stronger mode upgrades the drain. */
  protected coalesce(s: Session, req: SuspendInit): Promise<SuspendResult> {
    const sus = s.suspension!;
    const upgraded = strongerMode(sus.mode, req.mode);
    const promise = new Promise<SuspendResult>((resolve, reject) => s.pending?.waiters.push({ resolve, reject }));
    if (upgraded !== sus.mode) {
      sus.mode = upgraded;
      this.drain(s).catch((error: unknown) => this.report(error));
    }
    return promise;
  }

  /** T10 / the deadline: escalate the drain to `interrupt_immediate`. */
  protected escalateDrain(s: Session, deadline: boolean): void {
    const sus = s.suspension;
    if (sus === undefined || !(s.state === "suspending.requested" || s.state === "suspending.quiescing")) return;
    sus.mode = "interrupt_immediate";
    if (deadline) sus.escalated = true;
    this.drain(s).catch((error: unknown) => this.report(error));
  }

  /** Makes the agent reach the end of its turn as the mode asks (§5.4, §6.5). Implemented by the bridge. */
  protected async drain(_s: Session): Promise<void> {}

  /**
   * The drained turn has ended (its prompt response is on its way out): store the record, then,
   * after the response has been written, commit and answer the suspenders (O1, O2).
   */
  protected async turnEndedWhileSuspending(s: Session): Promise<boolean> {
    const sus = s.suspension!;
    sus.suspendedAtMs = this.clock.now();
    try {
      await this.persist(s, "suspended", sus);
    } catch (error) {
      this.failPending(s, error);
      return false;
    }
    return true;
  }

  /** Runs after the prompt response was written. */
  protected commitPending(s: Session): void {
    const pending = s.pending;
    const sus = s.suspension;
    if (pending === undefined || sus === undefined) return;
    s.pending = undefined;
    pending.deadline?.cancel();
    if (s.state === "closed" || s.state === "deleted") {
      for (const w of pending.waiters) w.reject(suspensionDiscarded(s.id, sus.handle));
      return;
    }
    this.apply(s, "commit");
    this.committed(s, sus);
    const r = this.result(s, sus);
    for (const w of pending.waiters) w.resolve(r);
  }

  protected failPending(s: Session, error: unknown): void {
    const pending = s.pending;
    s.pending = undefined;
    pending?.deadline?.cancel();
    if (s.suspension !== undefined) s.issued.delete(s.suspension.handle);
    s.suspension = undefined;
    if (s.state === "suspending.requested" || s.state === "suspending.quiescing") this.apply(s, "commit_failed");
    for (const w of pending?.waiters ?? []) w.reject(error);
  }

  /** After the commit: arm, lifecycle `suspended`, AHP reports. */
  protected committed(s: Session, sus: Suspension): void {
    this.arm(s);
    this.lifecycle(s, this.suspendedEvent(s, sus));
    const h = this.harness;
    if (h === undefined) return;
    const suspendedAt = isoAt(sus.suspendedAtMs ?? this.clock.now());
    const metadata = {
      acp_suspension: {
        handle: sus.handle,
        reason: sus.reason ?? null,
        initiator: sus.initiator,
        initiatorDetail: sus.initiatorDetail,
        mode: sus.mode,
        resumeWhen: echoConditions(sus.resumeWhen) ?? null,
        suspendedAt,
      },
    };
    if (s.runId !== undefined)
      h.runLifecycle(
        s.id,
        s.runId,
        "executing",
        { updatedAt: suspendedAt, ...(s.runStartedAt ? { startedAt: s.runStartedAt } : {}) },
        metadata,
      );
    h.heartbeat(s.id, "suspended", metadata);
  }

  // ------------------------------------------------------------------ conditions and timers

  protected arm(s: Session): void {
    this.disarm(s);
    const sus = s.suspension;
    if (sus === undefined || s.state !== "suspended") return;
    const handle = sus.handle;
    const timeout = sus.clientOwnsConditions ? undefined : sus.resumeWhen?.timeout;
    if (timeout !== undefined) {
      const due = (sus.suspendedAtMs ?? this.clock.now()) + timeout.durationMinutes * 60_000;
      s.timers.push(new DeadlineTimer(this.clock, due, () => this.onTimeout(s, handle)));
    }
    const poll = this.o.harnessPollMs ?? 5_000;
    if (sus.park !== undefined && this.harness !== undefined && poll > 0) this.armPoll(s, handle, poll);
    const hb = this.o.heartbeatWhileSuspendedMs;
    if (hb !== undefined && hb > 0 && this.harness !== undefined) this.armHeartbeat(s, handle, hb);
  }

  protected armPoll(s: Session, handle: string, every: number): void {
    s.pollTimer = new DeadlineTimer(this.clock, this.clock.now() + every, () => {
      if (s.state !== "suspended" || s.suspension?.handle !== handle) return;
      void this.harness!.poll(s.id, handle, s.suspension.park?.waitingOn ?? "harness").then((answer) => {
        if (s.state !== "suspended" || s.suspension?.handle !== handle) return;
        if (answer === undefined) return this.armPoll(s, handle, every);
        this.wake(s, {
          explicit: false,
          cause: "external_event",
          hasInput: answer.input !== undefined && answer.input !== null,
          ...(answer.input === undefined ? {} : { input: answer.input }),
          continueTranscript: answer.continueTranscript ?? true,
        }).catch((error: unknown) => this.report(error));
      });
    });
  }

  protected armHeartbeat(s: Session, handle: string, every: number): void {
    s.timers.push(
      new DeadlineTimer(this.clock, this.clock.now() + every, () => {
        if (s.state !== "suspended" || s.suspension?.handle !== handle) return;
        this.harness?.heartbeat(s.id, "suspended", { acp_suspension: { handle } });
        this.armHeartbeat(s, handle, every);
      }),
    );
  }

  protected disarm(s: Session): void {
    for (const t of s.timers) t.cancel();
    s.timers = [];
    s.pollTimer?.cancel();
    s.pollTimer = undefined;
  }

  protected onTimeout(s: Session, handle: string): void {
    const sus = s.suspension;
    if (sus === undefined || sus.handle !== handle) return;
    const timeout = sus.resumeWhen?.timeout;
    if (timeout === undefined) return;
    if (timeout.onTimeout === "fail") {
      if (s.state === "resuming") {
        s.held ??= { cause: "timeout", hasInput: false, continueTranscript: false };
        return;
      }
      this.failSuspension(s).catch((error: unknown) => this.report(error));
      return;
    }
    const wake: WakeRequest =
      timeout.onTimeout === "resume_with_input"
        ? {
            explicit: false,
            cause: "timeout",
            hasInput: true,
            input: sus.timeoutInput ?? {
              type: "timeout",
              handle,
              durationMinutes: timeout.durationMinutes,
              firedAt: isoAt(this.clock.now()),
            },
            continueTranscript: true,
          }
        : { explicit: false, cause: "timeout", hasInput: false, continueTranscript: false };
    this.wake(s, wake).catch((error: unknown) => this.report(error));
  }

  /** T19: the `fail` timeout. */
  protected async failSuspension(s: Session): Promise<void> {
    const sus = s.suspension!;
    this.apply(s, "timeout_fail");
    this.disarm(s);
    await this.persist(s, "failed", sus).catch((error: unknown) => this.report(error));
    const at = isoAt(this.clock.now());
    this.lifecycle(s, { event: "failed", handle: sus.handle, at, reason: "resume_timeout", state: "failed" });
    const h = this.harness;
    if (h !== undefined) {
      h.runLifecycle(
        s.id,
        s.runId ?? `run_${s.id}`,
        "failed",
        { updatedAt: at, error: "resume_timeout" },
        { acp_suspension: { handle: sus.handle } },
      );
      h.notify("error", s.id, {
        reason: "resume_timeout",
        handle: sus.handle,
        message: `suspension ${sus.handle} timed out with onTimeout "fail"`,
      });
    }
  }

  /** Wakes every suspended session waiting on `name` (§5.7); the payload becomes the resume input. */
  async fireEvent(name: string, payload?: unknown): Promise<number> {
    const targets = [...this.sessions.values()].filter(
      (s) =>
        (s.state === "suspended" || s.state === "resuming") &&
        !s.suspension?.clientOwnsConditions &&
        s.suspension?.resumeWhen?.onEvent === name,
    );
    const hasInput = payload !== undefined && payload !== null;
    const results = await Promise.allSettled(
      targets.map((s) =>
        this.wake(s, {
          explicit: false,
          cause: "external_event",
          hasInput,
          ...(hasInput ? { input: payload } : {}),
          continueTranscript: true,
        }),
      ),
    );
    let woken = 0;
    for (const r of results) {
      if (r.status === "fulfilled" && r.value !== undefined) woken++;
      if (r.status === "rejected") this.report(r.reason);
    }
    return woken;
  }

  /** Offers a host event to every `trigger` condition; a match resumes with cause `condition_fired`. */
  async fireTrigger(payload: unknown): Promise<number> {
    const matcher = this.o.triggerMatcher;
    if (matcher === undefined) return 0;
    const targets = [...this.sessions.values()].filter((s) => {
      const trigger = s.suspension?.resumeWhen?.trigger;
      return s.state === "suspended" && trigger !== undefined && !s.suspension?.clientOwnsConditions && matcher(trigger, payload);
    });
    const hasInput = payload !== undefined && payload !== null;
    const results = await Promise.allSettled(
      targets.map((s) =>
        this.wake(s, {
          explicit: false,
          cause: "condition_fired",
          hasInput,
          ...(hasInput ? { input: payload } : {}),
          continueTranscript: true,
        }),
      ),
    );
    return results.filter((r) => r.status === "fulfilled" && r.value !== undefined).length;
  }

  // ------------------------------------------------------------------ resume

  /**
   * T12/T17: the compare-and-set from `suspended` to `resuming`, the gates, the restore, the
   * commit. Resolves with the resume outcome, or undefined when a condition lost the race (T18).
   */
  protected async wake(s: Session, w: WakeRequest): Promise<Record<string, unknown> | undefined> {
    while (s.committing !== undefined) await s.committing.catch(() => undefined);
    const t = transition(s.state, w.explicit ? "resume" : "condition_fired");
    if (!t.ok) throw this.rowError(s, t);
    if (t.row.id === "T18") {
      s.held ??= {
        cause: w.cause,
        hasInput: w.hasInput,
        ...(w.hasInput ? { input: w.input } : {}),
        continueTranscript: w.continueTranscript,
      };
      return undefined;
    }
    if (t.to !== "resuming") return undefined; // a stale wake-up (I16)
    // The CAS: synchronous from the check above to here, so exactly one contender gets past it.
    s.version++;
    this.apply(s, w.explicit ? "resume" : "condition_fired");
    const sus = s.suspension!;
    let input = w.input;
    let hasInput = w.hasInput;
    let continueTranscript = w.continueTranscript;
    try {
      const h = this.harness;
      if (h !== undefined) {
        const gate = await h.gateResume({
          sessionId: s.id,
          handle: sus.handle,
          cause: w.cause,
          continueTranscript,
          ...(hasInput ? { input } : {}),
        });
        if (!gate.proceed) {
          if (!w.explicit && gate.retryAfterMs !== undefined) {
            const retry = gate.retryAfterMs;
            this.revert(s);
            s.timers.push(
              new DeadlineTimer(this.clock, this.clock.now() + retry, () => void this.wake(s, w).catch((e: unknown) => this.report(e))),
            );
            throw gate.error;
          }
          throw gate.error;
        }
        if (gate.hasInput !== undefined) {
          hasInput = gate.hasInput;
          input = gate.input;
        }
        if (gate.continueTranscript !== undefined) continueTranscript = gate.continueTranscript;
        if (sus.park !== undefined) {
          const again = await h.reask(sus.park);
          if (again.kind === "park")
            throw new RequestError(-31002, "Harness gate refused: escalated", {
              reason: "escalated",
              decision: "park",
              waitingOn: sus.park.waitingOn,
            });
          if (again.kind === "allow") s.approvals.add(approvalKey(sus.park));
        }
      }
      const stillResuming = () => {
        if (s.state !== "resuming") throw suspensionDiscarded(s.id, sus.handle);
      };
      stillResuming();
      await this.restoreDownstream(s, { continueTranscript, hasInput, input, handle: sus.handle });
      stillResuming();
      const committedSus = { ...sus };
      s.consumed.add(sus.handle);
      if (hasInput || !continueTranscript)
        s.queuedInput = { hasInput, ...(hasInput ? { input } : {}), ...(continueTranscript ? {} : { digest: this.digestOf(s, sus) }) };
      try {
        await this.persist(s, "active", undefined);
        stillResuming();
      } catch (error) {
        s.consumed.delete(sus.handle);
        s.queuedInput = undefined;
        throw error;
      }
      this.disarm(s);
      s.held = undefined; // a pending wake-up is dropped once the resume commits (T18)
      s.suspension = undefined;
      this.apply(s, "resume_commit");
      const resumedAt = isoAt(this.clock.now());
      const outcome = { handle: committedSus.handle, cause: w.cause, hadResumeInput: hasInput, continueTranscript, resumedAt };
      this.lifecycle(s, { event: "resumed", ...outcome, initiatorDetail: committedSus.initiatorDetail, state: "active.idle" });
      if (h !== undefined) {
        h.runLifecycle(
          s.id,
          s.runId ?? (s.runId = `run_${newId()}`),
          "executing",
          { updatedAt: resumedAt, ...(s.runStartedAt ? { startedAt: s.runStartedAt } : {}) },
          { acp_resumption: outcome },
        );
      }
      this.afterResume(s, w);
      return { ...outcome, state: "active.idle" };
    } catch (error) {
      if (s.state === "resuming") this.revert(s);
      throw error;
    }
  }

  /** T16: back to `suspended`, the handle still valid; a wake-up held meanwhile is replayed (T18). */
  protected revert(s: Session): void {
    this.apply(s, "gate_revert");
    const held = s.held;
    s.held = undefined;
    if (held !== undefined) {
      setImmediate(() => {
        const sus = s.suspension;
        if (held.cause === "timeout" && sus?.resumeWhen?.timeout?.onTimeout === "fail") {
          if (s.state === "suspended") this.failSuspension(s).catch((e: unknown) => this.report(e));
          return;
        }
        this.wake(s, { ...held, explicit: false }).catch((e: unknown) => this.report(e));
      });
    }
  }

  protected digestOf(s: Session, sus: Suspension): string {
    const last = s.digest.slice(-DIGEST_CHARS).trim();
    return [`Resumed from suspension ${sus.handle}${sus.reason ? ` (${sus.reason})` : ""}.`, last === "" ? "" : `Before the pause: ${last}`]
      .filter(Boolean)
      .join(" ");
  }

  /** Restores the agent side of a session before the commit (implemented by the bridge). */
  protected async restoreDownstream(
    _s: Session,
    _r: { continueTranscript: boolean; hasInput: boolean; input: unknown; handle: string },
  ): Promise<void> {}

  /** Continuation after the commit (P2; implemented by the bridge). */
  protected afterResume(_s: Session, _w: WakeRequest): void {}
}

/**
 * How a suspend starts: mode, reason, conditions, who asked, whether the gate is skipped (a harness
 * park), and the handle an aware client proposed.
 */
export interface SuspendInit {
  mode: SuspendMode;
  reason?: string;
  resumeWhen?: ResumeConditions;
  timeoutInput?: unknown;
  summary?: string;
  initiator: "client" | "agent";
  initiatorDetail: InitiatorDetail;
  self: boolean;
  skipGate?: boolean;
  proposedHandle?: string;
  park?: ParkSpec;
  clientOwnsConditions?: boolean;
  /** The agent ends its turn by itself (it asked with await_resumption): no cancel is sent. */
  agentEndsTurn?: boolean;
}

/**
 * The key under which a harness approval of a parked action is remembered, so that the same action
 * asked again after the resume goes through once.
 */
export const approvalKey = (park: ParkSpec): string => JSON.stringify(park.event.payload ?? null);

/**
 * The AARTS host role (adapter spec §2): version check, timeouts, failure policy, multi-hook
 * merge, directives, the ask flow with PostAskResolution, and audit records. Host adapters
 * (Claude Code, Cursor, SDK middleware, …) build events and render `HostDecision`s; everything
 * in between lives here.
 */
import {
  AARTS_EVENT_VERSION,
  HOOK_CATALOG,
  HOST_VERSION_CHECK_MAJOR,
  type HookPoint,
  type Resolution,
  type VerdictDecision,
} from "../catalog.js";
import { maskCredential, redactSecrets } from "../artifacts/extract.js";
import { EngineFailure } from "../errors.js";
import type { AartsEvent, PostAskResolutionEvent, Verdict, VersionCheckResponse } from "../types.js";
import { validateVerdict, validateVersionCheckResponse } from "../validate/index.js";
import { applicableDirectives, type DirectiveNote } from "./directives.js";
import type { AartsEngine, EngineWait } from "./engine.js";
import { engineWait, unansweredVerdict, withTimeout } from "./wait.js";
import {
  failureVerdict,
  mergeResults,
  NO_HOOKS_VERDICT,
  recommendedTimeoutVerdict,
  salvageDeny,
  type FailurePolicy,
  type HookResult,
  type MergePolicy,
} from "./policy.js";

/** >>  */
export interface HookRegistration {
  /** Shown in merged reasons (`[id] …`) and audit records. */
  readonly id: string;
  /** The engine that answers this hook (an {@link AhpBridge}, an in-process engine, …). */
  readonly engine: AartsEngine;
  /** Hook points this hook is registered for; default all. */
  readonly hookPoints?: readonly HookPoint[];
}

/** Sub-agent bookkeeping for `permitted_tools` (spec §2.5). Pluggable so subprocess hosts can persist it. */
export interface SubAgentRecord {
  readonly parent?: string;
  /** Canonical tool names the sub-agent may use; absent = parent's scope. */
  readonly permitted?: readonly string[];
}
/**
 * Where {@link AartsHost} records spawned sub-agents and their `permitted_tools` (spec §2.5). The
 * default is a {@link MemorySubAgentRegistry}; subprocess hosts pass one backed by a {@link StateStore}
 * so the record survives between hook processes.
 */
export interface SubAgentRegistry {
  /** The record of a sub-agent session, or `undefined` when the session is not a known sub-agent. */
  get(subAgentId: string): SubAgentRecord | undefined;
  /** Records a sub-agent after its PreSubAgentSpawn was allowed. */
  set(subAgentId: string, record: SubAgentRecord): void;
  /** Recorded sub-agents spawned by `parent`. */
  childrenOf(parent: string): string[];
}

/** A SubAgentRegistry over a plain (JSON-serializable) object. */
export class MemorySubAgentRegistry implements SubAgentRegistry {
  readonly records: Record<string, SubAgentRecord>;
  constructor(records: Record<string, SubAgentRecord> = {}) {
    this.records = records;
  }
  get(id: string): SubAgentRecord | undefined {
    return Object.prototype.hasOwnProperty.call(this.records, id) ? this.records[id] : undefined;
  }
  set(id: string, record: SubAgentRecord): void {
    this.records[id] = record;
  }
  childrenOf(parent: string): string[] {
    return Object.keys(this.records).filter((id) => this.records[id]!.parent === parent);
  }
}

/** Audit record of one decision (spec §2.7). */
export interface AuditRecord {
  readonly ts: string;
  readonly session_id: string;
  readonly hook_point: HookPoint;
  readonly decision: VerdictDecision;
  /** What the host enforced when it differs from `decision` (ask on a host that cannot prompt). */
  readonly enforced?: VerdictDecision;
  readonly category: string;
  readonly severity: string;
  readonly matched_rule_id?: string;
  readonly engine_id: string;
  readonly artifacts: string[];
  readonly failure?: string;
  /** Individual hook results when several hooks were merged. */
  readonly hooks?: { id: string; decision?: VerdictDecision; failure?: string }[];
}

/**
 * A log record of {@link AartsHost}, delivered through `onlog` (spec §2.2: every failure is logged;
 * §2.3: every individual hook result).
 */
export interface HostLogEntry {
  /** `error` for engine failures, `warn` for directives not honoured, `debug` for individual hook results. */
  readonly level: "debug" | "info" | "warn" | "error";
  /** Human-readable text. */
  readonly message: string;
  /** The hook point the record is about. */
  readonly hookPoint?: HookPoint;
  /** The registered hook the record is about. */
  readonly hookId?: string;
}

/** Options of {@link AartsHost}. Only `hooks` is required; every other option has the default named on it. */
export interface AartsHostOptions {
  /** The engines to consult, in registration order (the merge order, spec §2.3). */
  readonly hooks: readonly HookRegistration[];
  /** Default `fail-open` (AARTS). */
  readonly failurePolicy?: FailurePolicy;
  /** Default `permissive` (AARTS); `strict` is recommended for security deployments (Q10). */
  readonly mergePolicy?: MergePolicy;
  /** Per-hook timeouts; default the catalog's (§1.4). */
  readonly timeouts?: Partial<Record<HookPoint, number>>;
  /** One timeout for every hook (overrides the catalog, not `timeouts`). */
  readonly timeoutMs?: number;
  /** Version-check timeout; default 10 000 ms. */
  readonly versionCheckTimeoutMs?: number;
  /**
   * A timeout on a Recommended hook yields a synthetic `allow` (severity `warning`) instead of the
   * failure policy (spec §2.1). Default `false`.
   */
  readonly recommendedTimeoutProceeds?: boolean;
  /**
   * What a blocking hook becomes when a reachable engine gave no verdict in time (it held the
   * decision, e.g. for a person who has not answered): `ask` (the host's own prompt where it can
   * prompt, else `deny`) or `deny`. Never `allow`, whatever the failure policy: the failure policy
   * is for a broken engine. Default: unset (timeouts go to the failure policy, spec §2.2).
   */
  readonly unanswered?: "ask" | "deny";
  /**
   * An invalid verdict that still says `deny` counts as a `deny`, never as a failure (spec §2.2, Q4).
   * Default `true`.
   */
  readonly salvageMalformedDeny?: boolean;
  /** Whether the host can prompt the user for an `ask` on this hook (capability matrix §4.9). Default false. */
  readonly canPrompt?: boolean | ((hookPoint: HookPoint) => boolean);
  /** Whether the host can keep a skill's text while discarding its hooks. Default false. */
  readonly canStripHooks?: boolean;
  /**
   * A `strip_hooks: true` allow on a host that cannot strip hooks becomes `deny`, or loads the skill
   * with a warning (`allow`) (spec §2.5). Default `deny`.
   */
  readonly stripHooksUnsupported?: "deny" | "allow";
  /** AARTS major sent in the version check (Q1). Default "0". */
  readonly versionCheckMajor?: string;
  /** Sub-agent bookkeeping for `permitted_tools`; default a fresh {@link MemorySubAgentRegistry}. */
  readonly subAgents?: SubAgentRegistry;
  /** Sampling rate for audit records of `allow` decisions, 0–1. Default 1. */
  readonly auditAllowSampleRate?: number;
  /**
   * Receives an audit record (spec §2.7) for every `deny`, `ask` and engine failure, and for `allow`
   * decisions sampled by `auditAllowSampleRate`; its first 5 artifacts have credentials masked.
   */
  readonly onaudit?: (record: AuditRecord) => void;
  /** Receives log records; default: dropped. */
  readonly onlog?: (entry: HostLogEntry) => void;
  /** Clock for audit records and the PostAskResolution events the host builds; default `new Date()`. */
  readonly now?: () => Date;
}

/** What the host does with one event. */
export interface HostDecision {
  readonly event: AartsEvent;
  /** The merged verdict after directive filtering: what is shown to the user and logged. */
  readonly verdict: Verdict;
  /** What the host enforces: `ask` only where it can prompt; `deny` for an ask it cannot show. */
  readonly enforced: VerdictDecision;
  readonly results: readonly HookResult[];
  /** Engine named in rendered texts (`Blocked by <engineId>`). */
  readonly engineId: string;
  /** A decision taken locally without consulting the engine(s). */
  readonly local?: "permitted_tools" | "strip_hooks" | "no_hooks";
  readonly notes: readonly DirectiveNote[];
}

interface Activation {
  readonly registration: HookRegistration;
  readonly response?: VersionCheckResponse;
  readonly failure?: EngineFailure;
}

/**
 * The AARTS host role (spec §2): what a host adapter calls with the events it built. It runs the
 * version check with every registered engine once ({@link AartsHost.activate}), then per event
 * applies timeouts, the failure policy, the multi-hook merge, directives and `permitted_tools`,
 * and returns a {@link HostDecision} for the adapter to render. Engine failures never throw: they
 * become synthetic verdicts under `failurePolicy` and are reported through `onlog`.
 */
export class AartsHost {
  readonly #options: AartsHostOptions;
  readonly #subAgents: SubAgentRegistry;
  #activation?: Promise<Activation[]>;
  #activated?: Activation[];

  /** Creates the host; engines are contacted on the first event (or {@link AartsHost.activate}). */
  constructor(options: AartsHostOptions) {
    this.#options = options;
    this.#subAgents = options.subAgents ?? new MemorySubAgentRegistry();
  }

  /** The failure policy in force (`fail-open` unless configured). */
  get failurePolicy(): FailurePolicy {
    return this.#options.failurePolicy ?? "fail-open";
  }

  /** The sub-agent registry in use. */
  get subAgents(): SubAgentRegistry {
    return this.#subAgents;
  }

  /** The host's own timeout of a hook point (spec §1.4 defaults, configurable per hook). */
  ownTimeoutFor(hookPoint: HookPoint): number {
    return this.#options.timeouts?.[hookPoint] ?? this.#options.timeoutMs ?? HOOK_CATALOG[hookPoint].defaultTimeoutMs ?? 5_000;
  }

  /**
   * How long the host waits for a verdict on `hookPoint` (for one registered hook, or the longest
   * over the hooks registered for it): its own timeout ({@link AartsHost.ownTimeoutFor}), or
   * longer where an activated engine's harness advertised that it may hold the decision for a
   * person (the advertised `timeout_ms` + 5 s, ADR 0145 and 0163). Before {@link AartsHost.activate}
   * settled: the own timeout.
   */
  timeoutFor(hookPoint: HookPoint, hookId?: string): number {
    const own = this.ownTimeoutFor(hookPoint);
    const activations = this.#activated === undefined ? [] : this.#registered(hookPoint, this.#activated);
    let longest: number | undefined;
    for (const a of activations) {
      if (hookId !== undefined && a.registration.id !== hookId) continue;
      const t = this.#waitFor(a, hookPoint, own).timeoutMs;
      if (t <= 0 || !Number.isFinite(t)) return t;
      longest = Math.max(longest ?? 0, t);
    }
    return longest ?? own;
  }

  /** An activated engine's wait for `hookPoint` (`waitFor`), checked; the own limit otherwise. */
  #waitFor(activation: Activation, hookPoint: HookPoint, own: number): EngineWait {
    if (activation.failure !== undefined) return { timeoutMs: own, held: false };
    return engineWait(activation.registration.engine, hookPoint, own, (message) =>
      this.#log({ level: "warn", message, hookPoint, hookId: activation.registration.id }),
    );
  }

  /**
   * Whether this host can show an `ask` prompt for `hookPoint` (option `canPrompt`); otherwise `ask`
   * is enforced as `deny`.
   */
  canPrompt(hookPoint: HookPoint): boolean {
    const c = this.#options.canPrompt;
    return typeof c === "function" ? c(hookPoint) : c === true;
  }

  /** Runs the version check with every registered engine once (spec §1.1). */
  activate(): Promise<Activation[]> {
    this.#activation ??= Promise.all(this.#options.hooks.map((registration) => this.#activate(registration))).then((activations) => {
      this.#activated = activations;
      return activations;
    });
    return this.#activation;
  }

  async #activate(registration: HookRegistration): Promise<Activation> {
    const timeoutMs = this.#options.versionCheckTimeoutMs ?? 10_000;
    try {
      const raw = await withTimeout(
        (signal) =>
          registration.engine.versionCheck({ aarts_version: this.#options.versionCheckMajor ?? HOST_VERSION_CHECK_MAJOR }, { signal }),
        timeoutMs,
        registration.id,
      );
      const checked = validateVersionCheckResponse(raw);
      if (!checked.ok) throw new EngineFailure("invalid_response", checked.message, { engineId: registration.id });
      if (!checked.value.compatible) {
        const failure = new EngineFailure(
          "incompatible",
          `engine ${checked.value.engine_id} could not be activated (incompatible AARTS version or unusable harness)`,
          {
            engineId: checked.value.engine_id,
          },
        );
        this.#log({ level: "error", message: failure.message, hookId: registration.id });
        return { registration, response: checked.value, failure };
      }
      return { registration, response: checked.value };
    } catch (error) {
      const failure = EngineFailure.from(error, registration.id);
      const wrapped = new EngineFailure("incompatible", `version check failed: ${failure.message}`, {
        engineId: registration.id,
        cause: failure,
      });
      this.#log({ level: "error", message: wrapped.message, hookId: registration.id });
      return { registration, failure: wrapped };
    }
  }

  #registered(hookPoint: HookPoint, activations: Activation[]): Activation[] {
    return activations.filter((a) => a.registration.hookPoints === undefined || a.registration.hookPoints.includes(hookPoint));
  }

  #log(entry: HostLogEntry): void {
    this.#options.onlog?.(entry);
  }

  /**
   * Evaluates a blocking hook event and returns what the host must do. Engine failures, timeouts
   * and invalid verdicts become synthetic verdicts (failure policy, spec §2.2); a Notification
   * event is passed to {@link AartsHost.notify} and answered with a synthetic `allow`.
   */
  async evaluate(event: AartsEvent, options: { subAgents?: SubAgentRegistry } = {}): Promise<HostDecision> {
    const hookPoint = event.hook_point;
    const subAgents = options.subAgents ?? this.#subAgents;
    const info = HOOK_CATALOG[hookPoint];
    if (info.blocking === "notification") {
      await this.notify(event);
      return this.#finish(event, { ...NO_HOOKS_VERDICT, reasons: [] }, [], "host", "no_hooks", []);
    }

    const local = this.#permittedToolsCheck(event, subAgents);
    if (local !== undefined) return this.#finish(event, local, [], "permitted_tools", "permitted_tools", []);

    const activations = this.#registered(hookPoint, await this.activate());
    if (activations.length === 0) {
      return this.#finish(event, { ...NO_HOOKS_VERDICT, reasons: [] }, [], "host", "no_hooks", []);
    }
    const results = await Promise.all(activations.map((a) => this.#runHook(a, event)));
    for (const r of results) {
      if (r.ok) this.#log({ level: "debug", message: `hook ${r.hookId}: ${r.verdict.decision}`, hookPoint, hookId: r.hookId });
      else
        this.#log({
          level: "error",
          message: `hook ${r.hookId} failed (${r.failure.failureCause}): ${r.failure.message}`,
          hookPoint,
          hookId: r.hookId,
        });
    }
    const merged = mergeResults(results, {
      mergePolicy: this.#options.mergePolicy ?? "permissive",
      failurePolicy: this.failurePolicy,
    });
    const engineIdOf = (hookId: string) => activations.find((a) => a.registration.id === hookId)?.response?.engine_id ?? hookId;
    const firstFailure = results.find((r) => !r.ok);
    const engineId =
      merged.contributors[0] !== undefined
        ? engineIdOf(merged.contributors[0])
        : firstFailure !== undefined && !firstFailure.ok
          ? (firstFailure.failure.engineId ?? engineIdOf(firstFailure.hookId))
          : "host";

    // Directives (§1.8, §2.5).
    let verdict = merged.verdict;
    const { directives, notes } = applicableDirectives(hookPoint, verdict.decision, verdict.directives);
    for (const n of notes) this.#log({ level: n.level, message: n.message, hookPoint });
    if (directives !== verdict.directives) {
      const { directives: _drop, ...rest } = verdict;
      verdict = directives === undefined ? rest : { ...rest, directives };
    }
    let localKind: HostDecision["local"];
    if (
      hookPoint === "PreSkillLoad" &&
      verdict.decision === "allow" &&
      verdict.directives?.strip_hooks === true &&
      !this.#options.canStripHooks
    ) {
      if ((this.#options.stripHooksUnsupported ?? "deny") === "deny") {
        verdict = {
          ...verdict,
          decision: "deny",
          severity: verdict.severity === "info" ? "warning" : verdict.severity,
          reasons: [...(verdict.reasons ?? []), "The engine requires the skill's hooks to be stripped; this host cannot strip hooks"],
        };
        localKind = "strip_hooks";
      } else {
        this.#log({ level: "warn", message: "strip_hooks not honoured: this host cannot strip hooks; skill loaded normally", hookPoint });
      }
    }
    if (hookPoint === "PreSubAgentSpawn" && verdict.decision === "allow") this.#recordSubAgent(event, verdict, subAgents);
    return this.#finish(event, verdict, results, engineId, localKind, notes);
  }

  #finish(
    event: AartsEvent,
    verdict: Verdict,
    results: readonly HookResult[],
    engineId: string,
    local: HostDecision["local"],
    notes: readonly DirectiveNote[],
  ): HostDecision {
    const enforced: VerdictDecision = verdict.decision === "ask" && !this.canPrompt(event.hook_point) ? "deny" : verdict.decision;
    const decision: HostDecision = { event, verdict, enforced, results, engineId, notes, ...(local === undefined ? {} : { local }) };
    if (local !== "no_hooks" || results.length > 0) this.#audit(decision);
    return decision;
  }

  #audit(d: HostDecision): void {
    const onaudit = this.#options.onaudit;
    if (onaudit === undefined) return;
    const failures = d.results.filter((r) => !r.ok);
    // deny and ask are always logged, and so is every failure (spec §2.2, §2.7); allow is sampled.
    if (d.verdict.decision === "allow" && d.enforced === "allow" && failures.length === 0) {
      const rate = this.#options.auditAllowSampleRate ?? 1;
      if (rate <= 0 || (rate < 1 && Math.random() >= rate)) return;
    }
    const artifacts = ((d.event as { artifacts?: { type: string; value: string }[] }).artifacts ?? [])
      .slice(0, 5)
      .map((a) =>
        a.type === "credential" ? maskCredential(a.value) : redactSecrets(a.value.length > 500 ? `${a.value.slice(0, 499)}…` : a.value),
      );
    onaudit({
      ts: (this.#options.now?.() ?? new Date()).toISOString(),
      session_id: d.event.session_id,
      hook_point: d.event.hook_point,
      decision: d.verdict.decision,
      ...(d.enforced !== d.verdict.decision ? { enforced: d.enforced } : {}),
      category: d.verdict.category,
      severity: d.verdict.severity,
      ...(d.verdict.matched_rule_id === undefined ? {} : { matched_rule_id: d.verdict.matched_rule_id }),
      engine_id: d.local === "permitted_tools" ? "permitted_tools" : d.engineId,
      artifacts,
      ...(failures.length > 0
        ? { failure: failures.map((f) => (f.ok ? "" : `${f.hookId}: ${f.failure.failureCause}: ${f.failure.message}`)).join("; ") }
        : {}),
      ...(d.results.length > 1
        ? {
            hooks: d.results.map((r) =>
              r.ok ? { id: r.hookId, decision: r.verdict.decision } : { id: r.hookId, failure: r.failure.failureCause },
            ),
          }
        : {}),
    });
  }

  async #runHook(activation: Activation, event: AartsEvent): Promise<HookResult> {
    const hookId = activation.registration.id;
    const engineId = activation.response?.engine_id ?? hookId;
    if (activation.failure !== undefined) return { hookId, ok: false, failure: activation.failure };
    const hookPoint = event.hook_point;
    const wait = this.#waitFor(activation, hookPoint, this.ownTimeoutFor(hookPoint));
    const timeoutMs = wait.timeoutMs;
    let raw: unknown;
    try {
      raw = await withTimeout((signal) => activation.registration.engine.evaluate(event, { timeoutMs, signal }), timeoutMs, engineId);
    } catch (error) {
      const failure = EngineFailure.from(error, engineId);
      const tagged =
        failure.engineId === undefined ? new EngineFailure(failure.failureCause, failure.message, { engineId, cause: failure }) : failure;
      if (tagged.failureCause === "timeout" && this.#options.unanswered !== undefined) {
        return { hookId, ok: true, verdict: unansweredVerdict(this.#options.unanswered, engineId, timeoutMs) };
      }
      // A decision held for a person who has not answered: the host's prompt or deny, never the
      // failure policy (ADR 0140, 0163).
      if (tagged.failureCause === "timeout" && wait.held) {
        this.#log({ level: "warn", message: `${engineId}: ${tagged.message}`, hookPoint, hookId });
        return { hookId, ok: true, verdict: unansweredVerdict(this.canPrompt(hookPoint) ? "ask" : "deny", engineId, timeoutMs) };
      }
      if (
        tagged.failureCause === "timeout" &&
        HOOK_CATALOG[hookPoint].blocking === "recommended" &&
        this.#options.recommendedTimeoutProceeds === true
      ) {
        return { hookId, ok: true, verdict: recommendedTimeoutVerdict(tagged) };
      }
      return { hookId, ok: false, failure: tagged };
    }
    const checked = validateVerdict(raw);
    if (checked.ok) return { hookId, ok: true, verdict: checked.value };
    if (this.#options.salvageMalformedDeny !== false) {
      const salvaged = salvageDeny(raw, engineId);
      if (salvaged !== undefined) return { hookId, ok: true, verdict: salvaged };
    }
    return { hookId, ok: false, failure: new EngineFailure("invalid_response", checked.message, { engineId }) };
  }

  /** Local `permitted_tools` enforcement (spec §2.5): no engine call. */
  #permittedToolsCheck(event: AartsEvent, subAgents: SubAgentRegistry): Verdict | undefined {
    if (event.hook_point !== "PreToolUse") return undefined;
    const permitted = permittedToolsFor(subAgents, event.session_id, event.parent_session_id, event.is_sub_agent);
    if (permitted === undefined || permitted.includes(event.tool_name)) return undefined;
    return {
      decision: "deny",
      category: "privilege_escalation",
      severity: "warning",
      source: "permitted_tools",
      reasons: [
        `Tool ${event.tool_name} is not permitted for sub-agent ${event.session_id} (permitted: ${permitted.join(", ") || "none"})`,
      ],
    };
  }

  /** The effective permitted set of a session (see {@link permittedToolsFor}). */
  permittedToolsFor(sessionId: string, parentSessionId?: string, isSubAgent?: boolean): readonly string[] | undefined {
    return permittedToolsFor(this.#subAgents, sessionId, parentSessionId, isSubAgent);
  }

  #recordSubAgent(event: AartsEvent, verdict: Verdict, subAgents: SubAgentRegistry): void {
    if (event.hook_point !== "PreSubAgentSpawn") return;
    const permitted = verdict.directives?.permitted_tools;
    subAgents.set(event.sub_agent_id, {
      parent: event.session_id,
      ...(permitted === undefined ? {} : { permitted: [...permitted] }),
    });
  }

  /**
   * Fires a Notification hook to every registered engine. Failures are logged (one entry per
   * failure) and never block.
   */
  async notify(event: AartsEvent): Promise<void> {
    const activations = this.#registered(event.hook_point, await this.activate());
    await Promise.all(
      activations.map(async (a) => {
        if (a.failure !== undefined) {
          this.#log({
            level: "warn",
            message: `notification ${event.hook_point} dropped: ${a.failure.message}`,
            hookPoint: event.hook_point,
            hookId: a.registration.id,
          });
          return;
        }
        try {
          const engine = a.registration.engine;
          const timeoutMs = this.#options.timeoutMs ?? 5_000;
          await withTimeout(
            (signal) => (engine.notify !== undefined ? engine.notify(event) : engine.evaluate(event, { timeoutMs, signal })),
            timeoutMs,
            a.response?.engine_id ?? a.registration.id,
          );
        } catch (error) {
          const failure = EngineFailure.from(error, a.registration.id);
          this.#log({
            level: "error",
            message: `notification ${event.hook_point} failed: ${failure.message}`,
            hookPoint: event.hook_point,
            hookId: a.registration.id,
          });
        }
      }),
    );
  }

  /**
   * The ask flow after the user answered (spec §2.4 steps 4–5): builds PostAskResolution with
   * the merged verdict that was shown, the raw resolution and the original turn, and fires it.
   */
  async resolveAsk(decision: HostDecision, resolution: Resolution, options: { turnId?: string } = {}): Promise<PostAskResolutionEvent> {
    const event = buildAskResolution(decision.event, decision.verdict, resolution, {
      ...options,
      now: this.#options.now?.() ?? new Date(),
    });
    await this.notify(event);
    return event;
  }

  /** Closes every registered engine (errors ignored). */
  async close(): Promise<void> {
    await Promise.allSettled(this.#options.hooks.map(async (h) => h.engine.close?.()));
  }
}

/**
 * The effective `permitted_tools` of a session, intersected up the parent chain (nested
 * sub-agents inherit the intersection, §2.5); undefined = unrestricted.
 */
export function permittedToolsFor(
  registry: SubAgentRegistry,
  sessionId: string,
  parentSessionId?: string,
  isSubAgent?: boolean,
): readonly string[] | undefined {
  const effective = (id: string, depth: number): readonly string[] | undefined => {
    const record = registry.get(id);
    if (record === undefined || depth > 32) return undefined;
    const parent = record.parent === undefined ? undefined : effective(record.parent, depth + 1);
    if (record.permitted === undefined) return parent;
    if (parent === undefined) return record.permitted;
    return record.permitted.filter((t) => parent.includes(t));
  };
  if (registry.get(sessionId) !== undefined) return effective(sessionId, 0);
  if (isSubAgent === true && parentSessionId !== undefined) {
    // An unattributed child of a known parent: the union of the parent's restricted children is the ceiling.
    const children = registry.childrenOf(parentSessionId).map((c) => effective(c, 0));
    if (children.length > 0 && children.every((c) => c !== undefined)) return [...new Set(children.flatMap((c) => c))];
    return effective(parentSessionId, 0);
  }
  return undefined;
}

/** Builds the PostAskResolution event for an ask shown on `original` (spec §2.4 step 5). */
export function buildAskResolution(
  original: AartsEvent,
  shownVerdict: Verdict,
  resolution: Resolution,
  options: { turnId?: string; now?: Date } = {},
): PostAskResolutionEvent {
  const turnId = options.turnId ?? (original as { turn_id?: string }).turn_id ?? `${original.session_id}:0`;
  return {
    hook_point: "PostAskResolution",
    session_id: original.session_id,
    timestamp: (options.now ?? new Date()).toISOString(),
    host_id: original.host_id,
    ...(original.host_version === undefined ? {} : { host_version: original.host_version }),
    aarts_version: original.aarts_version ?? AARTS_EVENT_VERSION,
    ...(original.locale === undefined ? {} : { locale: original.locale }),
    turn_id: turnId,
    original_hook_point: original.hook_point,
    original_verdict: shownVerdict,
    resolution,
  };
}

/** Whether a resolution lets the action proceed (spec §2.4 step 4). */
export const resolutionProceeds = (resolution: Resolution): boolean =>
  resolution === "approved" || resolution === "allow_always" || resolution === "allow_similar";

export type { FailurePolicy, MergePolicy, HookResult };
export { failureVerdict, unansweredVerdict };

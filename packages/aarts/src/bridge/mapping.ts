/**
 * Pure AARTS ↔ AHP mapping functions (adapter spec §5.3–§5.6): what other-language ports copy.
 *
 * - {@link toAhpEvent}: AARTS event → AHP event params (forward, §5.3/§5.4).
 * - {@link fromAhpDecision}: AHP decision → AARTS verdict (forward, §5.5).
 * - {@link toAhpDecision}: AARTS verdict → AHP decision (reverse, §5.6).
 */
import { HOOK_CATALOG, isCanonicalToolName, type HookPoint, type VerdictDecision } from "../catalog.js";
import { EngineFailure } from "../errors.js";
import { applicableDirectives } from "../host/directives.js";
import { salvageDeny } from "../host/policy.js";
import type { AartsEvent, Verdict } from "../types.js";
import { validateVerdict } from "../validate/index.js";

/** Marks an event the host only observes (its verdict cannot change anything), e.g. Claude Code's `Stop`. */
export const OBSERVE_ONLY = "x-ahp-observe-only";

/** The params of an `ahp/event` message (an AhpEvent) built from an AARTS event. */
export interface AhpEventParams {
  event_type: string;
  session_id: string;
  agent_id: string;
  timestamp: string;
  depth: number;
  payload: Record<string, unknown>;
  metadata: { aarts: Record<string, unknown>; ahp_wait?: AhpWait };
}

/**
 * How long a client with a hard outer limit waits for a decision (ADR 0140), sent in the event's
 * `metadata.ahp_wait`: the harness ends a hold for a person before `max_ms` itself and answers
 * `escalate` (`on_timeout: "ask"`) or `block` (`"block"`), recording which.
 */
export interface AhpWait {
  max_ms: number;
  on_timeout: "ask" | "block";
}

/** Options of {@link toAhpEvent}. */
export interface ToAhpEventOptions {
  /** Nesting depth of the emitting session (§5.4.1). Default 0. */
  depth?: number;
  /** Extra payload members (e.g. `ask_request_id` on PostAskResolution, §5.10). */
  extraPayload?: Record<string, unknown>;
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split(".");
  let cursor = target;
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i]!;
    const next = cursor[key];
    if (typeof next !== "object" || next === null || Array.isArray(next)) cursor[key] = {};
    cursor = cursor[key] as Record<string, unknown>;
  }
  cursor[keys[keys.length - 1]!] = value;
}

/**
 * AARTS event → AHP event params (spec §5.3, §5.4). The complete event travels verbatim under
 * `payload.aarts`; the discriminator and the projected fields are copies.
 */
export function toAhpEvent(
  event: AartsEvent,
  options: ToAhpEventOptions = {},
): { kind: "request" | "notification"; params: AhpEventParams } {
  const info = HOOK_CATALOG[event.hook_point];
  const route = info.ahp;
  const source = event as Record<string, unknown>;
  const payload: Record<string, unknown> = {};
  if (route.discriminator !== undefined) payload[route.discriminator.key] = route.discriminator.value;
  for (const [payloadKey, field] of route.projection) {
    const value = source[field];
    if (value !== undefined) setPath(payload, payloadKey, value);
  }
  // The host's working directory (every host whose hook input carries one): path rules such as
  // "no write outside the workspace" resolve the action's paths against it.
  const environment = source.environment as { working_directory?: unknown } | undefined;
  if (typeof environment?.working_directory === "string" && payload.working_directory === undefined) {
    payload.working_directory = environment.working_directory;
  }
  if (options.extraPayload !== undefined) Object.assign(payload, options.extraPayload);
  payload.aarts = event;
  const meta: Record<string, unknown> = {
    hook_point: event.hook_point,
    aarts_version: event.aarts_version,
    host_id: event.host_id,
  };
  if (event.host_version !== undefined) meta.host_version = event.host_version;
  if (event.locale !== undefined) meta.locale = event.locale;
  const turnId = source.turn_id;
  if (typeof turnId === "string") meta.turn_id = turnId;
  meta.blocking = info.blocking;
  return {
    kind: route.kind,
    params: {
      event_type: route.eventType,
      session_id: event.session_id,
      agent_id: event.host_id,
      timestamp: event.timestamp,
      depth: options.depth ?? 0,
      payload,
      metadata: { aarts: meta },
    },
  };
}

// ------------------------------------------------------------------ decisions

/**
 * What the bridge does with an AHP `modify` the host cannot apply for the hook (spec §5.5): `deny`
 * (default: block the action), `ask` (let the user decide) or `allow` (drop the change, warn and proceed unmodified).
 */
export type ModifyUnsupported = "deny" | "ask" | "allow";

/** Context {@link fromAhpDecision} needs to map one AHP decision: which hook and request it answers, and the host's abilities. */
export interface FromAhpDecisionContext {
  /** Hook the decision answers (decides directive applicability and the modification key). */
  readonly hookPoint: HookPoint;
  /** AHP request id (for the `x-ahp` directive). */
  readonly requestId: string | number;
  /** AHP event type the request carried. */
  readonly eventType: string;
  /** `harness_info.name` (default verdict source `ahp:<name>`). */
  readonly harnessName: string;
  /** Hooks whose modification the host can apply (spec §5.5). Default none. */
  readonly hostModifiable?: readonly HookPoint[];
  /** What to do with a `modify` the host cannot apply (spec §5.5). Default `deny`. */
  readonly modifyUnsupported?: ModifyUnsupported;
  /** Treat an invalid result that still says `block` as a `deny` instead of a failure (spec §2.2 deny salvage). Default `true`. */
  readonly salvageMalformedDeny?: boolean;
}

/** Result of {@link fromAhpDecision}. */
export interface FromAhpDecisionResult {
  /** The AARTS verdict (with an `x-ahp` directive unless an embedded verdict was returned verbatim). */
  readonly verdict: Verdict;
  /** Warnings to log (dropped modification, ignored directives). */
  readonly warnings: string[];
  /** The AHP kind after normalisation (`allow` with a payload counts as `modify`). */
  readonly kind: "allow" | "block" | "modify" | "defer" | "escalate";
  /** `defer` only. */
  readonly retryAfterMs?: number;
}

/** First reason of a verdict produced by `modifyUnsupported: "deny"` or `"ask"` (spec §5.5). */
export const UNSUPPORTED_MODIFY_REASON = "Harness requires a modification this host cannot apply";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const stringArray = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === "string") ? v : undefined);
const SEVERITIES = new Set(["info", "warning", "critical"]);

/**
 * AHP decision → AARTS verdict (spec §5.5). Throws {@link EngineFailure} (`invalid_response`)
 * when the result does not validate and deny salvage does not apply.
 */
export function fromAhpDecision(result: unknown, ctx: FromAhpDecisionContext): FromAhpDecisionResult {
  const source = `ahp:${ctx.harnessName}`;
  const salvage = ctx.salvageMalformedDeny !== false;
  const fail = (why: string): never => {
    if (salvage) {
      const salvaged = salvageDeny(result, source);
      if (salvaged !== undefined) {
        throw new SalvagedDeny(salvaged.reasons?.length ? salvaged : { ...salvaged, reasons: ["Blocked by harness"] });
      }
    }
    throw new EngineFailure("invalid_response", `invalid AHP decision: ${why}`, { engineId: source });
  };
  try {
    return mapDecision(result, ctx, source, fail);
  } catch (error) {
    if (error instanceof SalvagedDeny) {
      return { verdict: withXAhp(error.verdict, result, ctx), warnings: ["malformed deny salvaged as deny"], kind: "block" };
    }
    throw error;
  }
}

class SalvagedDeny extends Error {
  constructor(readonly verdict: Verdict) {
    super("salvaged");
  }
}

function withXAhp(verdict: Verdict, result: unknown, ctx: FromAhpDecisionContext): Verdict {
  if (!isRecord(result)) return verdict;
  return {
    ...verdict,
    directives: {
      ...(verdict.directives ?? {}),
      "x-ahp": { request_id: ctx.requestId, event_type: ctx.eventType, decision: result as { decision: string } },
    },
  };
}

function mapDecision(result: unknown, ctx: FromAhpDecisionContext, source: string, fail: (why: string) => never): FromAhpDecisionResult {
  if (!isRecord(result)) return fail("result is not an object");
  const tag = result.decision;
  if (tag !== "allow" && tag !== "block" && tag !== "modify" && tag !== "defer" && tag !== "escalate") {
    return fail(`unknown decision ${JSON.stringify(tag)}`);
  }
  let kind: FromAhpDecisionResult["kind"] = tag;
  const metadata = isRecord(result.metadata) ? result.metadata : undefined;
  const aarts = metadata !== undefined && isRecord(metadata.aarts) ? metadata.aarts : undefined;
  // Q3: a `block` that only reports a handler failure (AHP batches fail closed) is a failure, so
  // that the host's own failure policy decides; any other `block` is an explicit deny.
  if (tag === "block" && metadata?.handler_error === true) {
    throw new EngineFailure("engine_error", `harness handler failed: ${typeof result.reason === "string" ? result.reason : "no reason"}`, {
      engineId: source,
    });
  }
  const warnings: string[] = [];
  const bridgeReasons: string[] = [];
  let reason: string | undefined;
  let retryAfterMs: number | undefined;
  let mapped: VerdictDecision;
  const modifyInfo = HOOK_CATALOG[ctx.hookPoint].ahp.modify;

  if (kind === "allow" && result.modified_payload !== undefined && result.modified_payload !== null) kind = "modify";
  switch (kind) {
    case "allow":
      mapped = "allow";
      break;
    case "block":
      if (typeof result.reason !== "string") return fail("block without a reason");
      reason = result.reason;
      mapped = "deny";
      break;
    case "defer": {
      const ms = result.retry_after_ms;
      if (ms !== undefined && (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0))
        return fail("defer with an invalid retry_after_ms");
      retryAfterMs = typeof ms === "number" ? ms : 0;
      if (typeof result.reason === "string") reason = result.reason;
      bridgeReasons.push(`Deferred by harness; retry after ${retryAfterMs} ms`);
      mapped = "deny";
      break;
    }
    case "escalate":
      reason = typeof result.reason === "string" ? result.reason : "Approval required by harness";
      mapped = "ask";
      break;
    case "modify": {
      if (!("modified_payload" in result)) return fail("modify without modified_payload");
      if (modifyInfo !== undefined) {
        const mp = result.modified_payload;
        if (!isRecord(mp) || !(modifyInfo.payloadKey in mp)) {
          return fail(`modified_payload lacks \`${modifyInfo.payloadKey}\` required for ${ctx.hookPoint}`);
        }
      }
      const canApply = modifyInfo !== undefined && (ctx.hostModifiable ?? []).includes(ctx.hookPoint);
      if (canApply) {
        mapped = "allow";
      } else {
        const policy = ctx.modifyUnsupported ?? "deny";
        if (policy === "allow") {
          mapped = "allow";
          warnings.push(`modification required by the harness dropped: the host cannot apply it on ${ctx.hookPoint}`);
        } else {
          mapped = policy;
          bridgeReasons.push(UNSUPPORTED_MODIFY_REASON);
        }
      }
      break;
    }
  }

  // Embedded verdict shortcut (§5.5), unless the verdict must carry a modification to apply.
  const carriesModification =
    kind === "modify" && mapped === "allow" && (ctx.modifyUnsupported !== "allow" || (ctx.hostModifiable ?? []).includes(ctx.hookPoint));
  if (aarts !== undefined && !carriesModification && aarts.verdict !== undefined) {
    const embedded = validateVerdict(aarts.verdict);
    if (embedded.ok && embedded.value.decision === mapped)
      return { verdict: embedded.value, warnings, kind, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }

  const verdict: Record<string, unknown> = { decision: mapped };
  const category = aarts?.category;
  verdict.category =
    typeof category === "string" && category !== "" ? category : kind === "defer" ? "rate_limit" : mapped === "allow" ? "none" : "policy";
  const severity = aarts?.severity;
  verdict.severity = typeof severity === "string" && SEVERITIES.has(severity) ? severity : mapped === "allow" ? "info" : "warning";
  const confidence = aarts?.confidence;
  if (typeof confidence === "number" && confidence >= 0 && confidence <= 1) verdict.confidence = confidence;
  verdict.source = typeof aarts?.source === "string" && aarts.source !== "" ? aarts.source : source;
  const artifacts = stringArray(aarts?.artifacts);
  if (artifacts !== undefined) verdict.artifacts = artifacts;
  const rule = typeof aarts?.matched_rule_id === "string" ? aarts.matched_rule_id : stringArray(metadata?.rules_applied)?.[0];
  if (rule !== undefined) verdict.matched_rule_id = rule;
  const reasons = stringArray(aarts?.reasons) ?? (reason !== undefined && reason !== "" ? [reason] : []);
  verdict.reasons = [...bridgeReasons, ...reasons];
  if (mapped === "ask") {
    const suggested = stringArray(aarts?.suggested_resolutions);
    if (suggested !== undefined) verdict.suggested_resolutions = suggested;
  }
  const filtered = applicableDirectives(ctx.hookPoint, mapped, isRecord(aarts?.directives) ? aarts.directives : undefined);
  for (const note of filtered.notes) if (note.level === "warn") warnings.push(note.message);
  const directives: Record<string, unknown> = { ...(filtered.directives ?? {}) };
  directives["x-ahp"] = { request_id: ctx.requestId, event_type: ctx.eventType, decision: result };
  verdict.directives = directives;
  return { verdict: verdict as Verdict, warnings, kind, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/**
 * The AARTS decision an AHP decision kind maps to, ignoring host capabilities (a `modify`
 * counts as `allow`). Used by the reverse mapping's verbatim check (§5.6 step 1).
 */
export function verdictDecisionOfAhp(decision: unknown): VerdictDecision | undefined {
  if (!isRecord(decision)) return undefined;
  switch (decision.decision) {
    case "allow":
    case "modify":
      return "allow";
    case "block":
    case "defer":
      return "deny";
    case "escalate":
      return "ask";
    default:
      return undefined;
  }
}

/** An AHP generic Decision object (`metadata` may appear on every variant, Q2). */
export type AhpDecisionObject = { decision: string; [key: string]: unknown };

/** AARTS verdict → AHP decision (spec §5.6). */
export function toAhpDecision(verdict: Verdict): AhpDecisionObject {
  const xAhp = verdict.directives?.["x-ahp"];
  if (xAhp !== undefined && isRecord(xAhp.decision) && verdictDecisionOfAhp(xAhp.decision) === verdict.decision) {
    return xAhp.decision;
  }
  const joined = (verdict.reasons ?? []).join("; ");
  const metadata = { aarts: { verdict } };
  switch (verdict.decision) {
    case "allow":
      return { decision: "allow", metadata };
    case "deny":
      return { decision: "block", reason: joined || `Denied by ${verdict.source}`, metadata };
    case "ask":
      return { decision: "escalate", reason: joined || `Approval required by ${verdict.source}`, metadata };
  }
}

/** The replacement data of an applied modification (`x-ahp` carried by an allow verdict), if any. */
export function modificationOf(verdict: Verdict, hookPoint: HookPoint): { field: string; value: unknown } | undefined {
  const modify = HOOK_CATALOG[hookPoint].ahp.modify;
  const decision = verdict.directives?.["x-ahp"]?.decision as Record<string, unknown> | undefined;
  if (modify === undefined || verdict.decision !== "allow" || decision === undefined) return undefined;
  if (decision.decision !== "modify" && decision.decision !== "allow") return undefined;
  const payload = decision.modified_payload;
  if (!isRecord(payload) || !(modify.payloadKey in payload)) return undefined;
  return { field: modify.replaces, value: payload[modify.payloadKey] };
}

export { isCanonicalToolName };

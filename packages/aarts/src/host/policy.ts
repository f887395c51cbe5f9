/**
 * Host-role policy (adapter spec §2.2–§2.3): synthetic verdicts of the failure policy, deny
 * salvage, the deterministic multi-hook merge, and the reason text rendered to hosts (§4).
 */
import { STANDARD_SUGGESTED_RESOLUTIONS, type Severity, type VerdictDecision } from "../catalog.js";
import { EngineFailure } from "../errors.js";
import type { Directives, Verdict } from "../types.js";

/**
 * What an engine failure becomes (spec §2.2): `fail-open` (the AARTS default) ⇒ synthetic `allow`;
 * `fail-closed` ⇒ synthetic `deny`.
 */
export type FailurePolicy = "fail-open" | "fail-closed";
/**
 * How the verdicts of several hooks on one hook point merge (spec §2.3): `permissive` (the least
 * strict vote wins: `deny` only if all deny; the AARTS default), `strict` (the strictest vote wins),
 * `majority` (most votes; ties go to the stricter decision).
 */
export type MergePolicy = "permissive" | "strict" | "majority";

/** One hook's outcome: a valid verdict or a failure. */
export type HookResult =
  | { readonly hookId: string; readonly ok: true; readonly verdict: Verdict }
  | { readonly hookId: string; readonly ok: false; readonly failure: EngineFailure };

const RANK: Record<VerdictDecision, number> = { allow: 0, ask: 1, deny: 2 };
const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/** Strictest of two decisions (`deny > ask > allow`). */
export const stricter = (a: VerdictDecision, b: VerdictDecision): VerdictDecision => (RANK[a] >= RANK[b] ? a : b);

/** The stricter verdict of two (the first wins ties); spec §5.8. */
export const strictestVerdict = (a: Verdict, b: Verdict): Verdict => (RANK[b.decision] > RANK[a.decision] ? b : a);

function shortCause(failure: EngineFailure): string {
  const text = failure.message.replace(/\s+/g, " ").trim();
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * The synthetic verdict a failure policy produces (spec §2.2): category `engine_failure`
 * (or `engine_timeout`), severity `warning`, source `failure_policy`.
 */
export function failureVerdict(failures: readonly EngineFailure[], policy: FailurePolicy, decision?: VerdictDecision): Verdict {
  const timeoutOnly = failures.length > 0 && failures.every((f) => f.failureCause === "timeout");
  return {
    decision: decision ?? (policy === "fail-closed" ? "deny" : "allow"),
    category: timeoutOnly ? "engine_timeout" : "engine_failure",
    severity: "warning",
    source: "failure_policy",
    reasons: failures.map((f) => `${f.engineId ?? "engine"} failed: ${shortCause(f)}; ${policy} applied`),
  };
}

/** Synthetic `allow` when no hook is registered for a hook point (spec §2.3 step 2). */
export const NO_HOOKS_VERDICT: Verdict = Object.freeze({
  decision: "allow",
  category: "none",
  severity: "info",
  source: "host",
  reasons: [],
});

/** Synthetic `allow` for a Recommended hook that timed out with `recommendedTimeoutProceeds` (spec §2.1). */
export function recommendedTimeoutVerdict(failure: EngineFailure): Verdict {
  return {
    decision: "allow",
    category: "engine_timeout",
    severity: "warning",
    source: "failure_policy",
    reasons: [`${failure.engineId ?? "engine"} timed out; Recommended hook proceeds with a warning`],
  };
}

/**
 * Deny salvage (spec §2.2, Q4): a response that fails validation but says `deny` (AARTS) or
 * `block` (AHP) is a deny, never downgraded by fail-open.
 */
export function salvageDeny(response: unknown, responderId: string): Verdict | undefined {
  if (typeof response !== "object" || response === null || Array.isArray(response)) return undefined;
  const r = response as Record<string, unknown>;
  if (r.decision !== "deny" && r.decision !== "block") return undefined;
  const reasons = Array.isArray(r.reasons) ? r.reasons.filter((x): x is string => typeof x === "string") : [];
  if (reasons.length === 0 && typeof r.reason === "string" && r.reason !== "") reasons.push(r.reason);
  return {
    decision: "deny",
    category: typeof r.category === "string" && r.category !== "" ? r.category : "policy",
    severity: r.severity === "info" || r.severity === "warning" || r.severity === "critical" ? r.severity : "warning",
    source: typeof r.source === "string" && r.source !== "" ? r.source : responderId,
    reasons,
  };
}

function orderResolutions(values: Iterable<string>): string[] {
  const all = [...new Set(values)];
  const standard = STANDARD_SUGGESTED_RESOLUTIONS.filter((r) => all.includes(r));
  return [...standard, ...all.filter((r) => !(STANDARD_SUGGESTED_RESOLUTIONS as readonly string[]).includes(r))];
}

function mergeDirectives(contributors: readonly Verdict[]): Directives | undefined {
  const out: Record<string, unknown> = {};
  let permitted: string[] | undefined;
  const injects: { position: string; content: string }[] = [];
  let strip = false;
  let xAhp: unknown;
  for (const v of contributors) {
    const d = v.directives;
    if (d === undefined) continue;
    if (Array.isArray(d.permitted_tools)) {
      permitted = permitted === undefined ? [...d.permitted_tools] : permitted.filter((t) => d.permitted_tools!.includes(t));
    }
    if (d.inject_context !== undefined) injects.push(d.inject_context);
    if (d.strip_hooks === true) strip = true;
    if (xAhp === undefined && d["x-ahp"] !== undefined) xAhp = d["x-ahp"];
  }
  if (permitted !== undefined) out.permitted_tools = permitted;
  if (injects.length > 0) out.inject_context = { position: injects[0]!.position, content: injects.map((i) => i.content).join("\n") };
  if (strip) out.strip_hooks = true;
  if (xAhp !== undefined) out["x-ahp"] = xAhp;
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Options of {@link mergeResults}. */
export interface MergeOptions {
  /** How votes combine (spec §2.3 step 3). */
  readonly mergePolicy: MergePolicy;
  /**
   * `fail-closed`: any failure makes the merged verdict a synthetic `deny`; `fail-open`: failures
   * abstain (spec §2.3 step 1).
   */
  readonly failurePolicy: FailurePolicy;
}

/** Result of {@link mergeResults}: the merged verdict and who caused it. */
export interface MergeOutcome {
  /** The merged verdict (spec §2.3 step 4), or a synthetic one. */
  readonly verdict: Verdict;
  /** Hook ids whose decision equals the merged decision (empty for synthetic verdicts). */
  readonly contributors: readonly string[];
  /** True when the verdict was produced by the failure policy or by the absence of votes. */
  readonly synthetic: boolean;
}

/**
 * The deterministic merge of spec §2.3. With a single hook the merge returns that hook's
 * verdict unchanged (no `[hook_id]` prefixes).
 */
export function mergeResults(results: readonly HookResult[], options: MergeOptions): MergeOutcome {
  const failures = results.filter((r): r is Extract<HookResult, { ok: false }> => !r.ok).map((r) => r.failure);
  if (failures.length > 0 && options.failurePolicy === "fail-closed") {
    return { verdict: failureVerdict(failures, "fail-closed"), contributors: [], synthetic: true };
  }
  const votes = results.filter((r): r is Extract<HookResult, { ok: true }> => r.ok);
  if (votes.length === 0) {
    return {
      verdict: failures.length > 0 ? failureVerdict(failures, "fail-open") : { ...NO_HOOKS_VERDICT, reasons: [] },
      contributors: [],
      synthetic: true,
    };
  }
  if (results.length === 1) return { verdict: votes[0]!.verdict, contributors: [votes[0]!.hookId], synthetic: false };

  const decisions = votes.map((v) => v.verdict.decision);
  let merged: VerdictDecision;
  switch (options.mergePolicy) {
    case "permissive":
      merged = decisions.reduce((a, b) => (RANK[b] < RANK[a] ? b : a));
      break;
    case "strict":
      merged = decisions.reduce(stricter);
      break;
    case "majority": {
      const counts: Record<VerdictDecision, number> = { allow: 0, ask: 0, deny: 0 };
      for (const d of decisions) counts[d]++;
      merged = (["deny", "ask", "allow"] as const).reduce((best, d) => (counts[d] > counts[best] ? d : best));
      break;
    }
  }
  const contributors = votes.filter((v) => v.verdict.decision === merged);
  const first = contributors[0]!.verdict;
  const severity = contributors.map((c) => c.verdict.severity).reduce((a, b) => (SEVERITY_RANK[b] > SEVERITY_RANK[a] ? b : a));
  const verdict: Record<string, unknown> = {
    decision: merged,
    category: first.category,
    severity,
    source: first.source,
  };
  if (first.confidence !== undefined) verdict.confidence = first.confidence;
  if (first.matched_rule_id !== undefined) verdict.matched_rule_id = first.matched_rule_id;
  const artifacts = [...new Set(contributors.flatMap((c) => c.verdict.artifacts ?? []))];
  if (artifacts.length > 0) verdict.artifacts = artifacts;
  verdict.reasons = contributors.flatMap((c) => (c.verdict.reasons ?? []).map((r) => `[${c.hookId}] ${r}`));
  const directives = mergeDirectives(contributors.map((c) => c.verdict));
  if (directives !== undefined) verdict.directives = directives;
  if (merged === "ask") {
    const resolutions = orderResolutions(contributors.flatMap((c) => c.verdict.suggested_resolutions ?? []));
    if (resolutions.length > 0) verdict.suggested_resolutions = resolutions;
  }
  return { verdict: verdict as Verdict, contributors: contributors.map((c) => c.hookId), synthetic: false };
}

/** Maximum length of reason text rendered to hosts (spec §4). */
export const MAX_REASON_LENGTH = 1_000;

/**
 * Reason text for hosts (spec §4 general rules): `reasons` joined with `"; "`, cut at 1 000
 * characters (suffix `…`); defaults when there are no reasons.
 */
export function reasonText(verdict: Verdict, engineId: string, decision: VerdictDecision = verdict.decision): string {
  const reasons = verdict.reasons ?? [];
  let text = reasons.join("; ");
  if (text === "") {
    text = decision === "ask" ? `${engineId} flagged this action (${verdict.category})` : `Blocked by ${engineId} (${verdict.category})`;
  }
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}

/**
 * Compiles a validated policy file into closures: one predicate per rule (cheap conditions
 * first), regexes and globs compiled once, decisions precomputed and checked at load time
 * against the decision schema of every event type the rule can match.
 *
 * The parts live in ./compile/: value and number conditions (conditions.ts), field lists
 * (fields.ts), the per-evaluation context (context.ts), the shell and path matchers (shell.ts,
 * workspace.ts), `match` (match.ts) and decisions (decision.ts). This module compiles rules
 * and whole policies.
 */
import type { EventType } from "@ahp/core";
import type { PolicyIssue } from "./errors.js";
import type { PolicyAction, PolicyFile, PolicyRule, RateLimit } from "./schema.js";
import { Issues, type DocPath, type Predicate } from "./compile/conditions.js";
import { EvalContext, type CompiledSettings } from "./compile/context.js";
import { compileDecision, type DecisionBuilder } from "./compile/decision.js";
import { DEFAULT_MAX_MATCH_LENGTH } from "./compile/fields.js";
import { compileMatch } from "./compile/match.js";
import { compileNeeds, needsOf } from "./compile/needs.js";

export { compileFieldCondition } from "./compile/conditions.js";
export { EvalContext, MAX_SHELL_ANALYSIS_LENGTH, type CompiledSettings, type SessionCounters } from "./compile/context.js";
export { decisionSchemaFor } from "./compile/decision.js";
export {
  DEFAULT_MAX_MATCH_LENGTH,
  DEFAULT_PATH_FIELDS,
  DEFAULT_ROOT_FIELDS,
  DEFAULT_SHELL_FIELDS,
  TOOL_NAME_FIELDS,
} from "./compile/fields.js";
export { compileMatch } from "./compile/match.js";
export { type ShellOpaqueReason } from "./compile/shell.js";
export { resolveWorkspacePath } from "./compile/workspace.js";

export interface CompiledRateLimit {
  scope: "session" | "agent" | "global";
  rate: number;
  intervalMs: number;
  burst: number;
  /** Bucket key: rule id and configuration (a changed configuration starts a fresh bucket). */
  key: string;
}

export interface CompiledRule {
  readonly id: string;
  readonly index: number;
  readonly events: ReadonlySet<EventType>;
  readonly test: Predicate;
  readonly rateLimit?: CompiledRateLimit;
  /** Builds the decision for an event of the given type; `retryAfterMs` is set for rate-limited rules. */
  decide(type: EventType, ctx: EvalContext, retryAfterMs?: number): unknown;
}

/** A policy ready to evaluate. Immutable; engines swap whole instances on reload. */
export interface CompiledPolicyData {
  readonly policy: PolicyFile;
  readonly rules: readonly CompiledRule[];
  readonly byType: ReadonlyMap<EventType, readonly CompiledRule[]>;
  readonly defaultDecision: unknown;
  readonly settings: CompiledSettings & {
    maxSessions?: number;
    maxAgents?: number;
    stateTtlMs?: number;
  };
}

function compileRateLimit(r: RateLimit, ruleId: string): CompiledRateLimit {
  const burst = r.burst ?? r.rate;
  const scope = r.scope ?? "session";
  return { scope, rate: r.rate, intervalMs: r.interval_ms, burst, key: `${ruleId}\u0000${scope}/${r.rate}/${r.interval_ms}/${burst}` };
}

function compileRule(rule: PolicyRule, index: number, issues: Issues, maxLen: number): CompiledRule | undefined {
  const at: DocPath = ["rules", index];
  const events = new Set<EventType>(typeof rule.events === "string" ? [rule.events] : rule.events);
  const matches = rule.match === undefined ? () => true : compileMatch(rule.match, [...at, "match"], issues, maxLen);
  // The facts the match needs are checked first: most rules are skipped there (see ./compile/needs.ts).
  const needs = rule.match === undefined ? undefined : compileNeeds(needsOf(rule.match));
  const test: Predicate = needs === undefined ? matches : (ctx) => needs(ctx) && matches(ctx);
  const rateLimit = rule.rate_limit === undefined ? undefined : compileRateLimit(rule.rate_limit, rule.id);
  const action: PolicyAction | undefined = rule.action ?? (rateLimit !== undefined ? { decision: "defer" } : undefined);
  if (action === undefined) {
    issues.add(at, "missing field `action` (only rules with rate_limit may leave it out; they defer)");
    return undefined;
  }
  const builders = new Map<EventType, DecisionBuilder>();
  for (const type of events) {
    const b = compileDecision(action, type, rule.id, rateLimit !== undefined, rule.action === undefined ? at : [...at, "action"], issues);
    if (b !== undefined) builders.set(type, b);
  }
  return {
    id: rule.id,
    index,
    events,
    test,
    ...(rateLimit === undefined ? {} : { rateLimit }),
    decide(type, ctx, retryAfterMs) {
      return builders.get(type)!(ctx, retryAfterMs);
    },
  };
}

export interface CompileOptions {
  /** Overrides `settings.workspace_root`. */
  workspaceRoot?: string;
  /** Overrides `settings.max_match_length`. */
  maxMatchLength?: number;
}

/** Compiles a validated policy; returns the compiled data or the list of issues (paths only, no positions). */
export function compileValidated(
  policy: PolicyFile,
  options: CompileOptions = {},
): { ok: true; data: CompiledPolicyData } | { ok: false; issues: PolicyIssue[] } {
  const issues = new Issues((p) => {
    if (p[0] !== "rules" || typeof p[1] !== "number") return undefined;
    return policy.rules[p[1]]?.id;
  });
  const maxLen = options.maxMatchLength ?? policy.settings?.max_match_length ?? DEFAULT_MAX_MATCH_LENGTH;
  const seen = new Map<string, number>();
  const rules: CompiledRule[] = [];
  policy.rules.forEach((rule, index) => {
    const previous = seen.get(rule.id);
    if (previous !== undefined) issues.add(["rules", index, "id"], `duplicate rule id \`${rule.id}\` (first used by rules[${previous}])`);
    else seen.set(rule.id, index);
    if (rule.enabled === false) return;
    const compiled = compileRule(rule, index, issues, maxLen);
    if (compiled !== undefined) rules.push(compiled);
  });
  let defaultDecision: unknown = Object.freeze({ decision: "allow" });
  if (policy.default !== undefined) {
    const { merge_patch: mp, redact_secrets: rs } = policy.default;
    if (mp !== undefined || (rs !== undefined && rs !== false)) {
      issues.add(["default"], "the default decision cannot use merge_patch or redact_secrets");
    } else {
      const b = compileDecision(policy.default, "pre_action", undefined, false, ["default"], issues);
      if (b !== undefined) defaultDecision = b(undefined as never);
    }
  }
  if (issues.list.length > 0) return { ok: false, issues: issues.list };
  const byType = new Map<EventType, CompiledRule[]>();
  for (const rule of rules) {
    for (const type of rule.events) {
      const list = byType.get(type) ?? [];
      list.push(rule);
      byType.set(type, list);
    }
  }
  const s = policy.settings;
  return {
    ok: true,
    data: {
      policy,
      rules,
      byType,
      defaultDecision,
      settings: {
        workspaceRoot: options.workspaceRoot ?? s?.workspace_root,
        maxMatchLength: maxLen,
        ...(s?.max_sessions === undefined ? {} : { maxSessions: s.max_sessions }),
        ...(s?.max_agents === undefined ? {} : { maxAgents: s.max_agents }),
        ...(s?.state_ttl_ms === undefined ? {} : { stateTtlMs: s.state_ttl_ms }),
      },
    },
  };
}

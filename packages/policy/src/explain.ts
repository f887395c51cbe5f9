/**
 * `explain`: why a policy decides an event the way it does. Lists every rule in evaluation
 * order with whether it applies to the event type, whether each member of its `match` held,
 * and which rule decided; and shows the analysis the rules saw: the tool name, each shell
 * command line taken apart (programs, flags, arguments, paths read and written, what could not
 * be analysed) and the file paths of the tool call resolved against the workspace root.
 *
 * The decision is the engine's own (a fresh engine with empty state, at the given time): rate
 * limits start with a full bucket and session counters at zero unless the event reports them.
 */
import type { AhpEvent, EventType } from "@ahp/core";
import { EvalContext, compileMatch } from "./compile.js";
import { Issues } from "./compile/conditions.js";
import { compileFieldList, compilePaths, DEFAULT_PATH_FIELDS, DEFAULT_ROOT_FIELDS } from "./compile/fields.js";
import { resolveWorkspacePath } from "./compile/workspace.js";
import { PolicyEngine, type DecisionSource } from "./engine.js";
import type { RuleOrigin } from "./extends.js";
import { loadPolicy, type CompiledPolicy, type LoadPolicyOptions, type PolicySource } from "./load.js";
import { SessionState } from "./state.js";

/** One member of a rule's `match` (`tool`, `shell`, `path`, ...) and whether it held for the event. */
export interface ConditionExplanation {
  member: string;
  held: boolean;
}

/** One rule of the policy, in evaluation order, as it met the event. */
export interface RuleExplanation {
  id: string;
  /** Position in the effective policy's rules. */
  index: number;
  /** For a policy with `extends: default`: built-in, replaced by the file, or added by the file. */
  origin?: RuleOrigin["kind"];
  description?: string;
  /** `false` for a rule turned off with `enabled: false` (never evaluated). */
  enabled: boolean;
  /** The rule lists the event's type. */
  applies: boolean;
  /** Every member of its `match` held (a rule without `match` always matches). Undefined when it does not apply or is off. */
  matched?: boolean;
  /** Each member of `match` and whether it held, in the order written. */
  conditions: ConditionExplanation[];
  /** The rule has a rate limit: it decides only when its bucket is empty. */
  rateLimited: boolean;
  /** This rule decided the event. */
  decided: boolean;
  /** Evaluation stopped at an earlier rule: this one was not reached (its result is shown anyway). */
  afterDecision: boolean;
}

/** What one shell command line was taken apart into. */
export interface ShellLineExplanation {
  text: string;
  /** False when the line was not analysed (too long, or nested too deeply); rules see it as `opaque: too-long`. */
  analysed: boolean;
  commands: Array<{
    program: string;
    argv: string[];
    flags: string[];
    args: string[];
    paths: string[];
    reads: string[];
    writes: string[];
    wrappers: string[];
    consumers: string[];
    depth: number;
    /** Why it cannot be analysed (`dynamic-command`, `dynamic-script`, `inline-code`); empty when it can. */
    opaque: string[];
  }>;
}

/** The facts the rules saw in the event. */
export interface EventAnalysis {
  tool: string | undefined;
  /** Shell command lines found in the payload (fields and normalized tool calls). */
  shell: ShellLineExplanation[];
  /** File paths of the tool call, resolved lexically against the workspace root. */
  files: Array<{ path: string; resolved: string; insideWorkspace: boolean | undefined }>;
  workspaceRoot: string | undefined;
}

/** The whole explanation of one event. */
export interface PolicyExplanation {
  policy: string | undefined;
  eventType: string;
  decision: unknown;
  ruleId: string | undefined;
  source: DecisionSource;
  rules: RuleExplanation[];
  analysis: EventAnalysis;
}

/** Options of {@link explainEvent}: how the policy is loaded, and the time of evaluation. */
export interface ExplainOptions extends LoadPolicyOptions {
  /** Time of the evaluation (ms since the epoch). Default now. */
  now?: number;
}

/** An event to explain: `event_type` and `payload`; the other members of an AHP event get placeholders when left out. */
export interface ExplainEventInput {
  event_type: EventType;
  payload?: unknown;
  session_id?: string;
  agent_id?: string;
  depth?: number;
  timestamp?: string;
  context?: AhpEvent["context"];
  metadata?: AhpEvent["metadata"];
}

const PLACEHOLDERS: Record<string, unknown> = {
  session_id: "explain",
  agent_id: "explain",
  depth: 0,
  timestamp: new Date(0).toISOString(),
};
const complete = (event: ExplainEventInput): AhpEvent => ({ ...PLACEHOLDERS, payload: null, ...event }) as AhpEvent;

/** Explains how `policy` decides `event` (missing `session_id`, `agent_id`, `depth` get placeholders). */
export function explainEvent(policy: PolicySource, event: ExplainEventInput, options: ExplainOptions = {}): PolicyExplanation {
  const compiled: CompiledPolicy = loadPolicy(policy, options);
  const now = options.now ?? Date.now();
  const e = complete(event);
  const engine = new PolicyEngine(compiled, { clock: () => now });
  const result = engine.evaluate(e);
  const settings = compiled.data.settings;
  const session = new SessionState(now);
  const ctx = new EvalContext(e, now, settings, () => session);
  const maxLen = settings.maxMatchLength;
  const issues = new Issues(() => undefined);

  let decidedSeen = false;
  const rules = compiled.policy.rules.map((rule, index): RuleExplanation => {
    const events = typeof rule.events === "string" ? [rule.events] : rule.events;
    const applies = events.includes(e.event_type);
    const enabled = rule.enabled !== false;
    const conditions: ConditionExplanation[] = [];
    let matched: boolean | undefined;
    if (applies && enabled) {
      const match = (rule.match ?? {}) as Record<string, unknown>;
      for (const [member, value] of Object.entries(match)) {
        if (value === undefined) continue;
        const test = compileMatch({ [member]: value }, [], issues, maxLen);
        conditions.push({ member, held: test(ctx) });
      }
      matched = conditions.every((c) => c.held);
    }
    const decided = result.ruleId === rule.id && result.source === "rule";
    const out: RuleExplanation = {
      id: rule.id,
      index,
      enabled,
      applies,
      ...(matched === undefined ? {} : { matched }),
      conditions,
      rateLimited: rule.rate_limit !== undefined,
      decided,
      afterDecision: decidedSeen,
    };
    const origin = compiled.origins?.[index];
    if (origin !== undefined) out.origin = origin.kind;
    if (rule.description !== undefined) out.description = rule.description;
    if (decided) decidedSeen = true;
    return out;
  });

  return {
    policy: compiled.name,
    eventType: e.event_type,
    decision: result.decision,
    ruleId: result.ruleId,
    source: result.source,
    rules,
    analysis: analyse(ctx, settings.workspaceRoot),
  };
}

function analyse(ctx: EvalContext, configuredRoot: string | undefined): EventAnalysis {
  const shell = ctx.shellTexts.map((text): ShellLineExplanation => {
    const commands = ctx.shell(text);
    return {
      text,
      analysed: commands !== undefined,
      commands: (commands ?? []).map((c) => ({
        program: c.program,
        argv: [...c.argv],
        flags: [...c.flags],
        args: [...c.args],
        paths: [...c.paths],
        reads: [...c.reads],
        writes: [...c.writes],
        wrappers: [...c.wrappers],
        consumers: [...c.consumers],
        depth: c.depth,
        opaque: [...c.opaque],
      })),
    };
  });
  const issues = new Issues(() => undefined);
  let root = configuredRoot;
  if (root === undefined) {
    for (const p of compilePaths(DEFAULT_ROOT_FIELDS, [], issues)) {
      const v = p.get(ctx.event);
      if (typeof v === "string" && v.length > 0) {
        root = v;
        break;
      }
    }
  }
  const files = ctx.strings(compileFieldList(DEFAULT_PATH_FIELDS, [], issues)).map((path) => {
    const r = resolveWorkspacePath(path, root);
    return { path, resolved: r.path, insideWorkspace: r.inside };
  });
  return { tool: ctx.toolName, shell, files, workspaceRoot: root };
}

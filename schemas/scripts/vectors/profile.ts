/**
 * The harness profile every harness vector assumes: the reference's default harness (name,
 * capabilities, limits), no query handler, and a fixed decision table. `ahp serve` gets it from
 * `schemas/vectors/harness/ahp-serve.yaml` and its policy file; another harness configures itself
 * from `schemas/vectors/harness/profile.json` (written from this module).
 */
import { DEFAULT_HARNESS_CAPABILITIES, DEFAULT_HARNESS_CONFIG } from "../../../packages/core/src/index.js";

export const PROFILE_NAME = "ahp-vectors/1";
export const HARNESS_NAME = "ahp-server";
export const CAPABILITIES = [...DEFAULT_HARNESS_CAPABILITIES];
export const CONFIG = { ...DEFAULT_HARNESS_CONFIG };
export const MAX_DEPTH = CONFIG.max_depth;
export const BATCH_SIZE = CONFIG.batch_size;

/** The event types answered with a generic Decision (also every element of a batch). */
export const GENERIC_DECISION_TYPES = [
  "pre_action",
  "pre_prompt",
  "handshake",
  "query",
  "post_action",
  "post_response",
  "session_start",
  "session_end",
  "error",
  "heartbeat",
  "success",
  "run_lifecycle",
  "task_list",
  "verification",
] as const;

export interface TableRow {
  /** What selects the row: `payload.<path> == value`. */
  when: { field: string; equals: unknown };
  /** Event types the row applies to. */
  events: readonly string[];
  /** The decision written (exact, with the rule id the profile's policy adds). */
  decision: Record<string, unknown>;
  /** How `decision` depends on the event, when it does. */
  computed?: string;
  /** A counter or other state the row keeps. */
  state?: string;
}

const generic = GENERIC_DECISION_TYPES;
const tool = (name: string) => ({ field: "tool_name", equals: name });

/** Generic events, keyed by `payload.tool_name`; no row = `{"decision":"allow"}`. */
export const GENERIC_TABLE: Readonly<Record<string, TableRow>> = {
  once_tool: {
    when: tool("once_tool"),
    events: ["pre_action"],
    decision: { decision: "defer", retry_after_ms: "<integer>", reason: "only once per session [rule: once-tool]" },
    state:
      'the first pre_action of a session with this tool gets {"decision":"allow"} (as if no row matched); every later one gets the decision, with retry_after_ms any integer',
  },
  blocked_tool: {
    when: tool("blocked_tool"),
    events: generic,
    decision: { decision: "block", reason: "blocked by the vector profile", metadata: { rule: "block-tool" } },
  },
  modify_tool: {
    when: tool("modify_tool"),
    events: generic,
    decision: { decision: "modify", modified_payload: "<payload with arguments.dry_run = true>", metadata: { rule: "modify-tool" } },
    computed: 'modified_payload is the payload after the JSON merge patch {"arguments":{"dry_run":true}} (RFC 7396)',
  },
  echo_tool: {
    when: tool("echo_tool"),
    events: generic,
    decision: { decision: "allow", modified_payload: "<the payload>", metadata: { rule: "echo-tool" } },
    computed: "modified_payload is the event's payload, unchanged",
  },
  defer_tool: {
    when: tool("defer_tool"),
    events: generic,
    decision: { decision: "defer", retry_after_ms: 1500, reason: "try again later [rule: defer-tool]" },
  },
  escalate_tool: {
    when: tool("escalate_tool"),
    events: generic,
    decision: { decision: "escalate", reason: "needs a human [rule: escalate-tool]", escalation_target: "oncall" },
  },
};

/** Specialized points, keyed by a payload member; no row = the §7.9 default. */
export const TYPED_TABLE: Readonly<Record<string, TableRow>> = {
  "idle-nightly": {
    when: { field: "idle_reason", equals: "nightly" },
    events: ["idle"],
    decision: { decision: "defer", reason: "not tonight [rule: idle-nightly]" },
  },
  "intent-review": {
    when: { field: "prompt", equals: "review src/server.ts" },
    events: ["intent_detection"],
    decision: {
      decision: "allow",
      detected_intent: "code_review",
      confidence: 0.82,
      target_hints: { target_type: "file", target_name: "src/server.ts" },
    },
  },
  "intent-local": {
    when: { field: "prompt", equals: "classify locally" },
    events: ["intent_detection"],
    decision: { decision: "block", reason: "use local detection [rule: intent-local]" },
  },
  "perception-explore": {
    when: { field: "intent", equals: "explore" },
    events: ["context_perception"],
    decision: {
      decision: "allow",
      injected_context: {
        facts: [{ content: "the workspace uses pnpm", source: "lockfile", confidence: 0.9 }],
        file_contents: [{ path: "src/index.ts", snippet: "export * from './server.js';", relevance_score: 0.7 }],
      },
      metadata: { rule: "perception-explore" },
    },
  },
  "perception-locate": {
    when: { field: "intent", equals: "locate" },
    events: ["context_perception"],
    decision: { decision: "block", reason: "nothing to locate here", metadata: { rule: "perception-locate" } },
  },
  "perception-compare": {
    when: { field: "intent", equals: "compare" },
    events: ["context_perception"],
    decision: { decision: "refine", scope_hints: ["src/"] },
  },
  "memory-build-flags": {
    when: { field: "query", equals: "build flags" },
    events: ["memory_recall"],
    decision: {
      decision: "allow",
      injected_facts: [{ content: "build with --frozen-lockfile", source: "ci.yml", confidence: 1 }],
      metadata: { rule: "memory-build-flags" },
    },
  },
  "planning-parser": {
    when: { field: "task_description", equals: "refactor the parser" },
    events: ["planning"],
    decision: { decision: "allow", selected_strategy: { custom: "mine" }, metadata: { rule: "planning-parser" } },
  },
  "planning-rewrite": {
    when: { field: "task_description", equals: "rewrite everything" },
    events: ["planning"],
    decision: { decision: "modify", modified_task: "refactor the parser only", hints: ["keep the public API"] },
  },
  "reasoning-re-act": {
    when: { field: "reasoning_type", equals: "re_act" },
    events: ["reasoning"],
    decision: { decision: "allow", hints: ["read the error message first"], metadata: { rule: "reasoning-re-act" } },
  },
  "rate-tokens": {
    when: { field: "limit_type", equals: "llm_token_limit" },
    events: ["rate_limit"],
    decision: { decision: "retry", retry_after_ms: 2000, metadata: { rule: "rate-tokens" } },
  },
  "rate-api": {
    when: { field: "limit_type", equals: "api_request_limit" },
    events: ["rate_limit"],
    decision: { decision: "queue" },
  },
  "rate-gpu": {
    when: { field: "limit_type.custom", equals: "gpu" },
    events: ["rate_limit"],
    decision: { decision: "skip", reason: "no GPU today [rule: rate-gpu]" },
  },
  "confirm-safety": {
    when: { field: "confirmation_type", equals: "safety_confirm" },
    events: ["confirmation"],
    decision: { decision: "escalate" },
  },
  "confirm-user": {
    when: { field: "confirmation_type", equals: "user_confirm" },
    events: ["confirmation"],
    decision: { decision: "approve" },
  },
  "confirm-cost": {
    when: { field: "confirmation_type", equals: "cost_confirm" },
    events: ["confirmation"],
    decision: { decision: "reject", reason: "over budget [rule: confirm-cost]" },
  },
};

/** A generic decision of the table, by tool name. */
export function genericDecision(toolName: keyof typeof GENERIC_TABLE): Record<string, unknown> {
  return GENERIC_TABLE[toolName]!.decision;
}

/** A typed decision of the table, by row id. */
export function typedDecision(row: keyof typeof TYPED_TABLE): Record<string, unknown> {
  return TYPED_TABLE[row]!.decision;
}

/** `schemas/vectors/harness/profile.json`. */
export function profileDocument(): Record<string, unknown> {
  return {
    profile: PROFILE_NAME,
    description:
      "The harness every vector in harness/ assumes. Configure your harness like this, start it on stdio, and run the vectors (README.md).",
    handshake: {
      protocol_version: "2.4",
      harness_info: { name: HARNESS_NAME, version: "<any string: your harness's version>", capabilities: CAPABILITIES },
      config: CONFIG,
      session_token: "<not set>",
    },
    limits: { max_depth: MAX_DEPTH, batch_size: BATCH_SIZE, timeout_ms: CONFIG.timeout_ms },
    query_handler: "none: every ahp/query that decodes is answered -32603 Handler error: Capability not supported: Query not supported",
    notifications: "accepted and never answered",
    handshake_gating: "off (events, queries and batches are answered without a prior handshake)",
    generic_decisions: {
      applies_to: GENERIC_DECISION_TYPES,
      key: "payload.tool_name (exact string comparison; a payload that is not an object, or has no tool_name, matches no row)",
      default: { decision: "allow" },
      rows: GENERIC_TABLE,
    },
    typed_decisions: {
      default:
        'the specification\'s §7.9 default: idle → {"decision":"allow"}; the others → -32603 Handler error: Capability not supported: <Point> not supported',
      rows: TYPED_TABLE,
    },
  };
}

/** Specialized harness points: typed payloads and typed decisions (spec §7). */
import { z } from "zod";
import { FactSchema } from "./context.js";
import { dflt, enumWithCustom, f32, i64, JsonMapSchema, opt, uint } from "./common.js";

// ---------------------------------------------------------------- idle (§7.1)

/** Validates the payload of an `idle` event (spec §7.1): how long and why the agent is idle. */
export const IdleEventSchema = z.object({
  idle_duration_ms: uint(),
  idle_reason: z.string(),
  last_event_type: opt(z.string()),
  suggested_action: opt(z.string()),
});
/**
 * The payload of an `idle` event (spec §7.1): how long and why the agent has been inactive; the harness decides whether background
 * work may start.
 */
export type IdleEvent = z.infer<typeof IdleEventSchema>;

/**
 * Validates the IdleDecision (spec §7.1): `{"decision":"allow"}`, or `defer` with an optional `reason` (unlike the generic `defer`,
 * no `retry_after_ms`).
 */
export const IdleDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("allow") }),
  z.object({ decision: z.literal("defer"), reason: opt(z.string()) }),
]);
/** The answer to an `idle` event (spec §7.1): `allow` background work, or `defer` it. */
export type IdleDecision = z.infer<typeof IdleDecisionSchema>;
/** What an `idle` handler may return: the input form of {@link IdleDecisionSchema}. */
export type IdleDecisionInput = z.input<typeof IdleDecisionSchema>;

// ---------------------------------------------------------------- intent_detection (§7.2)

/** Validates the `intent_detection` payload (spec §7.2): `session_id`, `prompt` and `workspace` required; `language_hint` optional. */
export const IntentDetectionEventSchema = z.object({
  session_id: z.string(),
  prompt: z.string(),
  workspace: z.string(),
  language_hint: opt(z.string()),
});
/** The payload of an `intent_detection` event (spec §7.2): a prompt to classify, with its workspace and an optional language hint. */
export type IntentDetectionEvent = z.infer<typeof IntentDetectionEventSchema>;

/** Validates TargetHints (spec §7.2): `target_type`, `target_name` and `domain`, all optional strings. */
export const TargetHintsSchema = z.object({
  target_type: opt(z.string()),
  target_name: opt(z.string()),
  domain: opt(z.string()),
});
/** What a prompt seems to be about, returned in an `intent_detection` `allow` (spec §7.2). */
export type TargetHints = z.infer<typeof TargetHintsSchema>;

/**
 * Validates the IntentDetectionDecision (spec §7.2): `allow` needs `detected_intent` and `confidence` (optional `target_hints`);
 * `block` needs a `reason`.
 */
export const IntentDetectionDecisionSchema = z.discriminatedUnion("decision", [
  z.object({
    decision: z.literal("allow"),
    detected_intent: z.string(),
    confidence: f32(),
    target_hints: opt(TargetHintsSchema),
  }),
  z.object({ decision: z.literal("block"), reason: z.string() }),
]);
/**
 * The answer to an `intent_detection` event (spec §7.2): `allow` with the detected intent, or `block` (the agent falls back to its
 * own detection).
 */
export type IntentDetectionDecision = z.infer<typeof IntentDetectionDecisionSchema>;
/** What an `intent_detection` handler may return: the input form of {@link IntentDetectionDecisionSchema}. */
export type IntentDetectionDecisionInput = z.input<typeof IntentDetectionDecisionSchema>;

// ---------------------------------------------------------------- context_perception (§7.3)

/** Validates a PerceptionIntent: one of the nine plain strings of spec §7.3. */
export const PerceptionIntentSchema = z.enum([
  "recognize",
  "understand",
  "locate",
  "retrieve",
  "explore",
  "reason",
  "validate",
  "compare",
  "track",
]);
/** Validates a PerceptionDomain: one of the nine plain strings of spec §7.3. */
export const PerceptionDomainSchema = z.enum([
  "coding",
  "writing",
  "data_analysis",
  "research",
  "project_management",
  "conversation",
  "operations",
  "security",
  "general",
]);
/** Validates a PerceptionModality: one of the nine plain strings of spec §7.3. */
export const PerceptionModalitySchema = z.enum(["text", "code", "structured_data", "table", "chart", "image", "audio", "video", "any"]);
/** Validates a PerceptionUrgency: `critical`, `high`, `normal` or `low` (spec §7.3). */
export const PerceptionUrgencySchema = z.enum(["critical", "high", "normal", "low"]);
/** Validates a PerceptionFreshness: `realtime`, `recent` or `static` (spec §7.3). */
export const PerceptionFreshnessSchema = z.enum(["realtime", "recent", "static"]);
/** What the model wants to do with the context it asks for (spec §7.3), e.g. `locate`, `understand` or `compare`. */
export type PerceptionIntent = z.infer<typeof PerceptionIntentSchema>;
/** The subject area of a `context_perception` request (spec §7.3), e.g. `coding` or `research`; `general` when absent. */
export type PerceptionDomain = z.infer<typeof PerceptionDomainSchema>;
/** The form the requested context should take (spec §7.3), e.g. `code` or `table`; `any` when absent. */
export type PerceptionModality = z.infer<typeof PerceptionModalitySchema>;
/** How urgently the context is needed (spec §7.3); `normal` when absent. */
export type PerceptionUrgency = z.infer<typeof PerceptionUrgencySchema>;
/** How current the context must be (spec §7.3): `realtime`, `recent`, or `static` (used when absent). */
export type PerceptionFreshness = z.infer<typeof PerceptionFreshnessSchema>;

/** Validates a TimeRange (spec §7.3): `from` and `to` (i64) and `relative`, all optional. */
export const TimeRangeSchema = z.object({
  from: opt(i64()),
  to: opt(i64()),
  relative: opt(z.string()),
});
/** A time span for an `event` perception target (spec §7.3); the protocol does not fix the unit of `from` and `to`. */
export type TimeRange = z.infer<typeof TimeRangeSchema>;

/** Exactly one member, named after the target kind (two members or a bare string are rejected). */
export const PerceptionTargetSchema = z.union([
  z.strictObject({
    entity: z.object({ name: z.string(), entity_type: z.string(), identifier: opt(z.string()) }),
  }),
  z.strictObject({ location: z.object({ path: z.string(), location_type: z.string() }) }),
  z.strictObject({
    event: z.object({ description: z.string(), event_type: z.string(), time_range: opt(TimeRangeSchema) }),
  }),
  z.strictObject({ relation: z.object({ entities: z.array(z.string()), relation_type: z.string() }) }),
  z.strictObject({ rule: z.object({ name: z.string(), rule_type: z.string(), scope: opt(z.string()) }) }),
  z.strictObject({ state: z.object({ target: z.string(), aspect: z.string(), include_history: z.boolean() }) }),
  z.strictObject({
    resource: z.object({ name: z.string(), resource_type: z.string(), constraints: z.unknown().optional() }),
  }),
  z.strictObject({ pattern: z.object({ pattern: z.string(), pattern_type: z.string() }) }),
]);
/**
 * What a `context_perception` request is about (spec §7.3): an object with exactly one member naming the kind (`entity`, `location`,
 * `event`, `relation`, `rule`, `state`, `resource` or `pattern`).
 */
export type PerceptionTarget = z.infer<typeof PerceptionTargetSchema>;

/** Validates a HistoryItem (spec §7.3): `item_type`, `content` and `timestamp` (i64), all required. */
export const HistoryItemSchema = z.object({
  item_type: z.string(),
  content: z.string(),
  timestamp: i64(),
});
/** One earlier item passed as history in a PerceptionContext (spec §7.3). */
export type HistoryItem = z.infer<typeof HistoryItemSchema>;

/** Validates a PerceptionContext (spec §7.3): `workspace` required; `current_task`, `query` and `relevant_history` optional. */
export const PerceptionContextSchema = z.object({
  workspace: z.string(),
  current_task: opt(z.string()),
  query: opt(z.string()),
  relevant_history: opt(z.array(HistoryItemSchema)),
});
/** Where a `context_perception` request comes from (spec §7.3): the workspace, current task, query and recent history. */
export type PerceptionContext = z.infer<typeof PerceptionContextSchema>;

/**
 * Validates PerceptionConstraints (spec §7.3): `max_results` and `max_context_length` optional; an absent `include_sources` becomes
 * `true`.
 */
export const PerceptionConstraintsSchema = z.object({
  max_results: opt(uint()),
  max_context_length: opt(uint()),
  include_sources: dflt(z.boolean(), true),
});
/** Limits on what a `context_perception` answer should contain (spec §7.3): result count, context length, whether to include sources. */
export type PerceptionConstraints = z.infer<typeof PerceptionConstraintsSchema>;

/**
 * Validates the `context_perception` payload (spec §7.3). Absent `domain`, `preferred_modality`, `urgency`, `freshness` and
 * `constraints` take the spec defaults; an explicit `null` for them is rejected.
 */
export const ContextPerceptionEventSchema = z.object({
  session_id: z.string(),
  intent: PerceptionIntentSchema,
  target: PerceptionTargetSchema,
  domain: dflt(PerceptionDomainSchema, "general"),
  preferred_modality: dflt(PerceptionModalitySchema, "any"),
  urgency: dflt(PerceptionUrgencySchema, "normal"),
  freshness: dflt(PerceptionFreshnessSchema, "static"),
  context: PerceptionContextSchema,
  constraints: dflt(PerceptionConstraintsSchema, { max_results: null, max_context_length: null, include_sources: true }),
  metadata: opt(JsonMapSchema),
});
/**
 * The payload of a `context_perception` event (spec §7.3), defaults applied: the model needs workspace knowledge about a target and
 * the harness may inject it.
 */
export type ContextPerceptionEvent = z.infer<typeof ContextPerceptionEventSchema>;

/** Validates a FileContentSnippet (spec §7.3): `path`, `snippet` and `relevance_score` (f32), all required. */
export const FileContentSnippetSchema = z.object({
  path: z.string(),
  snippet: z.string(),
  relevance_score: f32(),
});
/** Validates a ProjectSummary (spec §7.3): `project_name` and `structure_description` required; `language` and `key_files` optional. */
export const ProjectSummarySchema = z.object({
  project_name: z.string(),
  language: opt(z.string()),
  key_files: opt(z.array(z.string())),
  structure_description: z.string(),
});
/**
 * Validates InjectedContext (spec §7.3): `facts` required (may be empty); `file_contents`, `project_summary`, `knowledge` and
 * `suggestions` optional.
 */
export const InjectedContextSchema = z.object({
  facts: z.array(FactSchema),
  file_contents: opt(z.array(FileContentSnippetSchema)),
  project_summary: opt(ProjectSummarySchema),
  knowledge: opt(z.array(z.string())),
  suggestions: opt(z.array(z.string())),
});
/** An excerpt of a file and its relevance score, injected by a `context_perception` `allow` (spec §7.3). */
export type FileContentSnippet = z.infer<typeof FileContentSnippetSchema>;
/** A short description of the project, injected by a `context_perception` `allow` (spec §7.3). */
export type ProjectSummary = z.infer<typeof ProjectSummarySchema>;
/**
 * What a harness injects in answer to `context_perception` (spec §7.3): facts, file snippets, a project summary, knowledge and
 * suggestions.
 */
export type InjectedContext = z.infer<typeof InjectedContextSchema>;

/**
 * Validates the ContextPerceptionDecision (spec §7.3): `allow` needs `injected_context`, `block` a `reason`, and `refine` a
 * `scope_hints` array (possibly empty).
 */
export const ContextPerceptionDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("allow"), injected_context: InjectedContextSchema, metadata: opt(JsonMapSchema) }),
  z.object({ decision: z.literal("block"), reason: z.string(), metadata: opt(JsonMapSchema) }),
  z.object({
    decision: z.literal("refine"),
    refined_intent: opt(PerceptionIntentSchema),
    refined_target: opt(PerceptionTargetSchema),
    scope_hints: z.array(z.string()),
  }),
]);
/**
 * The answer to a `context_perception` event (spec §7.3): `allow` with injected context, `block` with a reason, or `refine` the
 * intent or target.
 */
export type ContextPerceptionDecision = z.infer<typeof ContextPerceptionDecisionSchema>;
/** What a `context_perception` handler may return: the input form of {@link ContextPerceptionDecisionSchema}. */
export type ContextPerceptionDecisionInput = z.input<typeof ContextPerceptionDecisionSchema>;

// ---------------------------------------------------------------- memory_recall (§7.4)

/**
 * Validates the `memory_recall` payload (spec §7.4): `session_id`, `query`, `memory_type`, `max_results` and `working_directory`,
 * all required.
 */
export const MemoryRecallEventSchema = z.object({
  session_id: z.string(),
  query: z.string(),
  memory_type: z.string(),
  max_results: uint(),
  working_directory: z.string(),
});
/** The payload of a `memory_recall` event (spec §7.4): the agent asks for stored memories matching a query. */
export type MemoryRecallEvent = z.infer<typeof MemoryRecallEventSchema>;

/**
 * Validates the MemoryRecallDecision (spec §7.4): `allow` needs `injected_facts`, `block` needs a `reason`; both take optional
 * `metadata`.
 */
export const MemoryRecallDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("allow"), injected_facts: z.array(FactSchema), metadata: opt(JsonMapSchema) }),
  z.object({ decision: z.literal("block"), reason: z.string(), metadata: opt(JsonMapSchema) }),
]);
/** The answer to a `memory_recall` event (spec §7.4): `allow` with facts to inject, or `block` with a reason. */
export type MemoryRecallDecision = z.infer<typeof MemoryRecallDecisionSchema>;
/** What a `memory_recall` handler may return: the input form of {@link MemoryRecallDecisionSchema}. */
export type MemoryRecallDecisionInput = z.input<typeof MemoryRecallDecisionSchema>;

// ---------------------------------------------------------------- planning (§7.5)

/** Validates a PlanningStrategy (spec §7.5); a custom strategy is written `{"custom":"name"}`, a bare `"custom"` is rejected. */
export const PlanningStrategySchema = enumWithCustom(["none", "step_by_step", "tree_of_thoughts", "graph_planning"] as const, "custom");
/** A planning strategy (spec §7.5): `none`, `step_by_step`, `tree_of_thoughts`, `graph_planning`, or `{custom: name}`. */
export type PlanningStrategy = z.infer<typeof PlanningStrategySchema>;

/**
 * Validates the `planning` payload (spec §7.5): `session_id`, `task_description` and `available_strategies` required; `constraints`
 * free-form and optional.
 */
export const PlanningEventSchema = z.object({
  session_id: z.string(),
  task_description: z.string(),
  available_strategies: z.array(PlanningStrategySchema),
  constraints: z.unknown().optional(),
});
/** The payload of a `planning` event (spec §7.5): a task to plan and the strategies the agent can use. */
export type PlanningEvent = z.infer<typeof PlanningEventSchema>;

/**
 * Validates the PlanningDecision (spec §7.5): `allow` needs `selected_strategy`, `block` needs `reason`, `modify` needs
 * `modified_task` (optional `hints`).
 */
export const PlanningDecisionSchema = z.discriminatedUnion("decision", [
  z.object({
    decision: z.literal("allow"),
    selected_strategy: PlanningStrategySchema,
    planning_template: z.unknown().optional(),
    metadata: opt(JsonMapSchema),
  }),
  z.object({ decision: z.literal("block"), reason: z.string(), metadata: opt(JsonMapSchema) }),
  z.object({ decision: z.literal("modify"), modified_task: z.string(), hints: opt(z.array(z.string())) }),
]);
/** The answer to a `planning` event (spec §7.5): `allow` with a selected strategy, `block` with a reason, or `modify` the task. */
export type PlanningDecision = z.infer<typeof PlanningDecisionSchema>;
/** What a `planning` handler may return: the input form of {@link PlanningDecisionSchema}. */
export type PlanningDecisionInput = z.input<typeof PlanningDecisionSchema>;

// ---------------------------------------------------------------- reasoning (§7.6)

/** Note `re_act` (with the underscore); `react` is rejected. */
export const ReasoningTypeSchema = enumWithCustom(["chain_of_thought", "tree_of_thoughts", "re_act", "reflexion"] as const, "other");
/** A reasoning method (spec §7.6): `chain_of_thought`, `tree_of_thoughts`, `re_act`, `reflexion`, or `{other: name}`. */
export type ReasoningType = z.infer<typeof ReasoningTypeSchema>;

/** Validates the `reasoning` payload (spec §7.6): `session_id`, `reasoning_type` and `problem_statement` required; `hints` optional. */
export const ReasoningEventSchema = z.object({
  session_id: z.string(),
  reasoning_type: ReasoningTypeSchema,
  problem_statement: z.string(),
  hints: opt(z.array(z.string())),
});
/** The payload of a `reasoning` event (spec §7.6): a problem the agent is about to reason about, and the method it means to use. */
export type ReasoningEvent = z.infer<typeof ReasoningEventSchema>;

/** Validates the ReasoningDecision (spec §7.6): `allow` with optional `hints` and `metadata`, or `block` with a required `reason`. */
export const ReasoningDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("allow"), hints: opt(z.array(z.string())), metadata: opt(JsonMapSchema) }),
  z.object({ decision: z.literal("block"), reason: z.string(), metadata: opt(JsonMapSchema) }),
]);
/** The answer to a `reasoning` event (spec §7.6): `allow` with optional hints, or `block` with a reason. */
export type ReasoningDecision = z.infer<typeof ReasoningDecisionSchema>;
/** What a `reasoning` handler may return: the input form of {@link ReasoningDecisionSchema}. */
export type ReasoningDecisionInput = z.input<typeof ReasoningDecisionSchema>;

// ---------------------------------------------------------------- rate_limit (§7.7)

/** Validates a RateLimitType (spec §7.7); a custom kind is written `{"custom":"name"}`. */
export const RateLimitTypeSchema = enumWithCustom(
  ["llm_token_limit", "llm_request_limit", "api_request_limit", "tool_execution_limit"] as const,
  "custom",
);
/**
 * The kind of limit hit (spec §7.7): `llm_token_limit`, `llm_request_limit`, `api_request_limit`, `tool_execution_limit`, or
 * `{custom: name}`.
 */
export type RateLimitType = z.infer<typeof RateLimitTypeSchema>;

/** Validates the `rate_limit` payload (spec §7.7): `session_id`, `limit_type`, `retry_after_ms` and `current_usage`, all required. */
export const RateLimitEventSchema = z.object({
  session_id: z.string(),
  limit_type: RateLimitTypeSchema,
  retry_after_ms: uint(),
  current_usage: z.string(),
});
/** The payload of a `rate_limit` event (spec §7.7): the agent hit a limit and asks how to go on. */
export type RateLimitEvent = z.infer<typeof RateLimitEventSchema>;

/** Validates the RateLimitDecision (spec §7.7): `retry` needs `retry_after_ms`, `queue` has no fields, `skip` needs a `reason`. */
export const RateLimitDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("retry"), retry_after_ms: uint(), metadata: opt(JsonMapSchema) }),
  z.object({ decision: z.literal("queue") }),
  z.object({ decision: z.literal("skip"), reason: z.string() }),
]);
/** The answer to a `rate_limit` event (spec §7.7): `retry` after a delay, `queue` the work, or `skip` it. */
export type RateLimitDecision = z.infer<typeof RateLimitDecisionSchema>;
/** What a `rate_limit` handler may return: the input form of {@link RateLimitDecisionSchema}. */
export type RateLimitDecisionInput = z.input<typeof RateLimitDecisionSchema>;

// ---------------------------------------------------------------- confirmation (§7.8)

/** Validates a ConfirmationType (spec §7.8); a custom kind is written `{"custom":"name"}`. */
export const ConfirmationTypeSchema = enumWithCustom(["safety_confirm", "user_confirm", "cost_confirm"] as const, "custom");
/** The kind of confirmation asked for (spec §7.8): `safety_confirm`, `user_confirm`, `cost_confirm`, or `{custom: name}`. */
export type ConfirmationType = z.infer<typeof ConfirmationTypeSchema>;

/** Validates the `confirmation` payload (spec §7.8): `session_id`, `confirmation_type` and `message` required; `options` optional. */
export const ConfirmationEventSchema = z.object({
  session_id: z.string(),
  confirmation_type: ConfirmationTypeSchema,
  message: z.string(),
  options: opt(z.array(z.string())),
});
/** The payload of a `confirmation` event (spec §7.8): the agent asks whether to go ahead, with a message and optional choices. */
export type ConfirmationEvent = z.infer<typeof ConfirmationEventSchema>;

/** Validates the ConfirmationDecision (spec §7.8): `escalate` or `approve` (no fields), or `reject` with a required `reason`. */
export const ConfirmationDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("escalate") }),
  z.object({ decision: z.literal("approve") }),
  z.object({ decision: z.literal("reject"), reason: z.string() }),
]);
/** The answer to a `confirmation` event (spec §7.8): `escalate` to a human, `approve`, or `reject` with a reason. */
export type ConfirmationDecision = z.infer<typeof ConfirmationDecisionSchema>;
/** What a `confirmation` handler may return: the input form of {@link ConfirmationDecisionSchema}. */
export type ConfirmationDecisionInput = z.input<typeof ConfirmationDecisionSchema>;

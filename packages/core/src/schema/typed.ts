/** Specialized harness points: typed payloads and typed decisions (spec §7). */
import { z } from "zod";
import { FactSchema } from "./context.js";
import { dflt, enumWithCustom, f32, i64, JsonMapSchema, opt, uint } from "./common.js";

// ---------------------------------------------------------------- idle (§7.1)

export const IdleEventSchema = z.object({
  idle_duration_ms: uint(),
  idle_reason: z.string(),
  last_event_type: opt(z.string()),
  suggested_action: opt(z.string()),
});
export type IdleEvent = z.infer<typeof IdleEventSchema>;

export const IdleDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("allow") }),
  z.object({ decision: z.literal("defer"), reason: opt(z.string()) }),
]);
export type IdleDecision = z.infer<typeof IdleDecisionSchema>;
export type IdleDecisionInput = z.input<typeof IdleDecisionSchema>;

// ---------------------------------------------------------------- intent_detection (§7.2)

export const IntentDetectionEventSchema = z.object({
  session_id: z.string(),
  prompt: z.string(),
  workspace: z.string(),
  language_hint: opt(z.string()),
});
export type IntentDetectionEvent = z.infer<typeof IntentDetectionEventSchema>;

export const TargetHintsSchema = z.object({
  target_type: opt(z.string()),
  target_name: opt(z.string()),
  domain: opt(z.string()),
});
export type TargetHints = z.infer<typeof TargetHintsSchema>;

export const IntentDetectionDecisionSchema = z.discriminatedUnion("decision", [
  z.object({
    decision: z.literal("allow"),
    detected_intent: z.string(),
    confidence: f32(),
    target_hints: opt(TargetHintsSchema),
  }),
  z.object({ decision: z.literal("block"), reason: z.string() }),
]);
export type IntentDetectionDecision = z.infer<typeof IntentDetectionDecisionSchema>;
export type IntentDetectionDecisionInput = z.input<typeof IntentDetectionDecisionSchema>;

// ---------------------------------------------------------------- context_perception (§7.3)

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
export const PerceptionModalitySchema = z.enum(["text", "code", "structured_data", "table", "chart", "image", "audio", "video", "any"]);
export const PerceptionUrgencySchema = z.enum(["critical", "high", "normal", "low"]);
export const PerceptionFreshnessSchema = z.enum(["realtime", "recent", "static"]);
export type PerceptionIntent = z.infer<typeof PerceptionIntentSchema>;
export type PerceptionDomain = z.infer<typeof PerceptionDomainSchema>;
export type PerceptionModality = z.infer<typeof PerceptionModalitySchema>;
export type PerceptionUrgency = z.infer<typeof PerceptionUrgencySchema>;
export type PerceptionFreshness = z.infer<typeof PerceptionFreshnessSchema>;

export const TimeRangeSchema = z.object({
  from: opt(i64()),
  to: opt(i64()),
  relative: opt(z.string()),
});
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
export type PerceptionTarget = z.infer<typeof PerceptionTargetSchema>;

export const HistoryItemSchema = z.object({
  item_type: z.string(),
  content: z.string(),
  timestamp: i64(),
});
export type HistoryItem = z.infer<typeof HistoryItemSchema>;

export const PerceptionContextSchema = z.object({
  workspace: z.string(),
  current_task: opt(z.string()),
  query: opt(z.string()),
  relevant_history: opt(z.array(HistoryItemSchema)),
});
export type PerceptionContext = z.infer<typeof PerceptionContextSchema>;

export const PerceptionConstraintsSchema = z.object({
  max_results: opt(uint()),
  max_context_length: opt(uint()),
  include_sources: dflt(z.boolean(), true),
});
export type PerceptionConstraints = z.infer<typeof PerceptionConstraintsSchema>;

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
export type ContextPerceptionEvent = z.infer<typeof ContextPerceptionEventSchema>;

export const FileContentSnippetSchema = z.object({
  path: z.string(),
  snippet: z.string(),
  relevance_score: f32(),
});
export const ProjectSummarySchema = z.object({
  project_name: z.string(),
  language: opt(z.string()),
  key_files: opt(z.array(z.string())),
  structure_description: z.string(),
});
export const InjectedContextSchema = z.object({
  facts: z.array(FactSchema),
  file_contents: opt(z.array(FileContentSnippetSchema)),
  project_summary: opt(ProjectSummarySchema),
  knowledge: opt(z.array(z.string())),
  suggestions: opt(z.array(z.string())),
});
export type FileContentSnippet = z.infer<typeof FileContentSnippetSchema>;
export type ProjectSummary = z.infer<typeof ProjectSummarySchema>;
export type InjectedContext = z.infer<typeof InjectedContextSchema>;

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
export type ContextPerceptionDecision = z.infer<typeof ContextPerceptionDecisionSchema>;
export type ContextPerceptionDecisionInput = z.input<typeof ContextPerceptionDecisionSchema>;

// ---------------------------------------------------------------- memory_recall (§7.4)

export const MemoryRecallEventSchema = z.object({
  session_id: z.string(),
  query: z.string(),
  memory_type: z.string(),
  max_results: uint(),
  working_directory: z.string(),
});
export type MemoryRecallEvent = z.infer<typeof MemoryRecallEventSchema>;

export const MemoryRecallDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("allow"), injected_facts: z.array(FactSchema), metadata: opt(JsonMapSchema) }),
  z.object({ decision: z.literal("block"), reason: z.string(), metadata: opt(JsonMapSchema) }),
]);
export type MemoryRecallDecision = z.infer<typeof MemoryRecallDecisionSchema>;
export type MemoryRecallDecisionInput = z.input<typeof MemoryRecallDecisionSchema>;

// ---------------------------------------------------------------- planning (§7.5)

export const PlanningStrategySchema = enumWithCustom(["none", "step_by_step", "tree_of_thoughts", "graph_planning"] as const, "custom");
export type PlanningStrategy = z.infer<typeof PlanningStrategySchema>;

export const PlanningEventSchema = z.object({
  session_id: z.string(),
  task_description: z.string(),
  available_strategies: z.array(PlanningStrategySchema),
  constraints: z.unknown().optional(),
});
export type PlanningEvent = z.infer<typeof PlanningEventSchema>;

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
export type PlanningDecision = z.infer<typeof PlanningDecisionSchema>;
export type PlanningDecisionInput = z.input<typeof PlanningDecisionSchema>;

// ---------------------------------------------------------------- reasoning (§7.6)

/** Note `re_act` (with the underscore); `react` is rejected. */
export const ReasoningTypeSchema = enumWithCustom(["chain_of_thought", "tree_of_thoughts", "re_act", "reflexion"] as const, "other");
export type ReasoningType = z.infer<typeof ReasoningTypeSchema>;

export const ReasoningEventSchema = z.object({
  session_id: z.string(),
  reasoning_type: ReasoningTypeSchema,
  problem_statement: z.string(),
  hints: opt(z.array(z.string())),
});
export type ReasoningEvent = z.infer<typeof ReasoningEventSchema>;

export const ReasoningDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("allow"), hints: opt(z.array(z.string())), metadata: opt(JsonMapSchema) }),
  z.object({ decision: z.literal("block"), reason: z.string(), metadata: opt(JsonMapSchema) }),
]);
export type ReasoningDecision = z.infer<typeof ReasoningDecisionSchema>;
export type ReasoningDecisionInput = z.input<typeof ReasoningDecisionSchema>;

// ---------------------------------------------------------------- rate_limit (§7.7)

export const RateLimitTypeSchema = enumWithCustom(
  ["llm_token_limit", "llm_request_limit", "api_request_limit", "tool_execution_limit"] as const,
  "custom",
);
export type RateLimitType = z.infer<typeof RateLimitTypeSchema>;

export const RateLimitEventSchema = z.object({
  session_id: z.string(),
  limit_type: RateLimitTypeSchema,
  retry_after_ms: uint(),
  current_usage: z.string(),
});
export type RateLimitEvent = z.infer<typeof RateLimitEventSchema>;

export const RateLimitDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("retry"), retry_after_ms: uint(), metadata: opt(JsonMapSchema) }),
  z.object({ decision: z.literal("queue") }),
  z.object({ decision: z.literal("skip"), reason: z.string() }),
]);
export type RateLimitDecision = z.infer<typeof RateLimitDecisionSchema>;
export type RateLimitDecisionInput = z.input<typeof RateLimitDecisionSchema>;

// ---------------------------------------------------------------- confirmation (§7.8)

export const ConfirmationTypeSchema = enumWithCustom(["safety_confirm", "user_confirm", "cost_confirm"] as const, "custom");
export type ConfirmationType = z.infer<typeof ConfirmationTypeSchema>;

export const ConfirmationEventSchema = z.object({
  session_id: z.string(),
  confirmation_type: ConfirmationTypeSchema,
  message: z.string(),
  options: opt(z.array(z.string())),
});
export type ConfirmationEvent = z.infer<typeof ConfirmationEventSchema>;

export const ConfirmationDecisionSchema = z.discriminatedUnion("decision", [
  z.object({ decision: z.literal("escalate") }),
  z.object({ decision: z.literal("approve") }),
  z.object({ decision: z.literal("reject"), reason: z.string() }),
]);
export type ConfirmationDecision = z.infer<typeof ConfirmationDecisionSchema>;
export type ConfirmationDecisionInput = z.input<typeof ConfirmationDecisionSchema>;

/**
 * Zod schemas of the AARTS 0.1 data model (adapter spec §1): envelope, the five standard
 * extensions, the 20 hook events, Artifact, Verdict, directives and the version check.
 *
 * Conventions:
 * - Objects are loose: unknown members are accepted and preserved (spec §1.9, forward compatibility).
 * - MUST fields are required; SHOULD/MAY fields are optional but type-checked when present.
 * - Closed enumerations are `z.enum`; open ones are plain strings.
 * - No transforms and no refinements: every rule is expressible in JSON Schema, so zod, ajv
 *   and other JSON Schema validators agree (tested over `schemas/examples/aarts`).
 *
 * The runtime hot path (hook command, bridge) does not import this module; it uses the
 * dependency-free validator in `../validate/` that enforces the same rules.
 */
import { z } from "zod";
import {
  ARTIFACT_TYPES,
  CANONICAL_TOOL_NAMES,
  CONFIG_SOURCES,
  HOOK_POINTS,
  HOST_ID_PATTERN,
  INJECT_POSITIONS,
  LOAD_CONTEXTS,
  LOCALE_PATTERN,
  MCP_TRANSPORTS,
  RESOLUTIONS,
  RFC3339_PATTERN,
  SEVERITIES,
  TRUST_SOURCES,
  VERDICT_DECISIONS,
} from "../catalog.js";

// ------------------------------------------------------------------ building blocks

export const JsonObjectSchema = z.record(z.string(), z.unknown());
const stringOrObject = () => z.union([z.string(), JsonObjectSchema]);
const stringOrArray = () => z.union([z.string(), z.array(z.unknown())]);

export const HookPointSchema = z.enum(HOOK_POINTS);
export const HostIdSchema = z.string().regex(new RegExp(HOST_ID_PATTERN));
export const Rfc3339Schema = z.string().regex(new RegExp(RFC3339_PATTERN));
export const LocaleSchema = z.string().regex(new RegExp(LOCALE_PATTERN));
export const CanonicalToolNameSchema = z.enum(CANONICAL_TOOL_NAMES);
const NON_OTHER_TOOL_NAMES = CANONICAL_TOOL_NAMES.filter((n) => n !== "other") as [string, ...string[]];
export const TrustSourceKindSchema = z.enum(TRUST_SOURCES);
export const ConfigSourceSchema = z.enum(CONFIG_SOURCES);
export const ArtifactTypeSchema = z.enum(ARTIFACT_TYPES);
export const ResolutionSchema = z.enum(RESOLUTIONS);
export const SeveritySchema = z.enum(SEVERITIES);
export const VerdictDecisionSchema = z.enum(VERDICT_DECISIONS);

// ------------------------------------------------------------------ artifact, verdict, directives

export const ArtifactSchema = z.looseObject({
  type: ArtifactTypeSchema,
  value: z.string(),
  context: z.string().optional(),
  source_field: z.string().optional(),
});

export const ModifierEntrySchema = z.looseObject({
  modifier_id: z.string(),
  config_source: ConfigSourceSchema,
  modified: z.boolean(),
});

export const InjectContextDirectiveSchema = z.looseObject({
  position: z.enum(INJECT_POSITIONS),
  content: z.string(),
});

/** `x-ahp` directive (spec §5.5): the original AHP decision and its request id. */
export const XAhpDirectiveSchema = z.looseObject({
  request_id: z.union([z.string(), z.int()]),
  event_type: z.string(),
  decision: z.looseObject({ decision: z.string() }),
});

export const DirectivesSchema = z.looseObject({
  inject_context: InjectContextDirectiveSchema.optional(),
  /** Canonical tool names; non-canonical entries make the directive (not the verdict) invalid (spec §1.8). */
  permitted_tools: z.array(z.string()).optional(),
  strip_hooks: z.boolean().optional(),
  "x-ahp": XAhpDirectiveSchema.optional(),
});

export const VerdictSchema = z.looseObject({
  decision: VerdictDecisionSchema,
  category: z.string(),
  severity: SeveritySchema,
  confidence: z.number().min(0).max(1).optional(),
  source: z.string(),
  artifacts: z.array(z.string()).optional(),
  matched_rule_id: z.string().optional(),
  reasons: z.array(z.string()).optional(),
  directives: DirectivesSchema.optional(),
  suggested_resolutions: z.array(z.string()).optional(),
});

// ------------------------------------------------------------------ version check

export const VersionCheckRequestSchema = z.looseObject({ aarts_version: z.string() });
export const VersionCheckResponseSchema = z.looseObject({
  compatible: z.boolean(),
  engine_id: z.string(),
  engine_version: z.string().optional(),
});

// ------------------------------------------------------------------ envelope and extensions

const envelope = {
  session_id: z.string(),
  timestamp: Rfc3339Schema,
  host_id: HostIdSchema,
  host_version: z.string().optional(),
  aarts_version: z.string().min(1),
  locale: LocaleSchema.optional(),
};
export const EnvelopeSchema = z.looseObject({ hook_point: HookPointSchema, ...envelope });

const turn = { turn_id: z.string() };
const trustSource = { source: TrustSourceKindSchema, source_id: z.string().optional() };
const modification = {
  original_value: stringOrObject(),
  modified_value: stringOrObject(),
  was_modified: z.boolean(),
  modifier_chain: z.array(ModifierEntrySchema),
};
const provenance = {
  source_prompt_modified: z.boolean().optional(),
  active_skill: z.string().optional(),
  is_sub_agent: z.boolean().optional(),
  parent_session_id: z.string().optional(),
  input_modifier_chain: z.array(ModifierEntrySchema).optional(),
};
const toolBase = { tool_input: JsonObjectSchema, artifacts: z.array(ArtifactSchema) };

export const TurnExtensionSchema = z.looseObject(turn);
export const ToolContextExtensionSchema = z.union([
  z.looseObject({ tool_name: z.enum(NON_OTHER_TOOL_NAMES), tool_name_native: z.string().optional(), ...toolBase }),
  z.looseObject({ tool_name: z.literal("other"), tool_name_native: z.string(), ...toolBase }),
]);
export const TrustSourceExtensionSchema = z.looseObject(trustSource);
export const ModificationExtensionSchema = z.looseObject(modification);
export const ProvenanceExtensionSchema = z.looseObject(provenance);

// ------------------------------------------------------------------ item shapes [PROJECT]

export const PluginInfoSchema = z.looseObject({
  name: z.string(),
  version: z.string().optional(),
  source: TrustSourceKindSchema.optional(),
  file_hashes: z.array(z.string()).optional(),
});
export const ConfigurationSourceSchema = z.looseObject({
  path: z.string(),
  origin: z.enum(["user", "project", "managed"]),
});
export const EnvironmentInfoSchema = z.looseObject({
  os: z.string().optional(),
  shell: z.string().optional(),
  working_directory: z.string().optional(),
});
export const SessionSummarySchema = z.looseObject({
  tool_calls: z.number(),
  verdicts: z.looseObject({ allow: z.number(), deny: z.number(), ask: z.number() }),
  denied_actions: z.array(z.string()),
});
export const DeclaredHookSchema = z.looseObject({
  event: z.string(),
  matcher: z.string().optional(),
  command: z.string().optional(),
  type: z.string().optional(),
});
export const CustomInstructionSchema = z.looseObject({
  source: z.enum(["user", "project", "managed"]),
  path: z.string().optional(),
  content: z.string(),
});
export const ContextInjectionSchema = z.looseObject({ source: z.string(), content: z.string() });
export const PlannedActionSchema = z.looseObject({
  tool_name: CanonicalToolNameSchema,
  tool_name_native: z.string(),
  tool_input: JsonObjectSchema,
});

// ------------------------------------------------------------------ the 20 hook events

const hook = <H extends (typeof HOOK_POINTS)[number], S extends z.ZodRawShape>(name: H, shape: S) =>
  z.looseObject({ hook_point: z.literal(name), ...envelope, ...shape });

/** A tool event: the Tool extension's `tool_name`/`tool_name_native` rule makes it a two-variant union. */
const toolHook = <H extends "PreToolUse" | "PostToolUse", S extends z.ZodRawShape>(name: H, shape: S) =>
  z.union([
    z.looseObject({
      hook_point: z.literal(name),
      ...envelope,
      ...shape,
      tool_name: z.enum(NON_OTHER_TOOL_NAMES),
      tool_name_native: z.string().optional(),
      ...toolBase,
    }),
    z.looseObject({
      hook_point: z.literal(name),
      ...envelope,
      ...shape,
      tool_name: z.literal("other"),
      tool_name_native: z.string(),
      ...toolBase,
    }),
  ]);

export const SessionStartEventSchema = hook("SessionStart", {
  plugins: z.array(PluginInfoSchema).optional(),
  configuration_sources: z.array(ConfigurationSourceSchema).optional(),
  environment: EnvironmentInfoSchema.optional(),
});
export const SessionEndEventSchema = hook("SessionEnd", { summary: SessionSummarySchema.optional() });
export const PrePluginLoadEventSchema = hook("PrePluginLoad", {
  ...trustSource,
  plugin_id: z.string(),
  file_paths: z.array(z.string()),
  file_hashes: z.array(z.string()).optional(),
  declared_hooks: z.array(DeclaredHookSchema),
  declared_permissions: z.array(z.unknown()).optional(),
});
export const PreSkillLoadEventSchema = hook("PreSkillLoad", {
  ...trustSource,
  file_path: z.string(),
  file_hash: z.string().optional(),
  frontmatter: JsonObjectSchema,
  declared_hooks: z.array(DeclaredHookSchema),
  body_content: z.string().optional(),
  load_context: z.enum(LOAD_CONTEXTS),
});
export const PreMCPConnectEventSchema = hook("PreMCPConnect", {
  ...trustSource,
  server_id: z.string(),
  transport: z.enum(MCP_TRANSPORTS),
  server_uri: z.string().optional(),
  server_command: z.string().optional(),
  declared_tools: z.array(z.unknown()).optional(),
  declared_resources: z.array(z.unknown()).optional(),
});
export const PreUserInputEventSchema = hook("PreUserInput", {
  ...turn,
  raw_input: z.string(),
  input_source: z.string().optional(),
  attached_files: z.array(z.unknown()).optional(),
});
export const PostInputProcessingEventSchema = hook("PostInputProcessing", { ...turn, ...modification });
export const PreLLMRequestEventSchema = hook("PreLLMRequest", {
  ...turn,
  full_prompt: stringOrArray(),
  system_prompt: z.string().optional(),
  custom_instructions: z.array(CustomInstructionSchema).optional(),
  context_injections: z.array(ContextInjectionSchema).optional(),
  user_input: z.string().optional(),
  model_id: z.string().optional(),
  token_count: z.number().optional(),
});
export const PostLLMResponseEventSchema = hook("PostLLMResponse", {
  ...turn,
  response_text: z.string(),
  planned_actions: z.array(PlannedActionSchema).optional(),
  stop_reason: z.string().optional(),
});
export const PreToolUseEventSchema = toolHook("PreToolUse", { ...turn, ...provenance });
export const PostToolUseEventSchema = toolHook("PostToolUse", {
  ...turn,
  tool_result: stringOrObject(),
  exit_code: z.number().optional(),
  execution_duration_ms: z.number().optional(),
  side_effects: z.array(z.unknown()).optional(),
});
export const PreToolInputModificationEventSchema = hook("PreToolInputModification", {
  ...trustSource,
  ...modification,
  tool_name: CanonicalToolNameSchema,
});
export const PreSubAgentSpawnEventSchema = hook("PreSubAgentSpawn", {
  sub_agent_id: z.string(),
  sub_agent_type: z.string().optional(),
  delegated_task: z.string(),
  skill_files: z.array(z.string()).optional(),
  declared_hooks: z.array(DeclaredHookSchema).optional(),
  requested_tools: z.array(z.string()).optional(),
  parent_permissions: JsonObjectSchema.optional(),
});
export const PostSubAgentResultEventSchema = hook("PostSubAgentResult", {
  sub_agent_id: z.string(),
  result: stringOrObject(),
  tool_calls_made: z.array(z.unknown()).optional(),
  verdicts_issued: z.array(z.unknown()).optional(),
});
export const PreOutputDeliverEventSchema = hook("PreOutputDeliver", {
  ...turn,
  output_text: z.string(),
  actions_taken: z.array(z.unknown()).optional(),
});
export const PreMemoryWriteEventSchema = hook("PreMemoryWrite", {
  memory_store: z.string(),
  content: stringOrObject(),
  memory_type: z.string().optional(),
  write_source: z.string().optional(),
});
export const PreMemoryReadEventSchema = hook("PreMemoryRead", {
  memory_store: z.string(),
  query: z.string().optional(),
  retrieved_content: stringOrObject(),
});
export const PreCompactEventSchema = hook("PreCompact", {
  ...turn,
  context_before: stringOrArray(),
  token_count_before: z.number().optional(),
  compaction_reason: z.string().optional(),
  compaction_strategy: z.string().optional(),
});
export const PostCompactEventSchema = hook("PostCompact", {
  ...turn,
  ...modification,
  token_count_after: z.number().optional(),
  compaction_strategy_used: z.string().optional(),
});
export const PostAskResolutionEventSchema = hook("PostAskResolution", {
  ...turn,
  original_hook_point: HookPointSchema,
  original_verdict: VerdictSchema,
  resolution: ResolutionSchema,
});

/** Schema of each hook's event, keyed by hook point. */
export const HOOK_EVENT_SCHEMAS = {
  SessionStart: SessionStartEventSchema,
  SessionEnd: SessionEndEventSchema,
  PrePluginLoad: PrePluginLoadEventSchema,
  PreSkillLoad: PreSkillLoadEventSchema,
  PreMCPConnect: PreMCPConnectEventSchema,
  PreUserInput: PreUserInputEventSchema,
  PostInputProcessing: PostInputProcessingEventSchema,
  PreLLMRequest: PreLLMRequestEventSchema,
  PostLLMResponse: PostLLMResponseEventSchema,
  PreToolUse: PreToolUseEventSchema,
  PostToolUse: PostToolUseEventSchema,
  PreToolInputModification: PreToolInputModificationEventSchema,
  PreSubAgentSpawn: PreSubAgentSpawnEventSchema,
  PostSubAgentResult: PostSubAgentResultEventSchema,
  PreOutputDeliver: PreOutputDeliverEventSchema,
  PreMemoryWrite: PreMemoryWriteEventSchema,
  PreMemoryRead: PreMemoryReadEventSchema,
  PreCompact: PreCompactEventSchema,
  PostCompact: PostCompactEventSchema,
  PostAskResolution: PostAskResolutionEventSchema,
} as const;

/** Any AARTS 0.1 hook event. */
export const AartsEventSchema = z.union([
  SessionStartEventSchema,
  SessionEndEventSchema,
  PrePluginLoadEventSchema,
  PreSkillLoadEventSchema,
  PreMCPConnectEventSchema,
  PreUserInputEventSchema,
  PostInputProcessingEventSchema,
  PreLLMRequestEventSchema,
  PostLLMResponseEventSchema,
  PreToolUseEventSchema,
  PostToolUseEventSchema,
  PreToolInputModificationEventSchema,
  PreSubAgentSpawnEventSchema,
  PostSubAgentResultEventSchema,
  PreOutputDeliverEventSchema,
  PreMemoryWriteEventSchema,
  PreMemoryReadEventSchema,
  PreCompactEventSchema,
  PostCompactEventSchema,
  PostAskResolutionEventSchema,
]);

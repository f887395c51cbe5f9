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

/** Any JSON object (string keys, any values): tool inputs, outputs and other free-form AARTS fields. */
export const JsonObjectSchema = z.record(z.string(), z.unknown());
const stringOrObject = () => z.union([z.string(), JsonObjectSchema]);
const stringOrArray = () => z.union([z.string(), z.array(z.unknown())]);

/** Schema of a hook point name: one of the 20 of spec §1.4 (closed enumeration). */
export const HookPointSchema = z.enum(HOOK_POINTS);
/** Schema of `host_id` (spec §1.2): lowercase kebab-case, `^[a-z0-9]+(-[a-z0-9]+)*$`. */
export const HostIdSchema = z.string().regex(new RegExp(HOST_ID_PATTERN));
/** Schema of an RFC 3339 date-time such as `2026-03-10T12:34:56.789Z` (spec §1.9; `timestamp`). */
export const Rfc3339Schema = z.string().regex(new RegExp(RFC3339_PATTERN));
/** Schema of a BCP 47 language tag such as `en` or `pt-BR` (spec §1.9; `locale`). */
export const LocaleSchema = z.string().regex(new RegExp(LOCALE_PATTERN));
/** Schema of a canonical tool name (spec §3.1, closed enumeration). */
export const CanonicalToolNameSchema = z.enum(CANONICAL_TOOL_NAMES);
const NON_OTHER_TOOL_NAMES = CANONICAL_TOOL_NAMES.filter((n) => n !== "other") as [string, ...string[]];
/** Schema of a Trust Source `source` (spec §1.3): `managed`, `project`, `user` or `marketplace`. */
export const TrustSourceKindSchema = z.enum(TRUST_SOURCES);
/** Schema of a ModifierEntry `config_source` (spec §1.3): `managed`, `project`, `user` or `plugin`. */
export const ConfigSourceSchema = z.enum(CONFIG_SOURCES);
/** Schema of an Artifact `type` (spec §1.6, closed enumeration). */
export const ArtifactTypeSchema = z.enum(ARTIFACT_TYPES);
/** Schema of a PostAskResolution `resolution` (spec §1.5 hook 20, closed enumeration). */
export const ResolutionSchema = z.enum(RESOLUTIONS);
/** Schema of a verdict `severity` (spec §1.7): `info`, `warning` or `critical`. */
export const SeveritySchema = z.enum(SEVERITIES);
/** Schema of a verdict `decision` (spec §1.7): `allow`, `deny` or `ask`. */
export const VerdictDecisionSchema = z.enum(VERDICT_DECISIONS);

// ------------------------------------------------------------------ artifact, verdict, directives

/** Schema of an {@link Artifact} (spec §1.6). */
export const ArtifactSchema = z.looseObject({
  /** One of {@link ARTIFACT_TYPES}. */
  type: ArtifactTypeSchema,
  /** The raw value, verbatim as the agent or tool expressed it; `content` values are cut at 65 536 UTF-16 code units. */
  value: z.string(),
  /**
   * How the value was found or used (open: `base64_encoded`, `piped_to_shell`; a registry id such as `npm` or `pypi:exec` for packages).
   */
  context: z.string().optional(),
  /** Dotted path of the event field it came from, e.g. `tool_input.command`. */
  source_field: z.string().optional(),
});

/** Schema of a {@link ModifierEntry} (spec §1.3). */
export const ModifierEntrySchema = z.looseObject({
  /** Id of the hook or processor. */
  modifier_id: z.string(),
  /** Where it was configured. */
  config_source: ConfigSourceSchema,
  /** Whether this modifier changed the content. */
  modified: z.boolean(),
});

/** Schema of the `inject_context` directive (spec §1.8). */
export const InjectContextDirectiveSchema = z.looseObject({
  /** `prepend` or `append` to the conversation context, or `system` for a separate system-level message. */
  position: z.enum(INJECT_POSITIONS),
  /** Text to add before later LLM requests. */
  content: z.string(),
});

/** `x-ahp` directive (spec §5.5): the original AHP decision and its request id. */
export const XAhpDirectiveSchema = z.looseObject({
  /** JSON-RPC id of the AHP request the decision answered. */
  request_id: z.union([z.string(), z.int()]),
  /** AHP event type the hook was sent as (e.g. `pre_action`). */
  event_type: z.string(),
  /** The AHP decision result as received. */
  decision: z.looseObject({ decision: z.string() }),
});

/** Schema of a verdict's `directives` object (spec §1.8); unknown directives are kept. */
export const DirectivesSchema = z.looseObject({
  /** PostCompact on `allow`: content the host must add to the compacted context. */
  inject_context: InjectContextDirectiveSchema.optional(),
  /** Canonical tool names; non-canonical entries make the directive (not the verdict) invalid (spec §1.8). */
  permitted_tools: z.array(z.string()).optional(),
  /** PreSkillLoad: `true` asks the host to keep the skill's text and discard the hooks it declares. */
  strip_hooks: z.boolean().optional(),
  /** Set by the bridge: the original AHP decision; hosts that do not understand it ignore it. */
  "x-ahp": XAhpDirectiveSchema.optional(),
});

/** Schema of a {@link Verdict} (spec §1.7); `confidence` must lie in [0, 1]. */
export const VerdictSchema = z.looseObject({
  /** `allow` proceeds, `deny` blocks (and must surface `reasons`), `ask` prompts the user. */
  decision: VerdictDecisionSchema,
  /** Threat category (open: `tool_execution`, `network_egress`, `supply_chain`, `prompt_injection`, …). */
  category: z.string(),
  /** `info`, `warning` or `critical`. */
  severity: SeveritySchema,
  /** Engine confidence, 0.0–1.0. */
  confidence: z.number().min(0).max(1).optional(),
  /** Evaluation method (open: `heuristic`, `reputation_check`, `pattern_match`, …). */
  source: z.string(),
  /** Key artifact values behind the verdict. */
  artifacts: z.array(z.string()).optional(),
  /** Id of the matched detection rule. */
  matched_rule_id: z.string().optional(),
  /** User-displayable explanations. */
  reasons: z.array(z.string()).optional(),
  /** Hook-specific directives (spec §1.8). */
  directives: DirectivesSchema.optional(),
  /** Only for `ask`: extra choices beyond approve/deny (`allow_always`, `allow_similar`, `deny_always`, `deny_similar`). */
  suggested_resolutions: z.array(z.string()).optional(),
});

// ------------------------------------------------------------------ version check

/** Schema of the version check request (spec §1.1). */
export const VersionCheckRequestSchema = z.looseObject({
  /** AARTS major version the host implements (e.g. `"0"`, `"1"`); compared by its text before the first `.`. */
  aarts_version: z.string(),
});
/** Schema of the version check response (spec §1.1). */
export const VersionCheckResponseSchema = z.looseObject({
  /** Whether the engine supports that version. */
  compatible: z.boolean(),
  /** Engine identifier. */
  engine_id: z.string(),
  /** Engine software version. */
  engine_version: z.string().optional(),
});

// ------------------------------------------------------------------ envelope and extensions

const envelope = {
  /** Unique id of the agent session. */
  session_id: z.string(),
  /** When the host generated the event (RFC 3339; ours are UTC with milliseconds). */
  timestamp: Rfc3339Schema,
  /** Host platform id, lowercase kebab-case, stable across host versions (e.g. `claude-code`). */
  host_id: HostIdSchema,
  /** Host platform version. */
  host_version: z.string().optional(),
  /** AARTS version of the event, e.g. `"0.1"` (recorded verbatim). */
  aarts_version: z.string().min(1),
  /** User's preferred language (BCP 47); engines should answer human-readable text in it. */
  locale: LocaleSchema.optional(),
};
/** Schema of the event envelope alone (spec §1.2); a hook's own schema adds its extensions and fields. */
export const EnvelopeSchema = z.looseObject({ hook_point: HookPointSchema, ...envelope });

const turn = {
  /** Id of the conversation turn within the session. */
  turn_id: z.string(),
};
const trustSource = {
  /** Origin class of the component: `managed`, `project`, `user` or `marketplace`. */
  source: TrustSourceKindSchema,
  /** The specific origin: plugin name, file path, server URI or hook id. */
  source_id: z.string().optional(),
};
const modification = {
  /** Content before modification. */
  original_value: stringOrObject(),
  /** Content after modification. */
  modified_value: stringOrObject(),
  /** Whether anything changed. */
  was_modified: z.boolean(),
  /** Hooks and processors that handled the content, in order. */
  modifier_chain: z.array(ModifierEntrySchema),
};
const provenance = {
  /** Whether hooks altered the user's input before the agent saw it. */
  source_prompt_modified: z.boolean().optional(),
  /** Skill or agent definition active in the context. */
  active_skill: z.string().optional(),
  /** Whether the event comes from a sub-agent. */
  is_sub_agent: z.boolean().optional(),
  /** Parent session id, when a sub-agent. */
  parent_session_id: z.string().optional(),
  /** Hooks that modified this turn's user input. */
  input_modifier_chain: z.array(ModifierEntrySchema).optional(),
};
const toolBase = {
  /** The complete input the agent gave the tool, verbatim. */
  tool_input: JsonObjectSchema,
  /** Security-relevant values extracted from the input (spec §1.6, §3.5); may be empty. */
  artifacts: z.array(ArtifactSchema),
};

/** Schema of the Turn extension (spec §1.3). */
export const TurnExtensionSchema = z.looseObject(turn);
/** Schema of the Tool Context extension (spec §1.3): two variants, because `tool_name_native` is required when `tool_name` is `other`. */
export const ToolContextExtensionSchema = z.union([
  z.looseObject({
    /** Canonical tool name (spec §3.1). */
    tool_name: z.enum(NON_OTHER_TOOL_NAMES),
    /** The host's own tool name (our adapters always set it). */
    tool_name_native: z.string().optional(),
    ...toolBase,
  }),
  z.looseObject({
    /** `other`: no canonical category fits. */
    tool_name: z.literal("other"),
    /** The host's own tool name, required with `other`. */
    tool_name_native: z.string(),
    ...toolBase,
  }),
]);
/** Schema of the Trust Source extension (spec §1.3). */
export const TrustSourceExtensionSchema = z.looseObject(trustSource);
/** Schema of the Modification Tracking extension (spec §1.3). */
export const ModificationExtensionSchema = z.looseObject(modification);
/** Schema of the Provenance extension (spec §1.3); every field is optional here, Standard level requires some (spec §1.3 [PROJECT]). */
export const ProvenanceExtensionSchema = z.looseObject(provenance);

// ------------------------------------------------------------------ item shapes [PROJECT]

/** Schema of a SessionStart `plugins` item (spec §1.5 hook 1): an installed plugin or extension. */
export const PluginInfoSchema = z.looseObject({
  /** Plugin name. */
  name: z.string(),
  /** Plugin version. */
  version: z.string().optional(),
  /** Where it was installed from. */
  source: TrustSourceKindSchema.optional(),
  /** SHA-256 of its files. */
  file_hashes: z.array(z.string()).optional(),
});
/** Schema of a SessionStart `configuration_sources` item (spec §1.5 hook 1): a loaded configuration file and its origin. */
export const ConfigurationSourceSchema = z.looseObject({
  /** Path of the configuration file. */
  path: z.string(),
  /** Its scope: `user`, `project` or `managed`. */
  origin: z.enum(["user", "project", "managed"]),
});
/** Schema of SessionStart `environment` (spec §1.5 hook 1): runtime facts, secrets redacted. */
export const EnvironmentInfoSchema = z.looseObject({
  /** Operating system. */
  os: z.string().optional(),
  /** Shell in use. */
  shell: z.string().optional(),
  /** Current directory. */
  working_directory: z.string().optional(),
});
/** Schema of SessionEnd `summary` (spec §1.5 hook 2). */
export const SessionSummarySchema = z.looseObject({
  /** Number of tool calls in the session. */
  tool_calls: z.number(),
  /** Verdicts issued, counted by decision. */
  verdicts: z.looseObject({ allow: z.number(), deny: z.number(), ask: z.number() }),
  /** Short descriptions of the denied actions. */
  denied_actions: z.array(z.string()),
});
/** Schema of a `declared_hooks` item (PrePluginLoad, PreSkillLoad, PreSubAgentSpawn; spec §1.5): a hook a component registers. */
export const DeclaredHookSchema = z.looseObject({
  /** Hook event the component registers (host naming, e.g. `PreToolUse`). */
  event: z.string(),
  /** Tool matcher, when the host has one. */
  matcher: z.string().optional(),
  /** Handler command or script. */
  command: z.string().optional(),
  /** Handler type (e.g. `command`). */
  type: z.string().optional(),
});
/** Schema of a PreLLMRequest `custom_instructions` item (spec §1.5 hook 8). */
export const CustomInstructionSchema = z.looseObject({
  /** Scope of the instruction: `user`, `project` or `managed`. */
  source: z.enum(["user", "project", "managed"]),
  /** File it was read from. */
  path: z.string().optional(),
  /** The instruction text. */
  content: z.string(),
});
/** Schema of a PreLLMRequest `context_injections` item (spec §1.5 hook 8): injected content and who injected it. */
export const ContextInjectionSchema = z.looseObject({
  /** Who injected it (a hook, tool or context provider). */
  source: z.string(),
  /** The injected content. */
  content: z.string(),
});
/** Schema of a PostLLMResponse `planned_actions` item (spec §1.5 hook 9): a tool call the model requested. */
export const PlannedActionSchema = z.looseObject({
  /** Canonical tool name. */
  tool_name: CanonicalToolNameSchema,
  /** The host's own tool name. */
  tool_name_native: z.string(),
  /** Input the model gave the tool. */
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
      /** Canonical tool name (spec §3.1). */
      tool_name: z.enum(NON_OTHER_TOOL_NAMES),
      /** The host's own tool name (our adapters always set it). */
      tool_name_native: z.string().optional(),
      ...toolBase,
    }),
    z.looseObject({
      hook_point: z.literal(name),
      ...envelope,
      ...shape,
      /** `other`: no canonical category fits. */
      tool_name: z.literal("other"),
      /** The host's own tool name, required with `other`. */
      tool_name_native: z.string(),
      ...toolBase,
    }),
  ]);

/** Schema of the {@link SessionStartEvent} (hook 1). */
export const SessionStartEventSchema = hook("SessionStart", {
  /** Every installed plugin or extension. */
  plugins: z.array(PluginInfoSchema).optional(),
  /** Configuration files loaded and their origin. */
  configuration_sources: z.array(ConfigurationSourceSchema).optional(),
  /** Runtime facts (secrets redacted). */
  environment: EnvironmentInfoSchema.optional(),
});
/** Schema of the {@link SessionEndEvent} (hook 2). */
export const SessionEndEventSchema = hook("SessionEnd", {
  /** Tool-call count, verdicts issued and denied actions of the session. */
  summary: SessionSummarySchema.optional(),
});
/** Schema of the {@link PrePluginLoadEvent} (hook 3). */
export const PrePluginLoadEventSchema = hook("PrePluginLoad", {
  ...trustSource,
  /** Plugin identifier (name, version). */
  plugin_id: z.string(),
  /** Files making up the plugin. */
  file_paths: z.array(z.string()),
  /** SHA-256 of those files. */
  file_hashes: z.array(z.string()).optional(),
  /** Hooks the plugin registers, with their handlers. */
  declared_hooks: z.array(DeclaredHookSchema),
  /** Permissions it requests (tool access, network, filesystem scopes). */
  declared_permissions: z.array(z.unknown()).optional(),
});
/** Schema of the {@link PreSkillLoadEvent} (hook 4). */
export const PreSkillLoadEventSchema = hook("PreSkillLoad", {
  ...trustSource,
  /** Path of the skill or agent file. */
  file_path: z.string(),
  /** SHA-256 of the file. */
  file_hash: z.string().optional(),
  /** Parsed structured metadata (e.g. YAML frontmatter). */
  frontmatter: JsonObjectSchema,
  /** Hooks defined in that metadata. */
  declared_hooks: z.array(DeclaredHookSchema),
  /** Instruction or knowledge body. */
  body_content: z.string().optional(),
  /** Who triggered the load: `main_session`, `sub_agent` or `skill_invocation`. */
  load_context: z.enum(LOAD_CONTEXTS),
});
/** Schema of the {@link PreMCPConnectEvent} (hook 5). */
export const PreMCPConnectEventSchema = hook("PreMCPConnect", {
  ...trustSource,
  /** Server name or URI. */
  server_id: z.string(),
  /** `stdio`, `sse` or `streamable_http`. */
  transport: z.enum(MCP_TRANSPORTS),
  /** Network address (remote servers). */
  server_uri: z.string().optional(),
  /** Launch command (stdio servers). */
  server_command: z.string().optional(),
  /** Tools the server advertises. */
  declared_tools: z.array(z.unknown()).optional(),
  /** Resources the server advertises. */
  declared_resources: z.array(z.unknown()).optional(),
});
/** Schema of the {@link PreUserInputEvent} (hook 6). */
export const PreUserInputEventSchema = hook("PreUserInput", {
  ...turn,
  /** The unmodified user text. */
  raw_input: z.string(),
  /** Where it came from (open: `keyboard`, `file`, `api`, `automated`). */
  input_source: z.string().optional(),
  /** Files or images attached to the input. */
  attached_files: z.array(z.unknown()).optional(),
});
/** Schema of the {@link PostInputProcessingEvent} (hook 7). */
export const PostInputProcessingEventSchema = hook("PostInputProcessing", { ...turn, ...modification });
/** Schema of the {@link PreLLMRequestEvent} (hook 8). */
export const PreLLMRequestEventSchema = hook("PreLLMRequest", {
  ...turn,
  /** The complete assembled prompt (all messages). */
  full_prompt: stringOrArray(),
  /** The system prompt alone. */
  system_prompt: z.string().optional(),
  /** Custom instructions from every source, with provenance. */
  custom_instructions: z.array(CustomInstructionSchema).optional(),
  /** Content injected by hooks, tools or context providers. */
  context_injections: z.array(ContextInjectionSchema).optional(),
  /** The user input as it appears in the prompt. */
  user_input: z.string().optional(),
  /** Target model. */
  model_id: z.string().optional(),
  /** Estimated prompt tokens. */
  token_count: z.number().optional(),
});
/** Schema of the {@link PostLLMResponseEvent} (hook 9). */
export const PostLLMResponseEventSchema = hook("PostLLMResponse", {
  ...turn,
  /** Full response text. */
  response_text: z.string(),
  /** Tool calls the model requested. */
  planned_actions: z.array(PlannedActionSchema).optional(),
  /** Why generation stopped (open: `end_turn`, `tool_use`, `max_tokens`). */
  stop_reason: z.string().optional(),
});
/** Schema of the {@link PreToolUseEvent} (hook 10). */
export const PreToolUseEventSchema = toolHook("PreToolUse", { ...turn, ...provenance });
/** Schema of the {@link PostToolUseEvent} (hook 11). */
export const PostToolUseEventSchema = toolHook("PostToolUse", {
  ...turn,
  /** The tool's output. */
  tool_result: stringOrObject(),
  /** Process exit code, for command execution. */
  exit_code: z.number().optional(),
  /** Execution time in milliseconds. */
  execution_duration_ms: z.number().optional(),
  /** Observed side effects (files modified, connections, processes). */
  side_effects: z.array(z.unknown()).optional(),
});
/** Schema of the {@link PreToolInputModificationEvent} (hook 12). */
export const PreToolInputModificationEventSchema = hook("PreToolInputModification", {
  ...trustSource,
  ...modification,
  /** Canonical name of the tool whose input is being modified (a plain field: this hook has no Tool extension). */
  tool_name: CanonicalToolNameSchema,
});
/** Schema of the {@link PreSubAgentSpawnEvent} (hook 13). */
export const PreSubAgentSpawnEventSchema = hook("PreSubAgentSpawn", {
  /** Proposed session id of the sub-agent. */
  sub_agent_id: z.string(),
  /** Role (open: `explore`, `code`, `shell`, `general`). */
  sub_agent_type: z.string().optional(),
  /** Task or prompt being delegated. */
  delegated_task: z.string(),
  /** Skill or agent-definition files the child will load. */
  skill_files: z.array(z.string()).optional(),
  /** Hooks those skills would activate. */
  declared_hooks: z.array(DeclaredHookSchema).optional(),
  /** Tools the sub-agent will get. */
  requested_tools: z.array(z.string()).optional(),
  /** The parent's current permission scope (for escalation detection). */
  parent_permissions: JsonObjectSchema.optional(),
});
/** Schema of the {@link PostSubAgentResultEvent} (hook 14). */
export const PostSubAgentResultEventSchema = hook("PostSubAgentResult", {
  /** Session id of the sub-agent. */
  sub_agent_id: z.string(),
  /** Output returned to the parent. */
  result: stringOrObject(),
  /** Summary of its tool calls. */
  tool_calls_made: z.array(z.unknown()).optional(),
  /** Summary of verdicts during its session. */
  verdicts_issued: z.array(z.unknown()).optional(),
});
/** Schema of the {@link PreOutputDeliverEvent} (hook 15). */
export const PreOutputDeliverEventSchema = hook("PreOutputDeliver", {
  ...turn,
  /** Text to be delivered. */
  output_text: z.string(),
  /** Tool calls executed this turn. */
  actions_taken: z.array(z.unknown()).optional(),
});
/** Schema of the {@link PreMemoryWriteEvent} (hook 16). */
export const PreMemoryWriteEventSchema = hook("PreMemoryWrite", {
  /** Target store id. */
  memory_store: z.string(),
  /** What is written. */
  content: stringOrObject(),
  /** Open: `fact`, `instruction`, `preference`, `conversation`, `code_snippet`. */
  memory_type: z.string().optional(),
  /** Trigger (open: `agent_decision`, `user_request`, `automatic`). */
  write_source: z.string().optional(),
});
/** Schema of the {@link PreMemoryReadEvent} (hook 17). */
export const PreMemoryReadEventSchema = hook("PreMemoryRead", {
  /** Source store id. */
  memory_store: z.string(),
  /** Retrieval query. */
  query: z.string().optional(),
  /** Content about to enter the context. */
  retrieved_content: stringOrObject(),
});
/** Schema of the {@link PreCompactEvent} (hook 18). */
export const PreCompactEventSchema = hook("PreCompact", {
  ...turn,
  /** The full context about to be compacted. */
  context_before: stringOrArray(),
  /** Tokens before compaction. */
  token_count_before: z.number().optional(),
  /** Open: `token_limit`, `user_triggered`, `automatic`, `policy`. */
  compaction_reason: z.string().optional(),
  /** Planned method (open: `summarization`, `truncation`, `selective`, `hybrid`). */
  compaction_strategy: z.string().optional(),
});
/** Schema of the {@link PostCompactEvent} (hook 19). */
export const PostCompactEventSchema = hook("PostCompact", {
  ...turn,
  ...modification,
  /** Tokens after compaction. */
  token_count_after: z.number().optional(),
  /** Method actually used (may differ from PreCompact's). */
  compaction_strategy_used: z.string().optional(),
});
/** Schema of the {@link PostAskResolutionEvent} (hook 20). */
export const PostAskResolutionEventSchema = hook("PostAskResolution", {
  ...turn,
  /** Hook point whose verdict was `ask`. */
  original_hook_point: HookPointSchema,
  /** The merged verdict shown to the user. */
  original_verdict: VerdictSchema,
  /** The user's raw choice. */
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

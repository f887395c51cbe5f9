/**
 * The AARTS 0.1 hook point catalog (adapter spec §1.4) and its AHP mapping (§5.3), as data.
 * Everything else (validation, the bridge, the host runner, the schema generator) reads these
 * tables; nothing switches on hook names.
 */

/** The 20 hook points of AARTS 0.1, in catalog order (spec §1.4). */
export const HOOK_POINTS = [
  "SessionStart",
  "SessionEnd",
  "PrePluginLoad",
  "PreSkillLoad",
  "PreMCPConnect",
  "PreUserInput",
  "PostInputProcessing",
  "PreLLMRequest",
  "PostLLMResponse",
  "PreToolUse",
  "PostToolUse",
  "PreToolInputModification",
  "PreSubAgentSpawn",
  "PostSubAgentResult",
  "PreOutputDeliver",
  "PreMemoryWrite",
  "PreMemoryRead",
  "PreCompact",
  "PostCompact",
  "PostAskResolution",
] as const;
/** Name of one of the 20 AARTS 0.1 hook points (spec §1.4); the envelope's `hook_point`. */
export type HookPoint = (typeof HOOK_POINTS)[number];

/**
 * How a host waits for a hook's verdict (spec §1.4, §2.1): `required` (wait and enforce),
 * `recommended` (as required, but a timeout may proceed when `recommendedTimeoutProceeds` is set),
 * `notification` (fire and forget; never produces a verdict).
 */
export type BlockingMode = "required" | "recommended" | "notification";
/** AARTS conformance level (spec §2.6): 1 Basic, 2 Standard, 3 Comprehensive; levels are cumulative. */
export type ConformanceLevel = "basic" | "standard" | "comprehensive";
/**
 * A standard extension merged flat into an event (spec §1.3): Turn, Tool Context, Trust Source,
 * Modification Tracking, Provenance.
 */
export type ExtensionName = "turn" | "tool" | "trust_source" | "modification" | "provenance";
/**
 * A hook-specific directive a verdict may carry on `allow` (spec §1.8); `x-ahp` is not listed because
 * every hook accepts it.
 */
export type DirectiveName = "inject_context" | "permitted_tools" | "strip_hooks";
/** Phase of the agent lifecycle a hook point belongs to (the Phase column of spec §1.4). */
export type Phase = "session" | "config" | "prompt" | "tool" | "sub_agent" | "output" | "memory" | "verdict";

/** Which AHP event a hook travels as (spec §5.3). */
export interface AhpRoute {
  /** AHP event type the hook is sent as. */
  readonly eventType: "pre_action" | "pre_prompt" | "post_action" | "session_end";
  /** `request` for blocking hooks (the harness answers with a decision), `notification` for Notification hooks. */
  readonly kind: "request" | "notification";
  /** `action_type` (pre_action/post_action) or `prompt_stage` (pre_prompt) value; absent for session_end. */
  readonly discriminator?: { readonly key: "action_type" | "prompt_stage"; readonly value: string };
  /**
   * Projected payload fields: `[payloadKey, aartsField]`. A dotted payload key nests
   * (`result.status`). Values that are undefined in the event are omitted.
   */
  readonly projection: readonly (readonly [string, string])[];
  /** Harness capability the hook needs (spec §5.3 last column). */
  readonly capability: string;
  /**
   * For modifiable hooks: the `modified_payload` key carrying the replacement (spec §5.5) and
   * the AARTS field it replaces.
   */
  readonly modify?: { readonly payloadKey: string; readonly replaces: string };
}

/** One row of the hook point catalog (spec §1.4) with its AHP route (§5.3); read it from {@link HOOK_CATALOG}. */
export interface HookPointInfo {
  /** The hook point this row describes. */
  readonly hookPoint: HookPoint;
  /** Catalog number 1–20. */
  readonly number: number;
  /** Lifecycle phase (spec §1.4 Phase column). */
  readonly phase: Phase;
  /** Blocking mode: how the host waits for and enforces the verdict (spec §2.1). */
  readonly blocking: BlockingMode;
  /** Standard extensions the event carries (spec §1.3). */
  readonly extensions: readonly ExtensionName[];
  /** Lowest conformance level that requires this hook (spec §2.6). */
  readonly level: ConformanceLevel;
  /** Default verdict timeout in ms (absent for Notification hooks). */
  readonly defaultTimeoutMs?: number;
  /** What `deny` does (informative, spec §1.4). */
  readonly denyEffect: string;
  /** Directives honoured on `allow`. */
  readonly directives: readonly DirectiveName[];
  /** How the bridge sends the hook to an AHP harness (spec §5.3). */
  readonly ahp: AhpRoute;
}

const req = (key: "action_type" | "prompt_stage", value: string) => ({ key, value }) as const;
const pre = (value: string, projection: readonly (readonly [string, string])[] = [], modify?: AhpRoute["modify"]): AhpRoute => ({
  eventType: "pre_action",
  kind: "request",
  discriminator: req("action_type", value),
  projection,
  capability: "pre_action",
  ...(modify === undefined ? {} : { modify }),
});
const prompt = (value: string, projection: readonly (readonly [string, string])[], replaces: string): AhpRoute => ({
  eventType: "pre_prompt",
  kind: "request",
  discriminator: req("prompt_stage", value),
  projection,
  capability: "pre_prompt",
  modify: { payloadKey: "prompt", replaces },
});

const T5 = 5_000;
const T10 = 10_000;

/** The catalog, keyed by hook point. */
export const HOOK_CATALOG: { readonly [H in HookPoint]: HookPointInfo } = {
  SessionStart: {
    hookPoint: "SessionStart",
    number: 1,
    phase: "session",
    blocking: "recommended",
    extensions: [],
    level: "basic",
    defaultTimeoutMs: T10,
    denyEffect: "session is not started",
    directives: [],
    ahp: pre("start_session"),
  },
  SessionEnd: {
    hookPoint: "SessionEnd",
    number: 2,
    phase: "session",
    blocking: "notification",
    extensions: [],
    level: "comprehensive",
    denyEffect: "none (audit only)",
    directives: [],
    ahp: { eventType: "session_end", kind: "notification", projection: [["summary", "summary"]], capability: "session_end" },
  },
  PrePluginLoad: {
    hookPoint: "PrePluginLoad",
    number: 3,
    phase: "config",
    blocking: "required",
    extensions: ["trust_source"],
    level: "standard",
    defaultTimeoutMs: T10,
    denyEffect: "plugin not loaded",
    directives: [],
    ahp: pre("load_plugin", [["plugin_id", "plugin_id"]]),
  },
  PreSkillLoad: {
    hookPoint: "PreSkillLoad",
    number: 4,
    phase: "config",
    blocking: "required",
    extensions: ["trust_source"],
    level: "standard",
    defaultTimeoutMs: T10,
    denyEffect: "skill not loaded",
    directives: ["strip_hooks"],
    ahp: pre("load_skill", [["file_path", "file_path"]]),
  },
  PreMCPConnect: {
    hookPoint: "PreMCPConnect",
    number: 5,
    phase: "config",
    blocking: "required",
    extensions: ["trust_source"],
    level: "comprehensive",
    defaultTimeoutMs: T10,
    denyEffect: "no connection to the MCP server",
    directives: [],
    ahp: pre("connect_mcp_server", [
      ["server_id", "server_id"],
      ["transport", "transport"],
    ]),
  },
  PreUserInput: {
    hookPoint: "PreUserInput",
    number: 6,
    phase: "prompt",
    blocking: "required",
    extensions: ["turn"],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "input discarded, not processed",
    directives: [],
    ahp: prompt("user_input", [["prompt", "raw_input"]], "raw_input"),
  },
  PostInputProcessing: {
    hookPoint: "PostInputProcessing",
    number: 7,
    phase: "prompt",
    blocking: "required",
    extensions: ["turn", "modification"],
    level: "standard",
    defaultTimeoutMs: T5,
    denyEffect: "processing result rejected; raw input is used",
    directives: [],
    ahp: prompt(
      "processed_input",
      [
        ["prompt", "modified_value"],
        ["original_prompt", "original_value"],
      ],
      "modified_value",
    ),
  },
  PreLLMRequest: {
    hookPoint: "PreLLMRequest",
    number: 8,
    phase: "prompt",
    blocking: "required",
    extensions: ["turn"],
    level: "standard",
    defaultTimeoutMs: T5,
    denyEffect: "request not sent to the model",
    directives: [],
    ahp: prompt(
      "llm_request",
      [
        ["prompt", "full_prompt"],
        ["model", "model_id"],
      ],
      "full_prompt",
    ),
  },
  PostLLMResponse: {
    hookPoint: "PostLLMResponse",
    number: 9,
    phase: "prompt",
    blocking: "required",
    extensions: ["turn"],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "response discarded",
    directives: [],
    ahp: pre("process_model_response", [["response", "response_text"]], { payloadKey: "response", replaces: "response_text" }),
  },
  PreToolUse: {
    hookPoint: "PreToolUse",
    number: 10,
    phase: "tool",
    blocking: "required",
    extensions: ["turn", "tool", "provenance"],
    level: "basic",
    defaultTimeoutMs: T5,
    denyEffect: "tool not executed",
    directives: [],
    ahp: pre(
      "tool_call",
      [
        ["tool_name", "tool_name"],
        ["tool_name_native", "tool_name_native"],
        ["arguments", "tool_input"],
      ],
      { payloadKey: "arguments", replaces: "tool_input" },
    ),
  },
  PostToolUse: {
    hookPoint: "PostToolUse",
    number: 11,
    phase: "tool",
    blocking: "recommended",
    extensions: ["turn", "tool"],
    level: "standard",
    defaultTimeoutMs: T5,
    denyEffect: "result redacted before it reaches the model",
    directives: [],
    ahp: prompt(
      "tool_result",
      [
        ["prompt", "tool_result"],
        ["tool_name", "tool_name"],
        ["tool_name_native", "tool_name_native"],
        ["arguments", "tool_input"],
      ],
      "tool_result",
    ),
  },
  PreToolInputModification: {
    hookPoint: "PreToolInputModification",
    number: 12,
    phase: "tool",
    blocking: "required",
    extensions: ["trust_source", "modification"],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "modification rejected; original tool input is used",
    directives: [],
    ahp: pre(
      "modify_tool_input",
      [
        ["tool_name", "tool_name"],
        ["arguments", "modified_value"],
        ["original_arguments", "original_value"],
      ],
      { payloadKey: "arguments", replaces: "modified_value" },
    ),
  },
  PreSubAgentSpawn: {
    hookPoint: "PreSubAgentSpawn",
    number: 13,
    phase: "sub_agent",
    blocking: "required",
    extensions: [],
    level: "comprehensive",
    defaultTimeoutMs: T10,
    denyEffect: "sub-agent not spawned",
    directives: ["permitted_tools"],
    ahp: pre("spawn_subagent", [
      ["sub_agent_id", "sub_agent_id"],
      ["delegated_task", "delegated_task"],
    ]),
  },
  PostSubAgentResult: {
    hookPoint: "PostSubAgentResult",
    number: 14,
    phase: "sub_agent",
    blocking: "recommended",
    extensions: [],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "result withheld from the parent",
    directives: [],
    ahp: prompt(
      "subagent_result",
      [
        ["prompt", "result"],
        ["sub_agent_id", "sub_agent_id"],
      ],
      "result",
    ),
  },
  PreOutputDeliver: {
    hookPoint: "PreOutputDeliver",
    number: 15,
    phase: "output",
    blocking: "recommended",
    extensions: ["turn"],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "output not shown to the user",
    directives: [],
    ahp: pre("deliver_output", [["output", "output_text"]], { payloadKey: "output", replaces: "output_text" }),
  },
  PreMemoryWrite: {
    hookPoint: "PreMemoryWrite",
    number: 16,
    phase: "memory",
    blocking: "required",
    extensions: [],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "nothing written",
    directives: [],
    ahp: pre(
      "write_memory",
      [
        ["memory_store", "memory_store"],
        ["content", "content"],
      ],
      { payloadKey: "content", replaces: "content" },
    ),
  },
  PreMemoryRead: {
    hookPoint: "PreMemoryRead",
    number: 17,
    phase: "memory",
    blocking: "recommended",
    extensions: [],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "content not loaded into context",
    directives: [],
    ahp: prompt(
      "memory_read",
      [
        ["prompt", "retrieved_content"],
        ["memory_store", "memory_store"],
      ],
      "retrieved_content",
    ),
  },
  PreCompact: {
    hookPoint: "PreCompact",
    number: 18,
    phase: "prompt",
    blocking: "required",
    extensions: ["turn"],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "compaction does not happen",
    directives: [],
    ahp: pre("compact_context"),
  },
  PostCompact: {
    hookPoint: "PostCompact",
    number: 19,
    phase: "prompt",
    blocking: "required",
    extensions: ["turn", "modification"],
    level: "comprehensive",
    defaultTimeoutMs: T5,
    denyEffect: "compacted context discarded; pre-compaction context restored",
    directives: ["inject_context"],
    ahp: prompt("compacted_context", [["prompt", "modified_value"]], "modified_value"),
  },
  PostAskResolution: {
    hookPoint: "PostAskResolution",
    number: 20,
    phase: "verdict",
    blocking: "notification",
    extensions: ["turn"],
    level: "standard",
    denyEffect: "none (feedback only)",
    directives: [],
    ahp: {
      eventType: "post_action",
      kind: "notification",
      discriminator: req("action_type", "ask_resolution"),
      projection: [
        ["result.status", "resolution"],
        ["original_hook_point", "original_hook_point"],
      ],
      capability: "post_action",
    },
  },
};

/** `true` when `value` is one of the 20 hook point names (case-sensitive). */
export const isHookPoint = (value: unknown): value is HookPoint =>
  typeof value === "string" && Object.prototype.hasOwnProperty.call(HOOK_CATALOG, value);

/** Hook points a level adds (cumulative levels are the union up to that level; spec §2.6). */
export const LEVEL_HOOKS: { readonly [L in ConformanceLevel]: readonly HookPoint[] } = {
  basic: ["SessionStart", "PreToolUse"],
  standard: ["PrePluginLoad", "PreSkillLoad", "PostInputProcessing", "PreLLMRequest", "PostToolUse", "PostAskResolution"],
  comprehensive: [
    "PreUserInput",
    "PostLLMResponse",
    "PreToolInputModification",
    "PreSubAgentSpawn",
    "PostSubAgentResult",
    "PreMCPConnect",
    "PreMemoryWrite",
    "PreMemoryRead",
    "PreCompact",
    "PostCompact",
    "PreOutputDeliver",
    "SessionEnd",
  ],
};

// ------------------------------------------------------------------ taxonomy and enumerations

/** The 13 canonical tool names (spec §3.1). */
export const CANONICAL_TOOL_NAMES = [
  "shell",
  "file_write",
  "file_edit",
  "file_read",
  "file_delete",
  "web_request",
  "mcp_call",
  "code_exec",
  "package_install",
  "browser",
  "database",
  "delegate",
  "other",
] as const;
/** A canonical tool name (spec §3.1): the Tool Context `tool_name`; `other` when no category fits. */
export type CanonicalToolName = (typeof CANONICAL_TOOL_NAMES)[number];
/** `true` when `value` is one of the 13 canonical tool names (spec §3.1). */
export const isCanonicalToolName = (value: unknown): value is CanonicalToolName =>
  typeof value === "string" && (CANONICAL_TOOL_NAMES as readonly string[]).includes(value);

/** Tool coverage a Basic host must offer (spec §2.6). */
export const BASIC_TOOL_COVERAGE: readonly CanonicalToolName[] = [
  "shell",
  "file_write",
  "file_edit",
  "web_request",
  "mcp_call",
  "package_install",
];

/** Closed set of Trust Source `source` values (spec §1.3): where a plugin, skill, MCP server or modifier comes from. */
export const TRUST_SOURCES = ["managed", "project", "user", "marketplace"] as const;
/** A Trust Source `source` value (spec §1.3). */
export type TrustSourceKind = (typeof TRUST_SOURCES)[number];
/** Closed set of ModifierEntry `config_source` values (spec §1.3): where a modifying hook was configured. */
export const CONFIG_SOURCES = ["managed", "project", "user", "plugin"] as const;
/** A ModifierEntry `config_source` value (spec §1.3). */
export type ConfigSource = (typeof CONFIG_SOURCES)[number];
/** Closed set of PreMCPConnect `transport` values (spec §1.5 hook 5). */
export const MCP_TRANSPORTS = ["stdio", "sse", "streamable_http"] as const;
/** Closed set of PreSkillLoad `load_context` values (spec §1.5 hook 4): who triggered the skill load. */
export const LOAD_CONTEXTS = ["main_session", "sub_agent", "skill_invocation"] as const;
/** Closed set of PostAskResolution `resolution` values (spec §1.5 hook 20, §2.4): the user's answer to an `ask`. */
export const RESOLUTIONS = ["approved", "denied", "allow_always", "allow_similar", "deny_always", "deny_similar"] as const;
/** The user's answer to an `ask` prompt (spec §2.4): `approved`/`allow_*` proceed, `denied`/`deny_*` block. */
export type Resolution = (typeof RESOLUTIONS)[number];
/** Standard `suggested_resolutions` values in their canonical order (spec §2.3 step 4). */
export const STANDARD_SUGGESTED_RESOLUTIONS = ["allow_always", "allow_similar", "deny_always", "deny_similar"] as const;
/** Closed set of verdict `decision` values (spec §1.7), in increasing strictness. */
export const VERDICT_DECISIONS = ["allow", "deny", "ask"] as const;
/**
 * Verdict decision (spec §1.7): `allow` proceeds, `deny` blocks and surfaces `reasons`, `ask` prompts
 * the user (or is `deny` where the host cannot prompt).
 */
export type VerdictDecision = (typeof VERDICT_DECISIONS)[number];
/** Closed set of verdict `severity` values (spec §1.7), in increasing order. */
export const SEVERITIES = ["info", "warning", "critical"] as const;
/** Verdict severity (spec §1.7); merging takes the highest (`critical > warning > info`, §2.3). */
export type Severity = (typeof SEVERITIES)[number];
/** Closed set of Artifact `type` values (spec §1.6). */
export const ARTIFACT_TYPES = [
  "url",
  "command",
  "file_path",
  "content",
  "package",
  "prompt_fragment",
  "credential",
  "network_address",
] as const;
/** Artifact type (spec §1.6): what kind of security-relevant value an artifact holds. */
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];
/** Closed set of `inject_context.position` values (spec §1.8): where a PostCompact `allow` adds its content. */
export const INJECT_POSITIONS = ["prepend", "append", "system"] as const;

/** `host_id` pattern (spec §1.2). */
export const HOST_ID_PATTERN = "^[a-z0-9]+(-[a-z0-9]+)*$";
/** BCP 47-ish locale pattern (spec §1.9). */
export const LOCALE_PATTERN = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$";
/**
 * RFC 3339 date-time (spec §1.9), written with ASCII classes only so that every regex
 * engine (JavaScript, Python's `re`) reads it the same way.
 */
export const RFC3339_PATTERN =
  "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";

/** The `aarts_version` our hosts put in events. */
export const AARTS_EVENT_VERSION = "0.1";
/** Majors accepted by our engine-role components by default (Q1). */
export const DEFAULT_SUPPORTED_MAJORS: readonly string[] = ["0", "1"];
/** The major our host-role components send in the version check (Q1). */
export const HOST_VERSION_CHECK_MAJOR = "0";

/** `host_id` values of our native adapters (spec §1.2). */
export const HOST_IDS = [
  "claude-code",
  "cursor",
  "copilot-cli",
  "copilot-sdk",
  "vscode",
  "cline",
  "windsurf",
  "openclaw",
  "opencode",
  "openai-agents",
  "langchain",
] as const;
/** `host_id` of one of this package's native adapters (spec §1.2). */
export type HostId = (typeof HOST_IDS)[number];

/** Package version reported as `engine_version` / `agent_info.version`. */
export const AARTS_PACKAGE_VERSION = "0.1.0";
/** Engine id of the bridge when it answers on its own (spec §5.2). */
export const BRIDGE_ENGINE_ID = "aarts-ahp-bridge";
/** Capability token advertised by the bridge (spec §5.1 D5). */
export const AARTS_CAPABILITY = "aarts/0.1";

/**
 * The policy file format as zod schemas: the single definition of what a policy file may
 * contain. What a file extending the default policy may add, and the named types of the JSON
 * Schema bundle, are in ./schema.ts.
 *
 * The file format uses snake_case member names throughout, like the AHP wire format
 * (`retry_after_ms`, `escalation_target`, `modified_payload`), so that decisions can be copied
 * between a policy file and the protocol unchanged. Objects are closed: an unknown member (a
 * typo such as `reson`) is a load-time error. The one exception is {@link PolicyActionSchema},
 * which is open so that it can carry the fields of typed decisions; its members are checked
 * against the decision type of every event the rule can match when the policy is compiled.
 *
 * This module depends on zod and the event table of `@ahp/core` only: the default policy's data
 * is typed by it.
 */
import { z } from "zod";
import { EVENT_TYPES, SECRET_KINDS } from "@ahp/core";

/** The 22 AHP event types (spec §5.1), in spec order: the event table of `@ahp/core`. */
export const POLICY_EVENT_TYPES = EVENT_TYPES;

/** Every `decision` tag of the generic Decision and of the typed decisions (spec §6, §7). */
export const POLICY_DECISION_TAGS = [
  "allow",
  "block",
  "modify",
  "defer",
  "escalate",
  "refine",
  "retry",
  "queue",
  "skip",
  "approve",
  "reject",
] as const;

const nonNegInt = () => z.int().min(0);
const posInt = () => z.int().min(1);

/** One string or a list of strings; a list means "any of them". */
const stringOrList = () => z.union([z.string(), z.array(z.string()).min(1)]);

/**
 * A field path: dot-separated segments starting at the event, e.g. `payload.arguments.command`,
 * `context.session_stats.total_tokens`, `metadata.trace_id`, `depth`. A segment `*` stands for
 * every element of an array (or every member of an object); numeric segments index arrays.
 */
const fieldPath = () => z.string().min(1).describe("Dot-separated path from the event, e.g. payload.arguments.command");

/**
 * A numeric condition in a policy file: a rule's `match.depth` and each counter under
 * `match.session`, e.g. `depth: { gte: 1, lt: 4 }`. Every operator given must hold; an empty
 * condition is a load error, and a value that is not a number never matches.
 */
export const NumberConditionSchema = z
  .strictObject({
    equals: z.number().optional(),
    one_of: z.array(z.number()).min(1).optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
    gt: z.number().optional(),
    gte: z.number().optional(),
  })
  .describe("Numeric comparisons; every operator given must hold.");
/** A parsed `depth` or `session.*` condition (see {@link NumberConditionSchema}). */
export type NumberCondition = z.infer<typeof NumberConditionSchema>;

export interface FieldConditionInput {
  equals?: unknown;
  one_of?: unknown[];
  glob?: string | string[];
  regex?: string | string[];
  contains?: string | string[];
  lt?: number;
  lte?: number;
  gt?: number;
  gte?: number;
  exists?: boolean;
  ignore_case?: boolean;
  not?: FieldConditionInput;
}

/**
 * A condition on one value: the entries of `match.fields` (`payload.arguments.url: { glob: "https://*.example.com/**" }`),
 * shell `line`, `args`, `paths`, `writes`, `argv`, `redirect`, `word`, `option.value`, and path `resolved`.
 * Every operator given must hold; an empty condition is a load error. `glob`, `regex` and `contains` read at
 * most `settings.max_match_length` characters; at a path with `*`, any one of its values may satisfy it.
 */
export const FieldConditionSchema: z.ZodType<FieldConditionInput, FieldConditionInput> = z
  .strictObject({
    /** Deep JSON equality. */
    equals: z.unknown().optional(),
    /** Deep JSON equality with any listed value. */
    one_of: z.array(z.unknown()).min(1).optional(),
    /** String matches any glob (`*` within a path segment, `**` across segments, `?`, `[a-z]`, `{a,b}`). */
    glob: stringOrList().optional(),
    /** String matches any regular expression (JavaScript syntax, unanchored, compiled once). */
    regex: stringOrList().optional(),
    /** String contains any of the substrings; or an array contains an element equal to any of them. */
    contains: stringOrList().optional(),
    lt: z.number().optional(),
    lte: z.number().optional(),
    gt: z.number().optional(),
    gte: z.number().optional(),
    /** `true`: the field is present (not `undefined`/`null`); `false`: it is absent. */
    exists: z.boolean().optional(),
    /** Compare strings case-insensitively in equals, one_of, glob, regex and contains. */
    ignore_case: z.boolean().optional(),
    /** Negation of a nested condition. */
    get not() {
      return FieldConditionSchema.optional();
    },
  })
  .describe("Conditions on one value; every operator given must hold.");

/**
 * A rule's `match.session`: conditions on the counters the engine keeps per session, e.g.
 * `session: { actions: { gte: 200 } }`; every counter given must hold. For `actions`, `tokens`,
 * `errors` and `duration_ms` the event's own `context.session_stats` win over the engine's count.
 */
export const SessionMatchSchema = z
  .strictObject({
    /** Actions of the session: `context.session_stats.total_actions`, or pre_action events the policy allowed. */
    actions: NumberConditionSchema.optional(),
    /** Tokens of the session: `context.session_stats.total_tokens`, or what post_response/heartbeat payloads report. */
    tokens: NumberConditionSchema.optional(),
    /** Errors of the session: `context.session_stats.error_count`, or `error` events seen. */
    errors: NumberConditionSchema.optional(),
    /** Session age in ms: `context.session_stats.duration_ms`, or time since the policy first saw the session. */
    duration_ms: NumberConditionSchema.optional(),
    /** Events of any type the policy saw for the session (before this one). */
    events: NumberConditionSchema.optional(),
    /** pre_prompt events the policy saw for the session (before this one). */
    prompts: NumberConditionSchema.optional(),
    /** idle events the policy allowed for the session (background runs started). */
    background_runs: NumberConditionSchema.optional(),
    /** Time spent in background work: from each allowed idle event to the session's next event. */
    background_ms: NumberConditionSchema.optional(),
  })
  .describe("Conditions on the per-session counters kept by the policy engine.");

/**
 * A rule's `match.shell`: conditions on command lines parsed into simple commands (pipelines, lists
 * and substitutions split, `sudo`/`env`/`xargs` prefixes unwrapped), e.g. `shell: { program: rm, flags_any: [r, R] }`.
 * Everything but `line` must hold for one and the same simple command. Without `fields`, the
 * default command fields and the commands found by tool-call normalization are read.
 */
export const ShellMatchSchema = z
  .strictObject({
    /** Where the command text is read; default: see README (payload.arguments.command and friends). */
    fields: z.array(fieldPath()).min(1).optional(),
    /** Condition on the whole command text. */
    line: FieldConditionSchema.optional(),
    /** Program name (basename, after unwrapping sudo/env/nohup/xargs/... prefixes): globs. */
    program: stringOrList().optional(),
    /** The command has at least one of these flags (`-rf` gives r and f; `--force` gives force). */
    flags_any: z.array(z.string().min(1)).min(1).optional(),
    /** The command has every listed flag; an inner list means "any of these spellings". */
    flags_all: z
      .array(z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]))
      .min(1)
      .optional(),
    /** An option is present (`--name value`, `--name=value`, `-n value`), optionally with a value condition. */
    option: z
      .strictObject({
        name: stringOrList(),
        value: FieldConditionSchema.optional(),
      })
      .optional(),
    /** Each condition is satisfied by at least one positional argument (paths normalized). */
    args: z.array(FieldConditionSchema).min(1).optional(),
    /** Each condition is satisfied by at least one positional argument resolved against the working directory (`cd / && rm -rf *` gives `/*`). */
    paths: z.array(FieldConditionSchema).min(1).optional(),
    /** Condition on any file the command writes, truncates, deletes, moves or changes the mode or owner of (output redirections included), resolved. */
    writes: FieldConditionSchema.optional(),
    /**
     * The command cannot be analysed: `true` for any reason, `false` for none, or a list of
     * `dynamic-command` (computed command word), `dynamic-script` (a shell or interpreter runs
     * generated text), `inline-code` (interpreter code calling delete/exec/network primitives),
     * `too-long` (the line is longer than the analysis limit or too deeply nested).
     */
    opaque: z.union([z.boolean(), z.array(z.enum(["dynamic-command", "dynamic-script", "inline-code", "too-long"])).min(1)]).optional(),
    /** Condition on the argument vector joined with single spaces. */
    argv: FieldConditionSchema.optional(),
    /** Condition on any output redirection target (`>`, `>>`, `&>`, `2>` ...). */
    redirect: FieldConditionSchema.optional(),
    /** The command's output flows into a program matching these globs (later pipeline stage, or the command holding a substitution). */
    piped_to: stringOrList().optional(),
    /** Condition on any word of the command: program, arguments, options, redirection targets. */
    word: FieldConditionSchema.optional(),
    /**
     * `true`: a file a downloader of the line saves (`curl -o f`, `curl -O …/f`, `wget …/f`,
     * `wget -O f`, `aria2c -o f`, `fetch -o f`) is later in the line run by path, made executable,
     * sourced, or handed to a shell or interpreter (`wget -qO i.sh …; bash i.sh`,
     * `curl -Lo t … && chmod +x t && ./t`). A line-level fact, not a per-command one.
     */
    runs_download: z.literal(true).optional(),
  })
  .describe("Matches a shell command line, tokenized; the per-command conditions must hold for one simple command.");

/**
 * A rule's `match.path`, e.g. `path: { outside_workspace: true }`: the tool call's file paths resolved
 * lexically (symbolic links are not followed) against `settings.workspace_root`, else the first root
 * found at `root_fields`. Needs `outside_workspace` or `resolved`; an event without file paths never matches.
 */
export const PathMatchSchema = z
  .strictObject({
    /** Where file paths are read; default: see README (payload.arguments.path, file_path, ...). */
    fields: z.array(fieldPath()).min(1).optional(),
    /** Where the workspace root is read when `settings.workspace_root` is not set. */
    root_fields: z.array(fieldPath()).min(1).optional(),
    /** `true`: some path resolves outside the workspace root; `false`: every path is inside. */
    outside_workspace: z.boolean().optional(),
    /** Condition on any resolved (absolute, normalized) path. */
    resolved: FieldConditionSchema.optional(),
  })
  .describe("Matches file paths of a tool call after lexical resolution against the workspace root.");

/**
 * A rule's `match.secrets`: holds when a credential is found in a string below `fields` (default
 * `payload`), optionally only of some `kinds` (`@ahp/core`'s secret kinds), e.g.
 * `secrets: { kinds: [github_token] }`; `secrets: {}` means any secret anywhere in the payload.
 */
export const SecretsMatchSchema = z
  .strictObject({
    /** Where to look (every string below these paths); default `["payload"]`. */
    fields: z.array(fieldPath()).min(1).optional(),
    /** Only these kinds; default: all. */
    kinds: z.array(z.enum(SECRET_KINDS)).min(1).optional(),
  })
  .describe("Matches when a secret or credential is found in any string below the given fields.");

export const ToolCallMatchSchema = z
  .strictObject({
    /** The payload names a tool (in any shape tool-call normalization knows). */
    named: z.boolean().optional(),
    /** Some tool call runs shell commands (by its name, ACP kind `execute` or OpenAI item type). */
    shell: z.boolean().optional(),
    /** A shell command text was found (at the default shell fields or by tool-call normalization). */
    command: z.boolean().optional(),
    /**
     * A path a file tool (write, edit, multi-edit, patch, move, delete ... in any shape) changes,
     * resolved lexically (against the workspace root when one is known, else as given: absolute,
     * `~`, or relative), satisfies the condition. Read-only calls change nothing.
     */
    writes: FieldConditionSchema.optional(),
    /** As `writes`, for the paths not inside the workspace root (every path when no root is known). */
    writes_outside_workspace: FieldConditionSchema.optional(),
    /** Some tool call is a code-execution tool (`python` with `code`, `execute_code`, `javascript` ...): `true` or `false`. */
    code: z.boolean().optional(),
  })
  .describe("Facts of the payload's tool calls after normalization of the shapes agent frameworks send.");

export interface PolicyMatchInput {
  tool?: string | string[];
  tool_call?: z.input<typeof ToolCallMatchSchema>;
  fields?: Record<string, FieldConditionInput>;
  depth?: NumberCondition;
  session?: z.input<typeof SessionMatchSchema>;
  shell?: z.input<typeof ShellMatchSchema>;
  path?: z.input<typeof PathMatchSchema>;
  secrets?: z.input<typeof SecretsMatchSchema>;
  all?: PolicyMatchInput[];
  any?: PolicyMatchInput[];
  not?: PolicyMatchInput;
}

/**
 * A rule's `match`: every member given must hold, and an empty or missing match always holds; `all`,
 * `any` and `not` nest further matches, e.g. `match: { tool: [bash, shell], not: { depth: { equals: 0 } } }`.
 * `tool` globs are case-insensitive and read the tool name from `payload.tool_name`, `payload.tool`,
 * `payload.name`, else from the normalized tool calls.
 */
export const PolicyMatchSchema: z.ZodType<PolicyMatchInput, PolicyMatchInput> = z
  .strictObject({
    /** Tool name globs, read from payload.tool_name, then payload.tool, then payload.name, else from the normalized tool calls. */
    tool: stringOrList().optional(),
    tool_call: ToolCallMatchSchema.optional(),
    /** Conditions on fields by path; all must hold. */
    fields: z.record(fieldPath(), FieldConditionSchema).optional(),
    /** Condition on the event's depth (0 = top-level agent). */
    depth: NumberConditionSchema.optional(),
    session: SessionMatchSchema.optional(),
    shell: ShellMatchSchema.optional(),
    path: PathMatchSchema.optional(),
    secrets: SecretsMatchSchema.optional(),
    get all() {
      return z.array(PolicyMatchSchema).min(1).optional();
    },
    get any() {
      return z.array(PolicyMatchSchema).min(1).optional();
    },
    get not() {
      return PolicyMatchSchema.optional();
    },
  })
  .describe("Conditions on an event; every member given must hold (an empty match always holds).");

/**
 * A rule's `action` (and the file's `default`): the protocol's decision object plus the policy-only
 * `merge_patch` and `redact_secrets`, e.g. `action: { decision: block, reason: Force push }`. Open, so that
 * typed decisions can carry their fields; at load time it is checked against the decision type of every
 * event type the rule lists (the `default` against the generic Decision, without the policy-only members).
 */
export const PolicyActionSchema = z
  .looseObject({
    decision: z.enum(POLICY_DECISION_TAGS),
    reason: z.string().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    retry_after_ms: nonNegInt().optional(),
    escalation_target: z.string().optional(),
    /** `modify`/`allow`: the payload to use instead of the original. */
    modified_payload: z.unknown().optional(),
    /** `modify`/`allow`: an RFC 7396 JSON merge patch applied to a copy of the payload. */
    merge_patch: z.unknown().optional(),
    /** `modify`/`allow`: replace every detected secret in a copy of the payload by `[REDACTED:<kind>]`. */
    redact_secrets: z.union([z.boolean(), z.strictObject({ kinds: z.array(z.enum(SECRET_KINDS)).min(1) })]).optional(),
  })
  .describe(
    "The decision a rule yields: the protocol's decision object for the matched event type, plus the policy-only members merge_patch and redact_secrets. Other members are the fields of typed decisions (e.g. selected_strategy).",
  );
/** A parsed `action` or `default` (see {@link PolicyActionSchema}); members of typed decisions are kept. */
export type PolicyAction = z.infer<typeof PolicyActionSchema>;
/** An `action` as written in a policy object in code (see {@link PolicyActionSchema}). */
export type PolicyActionInput = z.input<typeof PolicyActionSchema>;

/**
 * A rule's `rate_limit`, e.g. `rate_limit: { rate: 10, interval_ms: 60000, burst: 20 }`: a token bucket
 * of `burst` tokens (default `rate`) refilled by `rate` per `interval_ms`, per session unless `scope` is
 * `agent` or `global`. While a token is left the rule takes it and does not match; once the bucket is
 * empty it decides (`defer` without an `action`), its `retry_after_ms` computed from the bucket.
 */
export const RateLimitSchema = z
  .strictObject({
    /** Whose bucket: one per session (default), per agent, or one for everyone. */
    scope: z.enum(["session", "agent", "global"]).optional(),
    /** Tokens added per interval. */
    rate: posInt(),
    interval_ms: posInt(),
    /** Bucket size (largest burst); default `rate`. */
    burst: posInt().optional(),
  })
  .describe("Token bucket: the rule matches (and decides) only when its conditions hold and the bucket is empty.");
/** A parsed `rate_limit` (see {@link RateLimitSchema}). */
export type RateLimit = z.infer<typeof RateLimitSchema>;

const eventTypeSchema = z.enum(POLICY_EVENT_TYPES);

/**
 * One entry of the file's `rules`: a unique `id`, the `events` it applies to, an optional `match` and
 * `rate_limit`, and its `action` (optional only with `rate_limit`), e.g.
 * `{ id: no-sudo, events: pre_action, match: { shell: { program: sudo } }, action: { decision: escalate, reason: sudo } }`.
 * `enabled: false` keeps a rule in the file without evaluating it; a duplicate id is a load error.
 */
export const PolicyRuleSchema = z
  .strictObject({
    /** Unique id, reported in decisions (`metadata.rule` or the reason) and to onDecision. */
    id: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/),
    description: z.string().optional(),
    /** `false` keeps the rule in the file but never evaluates it. */
    enabled: z.boolean().optional(),
    /** Event type(s) the rule applies to. */
    events: z.union([eventTypeSchema, z.array(eventTypeSchema).min(1)]),
    /** Conditions; omitted = always. */
    match: PolicyMatchSchema.optional(),
    rate_limit: RateLimitSchema.optional(),
    /** The decision; optional only with `rate_limit` (then `defer`). */
    action: PolicyActionSchema.optional(),
  })
  .describe("One rule: where it applies, when it matches, what it decides.");
/** A validated rule, as `parsePolicy` returns it (see {@link PolicyRuleSchema}). */
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;
/** A rule as written in a policy object in code (see {@link PolicyRuleSchema}). */
export type PolicyRuleInput = z.input<typeof PolicyRuleSchema>;

/**
 * The file's `settings`, e.g. `settings: { workspace_root: /srv/app, state_ttl_ms: 600000 }`: the workspace
 * root of path rules, the match length cut-off (default 65536) and the bounds of the engine's state
 * (defaults 10000 sessions, 10000 agents, 1 h idle). The same options given in code win.
 */
export const PolicySettingsSchema = z
  .strictObject({
    /** Workspace root for path rules; wins over what events report. */
    workspace_root: z.string().min(1).optional(),
    /** Longest string (in UTF-16 units) a glob, regex or contains operator looks at; longer input is cut. Default 65536. */
    max_match_length: posInt().optional(),
    /** Most sessions with state kept (least recently used evicted). Default 10000. */
    max_sessions: posInt().optional(),
    /** Most agents with state kept (rate limits with scope agent). Default 10000. */
    max_agents: posInt().optional(),
    /** State of a session or agent not seen for this long is dropped. Default 3600000 (1 h). */
    state_ttl_ms: posInt().optional(),
  })
  .describe("Engine settings carried by the file; options given in code win.");
/** Parsed `settings` of a policy file (see {@link PolicySettingsSchema}). */
export type PolicySettings = z.infer<typeof PolicySettingsSchema>;

/**
 * A whole policy file (YAML or JSON): `version: 1`, optional `name`, `description`, `settings` and
 * `default` (the decision for a generic event no rule matches; `allow` when absent), and `rules`, where the
 * first matching rule in file order decides. Closed: an unknown member is an error. `loadPolicy` validates
 * against it and throws a `PolicyError` naming file, line, column and rule.
 */
export const PolicyFileSchema = z
  .strictObject({
    /** Format version; always 1. */
    version: z.literal(1),
    /**
     * `default`: build on the built-in default policy. Its rules come first, then this file's; a rule
     * with the id of a built-in one replaces it in place, `enabled: false` on such a rule turns it off,
     * and `settings` merge (this file's win).
     */
    extends: z.literal("default").optional(),
    name: z.string().optional(),
    description: z.string().optional(),
    settings: PolicySettingsSchema.optional(),
    /** The generic decision when no rule matches (and no user handler is composed). Default `{decision: allow}`. */
    default: PolicyActionSchema.optional(),
    /** Evaluated in file order; the first rule that matches decides. */
    rules: z.array(PolicyRuleSchema),
  })
  .describe("An AHP policy file (YAML or JSON).");
/** A validated policy file: what `parsePolicy` returns and `CompiledPolicy.policy` holds. */
export type PolicyFile = z.infer<typeof PolicyFileSchema>;
/** A policy file written as an object in code (like `DEFAULT_POLICY`), before validation. */
export type PolicyFileInput = z.input<typeof PolicyFileSchema>;
/** A rule's `match` (see {@link PolicyMatchSchema}); recursive through `all`, `any` and `not`. */
export type PolicyMatch = PolicyMatchInput;
/** A condition on one value (see {@link FieldConditionSchema}); recursive through `not`. */
export type FieldCondition = FieldConditionInput;
/** A parsed `match.shell` (see {@link ShellMatchSchema}). */
export type ShellMatch = z.infer<typeof ShellMatchSchema>;
export type ToolCallMatch = z.infer<typeof ToolCallMatchSchema>;
/** A parsed `match.path` (see {@link PathMatchSchema}). */
export type PathMatch = z.infer<typeof PathMatchSchema>;
/** A parsed `match.secrets` (see {@link SecretsMatchSchema}). */
export type SecretsMatch = z.infer<typeof SecretsMatchSchema>;
/** A parsed `match.session` (see {@link SessionMatchSchema}). */
export type SessionMatch = z.infer<typeof SessionMatchSchema>;

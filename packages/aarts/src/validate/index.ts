/**
 * Dependency-free validation of AARTS events and verdicts (adapter spec §1.9).
 *
 * The same rules as the zod schemas in `../schema/model.ts`, written as small check functions so
 * that the hook command and the bridge do not load zod at start-up (cold start matters: the
 * host spawns the hook for every tool call). Agreement with zod, ajv and Python's jsonschema is
 * tested over the example corpus and over generated instances.
 */
import {
  ARTIFACT_TYPES,
  CANONICAL_TOOL_NAMES,
  CONFIG_SOURCES,
  HOOK_CATALOG,
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
  isHookPoint,
  type HookPoint,
} from "../catalog.js";
import type { AartsEvent, Verdict, VersionCheckRequest, VersionCheckResponse } from "../types.js";

/** One rule an input broke, as reported by the `validate*` functions. */
export interface ValidationIssue {
  /** Dotted path of the offending member (`host_id`, `artifacts.0.type`); empty for the root. */
  readonly path: string;
  /** What is wrong, e.g. `missing required field` or `expected one of allow, deny, ask, got "maybe"`. */
  readonly message: string;
}

/**
 * Result of a `validate*` function: never throws. `ok: true` carries the input itself (not a copy,
 * unknown members kept); `ok: false` lists every issue and a one-line `message` naming the first.
 */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[]; message: string };

type Check = (value: unknown, path: string, out: ValidationIssue[]) => void;

const join = (path: string, key: string | number) => (path === "" ? String(key) : `${path}.${key}`);
const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const hasOwn = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const typed =
  (expected: string, test: (v: unknown) => boolean): Check =>
  (v, path, out) => {
    if (!test(v)) out.push({ path, message: `expected ${expected}, got ${kind(v)}` });
  };

const str = typed("string", (v) => typeof v === "string");
const nonEmptyStr: Check = (v, path, out) => {
  if (typeof v !== "string") out.push({ path, message: `expected string, got ${kind(v)}` });
  else if (v.length === 0) out.push({ path, message: "must not be empty" });
};
const bool = typed("boolean", (v) => typeof v === "boolean");
const num = typed("number", (v) => typeof v === "number" && Number.isFinite(v));
const jsonObject = typed("object", isObject);
const stringOrObject = typed("string or object", (v) => typeof v === "string" || isObject(v));
const stringOrArray = typed("string or array", (v) => typeof v === "string" || Array.isArray(v));
const requestId = typed("string or integer", (v) => typeof v === "string" || (typeof v === "number" && Number.isInteger(v)));

const pattern = (source: string, label: string): Check => {
  const re = new RegExp(source);
  return (v, path, out) => {
    if (typeof v !== "string") out.push({ path, message: `expected string, got ${kind(v)}` });
    else if (!re.test(v)) out.push({ path, message: `${JSON.stringify(v)} is not a valid ${label}` });
  };
};

const oneOf = (values: readonly string[]): Check => {
  const set = new Set(values);
  return (v, path, out) => {
    if (typeof v !== "string" || !set.has(v)) {
      out.push({ path, message: `expected one of ${values.join(", ")}, got ${typeof v === "string" ? JSON.stringify(v) : kind(v)}` });
    }
  };
};

const arr =
  (item?: Check): Check =>
  (v, path, out) => {
    if (!Array.isArray(v)) {
      out.push({ path, message: `expected array, got ${kind(v)}` });
      return;
    }
    if (item !== undefined) for (let i = 0; i < v.length; i++) item(v[i], join(path, i), out);
  };

interface Shape {
  readonly req: Readonly<Record<string, Check>>;
  readonly opt?: Readonly<Record<string, Check>>;
}

const merge = (...shapes: Shape[]): Shape => ({
  req: Object.assign({}, ...shapes.map((s) => s.req)) as Record<string, Check>,
  opt: Object.assign({}, ...shapes.map((s) => s.opt ?? {})) as Record<string, Check>,
});

function checkShape(v: Record<string, unknown>, shape: Shape, path: string, out: ValidationIssue[]): void {
  for (const [key, check] of Object.entries(shape.req)) {
    if (!hasOwn(v, key) || v[key] === undefined) out.push({ path: join(path, key), message: "missing required field" });
    else check(v[key], join(path, key), out);
  }
  if (shape.opt !== undefined) {
    for (const [key, check] of Object.entries(shape.opt)) {
      if (hasOwn(v, key) && v[key] !== undefined) check(v[key], join(path, key), out);
    }
  }
}

const obj =
  (shape: Shape): Check =>
  (v, path, out) => {
    if (!isObject(v)) out.push({ path, message: `expected object, got ${kind(v)}` });
    else checkShape(v, shape, path, out);
  };

// ------------------------------------------------------------------ shared shapes

const artifact = obj({ req: { type: oneOf(ARTIFACT_TYPES), value: str }, opt: { context: str, source_field: str } });
const modifierEntry = obj({ req: { modifier_id: str, config_source: oneOf(CONFIG_SOURCES), modified: bool } });
const confidence: Check = (v, path, out) => {
  if (typeof v !== "number" || !Number.isFinite(v)) out.push({ path, message: `expected number, got ${kind(v)}` });
  else if (v < 0 || v > 1) out.push({ path, message: "must be between 0 and 1" });
};
const directives = obj({
  req: {},
  opt: {
    inject_context: obj({ req: { position: oneOf(INJECT_POSITIONS), content: str } }),
    permitted_tools: arr(str),
    strip_hooks: bool,
    "x-ahp": obj({ req: { request_id: requestId, event_type: str, decision: obj({ req: { decision: str } }) } }),
  },
});
const verdictShape: Shape = {
  req: { decision: oneOf(VERDICT_DECISIONS), category: str, severity: oneOf(SEVERITIES), source: str },
  opt: {
    confidence,
    artifacts: arr(str),
    matched_rule_id: str,
    reasons: arr(str),
    directives,
    suggested_resolutions: arr(str),
  },
};
const verdict = obj(verdictShape);
const declaredHook = obj({ req: { event: str }, opt: { matcher: str, command: str, type: str } });

const ENVELOPE: Shape = {
  req: {
    hook_point: oneOf(Object.keys(HOOK_CATALOG)),
    session_id: str,
    timestamp: pattern(RFC3339_PATTERN, "RFC 3339 timestamp"),
    host_id: pattern(HOST_ID_PATTERN, "host id (lowercase kebab-case)"),
    aarts_version: nonEmptyStr,
  },
  opt: { host_version: str, locale: pattern(LOCALE_PATTERN, "locale") },
};
const TURN: Shape = { req: { turn_id: str } };
const TRUST: Shape = { req: { source: oneOf(TRUST_SOURCES) }, opt: { source_id: str } };
const MODIFICATION: Shape = {
  req: { original_value: stringOrObject, modified_value: stringOrObject, was_modified: bool, modifier_chain: arr(modifierEntry) },
};
const PROVENANCE: Shape = {
  req: {},
  opt: {
    source_prompt_modified: bool,
    active_skill: str,
    is_sub_agent: bool,
    parent_session_id: str,
    input_modifier_chain: arr(modifierEntry),
  },
};
const TOOL: Shape = {
  req: { tool_name: oneOf(CANONICAL_TOOL_NAMES), tool_input: jsonObject, artifacts: arr(artifact) },
  opt: { tool_name_native: str },
};

const HOOK_FIELDS: { readonly [H in HookPoint]: Shape } = {
  SessionStart: {
    req: {},
    opt: {
      plugins: arr(obj({ req: { name: str }, opt: { version: str, source: oneOf(TRUST_SOURCES), file_hashes: arr(str) } })),
      configuration_sources: arr(obj({ req: { path: str, origin: oneOf(["user", "project", "managed"]) } })),
      environment: obj({ req: {}, opt: { os: str, shell: str, working_directory: str } }),
    },
  },
  SessionEnd: {
    req: {},
    opt: {
      summary: obj({
        req: { tool_calls: num, verdicts: obj({ req: { allow: num, deny: num, ask: num } }), denied_actions: arr(str) },
      }),
    },
  },
  PrePluginLoad: {
    req: { plugin_id: str, file_paths: arr(str), declared_hooks: arr(declaredHook) },
    opt: { file_hashes: arr(str), declared_permissions: arr() },
  },
  PreSkillLoad: {
    req: { file_path: str, frontmatter: jsonObject, declared_hooks: arr(declaredHook), load_context: oneOf(LOAD_CONTEXTS) },
    opt: { file_hash: str, body_content: str },
  },
  PreMCPConnect: {
    req: { server_id: str, transport: oneOf(MCP_TRANSPORTS) },
    opt: { server_uri: str, server_command: str, declared_tools: arr(), declared_resources: arr() },
  },
  PreUserInput: { req: { raw_input: str }, opt: { input_source: str, attached_files: arr() } },
  PostInputProcessing: { req: {} },
  PreLLMRequest: {
    req: { full_prompt: stringOrArray },
    opt: {
      system_prompt: str,
      custom_instructions: arr(obj({ req: { source: oneOf(["user", "project", "managed"]), content: str }, opt: { path: str } })),
      context_injections: arr(obj({ req: { source: str, content: str } })),
      user_input: str,
      model_id: str,
      token_count: num,
    },
  },
  PostLLMResponse: {
    req: { response_text: str },
    opt: {
      planned_actions: arr(obj({ req: { tool_name: oneOf(CANONICAL_TOOL_NAMES), tool_name_native: str, tool_input: jsonObject } })),
      stop_reason: str,
    },
  },
  PreToolUse: { req: {} },
  PostToolUse: {
    req: { tool_result: stringOrObject },
    opt: { exit_code: num, execution_duration_ms: num, side_effects: arr() },
  },
  PreToolInputModification: { req: { tool_name: oneOf(CANONICAL_TOOL_NAMES) } },
  PreSubAgentSpawn: {
    req: { sub_agent_id: str, delegated_task: str },
    opt: {
      sub_agent_type: str,
      skill_files: arr(str),
      declared_hooks: arr(declaredHook),
      requested_tools: arr(str),
      parent_permissions: jsonObject,
    },
  },
  PostSubAgentResult: { req: { sub_agent_id: str, result: stringOrObject }, opt: { tool_calls_made: arr(), verdicts_issued: arr() } },
  PreOutputDeliver: { req: { output_text: str }, opt: { actions_taken: arr() } },
  PreMemoryWrite: { req: { memory_store: str, content: stringOrObject }, opt: { memory_type: str, write_source: str } },
  PreMemoryRead: { req: { memory_store: str, retrieved_content: stringOrObject }, opt: { query: str } },
  PreCompact: {
    req: { context_before: stringOrArray },
    opt: { token_count_before: num, compaction_reason: str, compaction_strategy: str },
  },
  PostCompact: { req: {}, opt: { token_count_after: num, compaction_strategy_used: str } },
  PostAskResolution: {
    req: { original_hook_point: oneOf(Object.keys(HOOK_CATALOG)), original_verdict: verdict, resolution: oneOf(RESOLUTIONS) },
  },
};

const EXTENSION_SHAPES = { turn: TURN, tool: TOOL, trust_source: TRUST, modification: MODIFICATION, provenance: PROVENANCE };

/** Complete shape (envelope + extensions + hook fields) of every hook point. */
const EVENT_SHAPES = Object.fromEntries(
  Object.values(HOOK_CATALOG).map((info) => [
    info.hookPoint,
    merge(ENVELOPE, ...info.extensions.map((e) => EXTENSION_SHAPES[e]), HOOK_FIELDS[info.hookPoint]),
  ]),
) as { readonly [H in HookPoint]: Shape };

function result<T>(value: unknown, issues: ValidationIssue[], what: string): ValidationResult<T> {
  if (issues.length === 0) return { ok: true, value: value as T };
  const first = issues[0]!;
  return { ok: false, issues, message: `invalid ${what}: ${first.path === "" ? "" : `${first.path}: `}${first.message}` };
}

/** Validates one AARTS hook event (spec §1.9). Unknown extra members are allowed. */
export function validateEvent(value: unknown): ValidationResult<AartsEvent> {
  const out: ValidationIssue[] = [];
  if (!isObject(value)) {
    out.push({ path: "", message: `expected object, got ${kind(value)}` });
    return result(value, out, "event");
  }
  const hookPoint = value.hook_point;
  if (!isHookPoint(hookPoint)) {
    checkShape(value, ENVELOPE, "", out);
    return result(value, out, "event");
  }
  checkShape(value, EVENT_SHAPES[hookPoint], "", out);
  if (HOOK_CATALOG[hookPoint].extensions.includes("tool") && value.tool_name === "other" && typeof value.tool_name_native !== "string") {
    out.push({ path: "tool_name_native", message: 'required when tool_name is "other"' });
  }
  return result(value, out, `${hookPoint} event`);
}

/** Validates a verdict (spec §1.7, §1.9). */
export function validateVerdict(value: unknown): ValidationResult<Verdict> {
  const out: ValidationIssue[] = [];
  verdict(value, "", out);
  return result(value, out, "verdict");
}

/** Validates one artifact (spec §1.6). */
export function validateArtifact(value: unknown): ValidationResult<unknown> {
  const out: ValidationIssue[] = [];
  artifact(value, "", out);
  return result(value, out, "artifact");
}

/** Validates a version check request (spec §1.1): `aarts_version` must be a string. */
export function validateVersionCheckRequest(value: unknown): ValidationResult<VersionCheckRequest> {
  const out: ValidationIssue[] = [];
  obj({ req: { aarts_version: str } })(value, "", out);
  return result(value, out, "version check request");
}

/** Validates a version check response (spec §1.1): boolean `compatible`, string `engine_id`, optional string `engine_version`. */
export function validateVersionCheckResponse(value: unknown): ValidationResult<VersionCheckResponse> {
  const out: ValidationIssue[] = [];
  obj({ req: { compatible: bool, engine_id: str }, opt: { engine_version: str } })(value, "", out);
  return result(value, out, "version check response");
}

/**
 * Standard-level Provenance on a PreToolUse event (spec §1.3 [PROJECT]): boolean
 * `source_prompt_modified` and `is_sub_agent`, `parent_session_id` when a sub-agent, and an
 * `input_modifier_chain` array.
 */
export function hasStandardProvenance(event: Record<string, unknown>): boolean {
  return (
    typeof event.source_prompt_modified === "boolean" &&
    typeof event.is_sub_agent === "boolean" &&
    (event.is_sub_agent === false || typeof event.parent_session_id === "string") &&
    Array.isArray(event.input_modifier_chain)
  );
}

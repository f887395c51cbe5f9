/**
 * AHP event → AARTS event (adapter spec §5.7), pure. An event that carries a valid AARTS event
 * under `payload.aarts` whose hook maps to the same AHP event type and discriminator yields that
 * event verbatim (E → A → E is the identity, §5.11); otherwise the AARTS event is synthesised
 * from the AHP payload.
 */
import {
  AARTS_EVENT_VERSION,
  HOOK_CATALOG,
  HOOK_POINTS,
  HOST_ID_PATTERN,
  RFC3339_PATTERN,
  isHookPoint,
  type HookPoint,
} from "../catalog.js";
import { extractArtifacts } from "../artifacts/extract.js";
import { canonicalize } from "../taxonomy/canonicalize.js";
import type { AartsEvent } from "../types.js";
import { validateEvent } from "../validate/index.js";

/** The AHP event as received (already decoded as an AhpEvent envelope). */
export interface AhpEventLike {
  readonly event_type: string;
  readonly session_id: string;
  readonly agent_id: string;
  readonly timestamp: string;
  readonly depth: number;
  readonly payload: unknown;
  readonly metadata?: Record<string, unknown> | null;
}

/** Context of {@link fromAhpEvent}: what the AHP connection knows beyond the event itself. */
export interface FromAhpEventContext {
  /** `agent_info` of the connection's handshake, when one was made. */
  readonly agentInfo?: { readonly framework?: string; readonly version?: string };
  /** Receipt time (used when the AHP timestamp is not RFC 3339). */
  readonly receivedAt?: Date;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const HOST_ID_RE = new RegExp(HOST_ID_PATTERN);
const RFC3339_RE = new RegExp(RFC3339_PATTERN);
const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v ?? null));
const stringOrObject = (v: unknown): string | Record<string, unknown> => (typeof v === "string" || isRecord(v) ? v : text(v));
const stringOrArray = (v: unknown): string | unknown[] => (typeof v === "string" || Array.isArray(v) ? v : text(v));

function getPath(source: Record<string, unknown>, dotted: string): unknown {
  let cursor: unknown = source;
  for (const key of dotted.split(".")) {
    if (!isRecord(cursor)) return undefined;
    cursor = cursor[key];
  }
  return cursor;
}

/** Hook point addressed by an AHP event type + discriminator, when it is one of §5.3's. */
export function hookForAhp(eventType: string, payload: unknown): HookPoint | undefined {
  const p = isRecord(payload) ? payload : {};
  for (const hook of HOOK_POINTS) {
    const route = HOOK_CATALOG[hook].ahp;
    if (route.eventType !== eventType) continue;
    if (route.discriminator === undefined) return hook;
    if (p[route.discriminator.key] === route.discriminator.value) return hook;
  }
  return undefined;
}

const kebab = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");

/** Envelope synthesis (§5.7). */
function envelope(event: AhpEventLike, hookPoint: HookPoint, ctx: FromAhpEventContext): Record<string, unknown> {
  const meta = isRecord(event.metadata?.aarts) ? event.metadata.aarts : {};
  let hostId = "ahp-agent";
  if (typeof meta.host_id === "string" && HOST_ID_RE.test(meta.host_id)) hostId = meta.host_id;
  else if (HOST_ID_RE.test(event.agent_id)) hostId = event.agent_id;
  else if (typeof ctx.agentInfo?.framework === "string" && HOST_ID_RE.test(kebab(ctx.agentInfo.framework)))
    hostId = kebab(ctx.agentInfo.framework);
  const out: Record<string, unknown> = {
    hook_point: hookPoint,
    session_id: event.session_id,
    timestamp: RFC3339_RE.test(event.timestamp) ? event.timestamp : (ctx.receivedAt ?? new Date()).toISOString(),
    host_id: hostId,
  };
  if (typeof ctx.agentInfo?.version === "string") out.host_version = ctx.agentInfo.version;
  out.aarts_version = AARTS_EVENT_VERSION;
  if (HOOK_CATALOG[hookPoint].extensions.includes("turn")) {
    const trace = event.metadata?.trace_id;
    out.turn_id = typeof meta.turn_id === "string" ? meta.turn_id : typeof trace === "string" ? trace : `${event.session_id}:ahp`;
  }
  return out;
}

function toolFields(payload: Record<string, unknown>): Record<string, unknown> {
  const native = typeof payload.tool_name === "string" ? payload.tool_name : "unknown";
  const toolInput = isRecord(payload.arguments) ? payload.arguments : {};
  const tool = canonicalize("ahp", native, toolInput);
  return {
    tool_name: tool.tool_name,
    tool_name_native: tool.tool_name_native,
    tool_input: toolInput,
    artifacts: extractArtifacts(tool.tool_name, toolInput, { hostId: "ahp", nativeName: native }),
  };
}

const TRUST_DEFAULT = { source: "project" } as const;
const MODIFIER_NONE = { modifier_chain: [] as unknown[] };

/**
 * Synthesises the hook-specific fields of `hookPoint` from an AHP payload: projected fields
 * back in place, MUST fields the AHP side cannot know given neutral defaults (origin `project`,
 * the least trusted class, for Trust Source).
 */
function hookFields(hookPoint: HookPoint, payload: Record<string, unknown>, event: AhpEventLike): Record<string, unknown> {
  const projected: Record<string, unknown> = {};
  for (const [payloadKey, field] of HOOK_CATALOG[hookPoint].ahp.projection) {
    const v = getPath(payload, payloadKey);
    if (v !== undefined) projected[field] = v;
  }
  switch (hookPoint) {
    case "SessionStart":
      return {};
    case "SessionEnd":
      return isRecord(payload.summary) ? { summary: payload.summary } : {};
    case "PrePluginLoad":
      return { ...TRUST_DEFAULT, plugin_id: text(projected.plugin_id ?? "unknown"), file_paths: [], declared_hooks: [] };
    case "PreSkillLoad":
      return {
        ...TRUST_DEFAULT,
        file_path: text(projected.file_path ?? ""),
        frontmatter: {},
        declared_hooks: [],
        load_context: "main_session",
      };
    case "PreMCPConnect": {
      const transport = projected.transport === "sse" || projected.transport === "streamable_http" ? projected.transport : "stdio";
      return { ...TRUST_DEFAULT, server_id: text(projected.server_id ?? "unknown"), transport };
    }
    case "PreUserInput":
      return { raw_input: text(projected.raw_input ?? "") };
    case "PostInputProcessing": {
      const modified = stringOrObject(projected.modified_value ?? "");
      const original = stringOrObject(projected.original_value ?? modified);
      return {
        original_value: original,
        modified_value: modified,
        was_modified: JSON.stringify(original) !== JSON.stringify(modified),
        ...MODIFIER_NONE,
      };
    }
    case "PreLLMRequest":
      return {
        full_prompt: stringOrArray(projected.full_prompt ?? ""),
        ...(typeof projected.model_id === "string" ? { model_id: projected.model_id } : {}),
      };
    case "PostLLMResponse":
      return { response_text: text(projected.response_text ?? "") };
    case "PreToolUse":
      return {
        ...toolFields(payload),
        source_prompt_modified: false,
        is_sub_agent: event.depth > 0,
        input_modifier_chain: [],
      };
    case "PostToolUse":
      return { ...toolFields(payload), tool_result: stringOrObject(projected.tool_result ?? {}) };
    case "PreToolInputModification": {
      const modified = stringOrObject(projected.modified_value ?? {});
      const original = stringOrObject(projected.original_value ?? modified);
      const native = typeof payload.tool_name === "string" ? payload.tool_name : "unknown";
      return {
        ...TRUST_DEFAULT,
        tool_name: canonicalize("ahp", native, isRecord(modified) ? modified : {}).tool_name,
        original_value: original,
        modified_value: modified,
        was_modified: JSON.stringify(original) !== JSON.stringify(modified),
        ...MODIFIER_NONE,
      };
    }
    case "PreSubAgentSpawn":
      return {
        sub_agent_id: text(projected.sub_agent_id ?? `${event.session_id}/sub`),
        delegated_task: text(projected.delegated_task ?? ""),
      };
    case "PostSubAgentResult":
      return { sub_agent_id: text(projected.sub_agent_id ?? "unknown"), result: stringOrObject(projected.result ?? "") };
    case "PreOutputDeliver":
      return { output_text: text(projected.output_text ?? "") };
    case "PreMemoryWrite":
      return { memory_store: text(projected.memory_store ?? "default"), content: stringOrObject(projected.content ?? "") };
    case "PreMemoryRead":
      return {
        memory_store: text(projected.memory_store ?? "default"),
        retrieved_content: stringOrObject(projected.retrieved_content ?? ""),
      };
    case "PreCompact":
      return { context_before: stringOrArray(payload.context_before ?? "") };
    case "PostCompact": {
      const modified = stringOrObject(projected.modified_value ?? "");
      const original = stringOrObject(payload.original_prompt ?? "");
      return { original_value: original, modified_value: modified, was_modified: true, ...MODIFIER_NONE };
    }
    case "PostAskResolution":
      return {};
  }
}

/**
 * AHP event → AARTS event (§5.7). Returns undefined for AHP events with no AARTS equivalent
 * (`error`, `success`, `heartbeat`, run contracts, typed events) and for an `ask_resolution`
 * without a valid resolution.
 */
export function fromAhpEvent(event: AhpEventLike, ctx: FromAhpEventContext = {}): AartsEvent | undefined {
  const payload = isRecord(event.payload) ? event.payload : {};
  const carried = payload.aarts;
  if (carried !== undefined) {
    const checked = validateEvent(carried);
    if (checked.ok && hookForAhp(event.event_type, payload) === checked.value.hook_point) return checked.value;
  }
  let hookPoint: HookPoint;
  switch (event.event_type) {
    case "pre_action": {
      const hook = hookForAhp("pre_action", payload);
      hookPoint = hook === undefined || hook === "PreToolUse" ? "PreToolUse" : hook;
      break;
    }
    case "pre_prompt": {
      const hook = hookForAhp("pre_prompt", payload);
      if (hook === undefined) {
        const full =
          typeof payload.prompt === "string" || Array.isArray(payload.prompt)
            ? payload.prompt
            : Array.isArray(payload.messages)
              ? payload.messages
              : JSON.stringify(payload);
        return { ...envelope(event, "PreLLMRequest", ctx), full_prompt: full } as AartsEvent;
      }
      hookPoint = hook;
      break;
    }
    case "post_action": {
      if (payload.action_type === "ask_resolution") return askResolution(event, payload, ctx);
      const result = isRecord(payload.result) ? payload.result : undefined;
      const out: Record<string, unknown> = {
        ...envelope(event, "PostToolUse", ctx),
        ...toolFields(payload),
        tool_result: payload.result === undefined ? {} : stringOrObject(payload.result),
      };
      if (typeof result?.exit_code === "number") out.exit_code = result.exit_code;
      if (typeof result?.duration_ms === "number") out.execution_duration_ms = result.duration_ms;
      return out as AartsEvent;
    }
    case "post_response": {
      const response =
        typeof payload.response === "string" ? payload.response : typeof payload.text === "string" ? payload.text : JSON.stringify(payload);
      return { ...envelope(event, "PostLLMResponse", ctx), response_text: response } as AartsEvent;
    }
    case "session_start":
      hookPoint = "SessionStart";
      break;
    case "session_end":
      hookPoint = "SessionEnd";
      break;
    default:
      return undefined;
  }
  const synthesized = { ...envelope(event, hookPoint, ctx), ...hookFields(hookPoint, payload, event) } as AartsEvent;
  if (hookPoint === "PreToolUse") {
    const meta = isRecord(event.metadata?.aarts) ? event.metadata.aarts : {};
    if (typeof meta.parent_session_id === "string") (synthesized as Record<string, unknown>).parent_session_id = meta.parent_session_id;
  }
  return synthesized;
}

function askResolution(event: AhpEventLike, payload: Record<string, unknown>, ctx: FromAhpEventContext): AartsEvent | undefined {
  const result = isRecord(payload.result) ? payload.result : {};
  const resolution = result.status;
  const valid = ["approved", "denied", "allow_always", "allow_similar", "deny_always", "deny_similar"];
  if (typeof resolution !== "string" || !valid.includes(resolution)) return undefined;
  const original = isHookPoint(payload.original_hook_point) ? payload.original_hook_point : "PreToolUse";
  return {
    ...envelope(event, "PostAskResolution", ctx),
    original_hook_point: original,
    original_verdict: { decision: "ask", category: "policy", severity: "warning", source: "ahp" },
    resolution,
  } as AartsEvent;
}

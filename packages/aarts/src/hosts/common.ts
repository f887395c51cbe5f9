/**
 * Shared pieces of the subprocess host adapters: input decoding, the runtime an adapter runs
 * against, the per-session state shape, and event builders.
 */
import { AARTS_EVENT_VERSION, type HookPoint, type Resolution, type VerdictDecision } from "../catalog.js";
import { extractArtifacts } from "../artifacts/extract.js";
import type { HostDecision } from "../host/host.js";
import type { SubAgentRecord } from "../host/host.js";
import type { StateStore } from "../host/state.js";
import { canonicalize, type CanonicalizeOptions } from "../taxonomy/canonicalize.js";
import type { AartsEvent, Verdict } from "../types.js";

/** What a subprocess hook writes back to its host. */
export interface NativeResponse {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/** A {@link NativeResponse} that writes `value` as one JSON line to stdout with `exitCode` (default 0). */
export const json = (value: unknown, exitCode = 0): NativeResponse => ({ stdout: `${JSON.stringify(value)}\n`, stderr: "", exitCode });
/** The empty answer `{}` with exit code 0: "no opinion", the host proceeds as without the hook. */
export const EMPTY: NativeResponse = Object.freeze({ stdout: "{}\n", stderr: "", exitCode: 0 });

/** Thrown by {@link decodeHookInput} when a host's hook input is not a JSON object in UTF-8 or UTF-16LE. */
export class HookInputError extends Error {
  override readonly name = "HookInputError";
}

/**
 * Decodes a host's hook input (spec §4): UTF-8, and on a JSON parse failure UTF-16LE (some
 * Windows shells pipe UTF-16); a BOM is stripped. The result must be a JSON object.
 */
export function decodeHookInput(bytes: Uint8Array): Record<string, unknown> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const attempts: string[] = [];
  const utf8 = buffer.toString("utf8").replace(/^\uFEFF/, "");
  attempts.push(utf8);
  const looksUtf16 = buffer.length >= 2 && ((buffer[0] === 0xff && buffer[1] === 0xfe) || buffer.subarray(0, 64).includes(0));
  if (looksUtf16 || buffer.length % 2 === 0) attempts.push(buffer.toString("utf16le").replace(/^\uFEFF/, ""));
  let firstError: unknown;
  for (const text of attempts) {
    try {
      const value = JSON.parse(text) as unknown;
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new HookInputError("hook input is not a JSON object");
      return value as Record<string, unknown>;
    } catch (error) {
      if (error instanceof HookInputError) throw error;
      firstError ??= error;
    }
  }
  throw new HookInputError(`hook input is not valid JSON (${firstError instanceof Error ? firstError.message : String(firstError)})`);
}

/** Per-session state kept between hook processes (spec §4 general rules). */
export interface SessionState {
  /** `UserPromptSubmit` counter (turn ids `<session>:<n>`). */
  turn: number;
  /** Allowed spawns not yet bound to a native sub-agent id (FIFO). */
  pendingSpawns: { toolUseId: string; subAgentId: string; at: number }[];
  /** Native agent id → sub-agent session. */
  agents: Record<string, { subAgentId: string; toolUseId?: string }>;
  /** Sub-agent registry for `permitted_tools`. */
  subAgents: Record<string, SubAgentRecord>;
  /** Asks shown to the user, by native tool call id, for resolution inference (§2.4). */
  pendingAsks: Record<string, { hookPoint: HookPoint; verdict: Verdict; turnId: string; sessionId: string; event: AartsEvent; at: number }>;
  /** PreCompact snapshot for PostCompact. */
  compact?: { before: unknown; at: number };
  /** SessionEnd summary counters. */
  summary: { tool_calls: number; verdicts: { allow: number; deny: number; ask: number }; denied_actions: string[] };
  /** Host-specific extras (e.g. Copilot's synthetic session id). */
  extra?: Record<string, unknown>;
}

/** A fresh {@link SessionState}: turn 0, nothing pending, zero counters. */
export const emptySessionState = (): SessionState => ({
  turn: 0,
  pendingSpawns: [],
  agents: {},
  subAgents: {},
  pendingAsks: {},
  summary: { tool_calls: 0, verdicts: { allow: 0, deny: 0, ask: 0 }, denied_actions: [] },
});

/** How long pending asks and spawns are remembered. */
export const PENDING_TTL_MS = 60 * 60 * 1000;

/** The runtime an adapter runs against (provided by the hook command or by tests). */
export interface HookRuntime {
  /**
   * Evaluates a blocking hook (host role: policy, merge, directives). `subAgents` is the
   * session's sub-agent registry (for `permitted_tools`, §2.5), persisted by the adapter.
   */
  evaluate(event: AartsEvent, options?: { subAgents?: Record<string, SubAgentRecord> }): Promise<HostDecision>;
  /** Fires a Notification hook; never throws. */
  notify(event: AartsEvent): Promise<void>;
  readonly state: StateStore;
  now(): Date;
  readonly options: AdapterOptions;
}

/** Options of the subprocess host adapters (`run*Hook`), usually filled from the hook command's flags. */
export interface AdapterOptions {
  /** Claude Code / VS Code: how an applied modification is rendered. Default `ask`. */
  readonly modifyAs?: "ask" | "allow";
  /** Host version to put in events when the input does not carry it. */
  readonly hostVersion?: string;
  /** BCP 47 locale to put in events (envelope `locale`). */
  readonly locale?: string;
  /** MCP tool names for hosts whose MCP rule is set membership. */
  readonly mcpTools?: readonly string[];
  /** User tool map (§3.2 rule 3). */
  readonly toolMap?: Readonly<Record<string, string>>;
  /** Home directory (skill lookup); default the process's. */
  readonly home?: string;
}

/** Inputs of {@link envelope}. */
export interface EnvelopeFields {
  /** `host_id` (e.g. `claude-code`). */
  readonly hostId: string;
  /** `session_id` of the event. */
  readonly sessionId: string;
  /** Becomes `timestamp` (RFC 3339 UTC with milliseconds). */
  readonly now: Date;
  /** `host_version`, when known. */
  readonly hostVersion?: string | undefined;
  /** `locale`, when known. */
  readonly locale?: string | undefined;
}

/** The envelope (§1.2) of an event we build. */
export function envelope(hookPoint: HookPoint, f: EnvelopeFields): Record<string, unknown> {
  return {
    hook_point: hookPoint,
    session_id: f.sessionId,
    timestamp: f.now.toISOString(),
    host_id: f.hostId,
    ...(f.hostVersion === undefined ? {} : { host_version: f.hostVersion }),
    aarts_version: AARTS_EVENT_VERSION,
    ...(f.locale === undefined ? {} : { locale: f.locale }),
  };
}

/** The Tool extension fields of a native tool call: canonical name and artifacts (§3.2, §3.5). */
export function toolContext(
  hostId: string,
  nativeName: string,
  toolInput: Record<string, unknown>,
  options: CanonicalizeOptions = {},
): { tool_name: string; tool_name_native: string; tool_input: Record<string, unknown>; artifacts: ReturnType<typeof extractArtifacts> } {
  const tool = canonicalize(hostId, nativeName, toolInput, options);
  return {
    tool_name: tool.tool_name,
    tool_name_native: tool.tool_name_native,
    tool_input: toolInput,
    artifacts: extractArtifacts(tool.tool_name, toolInput, { hostId, nativeName }),
  };
}

/** Provenance of an event we build (§1.3 [PROJECT]: always the booleans and the chain). */
export function provenance(sub?: { parentSessionId: string }): Record<string, unknown> {
  return {
    source_prompt_modified: false,
    is_sub_agent: sub !== undefined,
    ...(sub === undefined ? {} : { parent_session_id: sub.parentSessionId }),
    input_modifier_chain: [],
  };
}

/** A tool input that may arrive as a JSON string (Cursor, Copilot CLI): parsed, else `{raw}`. */
export function toolInputOf(value: unknown): Record<string, unknown> {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  if (typeof value === "string") {
    try {
      const parsed = JSON.parse(value) as unknown;
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // fall through
    }
    return { raw: value };
  }
  return value === undefined || value === null ? {} : { raw: value };
}

/** `v` when it is a string, else `undefined`. */
export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A tool result as `string or object` (§1.5 PostToolUse). */
export function stringOrObject(v: unknown): string | Record<string, unknown> {
  if (typeof v === "string") return v;
  if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  return { value: v ?? null };
}

/** Records a decision in the session summary (SessionEnd, §1.5). */
export function countDecision(state: SessionState, decision: HostDecision): void {
  const d: VerdictDecision = decision.enforced;
  state.summary.verdicts[d]++;
  if (decision.event.hook_point === "PreToolUse") {
    state.summary.tool_calls++;
    if (d === "deny") {
      const e = decision.event;
      const first = e.artifacts[0]?.value ?? "";
      const label = `${e.tool_name_native ?? e.tool_name}${first === "" ? "" : `: ${first}`}`;
      state.summary.denied_actions.push(label.length > 200 ? `${label.slice(0, 199)}…` : label);
      if (state.summary.denied_actions.length > 100) state.summary.denied_actions.shift();
    }
  }
}

/** Strictest of two host decisions (§5.8): the second wins only when strictly stricter. */
export function strictest(a: HostDecision, b: HostDecision | undefined): HostDecision {
  if (b === undefined) return a;
  const rank = { allow: 0, ask: 1, deny: 2 } as const;
  return rank[b.enforced] > rank[a.enforced] ? b : a;
}

export type { Resolution };

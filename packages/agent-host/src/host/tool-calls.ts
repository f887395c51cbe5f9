/** Field derivation for tool calls and results (spec §8.1 "Field derivation", §8.3). Pure. */
import type { ConfirmationOption, ToolCallResult } from "../wire/types.js";

export const MAX_TOOL_TEXT = 64 * 1024;
const TRUNCATED = "…[truncated]";

type Obj = Record<string, unknown>;
export const asObject = (v: unknown): Obj => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Truncates text to `max` UTF-16 units with a trailing marker. */
export function truncate(text: string, max = MAX_TOOL_TEXT): string {
  return text.length <= max ? text : text.slice(0, max - TRUNCATED.length) + TRUNCATED;
}

/** Compact JSON, or undefined for values JSON cannot hold. */
export function compactJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

export const toolNameOf = (payload: unknown): string => str(asObject(payload).tool_name) ?? str(asObject(payload).action_type) ?? "tool";

/** Display names already derived, by tool name (names up to 64 characters, 256 at most; cleared when full). */
const DISPLAY_NAMES = new Map<string, string>();

export function displayNameOf(toolName: string): string {
  let name = DISPLAY_NAMES.get(toolName);
  if (name !== undefined) return name;
  const spaced = toolName.replace(/[_-]+/g, " ").trim();
  name = spaced === "" ? toolName : spaced[0]!.toUpperCase() + spaced.slice(1);
  if (toolName.length <= 64) {
    if (DISPLAY_NAMES.size >= 256) DISPLAY_NAMES.clear();
    DISPLAY_NAMES.set(toolName, name);
  }
  return name;
}

export function intentionOf(payload: unknown): string | undefined {
  const p = asObject(payload);
  return str(p.description) ?? str(p.intent);
}

/** The id the agent supplied for a tool call, if any. */
export function suppliedToolCallId(payload: unknown, metadata: unknown): string | undefined {
  const p = asObject(payload);
  return str(p.tool_call_id) ?? str(p.call_id) ?? str(asObject(metadata).tool_call_id);
}

const SUMMARY_KEYS = ["command", "path", "file_path", "url", "query"];

export function invocationMessageOf(toolName: string, args: unknown): string {
  const a = asObject(args);
  for (const key of SUMMARY_KEYS) {
    const v = a[key];
    if (typeof v === "string" || typeof v === "number") return `${toolName}: ${truncate(String(v), 200)}`;
  }
  const json = compactJson(args ?? {}) ?? "";
  return `${toolName}: ${json.length > 120 ? `${json.slice(0, 119)}…` : json}`;
}

/** `toolInput`: the arguments as compact JSON, truncated. */
export function toolInputOf(args: unknown): string {
  return truncate(compactJson(args ?? {}) ?? "{}");
}

export function confirmationOptions(toolName: string, labels: ApprovalLabels = DEFAULT_LABELS): ConfirmationOption[] {
  return [
    { id: "allow-once", label: labels.allow, kind: "approve", group: 0 },
    { id: "allow-session", label: labels.allowSession(toolName), kind: "approve", group: 0 },
    { id: "deny", label: labels.deny, kind: "deny", group: 1 },
  ];
}

/**
 * The texts of a held tool approval (spec §9.1): option labels (`allowSession` gets the tool name) and
 * the title (`title` gets the tool's display name). Set with `AgentHostOptions.labels`; default {@link DEFAULT_LABELS}.
 */
export interface ApprovalLabels {
  allow: string;
  allowSession: (toolName: string) => string;
  deny: string;
  title: (displayName: string) => string;
}

/**
 * The English texts of a held tool approval (spec §9.1): the title (`Approve Run shell?` for `run_shell`)
 * and the options `Allow`, `Allow <tool> for this session` and `Deny`. Replace them through
 * `AgentHostOptions.labels`.
 */
export const DEFAULT_LABELS: ApprovalLabels = {
  allow: "Allow",
  allowSession: (tool) => `Allow ${tool} for this session`,
  deny: "Deny",
  title: (name) => `Approve ${name}?`,
};

/** Maps a `post_action` payload onto a `ToolCallResult` (§8.3). */
export function toolResultOf(toolName: string, payload: unknown): ToolCallResult {
  const p = asObject(payload);
  const r = asObject(p.result);
  const status = str(r.status) ?? str(p.status);
  const exitRaw = r.exit_code ?? p.exit_code;
  const exitCode = typeof exitRaw === "number" ? exitRaw : undefined;
  const errorText = str(r.error) ?? str(p.error);
  const statusOk = status === undefined ? errorText === undefined : status === "ok" || status === "success";
  const success = statusOk && (exitCode === undefined || exitCode === 0);
  const output = r.output ?? p.output;
  const text = typeof output === "string" ? output : output === undefined ? undefined : compactJson(output);
  const result: ToolCallResult = {
    success,
    pastTenseMessage: success
      ? `Ran ${toolName}`
      : exitCode !== undefined && exitCode !== 0
        ? `${toolName} failed (exit ${exitCode})`
        : `${toolName} failed`,
  };
  if (text !== undefined) result.content = [{ type: "text", text: truncate(text) }];
  if (!success) {
    result.error = { message: errorText ?? (exitCode !== undefined ? `exit code ${exitCode}` : `status ${status ?? "unknown"}`) };
    if (exitCode !== undefined) result.error.code = String(exitCode);
  }
  return result;
}

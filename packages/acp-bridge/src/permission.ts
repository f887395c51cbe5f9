/**
 * An agent's `session/request_permission` as the harness sees it, and what the client and the
 * agent are told when the harness refuses (ADR 0142).
 *
 * The ACP tool call carries `kind` (`read`, `edit`, `delete`, `move`, `search`, `execute`,
 * `think`, `fetch`, `switch_mode`, `other`), `rawInput` and `locations`; the bridge knows the
 * session's `cwd`. They become an AHP `pre_action` payload in the shape `@ahp/shell` and the
 * policy read: a tool name the file and shell rules know, the arguments with the file paths, and
 * the session's working directory (the workspace root of path rules).
 */
import { META } from "./constants.js";

const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * The tool name each ACP `kind` becomes: names the policy's file rules (`edit`, `delete_file`,
 * `move_file`, ...) and `@ahp/shell`'s shell tools (`shell`) already match.
 */
export const KIND_TOOL_NAMES: Readonly<Record<string, string>> = Object.freeze({
  read: "read_file",
  edit: "edit",
  delete: "delete_file",
  move: "move_file",
  search: "search",
  execute: "shell",
  think: "think",
  fetch: "fetch",
  switch_mode: "switch_mode",
});

/** The file paths of an ACP tool call's `locations` (`[{path, line?}]`). */
export function locationPaths(locations: unknown): string[] {
  if (!Array.isArray(locations)) return [];
  const out: string[] = [];
  for (const l of locations) {
    const path = obj(l)?.path;
    if (typeof path === "string" && path !== "") out.push(path);
  }
  return out;
}

/**
 * The AHP `pre_action` payload of an ACP tool call in a session whose working directory is
 * `cwd`: `tool_name` from `kind` (the title when the kind names no known tool), the title as
 * `tool_name_native`, `rawInput` as the arguments with the `locations` added as `paths` when the
 * input has none, the `kind` itself (a shell tool for `execute`), and `working_directory`.
 */
export function permissionPayload(toolCall: Record<string, unknown>, cwd: string | undefined): Record<string, unknown> {
  const kind = typeof toolCall.kind === "string" ? toolCall.kind : undefined;
  const title = typeof toolCall.title === "string" && toolCall.title !== "" ? toolCall.title : undefined;
  const mapped = kind === undefined ? undefined : KIND_TOOL_NAMES[kind];
  const args: Record<string, unknown> = { ...(obj(toolCall.rawInput) ?? {}) };
  const paths = locationPaths(toolCall.locations);
  if (paths.length > 0 && args.paths === undefined) args.paths = paths;
  const payload: Record<string, unknown> = {
    action_type: "tool_call",
    tool_name: mapped ?? title ?? (kind === undefined ? "tool" : `acp:${kind}`),
    arguments: args,
    tool_call_id: String(toolCall.toolCallId ?? ""),
  };
  if (title !== undefined && mapped !== undefined) payload.tool_name_native = title;
  if (kind !== undefined) payload.kind = kind;
  if (cwd !== undefined && cwd !== "") payload.working_directory = cwd;
  return payload;
}

/** A harness refusal: what it decided, why, and the rule behind it when the harness named one. */
export interface Refusal {
  decision: "block" | "skip";
  reason: string;
  rule?: string;
}

/** The refusal as one line a person reads: `Refused by the harness: <reason> [rule: <id>]`. */
export function refusalText(r: Refusal): string {
  const verb = r.decision === "skip" ? "Skipped" : "Refused";
  return `${verb} by the harness: ${r.reason}${r.rule === undefined ? "" : ` [rule: ${r.rule}]`}`;
}

/** `_meta[META.decision]` of the client's update and the agent's answer. */
export function decisionMeta(r: Refusal): Record<string, unknown> {
  return { [META.decision]: { decision: r.decision, reason: r.reason, ...(r.rule === undefined ? {} : { rule: r.rule }), by: "harness" } };
}

/** The refusal as an ACP tool call content item (text). */
export function refusalContent(r: Refusal): Record<string, unknown> {
  return { type: "content", content: { type: "text", text: refusalText(r) } };
}

/**
 * An agent's own update of a refused tool call that replaces its content: the refusal stays the
 * first item, and the decision stays in `_meta`.
 */
export function keepRefusal(update: Record<string, unknown>, r: Refusal): Record<string, unknown> {
  if (!Array.isArray(update.content)) return update;
  return {
    ...update,
    content: [refusalContent(r), ...(update.content as unknown[])],
    _meta: { ...(obj(update._meta) ?? {}), ...decisionMeta(r) },
  };
}

/**
 * The `tool_call_update` that tells the client the harness refused the tool call: status
 * `failed`, the reason as text content, the decision in `_meta`.
 */
export function refusalUpdate(toolCallId: string, r: Refusal): Record<string, unknown> {
  return {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: "failed",
    content: [refusalContent(r)],
    _meta: decisionMeta(r),
  };
}

/**
 * The answer to the agent for a refused permission request: its `reject_once` option (the
 * refusal is about this call; `reject_always` would make the agent remember a rule the harness
 * did not set), else `reject_always`, else `cancelled`; the decision rides in `_meta` for an
 * agent that reads it.
 */
export function refusalAnswer(options: ReadonlyArray<{ optionId: string; kind: string }>, r: Refusal): Record<string, unknown> {
  const reject = options.find((o) => o.kind === "reject_once") ?? options.find((o) => o.kind === "reject_always");
  const outcome = reject === undefined ? { outcome: "cancelled" } : { outcome: "selected", optionId: reject.optionId };
  return { outcome, _meta: decisionMeta(r) };
}

/**
 * Windsurf (Cascade hooks) adapter (adapter spec §4.5): one hook per action, block with exit
 * code 2 and the reason on stderr; no ask and no session start. The input field names follow
 * Windsurf's hooks reference as read for this package (`agent_action_name`, `trajectory_id`,
 * `execution_id`, `tool_info`); they are unverified against an installed Windsurf (Q8).
 */
import type { HookPoint } from "../catalog.js";
import { reasonText } from "../host/policy.js";
import type { AartsEvent, Verdict } from "../types.js";
import { envelope, provenance, str, stringOrObject, toolContext, toolInputOf, type HookRuntime, type NativeResponse } from "./common.js";

const ALLOW: NativeResponse = Object.freeze({ stdout: "", stderr: "", exitCode: 0 });

/**
 * Renders a decision for a Windsurf pre-hook (spec §4.5): `allow` exits 0 silently; `deny` and `ask`
 * (Windsurf cannot prompt) exit 2 with the reason on stderr.
 */
export function renderWindsurf(decision: { verdict: Verdict; enforced: "allow" | "deny" | "ask" }, engineId: string): NativeResponse {
  if (decision.enforced === "allow") return ALLOW;
  return { stdout: "", stderr: `${reasonText(decision.verdict, engineId, "deny")}\n`, exitCode: 2 };
}

/** Renders a failure-policy verdict for an input the adapter could not process; post-hooks always exit 0 (they cannot block). */
export function renderWindsurfFailure(input: Record<string, unknown>, verdict: Verdict, engineId: string): NativeResponse {
  const action = str(input.agent_action_name) ?? "";
  // Only pre-hooks can block; post-hooks always exit 0.
  if (!action.startsWith("pre_")) return ALLOW;
  return renderWindsurf({ verdict, enforced: verdict.decision === "ask" ? "deny" : verdict.decision }, engineId);
}

function toolOf(
  action: string,
  info: Record<string, unknown>,
): { native: string; toolInput: Record<string, unknown>; mcpEvent: boolean } | undefined {
  switch (action) {
    case "pre_run_command":
    case "post_run_command":
      return { native: action, toolInput: info, mcpEvent: false };
    case "pre_write_code":
    case "post_write_code":
      return { native: action, toolInput: info, mcpEvent: false };
    case "pre_read_code":
    case "post_read_code":
      return { native: action, toolInput: info, mcpEvent: false };
    case "pre_mcp_tool_use":
    case "post_mcp_tool_use": {
      const args = toolInputOf(info.mcp_tool_arguments ?? info.arguments);
      const toolInput = { ...args };
      for (const k of ["mcp_server_name", "mcp_tool_name"]) if (info[k] !== undefined) toolInput[k] = info[k];
      return { native: str(info.mcp_tool_name) ?? action, toolInput, mcpEvent: true };
    }
    default:
      return undefined;
  }
}

/**
 * Maps a Windsurf hook input to an AARTS event (spec §4.5): `pre_*` tool actions → PreToolUse,
 * `post_*` → PostToolUse, `pre_user_prompt` → PreUserInput, `post_cascade_response` →
 * PreOutputDeliver; `undefined` for an action it does not map. `session_id` is `trajectory_id`,
 * `turn_id` is `execution_id`.
 */
export function windsurfEvent(input: Record<string, unknown>, now: Date, hostVersion?: string): AartsEvent | undefined {
  const action = str(input.agent_action_name) ?? "";
  const info = (typeof input.tool_info === "object" && input.tool_info !== null ? input.tool_info : {}) as Record<string, unknown>;
  const sessionId = str(input.trajectory_id) ?? "unknown";
  const turnId = str(input.execution_id) ?? `${sessionId}:0`;
  const env = (hookPoint: HookPoint) => envelope(hookPoint, { hostId: "windsurf", sessionId, now, hostVersion });
  if (action === "pre_user_prompt") {
    return {
      ...env("PreUserInput"),
      turn_id: turnId,
      raw_input: str(info.user_prompt) ?? str(input.user_prompt) ?? "",
      input_source: "keyboard",
    } as AartsEvent;
  }
  if (action === "post_cascade_response") {
    const text = str(info.response) ?? str(input.response);
    return text === undefined ? undefined : ({ ...env("PreOutputDeliver"), turn_id: turnId, output_text: text } as AartsEvent);
  }
  const tool = toolOf(action, info);
  if (tool === undefined) return undefined;
  if (action.startsWith("pre_")) {
    return {
      ...env("PreToolUse"),
      turn_id: turnId,
      ...toolContext("windsurf", tool.native, tool.toolInput, { mcpEvent: tool.mcpEvent }),
      ...provenance(),
    } as AartsEvent;
  }
  return {
    ...env("PostToolUse"),
    turn_id: turnId,
    ...toolContext("windsurf", tool.native, tool.toolInput, { mcpEvent: tool.mcpEvent }),
    tool_result: stringOrObject(info.output ?? info.result ?? info.mcp_result ?? {}),
  } as AartsEvent;
}

/**
 * Runs one Windsurf hook invocation: evaluates the mapped event through `rt` and renders the answer;
 * post-hooks and unmapped actions always exit 0 (observe only).
 */
export async function runWindsurfHook(input: Record<string, unknown>, rt: HookRuntime): Promise<NativeResponse> {
  const now = rt.now();
  const event = windsurfEvent(input, now, rt.options.hostVersion);
  if (event === undefined) return ALLOW;
  const d = await rt.evaluate(event);
  const action = str(input.agent_action_name) ?? "";
  // post_* and post_cascade_response are observe-only.
  if (!action.startsWith("pre_")) return ALLOW;
  return renderWindsurf(d, d.engineId);
}

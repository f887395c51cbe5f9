/** The subprocess hosts the hook command serves, with their capabilities (§4.9) as data. */
import type { HookPoint } from "../catalog.js";
import type { Verdict } from "../types.js";
import { CLAUDE_CODE, renderClaudeCodeFailure, runClaudeCompatibleHook, VSCODE } from "./claude-code.js";
import { renderClineFailure, runClineHook } from "./cline.js";
import type { HookRuntime, NativeResponse } from "./common.js";
import { nativeEventOf, renderCopilotCliFailure, runCopilotCliHook } from "./copilot-cli.js";
import { renderCursorFailure, runCursorHook } from "./cursor.js";
import { renderWindsurfFailure, runWindsurfHook } from "./windsurf.js";

/** A host the hook command serves: how to run one invocation and how to answer when it fails. */
export interface SubprocessHost {
  /** `host_id` of the events it builds. */
  readonly hostId: string;
  /** Runs one invocation. `eventName` is the `--event` flag (Copilot CLI inputs do not name their event). */
  run(input: Record<string, unknown>, rt: HookRuntime, eventName?: string): Promise<NativeResponse>;
  /** Native answer for a failure-policy verdict when the input could not be processed. */
  renderFailure(input: Record<string, unknown>, verdict: Verdict, engineId: string, eventName?: string): NativeResponse;
  /** Hooks on which this invocation can show an `ask` prompt. */
  canPrompt(input: Record<string, unknown>, eventName?: string): readonly HookPoint[];
  /** Hooks whose AHP modification this invocation can apply (bridge `hostModifiable`, §5.5). */
  modifiable(input: Record<string, unknown>, eventName?: string): readonly HookPoint[];
}

const nativeEvent = (input: Record<string, unknown>) => (typeof input.hook_event_name === "string" ? input.hook_event_name : "");
const claudePrompt: readonly HookPoint[] = ["PreToolUse", "PreSubAgentSpawn", "PreSkillLoad"];

/**
 * The hosts `ahp-aarts-hook <host>` serves, keyed by the command-line host name (`claude-code`,
 * `vscode`, `cursor`, `copilot-cli`, `cline`, `windsurf`), with what each can prompt on and modify (spec §4.9).
 */
export const SUBPROCESS_HOSTS: Readonly<Record<string, SubprocessHost>> = {
  "claude-code": {
    hostId: "claude-code",
    run: (input, rt) => runClaudeCompatibleHook(CLAUDE_CODE, input, rt),
    renderFailure: (input, verdict, engineId) => renderClaudeCodeFailure(input, verdict, engineId, nativeEvent(input) === "PreToolUse"),
    canPrompt: (input) => (nativeEvent(input) === "PreToolUse" ? claudePrompt : []),
    modifiable: (input) => (nativeEvent(input) === "PreToolUse" ? ["PreToolUse"] : []),
  },
  vscode: {
    hostId: "vscode",
    run: (input, rt) => runClaudeCompatibleHook(VSCODE, input, rt),
    renderFailure: (input, verdict, engineId) => renderClaudeCodeFailure(input, verdict, engineId, nativeEvent(input) === "PreToolUse"),
    canPrompt: (input) => (nativeEvent(input) === "PreToolUse" ? claudePrompt : []),
    modifiable: (input) => (nativeEvent(input) === "PreToolUse" ? ["PreToolUse"] : []),
  },
  cursor: {
    hostId: "cursor",
    run: (input, rt) => runCursorHook(input, rt),
    renderFailure: (input, verdict, engineId) => renderCursorFailure(input, verdict, engineId),
    canPrompt: (input) =>
      ["preToolUse", "beforeShellExecution", "beforeMCPExecution", "subagentStart"].includes(nativeEvent(input))
        ? ["PreToolUse", "PreSubAgentSpawn"]
        : [],
    modifiable: (input) => (nativeEvent(input) === "preToolUse" ? ["PreToolUse"] : []),
  },
  "copilot-cli": {
    hostId: "copilot-cli",
    run: (input, rt, eventName) => runCopilotCliHook(input, rt, eventName),
    renderFailure: (input, verdict, engineId, eventName) =>
      renderCopilotCliFailure(eventName === undefined ? input : { ...input, hook_event_name: eventName }, verdict, engineId),
    canPrompt: (input, eventName) => ((eventName ?? nativeEventOf(input)) === "preToolUse" ? ["PreToolUse"] : []),
    modifiable: () => [],
  },
  cline: {
    hostId: "cline",
    run: (input, rt) => runClineHook(input, rt),
    renderFailure: (input, verdict, engineId) => renderClineFailure(input, verdict, engineId),
    canPrompt: () => [],
    modifiable: () => [],
  },
  windsurf: {
    hostId: "windsurf",
    run: (input, rt) => runWindsurfHook(input, rt),
    renderFailure: (input, verdict, engineId) => renderWindsurfFailure(input, verdict, engineId),
    canPrompt: () => [],
    modifiable: () => [],
  },
};

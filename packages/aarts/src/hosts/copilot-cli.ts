/**
 * GitHub Copilot CLI hook command adapter (adapter spec §4.3). Inputs carry an epoch-ms
 * `timestamp` and `cwd`; `preToolUse` carries `toolArgs` as a JSON string. Without a session id
 * in the input, a synthetic id is derived from `cwd` and the first sessionStart time and kept
 * in the state directory (Q7).
 */
import { createHash } from "node:crypto";
import type { HookPoint } from "../catalog.js";
import type { HostDecision } from "../host/host.js";
import { reasonText } from "../host/policy.js";
import type { AartsEvent, Verdict } from "../types.js";
import {
  countDecision,
  EMPTY,
  emptySessionState,
  envelope,
  json,
  provenance,
  str,
  stringOrObject,
  toolContext,
  toolInputOf,
  type HookRuntime,
  type NativeResponse,
  type SessionState,
} from "./common.js";

/** Renders a decision in Copilot CLI's native output: only `preToolUse` answers (§4.3). */
export function renderCopilotCli(
  decision: { verdict: Verdict; enforced: "allow" | "deny" | "ask" },
  nativeEvent: string,
  engineId: string,
): NativeResponse {
  if (nativeEvent !== "preToolUse" || decision.enforced === "allow") return EMPTY;
  return json({
    permissionDecision: decision.enforced,
    permissionDecisionReason: reasonText(decision.verdict, engineId, decision.enforced),
  });
}

/** Renders a failure-policy verdict in Copilot CLI's output, for an input the adapter could not process; only `preToolUse` can block. */
export function renderCopilotCliFailure(input: Record<string, unknown>, verdict: Verdict, engineId: string): NativeResponse {
  return renderCopilotCli({ verdict, enforced: verdict.decision }, nativeEventOf(input), engineId);
}

/** Copilot CLI hook inputs do not name their event; the installer passes it as `--event`, else it is inferred. */
export function nativeEventOf(input: Record<string, unknown>): string {
  const named = str(input.hook_event_name) ?? str(input.hookEventName) ?? str(input.event);
  if (named !== undefined) return named;
  if ("toolResult" in input) return "postToolUse";
  if ("toolName" in input) return "preToolUse";
  if ("prompt" in input) return "userPromptSubmitted";
  if ("initialPrompt" in input || "source" in input) return "sessionStart";
  if ("reason" in input) return "sessionEnd";
  return "unknown";
}

/** Epoch ms (or an ISO string) → RFC 3339 UTC with milliseconds. */
export function copilotTimestamp(value: unknown, fallback: Date): Date {
  if (typeof value === "number" && Number.isFinite(value)) return new Date(value);
  if (typeof value === "string" && !Number.isNaN(Date.parse(value))) return new Date(value);
  return fallback;
}

/** The synthetic session id (Q7): `copilot-cli:<hex sha-256 of cwd + first sessionStart timestamp>`. */
export function syntheticSessionId(cwd: string, firstStart: number): string {
  return `copilot-cli:${createHash("sha256").update(`${cwd}\u0000${firstStart}`).digest("hex")}`;
}

/** Copilot CLI preToolUse → AARTS PreToolUse (§4.3). */
export function copilotPreToolUse(
  input: Record<string, unknown>,
  sessionId: string,
  turnId: string,
  options: { mcpTools?: readonly string[]; hostVersion?: string } = {},
): AartsEvent {
  const when = copilotTimestamp(input.timestamp, new Date());
  return {
    ...envelope("PreToolUse", { hostId: "copilot-cli", sessionId, now: when, hostVersion: options.hostVersion }),
    turn_id: turnId,
    ...toolContext("copilot-cli", str(input.toolName) ?? "unknown", toolInputOf(input.toolArgs), {
      ...(options.mcpTools === undefined ? {} : { mcpTools: options.mcpTools }),
    }),
    ...provenance(),
  } as AartsEvent;
}

/** Runs one Copilot CLI hook invocation. `eventName` comes from the command line when the installer gave it. */
export async function runCopilotCliHook(input: Record<string, unknown>, rt: HookRuntime, eventName?: string): Promise<NativeResponse> {
  const nativeEvent = eventName ?? nativeEventOf(input);
  const when = copilotTimestamp(input.timestamp, rt.now());
  const cwd = str(input.cwd) ?? "";
  const indexKey = `copilot-cli:cwd:${createHash("sha256").update(cwd).digest("hex")}`;
  let sessionId = str(input.sessionId) ?? str(input.session_id);
  if (sessionId === undefined) {
    const index = await rt.state.update<{ sessionId: string }>(indexKey, (current) =>
      current === undefined || nativeEvent === "sessionStart" ? { sessionId: syntheticSessionId(cwd, when.getTime()) } : current,
    );
    sessionId = index!.sessionId;
  }
  const key = `copilot-cli:${sessionId}`;
  let state = (await rt.state.read<SessionState>(key)) ?? emptySessionState();
  const mutate = async (fn: (s: SessionState) => void) => {
    state =
      (await rt.state.update<SessionState>(key, (s) => {
        const next = s ?? emptySessionState();
        fn(next);
        return next;
      })) ?? state;
  };
  const env = (hookPoint: HookPoint) =>
    envelope(hookPoint, {
      hostId: "copilot-cli",
      sessionId: sessionId,
      now: when,
      hostVersion: rt.options.hostVersion,
      locale: rt.options.locale,
    });
  const turnId = () => `${sessionId}:${state.turn}`;
  const render = (d: HostDecision) => renderCopilotCli(d, nativeEvent, d.engineId);

  switch (nativeEvent) {
    case "sessionStart":
      await rt.evaluate({ ...env("SessionStart"), environment: { working_directory: cwd } } as AartsEvent); // observe (output ignored)
      return EMPTY;
    case "userPromptSubmitted": {
      await mutate((s) => void s.turn++);
      await rt.evaluate({
        ...env("PreUserInput"),
        turn_id: turnId(),
        raw_input: str(input.prompt) ?? "",
        input_source: "keyboard",
      } as AartsEvent); // observe
      return EMPTY;
    }
    case "preToolUse": {
      const d = await rt.evaluate(
        copilotPreToolUse(input, sessionId, turnId(), {
          ...(rt.options.mcpTools === undefined ? {} : { mcpTools: rt.options.mcpTools }),
          ...(rt.options.hostVersion === undefined ? {} : { hostVersion: rt.options.hostVersion }),
        }),
        { subAgents: state.subAgents },
      );
      await mutate((s) => countDecision(s, d));
      return render(d);
    }
    case "postToolUse": {
      const event = {
        ...env("PostToolUse"),
        turn_id: turnId(),
        ...toolContext("copilot-cli", str(input.toolName) ?? "unknown", toolInputOf(input.toolArgs), {
          ...(rt.options.mcpTools === undefined ? {} : { mcpTools: rt.options.mcpTools }),
        }),
        tool_result: stringOrObject(input.toolResult ?? {}),
      } as AartsEvent;
      await rt.evaluate(event); // observe
      return EMPTY;
    }
    case "subagentStop": {
      const result = input.result ?? input.output ?? input.summary;
      if (result === undefined) return EMPTY;
      await rt.evaluate({
        ...env("PostSubAgentResult"),
        sub_agent_id: str(input.subagentId) ?? str(input.agentId) ?? `${sessionId}/sub`,
        result: stringOrObject(result),
      } as AartsEvent);
      return EMPTY;
    }
    case "agentStop": {
      const text = str(input.output) ?? str(input.response) ?? str(input.message);
      if (text === undefined) return EMPTY;
      await rt.evaluate({ ...env("PreOutputDeliver"), turn_id: turnId(), output_text: text } as AartsEvent);
      return EMPTY;
    }
    case "sessionEnd":
      await rt.notify({ ...env("SessionEnd"), summary: state.summary } as AartsEvent);
      await rt.state.update(key, () => undefined);
      await rt.state.update(indexKey, () => undefined);
      return EMPTY;
    default:
      return EMPTY; // errorOccurred, notification, permissionRequest: not mapped
  }
}

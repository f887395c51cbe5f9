/**
 * Cline hook adapter (adapter spec §4.4): input `{clineVersion, hookName, timestamp, taskId, …,
 * <camelCaseHookName>: {...}}`, output `{cancel, contextModification?, errorMessage?}`. Cline
 * cannot prompt: `ask` is enforced as `deny` (allowed at Basic level).
 */
import type { HookPoint } from "../catalog.js";
import type { HostDecision } from "../host/host.js";
import { reasonText } from "../host/policy.js";
import type { AartsEvent, Verdict } from "../types.js";
import {
  countDecision,
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

const CONTINUE: NativeResponse = Object.freeze({ stdout: '{"cancel":false}\n', stderr: "", exitCode: 0 });

/** Renders a decision in Cline's native output. */
export function renderCline(
  decision: { verdict: Verdict; enforced: "allow" | "deny" | "ask" },
  hookName: string,
  engineId: string,
): NativeResponse {
  if (decision.enforced === "allow") return CONTINUE;
  const r = reasonText(decision.verdict, engineId, "deny");
  // PostToolUse can only add context (partial enforcement).
  if (hookName === "PostToolUse") return json({ cancel: false, contextModification: `Security notice from ${engineId}: ${r}` });
  return json({ cancel: true, errorMessage: r });
}

/**
 * Renders a failure-policy verdict in Cline's output (`{cancel, errorMessage}`), for an input the
 * adapter could not process; `ask` becomes `deny` (Cline cannot prompt).
 */
export function renderClineFailure(input: Record<string, unknown>, verdict: Verdict, engineId: string): NativeResponse {
  return renderCline({ verdict, enforced: verdict.decision === "ask" ? "deny" : verdict.decision }, str(input.hookName) ?? "", engineId);
}

const camel = (name: string) => name.charAt(0).toLowerCase() + name.slice(1);

function timestampOf(value: unknown, fallback: Date): Date {
  if (typeof value === "number" && Number.isFinite(value)) return new Date(value);
  if (typeof value === "string") {
    if (/^[0-9]+$/.test(value)) return new Date(Number(value));
    if (!Number.isNaN(Date.parse(value))) return new Date(value);
  }
  return fallback;
}

/** Cline PreToolUse → AARTS PreToolUse (§4.4). */
export function clinePreToolUse(input: Record<string, unknown>, turnId: string, now: Date, mcpTools?: readonly string[]): AartsEvent {
  const data = (input.preToolUse ?? {}) as Record<string, unknown>;
  return {
    ...envelope("PreToolUse", { hostId: "cline", sessionId: str(input.taskId) ?? "unknown", now, hostVersion: str(input.clineVersion) }),
    turn_id: turnId,
    ...toolContext("cline", str(data.toolName) ?? "unknown", toolInputOf(data.parameters), mcpTools === undefined ? {} : { mcpTools }),
    ...provenance(),
  } as AartsEvent;
}

/**
 * Runs one Cline hook invocation (spec §4.4): maps the input named by `hookName` to an AARTS event,
 * evaluates it through `rt`, keeps the session state (turn counter, summary) and returns Cline's
 * `{cancel, contextModification?, errorMessage?}` answer. Unknown hook names answer `{"cancel":false}`.
 * Rejects only when the state store does (e.g. a lock held too long); the hook command then applies its failure policy.
 */
export async function runClineHook(input: Record<string, unknown>, rt: HookRuntime): Promise<NativeResponse> {
  const hookName = str(input.hookName) ?? "";
  const sessionId = str(input.taskId) ?? "unknown";
  const now = timestampOf(input.timestamp, rt.now());
  const key = `cline:${sessionId}`;
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
      hostId: "cline",
      sessionId,
      now,
      hostVersion: str(input.clineVersion) ?? rt.options.hostVersion,
      locale: rt.options.locale,
    });
  const data = (input[camel(hookName)] ?? {}) as Record<string, unknown>;
  const turnId = () => `${sessionId}:${state.turn}`;
  const render = (d: HostDecision) => renderCline(d, hookName, d.engineId);
  const evaluate = async (event: AartsEvent) => {
    const d = await rt.evaluate(event, { subAgents: state.subAgents });
    await mutate((s) => countDecision(s, d));
    return d;
  };

  switch (hookName) {
    case "TaskStart":
    case "TaskResume": {
      const roots = Array.isArray(input.workspaceRoots) ? input.workspaceRoots : [];
      const event = { ...env("SessionStart") } as Record<string, unknown>;
      if (typeof roots[0] === "string") event.environment = { working_directory: roots[0] };
      return render(await evaluate(event as AartsEvent));
    }
    case "UserPromptSubmit": {
      await mutate((s) => void s.turn++);
      const prompt = str(data.prompt) ?? str(data.userPrompt) ?? "";
      return render(
        await evaluate({ ...env("PreUserInput"), turn_id: turnId(), raw_input: prompt, input_source: "keyboard" } as AartsEvent),
      );
    }
    case "PreToolUse":
      return render(await evaluate(clinePreToolUse(input, turnId(), now, rt.options.mcpTools)));
    case "PostToolUse": {
      const event = {
        ...env("PostToolUse"),
        turn_id: turnId(),
        ...toolContext(
          "cline",
          str(data.toolName) ?? "unknown",
          toolInputOf(data.parameters),
          rt.options.mcpTools === undefined ? {} : { mcpTools: rt.options.mcpTools },
        ),
        tool_result: stringOrObject(data.result ?? {}),
        ...(typeof data.executionTimeMs === "number" ? { execution_duration_ms: data.executionTimeMs } : {}),
      } as AartsEvent;
      return render(await evaluate(event));
    }
    case "PreCompact": {
      const context = data.conversation ?? data.messages ?? data.context;
      if (typeof context !== "string" && !Array.isArray(context)) return CONTINUE; // MUST field unavailable: not fired
      return render(await evaluate({ ...env("PreCompact"), turn_id: turnId(), context_before: context } as AartsEvent));
    }
    case "TaskCancel":
    case "TaskComplete":
      await rt.notify({ ...env("SessionEnd"), summary: state.summary } as AartsEvent);
      await rt.state.update(key, () => undefined);
      return CONTINUE;
    default:
      return CONTINUE;
  }
}

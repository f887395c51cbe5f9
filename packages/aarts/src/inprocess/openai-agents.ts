/**
 * OpenAI Agents SDK (JavaScript) in-process adapter (adapter spec §4.7). The returned objects
 * have the shapes the SDK expects (tool input/output guardrails, `needsApproval`, agent
 * input/output guardrails, `callModelInputFilter`); the package does not depend on the SDK.
 *
 *   const aarts = createOpenAIAgentsAdapter({ host });
 *   const shell = tool({ ..., needsApproval: aarts.needsApprovalFor("shell"),
 *                        inputGuardrails: [aarts.toolInputGuardrail], outputGuardrails: [aarts.toolOutputGuardrail] });
 *   const agent = new Agent({ ..., inputGuardrails: [aarts.inputGuardrail], outputGuardrails: [aarts.outputGuardrail] });
 *   await run(agent, input, { callModelInputFilter: aarts.callModelInputFilter });
 */
import { randomUUID } from "node:crypto";
import { AARTS_EVENT_VERSION, type HookPoint, type Resolution } from "../catalog.js";
import { buildAskResolution, type AartsHost, type HostDecision } from "../host/host.js";
import { reasonText } from "../host/policy.js";
import { provenance, stringOrObject, toolContext } from "../hosts/common.js";
import type { AartsEvent } from "../types.js";

/** Options of {@link createOpenAIAgentsAdapter}. Only `host` is required. */
export interface OpenAIAgentsAdapterOptions {
  /**
   * The host role that evaluates the events (create it with `canPrompt` for the hooks where the app
   * approves interruptions).
   */
  readonly host: AartsHost;
  /** Session id: fixed, or from the run context (SDK session id, group id); default one UUID per adapter. */
  readonly sessionId?: string | ((runContext: unknown) => string | undefined);
  /** `host_version` of the events (the SDK version, if you want it recorded). */
  readonly hostVersion?: string;
  /** User map for function tools (§3.2 rule 3). */
  readonly toolMap?: Readonly<Record<string, string>>;
  /** Names of MCP server tools. */
  readonly mcpTools?: readonly string[];
  /** On deny, throw a tripwire (`throwException`) instead of returning the reason to the model. Default false. */
  readonly haltOnDeny?: boolean;
  /** Clock for event timestamps; default `new Date()`. */
  readonly now?: () => Date;
}

/** A function call item as the SDK passes it to tool guardrails. */
export interface FunctionCallItemLike {
  readonly callId?: string;
  readonly id?: string;
  readonly name: string;
  /** JSON text of the arguments. */
  readonly arguments: string | Record<string, unknown>;
}

type Behavior = { type: "allow" } | { type: "rejectContent"; message: string } | { type: "throwException" };
/**
 * What the SDK expects from a tool guardrail: `allow`, `rejectContent` (the model sees `message`
 * instead of the tool running / its output) or `throwException` (halts the run).
 */
export interface ToolGuardrailOutput {
  /** The SDK guardrail behaviour. */
  behavior: Behavior;
  /** The AARTS verdict behind the behaviour, for tracing. */
  outputInfo?: unknown;
}

/** Thrown by the adapter's filters when the host enforces a deny. */
export class AartsBlockedError extends Error {
  override readonly name = "AartsBlockedError";
  constructor(
    message: string,
    readonly decision: HostDecision,
  ) {
    super(message);
  }
}

function parseArgs(args: FunctionCallItemLike["arguments"]): Record<string, unknown> {
  if (typeof args !== "string") return args;
  try {
    const parsed = JSON.parse(args) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { raw: args };
  } catch {
    return { raw: args };
  }
}

/** Text of an agent input (string or list of input items). */
function inputText(input: unknown): string {
  if (typeof input === "string") return input;
  if (Array.isArray(input)) {
    const last = (input as unknown[])
      .slice()
      .reverse()
      .find((i) => typeof i === "object" && i !== null && (i as { role?: string }).role === "user") as { content?: unknown } | undefined;
    const content = last?.content;
    if (typeof content === "string") return content;
    if (Array.isArray(content))
      return content.map((c) => (typeof c === "object" && c !== null ? String((c as { text?: unknown }).text ?? "") : String(c))).join("");
  }
  return JSON.stringify(input ?? "");
}

/**
 * Wires an {@link AartsHost} into an OpenAI Agents SDK (JavaScript) agent (spec §4.7) without a
 * dependency on the SDK: returns tool input/output guardrails (PreToolUse, PostToolUse),
 * `needsApprovalFor(tool)` (ask ⇒ SDK approval interruption) with `resolveApproval` (PostAskResolution),
 * agent input/output guardrails (PreUserInput, PreOutputDeliver), `callModelInputFilter`
 * (PreLLMRequest; deny throws {@link AartsBlockedError}), and `startSession`/`endSession`. Engine
 * failures follow the host's failure policy; nothing here throws for them.
 */
export function createOpenAIAgentsAdapter(options: OpenAIAgentsAdapterOptions) {
  const fallbackSession = randomUUID();
  const now = options.now ?? (() => new Date());
  let turn = 0;
  /** One evaluation per tool call, shared by `needsApproval` and the input guardrail (§4.7). */
  const perCall = new Map<string, Promise<HostDecision>>();

  const sessionOf = (runContext: unknown): string => {
    const s = options.sessionId;
    if (typeof s === "string") return s;
    return s?.(runContext) ?? fallbackSession;
  };
  const envelope = (hookPoint: HookPoint, runContext: unknown) => ({
    hook_point: hookPoint,
    session_id: sessionOf(runContext),
    timestamp: now().toISOString(),
    host_id: "openai-agents",
    ...(options.hostVersion === undefined ? {} : { host_version: options.hostVersion }),
    aarts_version: AARTS_EVENT_VERSION,
  });
  const turnId = (runContext: unknown) => `${sessionOf(runContext)}:${turn}`;
  const tool = (name: string, args: Record<string, unknown>) =>
    toolContext("openai-agents", name, args, {
      ...(options.toolMap === undefined ? {} : { toolMap: options.toolMap }),
      ...(options.mcpTools === undefined ? {} : { mcpTools: options.mcpTools }),
    });

  const preToolUse = (runContext: unknown, call: FunctionCallItemLike): Promise<HostDecision> => {
    const key = call.callId ?? call.id ?? `${call.name}:${JSON.stringify(call.arguments)}`;
    let pending = perCall.get(key);
    if (pending === undefined) {
      const event = {
        ...envelope("PreToolUse", runContext),
        turn_id: turnId(runContext),
        ...tool(call.name, parseArgs(call.arguments)),
        ...provenance(),
      };
      pending = options.host.evaluate(event as AartsEvent);
      perCall.set(key, pending);
      // Forget the call once the run is long past it.
      if (perCall.size > 1_000) perCall.delete(perCall.keys().next().value as string);
    }
    return pending;
  };

  const behaviorFor = (d: HostDecision): ToolGuardrailOutput => {
    if (d.enforced === "allow" || d.enforced === "ask") return { behavior: { type: "allow" }, outputInfo: d.verdict };
    if (options.haltOnDeny) return { behavior: { type: "throwException" }, outputInfo: d.verdict };
    return { behavior: { type: "rejectContent", message: reasonText(d.verdict, d.engineId, "deny") }, outputInfo: d.verdict };
  };

  return {
    /** Tool input guardrail (PreToolUse). */
    toolInputGuardrail: {
      type: "tool_input" as const,
      name: "aarts",
      run: async (data: { context?: unknown; toolCall: FunctionCallItemLike }): Promise<ToolGuardrailOutput> =>
        behaviorFor(await preToolUse(data.context, data.toolCall)),
    },
    /** Tool output guardrail (PostToolUse): deny replaces the output with a redaction notice. */
    toolOutputGuardrail: {
      type: "tool_output" as const,
      name: "aarts",
      run: async (data: { context?: unknown; toolCall: FunctionCallItemLike; output: unknown }): Promise<ToolGuardrailOutput> => {
        const event = {
          ...envelope("PostToolUse", data.context),
          turn_id: turnId(data.context),
          ...tool(data.toolCall.name, parseArgs(data.toolCall.arguments)),
          tool_result: stringOrObject(data.output),
        };
        const d = await options.host.evaluate(event as AartsEvent);
        if (d.enforced === "allow") return { behavior: { type: "allow" }, outputInfo: d.verdict };
        return { behavior: { type: "rejectContent", message: `[redacted by ${d.engineId}]` }, outputInfo: d.verdict };
      },
    },
    /**
     * `needsApproval` for one tool: true when the engine asks (the run is interrupted and the
     * app approves or rejects). Shares the evaluation with the input guardrail by `callId`.
     * Wire it whenever the host is created with `canPrompt`; otherwise an ask is enforced as deny.
     */
    needsApprovalFor:
      (toolName: string) =>
      async (runContext: unknown, input: unknown, callId?: string): Promise<boolean> => {
        const args = typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
        const d = await preToolUse(runContext, { ...(callId === undefined ? {} : { callId }), name: toolName, arguments: args });
        return d.enforced === "ask";
      },
    /** Reports the app's approval decision (`state.approve` / `state.reject`) as PostAskResolution (§2.4). */
    resolveApproval: async (callId: string, resolution: Resolution): Promise<void> => {
      const d = await perCall.get(callId);
      if (d === undefined || d.verdict.decision !== "ask") return;
      await options.host.notify(buildAskResolution(d.event, d.verdict, resolution, { now: now() }));
    },
    /** Agent input guardrail (PreUserInput): deny trips the wire. Also starts a new turn. */
    inputGuardrail: {
      name: "aarts-input",
      execute: async (args: { input: unknown; context?: unknown }) => {
        turn++;
        const event = {
          ...envelope("PreUserInput", args.context),
          turn_id: turnId(args.context),
          raw_input: inputText(args.input),
          input_source: "api",
        };
        const d = await options.host.evaluate(event as AartsEvent);
        return { tripwireTriggered: d.enforced !== "allow", outputInfo: d.verdict };
      },
    },
    /** Agent output guardrail (PreOutputDeliver). */
    outputGuardrail: {
      name: "aarts-output",
      execute: async (args: { agentOutput: unknown; context?: unknown }) => {
        const text = typeof args.agentOutput === "string" ? args.agentOutput : JSON.stringify(args.agentOutput ?? "");
        const event = { ...envelope("PreOutputDeliver", args.context), turn_id: turnId(args.context), output_text: text };
        const d = await options.host.evaluate(event as AartsEvent);
        return { tripwireTriggered: d.enforced !== "allow", outputInfo: d.verdict };
      },
    },
    /** `callModelInputFilter` (PreLLMRequest): deny throws, an applied modification replaces the input. */
    callModelInputFilter: async <M extends { input: unknown; instructions?: string }>(args: {
      modelData: M;
      context?: unknown;
    }): Promise<M> => {
      const { modelData } = args;
      const event = {
        ...envelope("PreLLMRequest", args.context),
        turn_id: turnId(args.context),
        full_prompt:
          typeof modelData.input === "string" || Array.isArray(modelData.input) ? modelData.input : JSON.stringify(modelData.input),
        ...(typeof modelData.instructions === "string" ? { system_prompt: modelData.instructions } : {}),
      };
      const d = await options.host.evaluate(event as AartsEvent);
      if (d.enforced !== "allow") throw new AartsBlockedError(reasonText(d.verdict, d.engineId, "deny"), d);
      const replaced = d.verdict.directives?.["x-ahp"]?.decision as { modified_payload?: { prompt?: unknown } } | undefined;
      if (replaced?.modified_payload?.prompt !== undefined) return { ...modelData, input: replaced.modified_payload.prompt };
      return modelData;
    },
    /** SessionStart before the first model call of a session (call from your `Runner.run` wrapper). */
    startSession: async (runContext?: unknown): Promise<HostDecision> => {
      const d = await options.host.evaluate({ ...envelope("SessionStart", runContext) } as AartsEvent);
      if (d.enforced !== "allow") throw new AartsBlockedError(reasonText(d.verdict, d.engineId, "deny"), d);
      return d;
    },
    /** SessionEnd notification. */
    endSession: (runContext?: unknown) => options.host.notify({ ...envelope("SessionEnd", runContext) } as AartsEvent),
  };
}

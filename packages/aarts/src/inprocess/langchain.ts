/**
 * LangChain JS (`createAgent` middleware) in-process adapter (adapter spec §4.8). The returned
 * object has the middleware hook shapes (`beforeAgent`, `wrapModelCall`, `wrapToolCall`,
 * `afterAgent`); pass it to `createMiddleware({ name: "aarts", ...aartsLangChain(...) })`. The
 * package does not depend on LangChain: message objects are made by the factory you pass
 * (`(fields) => new ToolMessage(fields)`).
 */
import { randomUUID } from "node:crypto";
import { AARTS_EVENT_VERSION, type HookPoint, type Resolution } from "../catalog.js";
import { modificationOf } from "../bridge/mapping.js";
import { buildAskResolution, type AartsHost, type HostDecision } from "../host/host.js";
import { reasonText } from "../host/policy.js";
import { provenance, stringOrObject, toolContext } from "../hosts/common.js";
import type { AartsEvent } from "../types.js";
import { AartsBlockedError } from "./openai-agents.js";

/**
 * Fields of the LangChain `ToolMessage` the middleware asks `toolMessage` to build when it denies or
 * redacts a tool call.
 */
export interface ToolMessageFields {
  /** The reason (deny) or the redaction notice (PostToolUse deny). */
  content: string;
  /** Id of the tool call being answered. */
  tool_call_id: string;
  /** Tool name. */
  name: string;
  /** `error` (used for a denied call and for a redacted result). */
  status: "success" | "error";
}

/** Options of {@link createLangChainMiddleware}. `host` and `toolMessage` are required. */
export interface LangChainAdapterOptions {
  /** The host role that evaluates the events. */
  readonly host: AartsHost;
  /** Builds a ToolMessage (e.g. `(f) => new ToolMessage(f)` from `@langchain/core/messages`). */
  readonly toolMessage: (fields: ToolMessageFields) => unknown;
  /**
   * Human-in-the-loop for `ask` (e.g. LangGraph's `interrupt`): resolves with the user's answer.
   * Without it an ask is enforced as deny. `edit` answers count as `approved` (§2.4).
   */
  readonly interrupt?: (request: {
    toolCall: ToolCallLike;
    reasons: string;
    suggestedResolutions: readonly string[];
  }) => Promise<Resolution | "approve" | "reject" | "edit">;
  /** MCP tools are recognised by origin, not name: return true for tools from the MCP adapters. */
  readonly isMcpTool?: (tool: unknown) => boolean;
  /** User tool map, native name → canonical name (spec §3.2 rule 3). */
  readonly toolMap?: Readonly<Record<string, string>>;
  /** `host_version` of the events. */
  readonly hostVersion?: string;
  /** Clock for event timestamps; default `new Date()`. */
  readonly now?: () => Date;
}

/** A tool call as LangChain passes it to `wrapToolCall`. */
export interface ToolCallLike {
  /** Tool call id (becomes the ToolMessage's `tool_call_id`). */
  readonly id?: string;
  /** Native tool name. */
  readonly name: string;
  /** Tool arguments (the AARTS `tool_input`). */
  readonly args: Record<string, unknown>;
}

interface RuntimeLike {
  readonly context?: unknown;
  readonly config?: { readonly configurable?: Record<string, unknown> };
}

interface MessageLike {
  readonly content?: unknown;
  readonly tool_calls?: readonly { name: string; args?: Record<string, unknown> }[];
  _getType?: () => string;
  getType?: () => string;
  readonly type?: string;
  readonly role?: string;
}

const kind = (m: MessageLike): string => m._getType?.() ?? m.getType?.() ?? m.type ?? m.role ?? "";
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .map((c) => (typeof c === "string" ? c : typeof c === "object" && c !== null ? String((c as { text?: unknown }).text ?? "") : ""))
          .join("")
      : JSON.stringify(content ?? "");

/**
 * LangChain JS `createAgent` middleware hooks backed by an {@link AartsHost} (spec §4.8): spread the
 * result into `createMiddleware({ name: "aarts", ... })`. `beforeAgent` fires SessionStart (first
 * invocation of a thread) and PreUserInput, `wrapModelCall` PreLLMRequest and PostLLMResponse,
 * `wrapToolCall` PreToolUse and PostToolUse, `afterAgent` PreOutputDeliver. An `ask` on a tool
 * call goes to `interrupt` (none ⇒ deny); a denied tool call answers the model with an error
 * ToolMessage, a denied result is redacted; a deny anywhere else throws {@link AartsBlockedError}.
 * The session is the LangGraph `thread_id` when configured.
 */
export function createLangChainMiddleware(options: LangChainAdapterOptions) {
  const now = options.now ?? (() => new Date());
  const seenThreads = new Set<string>();

  const sessionOf = (runtime: RuntimeLike | undefined, fallback: string): string => {
    const thread = runtime?.config?.configurable?.thread_id;
    return typeof thread === "string" ? thread : fallback;
  };
  const state: { session: string; turn: string } = { session: randomUUID(), turn: "" };
  const envelope = (hookPoint: HookPoint) => ({
    hook_point: hookPoint,
    session_id: state.session,
    timestamp: now().toISOString(),
    host_id: "langchain",
    ...(options.hostVersion === undefined ? {} : { host_version: options.hostVersion }),
    aarts_version: AARTS_EVENT_VERSION,
  });
  const deny = (d: HostDecision) => new AartsBlockedError(reasonText(d.verdict, d.engineId, "deny"), d);

  return {
    /** SessionStart on the first invocation of a thread; PreUserInput on every invocation. */
    beforeAgent: async (agentState: { messages?: readonly MessageLike[] }, runtime?: RuntimeLike) => {
      const runId = randomUUID();
      state.session = sessionOf(runtime, runId);
      state.turn = runId;
      if (!seenThreads.has(state.session)) {
        seenThreads.add(state.session);
        const d = await options.host.evaluate(envelope("SessionStart") as AartsEvent);
        if (d.enforced !== "allow") throw deny(d);
      }
      const last = [...(agentState.messages ?? [])].reverse().find((m) => kind(m) === "human" || kind(m) === "user");
      if (last !== undefined) {
        const event = { ...envelope("PreUserInput"), turn_id: state.turn, raw_input: textOf(last.content), input_source: "api" };
        const d = await options.host.evaluate(event as AartsEvent);
        if (d.enforced !== "allow") throw deny(d);
      }
      return undefined;
    },

    /** PreLLMRequest before the model call, PostLLMResponse after it. */
    wrapModelCall: async <R extends MessageLike>(
      request: { messages: readonly MessageLike[]; systemPrompt?: string; model?: unknown },
      handler: (request: never) => Promise<R>,
    ): Promise<R> => {
      const modelName =
        (request.model as { model?: unknown; modelName?: unknown } | undefined)?.model ??
        (request.model as { modelName?: unknown } | undefined)?.modelName;
      const pre = {
        ...envelope("PreLLMRequest"),
        turn_id: state.turn || state.session,
        full_prompt: request.messages.map((m) => ({ role: kind(m), content: textOf(m.content) })),
        ...(typeof request.systemPrompt === "string" ? { system_prompt: request.systemPrompt } : {}),
        ...(typeof modelName === "string" ? { model_id: modelName } : {}),
      };
      const before = await options.host.evaluate(pre as AartsEvent);
      if (before.enforced !== "allow") throw deny(before);
      const response = await handler(request as never);
      const post = {
        ...envelope("PostLLMResponse"),
        turn_id: state.turn || state.session,
        response_text: textOf(response.content),
        ...(response.tool_calls !== undefined
          ? {
              planned_actions: response.tool_calls.map((c) => {
                const t = toolContext("langchain", c.name, c.args ?? {}, options.toolMap === undefined ? {} : { toolMap: options.toolMap });
                return { tool_name: t.tool_name, tool_name_native: t.tool_name_native, tool_input: t.tool_input };
              }),
            }
          : {}),
      };
      const after = await options.host.evaluate(post as AartsEvent);
      if (after.enforced !== "allow") throw deny(after);
      return response;
    },

    /** PreToolUse before the tool, PostToolUse after it (§4.8). */
    wrapToolCall: async (
      request: { toolCall: ToolCallLike; tool?: unknown },
      handler: (request: never) => Promise<unknown>,
    ): Promise<unknown> => {
      const call = request.toolCall;
      const mcp = options.isMcpTool?.(request.tool) === true;
      const tool = () =>
        toolContext("langchain", call.name, call.args, {
          ...(mcp ? { mcpEvent: true } : {}),
          ...(options.toolMap === undefined ? {} : { toolMap: options.toolMap }),
        });
      const pre = { ...envelope("PreToolUse"), turn_id: state.turn || state.session, ...tool(), ...provenance() };
      const d = await options.host.evaluate(pre as AartsEvent);
      const reject = (text: string) =>
        options.toolMessage({ content: text, tool_call_id: call.id ?? "", name: call.name, status: "error" });
      if (d.enforced === "deny") return reject(reasonText(d.verdict, d.engineId, "deny"));
      let effective = request;
      if (d.enforced === "ask") {
        if (options.interrupt === undefined) return reject(reasonText(d.verdict, d.engineId, "deny"));
        const answer = await options.interrupt({
          toolCall: call,
          reasons: reasonText(d.verdict, d.engineId, "ask"),
          suggestedResolutions: d.verdict.suggested_resolutions ?? [],
        });
        const resolution: Resolution = answer === "approve" || answer === "edit" ? "approved" : answer === "reject" ? "denied" : answer;
        await options.host.notify(buildAskResolution(d.event, d.verdict, resolution, { now: now() }));
        if (resolution !== "approved" && resolution !== "allow_always" && resolution !== "allow_similar")
          return reject("Denied by the user");
      } else {
        const mod = modificationOf(d.verdict, "PreToolUse");
        if (mod !== undefined && typeof mod.value === "object" && mod.value !== null) {
          effective = { ...request, toolCall: { ...call, args: mod.value as Record<string, unknown> } };
        }
      }
      const result = await handler(effective as never);
      const output = typeof result === "object" && result !== null && "content" in result ? result.content : result;
      const post = { ...envelope("PostToolUse"), turn_id: state.turn || state.session, ...tool(), tool_result: stringOrObject(output) };
      const after = await options.host.evaluate(post as AartsEvent);
      if (after.enforced === "allow") return result;
      return options.toolMessage({
        content: `[redacted by ${after.engineId}]`,
        tool_call_id: call.id ?? "",
        name: call.name,
        status: "error",
      });
    },

    /** PreOutputDeliver on the final message. */
    afterAgent: async (agentState: { messages?: readonly MessageLike[] }) => {
      const last = [...(agentState.messages ?? [])].reverse().find((m) => kind(m) === "ai" || kind(m) === "assistant");
      if (last === undefined) return undefined;
      const event = { ...envelope("PreOutputDeliver"), turn_id: state.turn || state.session, output_text: textOf(last.content) };
      const d = await options.host.evaluate(event as AartsEvent);
      if (d.enforced !== "allow") throw deny(d);
      return undefined;
    },
  };
}

/**
 * Cursor hook command adapter (adapter spec §4.2). Permission events answer
 * `{"permission": …}`; `allow` is rendered explicitly (Q6).
 */
import type { HookPoint } from "../catalog.js";
import { modificationOf } from "../bridge/mapping.js";
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
  strictest,
  stringOrObject,
  toolContext,
  toolInputOf,
  type HookRuntime,
  type NativeResponse,
  type SessionState,
} from "./common.js";

const PERMISSION_EVENTS = new Set(["preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile", "subagentStart"]);
const POST_TOOL_EVENTS = new Set(["postToolUse", "postToolUseFailure", "afterShellExecution", "afterMCPExecution", "afterFileEdit"]);

const RENDER_HOOK: Record<string, HookPoint> = {
  preToolUse: "PreToolUse",
  beforeShellExecution: "PreToolUse",
  beforeMCPExecution: "PreToolUse",
  beforeReadFile: "PreToolUse",
  subagentStart: "PreSubAgentSpawn",
  beforeSubmitPrompt: "PreUserInput",
  subagentStop: "PostSubAgentResult",
};

/** Can Cursor prompt (capability matrix §4.9)? Permission events except `beforeReadFile`. */
export const cursorCanPrompt = (nativeEvent: string): boolean => PERMISSION_EVENTS.has(nativeEvent) && nativeEvent !== "beforeReadFile";

/** Options of {@link renderCursor}. */
export interface CursorRenderOptions {
  /** The native `hook_event_name` being answered; decides the output shape. */
  readonly nativeEvent: string;
  /** Engine named in the rendered reason. */
  readonly engineId: string;
  /** The tool is an MCP tool (PostToolUse redaction). */
  readonly mcp?: boolean;
}

/** Renders a decision in Cursor's native output (spec §4.2). */
export function renderCursor(
  decision: { verdict: Verdict; enforced: "allow" | "deny" | "ask"; hookPoint: HookPoint },
  options: CursorRenderOptions,
): NativeResponse {
  const { verdict } = decision;
  let enforced = decision.enforced;
  const e = options.nativeEvent;
  if (PERMISSION_EVENTS.has(e)) {
    if (enforced === "ask" && e === "beforeReadFile") enforced = "deny";
    if (enforced === "allow") {
      const mod = e === "preToolUse" ? modificationOf(verdict, "PreToolUse") : undefined;
      return json(mod === undefined ? { permission: "allow" } : { permission: "allow", updated_input: mod.value });
    }
    const r = reasonText(verdict, options.engineId, enforced);
    return json({ permission: enforced, user_message: r, agent_message: r });
  }
  if (e === "beforeSubmitPrompt") {
    return enforced === "allow"
      ? json({ continue: true })
      : json({ continue: false, user_message: reasonText(verdict, options.engineId, enforced) });
  }
  if (POST_TOOL_EVENTS.has(e)) {
    if (enforced === "allow") return EMPTY;
    if (options.mcp === true || e === "afterMCPExecution") return json({ updated_mcp_tool_output: `[redacted by ${options.engineId}]` });
    return json({ additional_context: reasonText(verdict, options.engineId, enforced) });
  }
  if (e === "subagentStop")
    return enforced === "allow" ? EMPTY : json({ followup_message: reasonText(verdict, options.engineId, enforced) });
  return EMPTY;
}

/**
 * Renders a failure-policy verdict in Cursor's output, for an input the adapter could not process
 * (bad input, configuration error, harness failure); `ask` becomes `deny` where Cursor cannot prompt.
 */
export function renderCursorFailure(input: Record<string, unknown>, verdict: Verdict, engineId: string): NativeResponse {
  const nativeEvent = str(input.hook_event_name) ?? "";
  const enforced = verdict.decision === "ask" && !cursorCanPrompt(nativeEvent) ? "deny" : verdict.decision;
  return renderCursor({ verdict, enforced, hookPoint: RENDER_HOOK[nativeEvent] ?? "PreToolUse" }, { nativeEvent, engineId });
}

/** What the Cursor event builders need besides the hook input. */
export interface CursorContext {
  /** Becomes the event `timestamp`. */
  readonly now: Date;
  /** `host_version` when the input carries no `cursor_version`. */
  readonly hostVersion?: string;
  /** `locale` of the events. */
  readonly locale?: string;
  /** Native tool names to canonicalise as `mcp_call` (spec §3.2). */
  readonly mcpTools?: readonly string[];
  /** User tool map, native name → canonical name (spec §3.2 rule 3). */
  readonly toolMap?: Readonly<Record<string, string>>;
}

function base(hookPoint: HookPoint, input: Record<string, unknown>, ctx: CursorContext): Record<string, unknown> {
  return envelope(hookPoint, {
    hostId: "cursor",
    sessionId: str(input.conversation_id) ?? "unknown",
    now: ctx.now,
    hostVersion: str(input.cursor_version) ?? ctx.hostVersion,
    locale: ctx.locale,
  });
}

const turnOf = (input: Record<string, unknown>) => str(input.generation_id) ?? `${str(input.conversation_id) ?? "unknown"}:0`;

/** The native tool name and input of a Cursor tool event (§4.2 table). */
export function cursorTool(
  input: Record<string, unknown>,
): { name: string; toolInput: Record<string, unknown>; mcpEvent: boolean } | undefined {
  switch (str(input.hook_event_name)) {
    case "preToolUse":
    case "postToolUse":
    case "postToolUseFailure":
      return { name: str(input.tool_name) ?? "unknown", toolInput: toolInputOf(input.tool_input), mcpEvent: false };
    case "beforeShellExecution":
    case "afterShellExecution": {
      const toolInput: Record<string, unknown> = { command: str(input.command) ?? "" };
      if (input.cwd !== undefined) toolInput.cwd = input.cwd;
      return { name: "Shell", toolInput, mcpEvent: false };
    }
    case "beforeMCPExecution":
    case "afterMCPExecution": {
      const toolInput = { ...toolInputOf(input.tool_input) };
      for (const k of ["server", "url", "command"]) if (input[k] !== undefined) toolInput[k] = input[k];
      return { name: str(input.tool_name) ?? "MCP", toolInput, mcpEvent: true };
    }
    case "beforeReadFile": {
      const toolInput: Record<string, unknown> = { file_path: str(input.file_path) ?? "" };
      if (input.content !== undefined) toolInput.content = input.content;
      if (input.attachments !== undefined) toolInput.attachments = input.attachments;
      return { name: "Read", toolInput, mcpEvent: false };
    }
    case "afterFileEdit":
      return { name: "Edit", toolInput: { file_path: str(input.file_path) ?? "", edits: input.edits ?? [] }, mcpEvent: false };
    default:
      return undefined;
  }
}

/** Cursor tool event → AARTS PreToolUse (§4.2). */
export function cursorPreToolUse(input: Record<string, unknown>, ctx: CursorContext): AartsEvent | undefined {
  const tool = cursorTool(input);
  if (tool === undefined) return undefined;
  return {
    ...base("PreToolUse", input, ctx),
    turn_id: turnOf(input),
    ...toolContext("cursor", tool.name, tool.toolInput, {
      mcpEvent: tool.mcpEvent,
      ...(ctx.mcpTools === undefined ? {} : { mcpTools: ctx.mcpTools }),
      ...(ctx.toolMap === undefined ? {} : { toolMap: ctx.toolMap }),
    }),
    ...provenance(),
  } as AartsEvent;
}

/** Runs one Cursor hook invocation. */
export async function runCursorHook(input: Record<string, unknown>, rt: HookRuntime): Promise<NativeResponse> {
  const nativeEvent = str(input.hook_event_name) ?? "";
  const ctx: CursorContext = {
    now: rt.now(),
    ...(rt.options.hostVersion === undefined ? {} : { hostVersion: rt.options.hostVersion }),
    ...(rt.options.locale === undefined ? {} : { locale: rt.options.locale }),
    ...(rt.options.mcpTools === undefined ? {} : { mcpTools: rt.options.mcpTools }),
    ...(rt.options.toolMap === undefined ? {} : { toolMap: rt.options.toolMap }),
  };
  const key = `cursor:${str(input.conversation_id) ?? "unknown"}`;
  const state = (await rt.state.read<SessionState>(key)) ?? emptySessionState();
  const evaluate = (event: AartsEvent) => rt.evaluate(event, { subAgents: state.subAgents });
  const record = (d: HostDecision) =>
    rt.state.update<SessionState>(key, (s) => {
      const next = s ?? emptySessionState();
      countDecision(next, d);
      if (d.event.hook_point === "PreSubAgentSpawn" && d.enforced !== "deny") {
        const e = d.event as { sub_agent_id: string; session_id: string };
        const permitted = d.verdict.directives?.permitted_tools;
        next.subAgents[e.sub_agent_id] = { parent: e.session_id, ...(permitted === undefined ? {} : { permitted: [...permitted] }) };
      }
      return next;
    });
  const render = (d: HostDecision, mcp = false) =>
    renderCursor({ verdict: d.verdict, enforced: d.enforced, hookPoint: d.event.hook_point }, { nativeEvent, engineId: d.engineId, mcp });

  if (
    nativeEvent === "preToolUse" ||
    nativeEvent === "beforeShellExecution" ||
    nativeEvent === "beforeMCPExecution" ||
    nativeEvent === "beforeReadFile"
  ) {
    const event = cursorPreToolUse(input, ctx)!;
    let final = await evaluate(event);
    if (nativeEvent === "preToolUse" && event.tool_name === "delegate" && final.enforced !== "deny") {
      const spawn = await evaluate(cursorSpawn(input, ctx, event.tool_input as Record<string, unknown>));
      await record(spawn);
      final = strictest(final, spawn);
    }
    await record(final);
    return render(final);
  }
  switch (nativeEvent) {
    case "sessionStart": {
      await evaluate({ ...base("SessionStart", input, ctx) } as AartsEvent); // observe: blocking unverified (Q8)
      return EMPTY;
    }
    case "beforeSubmitPrompt": {
      const attachments = Array.isArray(input.attachments) ? input.attachments : undefined;
      const event = {
        ...base("PreUserInput", input, ctx),
        turn_id: turnOf(input),
        raw_input: str(input.prompt) ?? "",
        input_source: "keyboard",
        ...(attachments === undefined ? {} : { attached_files: attachments }),
      } as AartsEvent;
      const d = await evaluate(event);
      await record(d);
      return render(d);
    }
    case "subagentStart": {
      const d = await evaluate(cursorSpawn(input, ctx, input));
      await record(d);
      return render(d);
    }
    case "subagentStop": {
      const result = input.result ?? input.summary ?? input.output;
      if (result === undefined) return EMPTY;
      const event = {
        ...base("PostSubAgentResult", input, ctx),
        sub_agent_id:
          str(input.subagent_id) ??
          str(input.agent_id) ??
          `${str(input.conversation_id) ?? "unknown"}/${str(input.generation_id) ?? "sub"}`,
        result: stringOrObject(result),
      } as AartsEvent;
      return render(await evaluate(event));
    }
    case "preCompact": {
      const context = input.context ?? input.messages ?? input.conversation;
      if (typeof context !== "string" && !Array.isArray(context)) return EMPTY; // MUST field unavailable
      await evaluate({ ...base("PreCompact", input, ctx), turn_id: turnOf(input), context_before: context } as AartsEvent); // observe
      return EMPTY;
    }
    case "afterAgentResponse": {
      const text = str(input.text) ?? str(input.response);
      if (text === undefined) return EMPTY;
      await evaluate({ ...base("PreOutputDeliver", input, ctx), turn_id: turnOf(input), output_text: text } as AartsEvent); // observe: fires after display
      return EMPTY;
    }
    case "sessionEnd": {
      await rt.notify({ ...base("SessionEnd", input, ctx), summary: state.summary } as AartsEvent);
      await rt.state.update(key, () => undefined);
      return EMPTY;
    }
    default:
      break;
  }
  if (POST_TOOL_EVENTS.has(nativeEvent)) {
    const tool = cursorTool(input)!;
    const failed = nativeEvent === "postToolUseFailure";
    const result = failed ? (input.error ?? "tool failed") : (input.tool_output ?? input.result_json ?? input.output ?? input.edits ?? {});
    const event = {
      ...base("PostToolUse", input, ctx),
      turn_id: turnOf(input),
      ...toolContext("cursor", tool.name, tool.toolInput, {
        mcpEvent: tool.mcpEvent,
        ...(ctx.mcpTools === undefined ? {} : { mcpTools: ctx.mcpTools }),
      }),
      tool_result: stringOrObject(typeof result === "string" ? result : result),
    } as AartsEvent;
    const d = await evaluate(event);
    await record(d);
    return render(d, (event as { tool_name: string }).tool_name === "mcp_call");
  }
  return EMPTY; // stop, afterAgentThought, Tab hooks: not mapped
}

function cursorSpawn(input: Record<string, unknown>, ctx: CursorContext, source: Record<string, unknown>): AartsEvent {
  const event: Record<string, unknown> = {
    ...base("PreSubAgentSpawn", input, ctx),
    sub_agent_id:
      str(input.subagent_id) ?? str(input.tool_use_id) ?? `${str(input.conversation_id) ?? "unknown"}/${str(input.generation_id) ?? "sub"}`,
    delegated_task: str(source.prompt) ?? str(source.task) ?? str(source.description) ?? "",
  };
  const type = str(source.subagent_type) ?? str(source.subagentType);
  if (type !== undefined) event.sub_agent_type = type;
  return event as AartsEvent;
}

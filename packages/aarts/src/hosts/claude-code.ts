/**
 * Claude Code hook command adapter (adapter spec §4.1), and VS Code agent hooks, which use the
 * same JSON shapes (§4.3). Native hook JSON → AARTS events → the host runtime → the native
 * answer on stdout and the exit code.
 */
import { createHash } from "node:crypto";
import { readText } from "../host/fs-async.js";
import { homedir } from "node:os";
import { isAbsolute, join, relative } from "node:path";
import type { HookPoint } from "../catalog.js";
import { modificationOf, OBSERVE_ONLY } from "../bridge/mapping.js";
import { buildAskResolution, type HostDecision } from "../host/host.js";
import { reasonText } from "../host/policy.js";
import type { AartsEvent, Verdict } from "../types.js";
import {
  countDecision,
  EMPTY,
  emptySessionState,
  envelope,
  json,
  PENDING_TTL_MS,
  provenance,
  str,
  strictest,
  stringOrObject,
  toolContext,
  type HookRuntime,
  type NativeResponse,
  type SessionState,
} from "./common.js";
import { parseSkillFile } from "./frontmatter.js";

/**
 * A host that speaks Claude Code's hook JSON: Claude Code itself ({@link CLAUDE_CODE}) or VS Code agent hooks ({@link VSCODE}) (spec §4.1, §4.3).
 */
export interface ClaudeCompatibleHost {
  /** `claude-code` or `vscode`. */
  readonly hostId: "claude-code" | "vscode";
  /** Native tool names that spawn a sub-agent. */
  readonly delegateTools: readonly string[];
  /** Native tool name that loads a skill, if any. */
  readonly skillTool?: string;
}

/** Claude Code: sub-agents through `Task`/`Agent`, skills through `Skill` (spec §4.1). */
export const CLAUDE_CODE: ClaudeCompatibleHost = { hostId: "claude-code", delegateTools: ["Task", "Agent"], skillTool: "Skill" };
/** VS Code agent hooks: Claude-compatible JSON, sub-agents through `runSubagent`, no skill tool (spec §4.3). */
export const VSCODE: ClaudeCompatibleHost = { hostId: "vscode", delegateTools: ["runSubagent"] };

/** Native hook events the adapter maps (others answer `{}`). */
export const CLAUDE_CODE_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PreCompact",
  "PostCompact",
  "SubagentStart",
  "SubagentStop",
  "Stop",
  "SessionEnd",
  "PermissionDenied",
] as const;

/** Which AARTS hook a native event is rendered as (for failure rendering). */
const RENDER_HOOK: Record<string, HookPoint> = {
  SessionStart: "SessionStart",
  UserPromptSubmit: "PreUserInput",
  PreToolUse: "PreToolUse",
  PostToolUse: "PostToolUse",
  PostToolUseFailure: "PostToolUse",
  PreCompact: "PreCompact",
  PostCompact: "PostCompact",
  SubagentStop: "PostSubAgentResult",
};

/** Options of {@link renderClaudeCode}. */
export interface ClaudeRenderOptions {
  /** The native `hook_event_name` being answered; decides the output shape. */
  readonly nativeEvent: string;
  /** Engine named in the rendered reason (`Blocked by <engineId>: …`). */
  readonly engineId: string;
  /** Native tool name (MCP detection for PostToolUse redaction). */
  readonly toolName?: string;
  /** How an applied modification is rendered on PreToolUse. Default `ask`. */
  readonly modifyAs?: "ask" | "allow";
}

/**
 * Renders a decision in Claude Code's native output (spec §4.1 rendering table). `allow` is
 * always `{}`: an explicit allow would skip Claude Code's own permission prompt.
 */
export function renderClaudeCode(
  decision: { verdict: Verdict; enforced: "allow" | "deny" | "ask"; hookPoint: HookPoint },
  options: ClaudeRenderOptions,
): NativeResponse {
  const { verdict, enforced } = decision;
  const r = () => reasonText(verdict, options.engineId, enforced);
  switch (options.nativeEvent) {
    case "PreToolUse": {
      if (enforced === "allow") {
        const mod = modificationOf(verdict, "PreToolUse");
        if (mod === undefined) return EMPTY;
        const reasons = verdict.reasons ?? [];
        return json({
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: options.modifyAs ?? "ask",
            permissionDecisionReason: reasons.length > 0 ? r() : `${options.engineId} modified this tool call`,
            updatedInput: mod.value,
          },
        });
      }
      return json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: enforced, permissionDecisionReason: r() } });
    }
    case "UserPromptSubmit":
      return enforced === "allow" ? EMPTY : json({ decision: "block", reason: r() });
    case "PostToolUse":
    case "PostToolUseFailure": {
      if (enforced === "allow") return EMPTY;
      if (options.toolName?.startsWith("mcp__")) {
        return json({
          decision: "block",
          reason: r(),
          hookSpecificOutput: { hookEventName: "PostToolUse", updatedMCPToolOutput: `[redacted by ${options.engineId}]` },
        });
      }
      return json({ decision: "block", reason: r() });
    }
    case "SessionStart":
      return enforced === "allow" ? EMPTY : json({ continue: false, stopReason: r() });
    case "PreCompact":
      return enforced === "allow" ? EMPTY : { stdout: "", stderr: `${r()}\n`, exitCode: 2 };
    case "PostCompact": {
      const inject = verdict.directives?.inject_context;
      if (enforced === "allow" && inject !== undefined) {
        return json({ hookSpecificOutput: { hookEventName: "PostCompact", additionalContext: inject.content } });
      }
      return EMPTY;
    }
    case "SubagentStop":
      return enforced === "allow" ? EMPTY : json({ decision: "block", reason: r() });
    default:
      // Unknown event under a failure-policy deny: exit 2 blocks where Claude Code allows blocking.
      if (enforced !== "allow" && !(CLAUDE_CODE_EVENTS as readonly string[]).includes(options.nativeEvent)) {
        return { stdout: "", stderr: `${r()}\n`, exitCode: 2 };
      }
      return EMPTY;
  }
}

/** Renders a failure-policy verdict for an input the adapter could not process. */
export function renderClaudeCodeFailure(
  input: Record<string, unknown>,
  verdict: Verdict,
  engineId: string,
  canPrompt = false,
): NativeResponse {
  const nativeEvent = str(input.hook_event_name) ?? "";
  const hookPoint = RENDER_HOOK[nativeEvent] ?? "PreToolUse";
  const enforced = verdict.decision === "ask" && !canPrompt ? "deny" : verdict.decision;
  return renderClaudeCode(
    { verdict, enforced, hookPoint },
    { nativeEvent, engineId, ...(str(input.tool_name) === undefined ? {} : { toolName: str(input.tool_name)! }) },
  );
}

/** Can Claude Code prompt on this hook (capability matrix §4.9)? Only PreToolUse. */
export const claudeCanPrompt = (hookPoint: HookPoint): boolean => hookPoint === "PreToolUse";

// ------------------------------------------------------------------ event builders (pure)

/**
 * What the Claude Code event builders need besides the hook input: the host flavour, the clock,
 * the session state kept between hook processes, and the adapter options.
 */
export interface ClaudeContext {
  /** Claude Code or VS Code. */
  readonly host: ClaudeCompatibleHost;
  /** Becomes the event `timestamp`. */
  readonly now: Date;
  /** The session's state (turn counter, bound sub-agents, pending asks). */
  readonly state: SessionState;
  /** `host_version` of the events. */
  readonly hostVersion?: string;
  /** `locale` of the events. */
  readonly locale?: string;
  /** Native tool names to canonicalise as `mcp_call` (spec §3.2). */
  readonly mcpTools?: readonly string[];
  /** User tool map, native name → canonical name (spec §3.2 rule 3). */
  readonly toolMap?: Readonly<Record<string, string>>;
}

interface Attribution {
  readonly sessionId: string;
  readonly sub?: { parentSessionId: string };
}

/** Which AARTS session an input belongs to: a bound sub-agent (`agent_id`) or the native session. */
export function attribution(input: Record<string, unknown>, state: SessionState): Attribution {
  const sessionId = str(input.session_id) ?? "unknown";
  const agentId = str(input.agent_id);
  const bound = agentId === undefined ? undefined : state.agents[agentId];
  if (bound !== undefined) return { sessionId: bound.subAgentId, sub: { parentSessionId: sessionId } };
  return { sessionId };
}

/** The `turn_id` of an input: Claude Code's `prompt_id` when present, else `<session_id>:<turn counter>`. */
export function turnIdOf(input: Record<string, unknown>, state: SessionState): string {
  return str(input.prompt_id) ?? `${str(input.session_id) ?? "unknown"}:${state.turn}`;
}

function base(hookPoint: HookPoint, ctx: ClaudeContext, sessionId: string): Record<string, unknown> {
  return envelope(hookPoint, { hostId: ctx.host.hostId, sessionId, now: ctx.now, hostVersion: ctx.hostVersion, locale: ctx.locale });
}

/** Native PreToolUse → AARTS PreToolUse (§4.1). */
export function claudePreToolUse(input: Record<string, unknown>, ctx: ClaudeContext): AartsEvent {
  const who = attribution(input, ctx.state);
  const toolInput = (
    typeof input.tool_input === "object" && input.tool_input !== null && !Array.isArray(input.tool_input) ? input.tool_input : {}
  ) as Record<string, unknown>;
  return {
    ...base("PreToolUse", ctx, who.sessionId),
    turn_id: turnIdOf(input, ctx.state),
    ...toolContext(ctx.host.hostId, str(input.tool_name) ?? "unknown", toolInput, {
      ...(ctx.mcpTools === undefined ? {} : { mcpTools: ctx.mcpTools }),
      ...(ctx.toolMap === undefined ? {} : { toolMap: ctx.toolMap }),
    }),
    ...provenance(who.sub),
  } as AartsEvent;
}

/** Native PreToolUse of a delegate tool → AARTS PreSubAgentSpawn (§4.1). */
export function claudeSubAgentSpawn(input: Record<string, unknown>, ctx: ClaudeContext): AartsEvent {
  const who = attribution(input, ctx.state);
  const toolInput = (input.tool_input ?? {}) as Record<string, unknown>;
  const nativeSession = str(input.session_id) ?? "unknown";
  const event: Record<string, unknown> = {
    ...base("PreSubAgentSpawn", ctx, who.sessionId),
    sub_agent_id: `${nativeSession}/${str(input.tool_use_id) ?? "unknown"}`,
    delegated_task: str(toolInput.prompt) ?? str(toolInput.description) ?? "",
  };
  const type = str(toolInput.subagent_type);
  if (type !== undefined) event.sub_agent_type = type;
  return event as AartsEvent;
}

/** Native PostToolUse / PostToolUseFailure → AARTS PostToolUse (§4.1). */
export function claudePostToolUse(input: Record<string, unknown>, ctx: ClaudeContext): AartsEvent {
  const who = attribution(input, ctx.state);
  const toolInput = (
    typeof input.tool_input === "object" && input.tool_input !== null && !Array.isArray(input.tool_input) ? input.tool_input : {}
  ) as Record<string, unknown>;
  const failed = str(input.hook_event_name) === "PostToolUseFailure";
  const response = failed ? (input.error ?? input.tool_response ?? "tool failed") : input.tool_response;
  const event: Record<string, unknown> = {
    ...base("PostToolUse", ctx, who.sessionId),
    turn_id: turnIdOf(input, ctx.state),
    ...toolContext(ctx.host.hostId, str(input.tool_name) ?? "unknown", toolInput, {
      ...(ctx.mcpTools === undefined ? {} : { mcpTools: ctx.mcpTools }),
      ...(ctx.toolMap === undefined ? {} : { toolMap: ctx.toolMap }),
    }),
    tool_result: stringOrObject(response),
  };
  const r = typeof input.tool_response === "object" && input.tool_response !== null ? (input.tool_response as Record<string, unknown>) : {};
  const exit = r.exit_code ?? r.exitCode ?? r.returnCode;
  if (typeof exit === "number") event.exit_code = exit;
  return event as AartsEvent;
}

// ------------------------------------------------------------------ the adapter

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

async function readTranscript(path: string | undefined): Promise<unknown[] | undefined> {
  if (path === undefined) return undefined;
  try {
    const text = await readText(path);
    const lines: unknown[] = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      lines.push(JSON.parse(line) as unknown);
    }
    return lines;
  } catch {
    return undefined;
  }
}

/**
 * Runs one Claude Code (or VS Code) hook invocation: builds the AARTS event(s), evaluates them
 * through the runtime, keeps cross-event state, and renders the native answer.
 */
export async function runClaudeCompatibleHook(
  host: ClaudeCompatibleHost,
  input: Record<string, unknown>,
  rt: HookRuntime,
): Promise<NativeResponse> {
  const nativeEvent = str(input.hook_event_name) ?? "";
  const key = `${host.hostId}:${str(input.session_id) ?? "unknown"}`;
  const now = rt.now();
  const state = (await rt.state.read<SessionState>(key)) ?? emptySessionState();
  const ctx: ClaudeContext = {
    host,
    now,
    state,
    ...(rt.options.hostVersion === undefined ? {} : { hostVersion: rt.options.hostVersion }),
    ...(rt.options.locale === undefined ? {} : { locale: rt.options.locale }),
    ...(rt.options.mcpTools === undefined ? {} : { mcpTools: rt.options.mcpTools }),
    ...(rt.options.toolMap === undefined ? {} : { toolMap: rt.options.toolMap }),
  };
  const update = (fn: (s: SessionState) => void) =>
    rt.state.update<SessionState>(key, (current) => {
      const s = current ?? emptySessionState();
      fn(s);
      return s;
    });
  const evaluate = (event: AartsEvent) => rt.evaluate(event, { subAgents: state.subAgents });
  const render = (d: HostDecision, toolName?: string) =>
    renderClaudeCode(
      { verdict: d.verdict, enforced: d.enforced, hookPoint: d.event.hook_point },
      {
        nativeEvent,
        engineId: d.engineId,
        ...(toolName === undefined ? {} : { toolName }),
        ...(rt.options.modifyAs === undefined ? {} : { modifyAs: rt.options.modifyAs }),
      },
    );
  const nativeSession = str(input.session_id) ?? "unknown";

  switch (nativeEvent) {
    case "SessionStart": {
      const event = { ...base("SessionStart", ctx, nativeSession) } as Record<string, unknown>;
      const cwd = str(input.cwd);
      if (cwd !== undefined) event.environment = { working_directory: cwd, os: process.platform };
      const d = await evaluate(event as AartsEvent);
      return render(d);
    }
    case "UserPromptSubmit": {
      const next = await update((s) => {
        s.turn++;
      });
      const turnState = next ?? { ...state, turn: state.turn + 1 };
      const who = attribution(input, turnState);
      const event = {
        ...base("PreUserInput", ctx, who.sessionId),
        turn_id: turnIdOf(input, turnState),
        raw_input: str(input.prompt) ?? "",
        input_source: "keyboard",
      } as AartsEvent;
      const d = await evaluate(event);
      await update((s) => countDecision(s, d));
      return render(d);
    }
    case "PreToolUse": {
      const toolName = str(input.tool_name) ?? "unknown";
      const toolUseId = str(input.tool_use_id);
      const d1 = await evaluate(claudePreToolUse(input, ctx));
      let final = d1;
      let spawn: HostDecision | undefined;
      if (d1.enforced !== "deny" && host.delegateTools.includes(toolName)) {
        spawn = await evaluate(claudeSubAgentSpawn(input, ctx));
        final = strictest(d1, spawn);
      } else if (d1.enforced !== "deny" && toolName === host.skillTool) {
        const skillEvent = await claudeSkillLoad(input, ctx, rt.options.home ?? homedir());
        if (skillEvent !== undefined) final = strictest(d1, await evaluate(skillEvent));
      }
      await update((s) => {
        countDecision(s, final);
        const cutoff = now.getTime() - PENDING_TTL_MS;
        s.pendingSpawns = s.pendingSpawns.filter((p) => p.at > cutoff);
        if (spawn !== undefined && final.enforced !== "deny" && toolUseId !== undefined) {
          const e = spawn.event as { sub_agent_id: string };
          s.pendingSpawns.push({ toolUseId, subAgentId: e.sub_agent_id, at: now.getTime() });
        }
        if (spawn !== undefined && spawn.enforced !== "deny") {
          const e = spawn.event as { sub_agent_id: string; session_id: string };
          const permitted = spawn.verdict.directives?.permitted_tools;
          s.subAgents[e.sub_agent_id] = { parent: e.session_id, ...(permitted === undefined ? {} : { permitted: [...permitted] }) };
        }
        if (final.enforced === "ask" && toolUseId !== undefined) {
          s.pendingAsks[toolUseId] = {
            hookPoint: final.event.hook_point,
            verdict: final.verdict,
            turnId: turnIdOf(input, s),
            sessionId: final.event.session_id,
            event: final.event,
            at: now.getTime(),
          };
        }
        for (const [id, ask] of Object.entries(s.pendingAsks)) if (ask.at <= cutoff) delete s.pendingAsks[id];
      });
      return render(final, toolName);
    }
    case "PostToolUse":
    case "PostToolUseFailure": {
      await resolvePendingAsk(input, "approved", rt, update, state);
      const d = await evaluate(claudePostToolUse(input, ctx));
      await update((s) => countDecision(s, d));
      return render(d, str(input.tool_name));
    }
    case "PermissionDenied": {
      await resolvePendingAsk(input, "denied", rt, update, state);
      const toolUseId = str(input.tool_use_id);
      if (toolUseId !== undefined) await update((s) => void (s.pendingSpawns = s.pendingSpawns.filter((p) => p.toolUseId !== toolUseId)));
      return EMPTY;
    }
    case "PreCompact": {
      const transcript = await readTranscript(str(input.transcript_path));
      if (transcript === undefined) return EMPTY; // MUST field unavailable: not fired
      const trigger = str(input.trigger);
      const event = {
        ...base("PreCompact", ctx, attribution(input, state).sessionId),
        turn_id: turnIdOf(input, state),
        context_before: transcript,
        ...(trigger === "manual"
          ? { compaction_reason: "user_triggered" }
          : trigger === "auto"
            ? { compaction_reason: "token_limit" }
            : {}),
        compaction_strategy: "summarization",
      } as AartsEvent;
      const d = await evaluate(event);
      await update((s) => {
        countDecision(s, d);
        if (d.enforced === "allow") s.compact = { before: transcript, at: now.getTime() };
      });
      return render(d);
    }
    case "PostCompact": {
      const before = state.compact?.before;
      const after = await readTranscript(str(input.transcript_path));
      if (before === undefined || after === undefined) return EMPTY; // snapshot or new transcript missing: not fired
      const event = {
        ...base("PostCompact", ctx, attribution(input, state).sessionId),
        turn_id: turnIdOf(input, state),
        original_value: { transcript: before },
        modified_value: { transcript: after },
        was_modified: true,
        modifier_chain: [],
      } as unknown as AartsEvent;
      const d = await evaluate(event);
      await update((s) => {
        countDecision(s, d);
        delete s.compact;
      });
      return render(d);
    }
    case "SubagentStart": {
      const agentId = str(input.agent_id);
      if (agentId !== undefined) {
        await update((s) => {
          if (s.agents[agentId] !== undefined) return;
          const pending = s.pendingSpawns.shift();
          if (pending !== undefined) s.agents[agentId] = { subAgentId: pending.subAgentId, toolUseId: pending.toolUseId };
        });
      }
      return EMPTY;
    }
    case "SubagentStop": {
      const result = input.last_assistant_message;
      if (result === undefined) return EMPTY; // MUST field unavailable
      const agentId = str(input.agent_id);
      const bound = agentId === undefined ? undefined : state.agents[agentId];
      const event = {
        ...base("PostSubAgentResult", ctx, nativeSession),
        sub_agent_id: bound?.subAgentId ?? `${nativeSession}/${agentId ?? "unknown"}`,
        result: stringOrObject(result),
      } as AartsEvent;
      const d = await evaluate(event);
      return render(d);
    }
    case "Stop": {
      const text = str(input.last_assistant_message);
      if (text === undefined) return EMPTY;
      const event = {
        ...base("PreOutputDeliver", ctx, attribution(input, state).sessionId),
        turn_id: turnIdOf(input, state),
        output_text: text,
        // Observe only (Stop cannot withhold output): sent as a post_response notification.
        [OBSERVE_ONLY]: true,
      } as unknown as AartsEvent;
      await evaluate(event);
      return EMPTY;
    }
    case "SessionEnd": {
      const event = { ...base("SessionEnd", ctx, nativeSession), summary: state.summary } as AartsEvent;
      await rt.notify(event);
      await rt.state.update(key, () => undefined);
      return EMPTY;
    }
    default:
      return EMPTY;
  }
}

async function resolvePendingAsk(
  input: Record<string, unknown>,
  resolution: "approved" | "denied",
  rt: HookRuntime,
  update: (fn: (s: SessionState) => void) => Promise<unknown>,
  state: SessionState,
): Promise<void> {
  const toolUseId = str(input.tool_use_id);
  if (toolUseId === undefined || state.pendingAsks[toolUseId] === undefined) return;
  let ask: SessionState["pendingAsks"][string] | undefined;
  await update((s) => {
    ask = s.pendingAsks[toolUseId];
    delete s.pendingAsks[toolUseId];
  });
  if (ask === undefined) return;
  const event = buildAskResolution(ask.event, ask.verdict, resolution, { turnId: ask.turnId, now: rt.now() });
  await rt.notify(event);
}

/**
 * The PreSkillLoad event of a `Skill` tool call, when the skill file can be located
 * (`<cwd>/.claude/skills/<name>/SKILL.md`, then `~/.claude/skills/<name>/SKILL.md`) and its
 * frontmatter parsed; otherwise undefined (not fired, §4.1).
 */
export async function claudeSkillLoad(input: Record<string, unknown>, ctx: ClaudeContext, home: string): Promise<AartsEvent | undefined> {
  const toolInput = isRecord(input.tool_input) ? input.tool_input : {};
  const name = str(toolInput.skill) ?? str(toolInput.command) ?? str(toolInput.name);
  if (name === undefined || !/^[A-Za-z0-9._:-]+$/.test(name) || name.includes("..")) return undefined;
  const plain = name.includes(":") ? name.split(":").pop()! : name;
  const cwd = str(input.cwd);
  const candidates: { path: string; source: "project" | "user" }[] = [];
  if (cwd !== undefined && isAbsolute(cwd)) candidates.push({ path: join(cwd, ".claude", "skills", plain, "SKILL.md"), source: "project" });
  candidates.push({ path: join(home, ".claude", "skills", plain, "SKILL.md"), source: "user" });
  for (const candidate of candidates) {
    let text: string;
    try {
      text = await readText(candidate.path);
    } catch {
      continue;
    }
    let doc;
    try {
      doc = parseSkillFile(text);
    } catch {
      return undefined;
    }
    const who = attribution(input, ctx.state);
    return {
      ...base("PreSkillLoad", ctx, who.sessionId),
      source: candidate.source,
      source_id: cwd !== undefined && candidate.source === "project" ? relative(cwd, candidate.path) : candidate.path,
      file_path: candidate.path,
      file_hash: createHash("sha256").update(text).digest("hex"),
      frontmatter: doc.frontmatter,
      declared_hooks: declaredHooks(doc.frontmatter.hooks),
      body_content: doc.body,
      load_context: "skill_invocation",
    } as AartsEvent;
  }
  return undefined;
}

/** Flattens Claude-style `hooks: {Event: [{matcher, hooks: [{type, command}]}]}` into DeclaredHook items. */
export function declaredHooks(hooks: unknown): { event: string; matcher?: string; command?: string; type?: string }[] {
  const out: { event: string; matcher?: string; command?: string; type?: string }[] = [];
  if (!isRecord(hooks)) return out;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      if (!isRecord(group)) continue;
      const matcher = str(group.matcher);
      const inner = Array.isArray(group.hooks) ? group.hooks : [group];
      for (const h of inner) {
        if (!isRecord(h)) continue;
        out.push({
          event,
          ...(matcher === undefined ? {} : { matcher }),
          ...(str(h.command) === undefined ? {} : { command: str(h.command)! }),
          ...(str(h.type) === undefined ? {} : { type: str(h.type)! }),
        });
      }
    }
  }
  return out;
}

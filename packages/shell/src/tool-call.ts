/**
 * Tool calls as agent frameworks send them, in one internal view: the tool's name, its
 * arguments as an object, whether it runs shell commands, the command text(s) and the working
 * directory it names.
 *
 * Shapes understood (first match wins; containers are looked into):
 * - AHP reference / A3S: `{tool | tool_name, arguments, working_directory}`;
 * - Claude Code hooks: `{tool_name, tool_input, cwd}`; Copilot CLI: `{toolName, toolArgs: "<json>"}`;
 * - OpenAI Chat Completions: `{function: {name, arguments: "<json>"}}`, `{tool_calls: [...]}`;
 * - OpenAI Responses: `{type: "function_call", name, arguments: "<json>"}`, `local_shell_call`
 *   (`action.command` argv, `action.working_directory`), `shell_call` (`action.commands`);
 * - LangChain: `{name, args}`; MCP `tools/call`: `{method, params: {name, arguments}}` or `{name, arguments}`;
 * - ACP tool calls: `{toolCall: {kind: "execute", rawInput, title}}`, `{kind, rawInput}`;
 * - AARTS events bridged to AHP: `{tool_name: "shell", tool_name_native: "Bash", arguments}`.
 *
 * File tools report the paths they change (`writes`); code-execution tools (`python` with
 * `code`, `execute_code`, `javascript` ...) report the interpreter command line running their
 * code as a command, so the shell analysis reads the code as it reads `python3 -c '…'`.
 */

import { codeCommands, codeOf, languageOf, toolKind, writesOf } from "./file-tools.js";
import { codeWrites } from "./inline-code.js";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** `o[key]` when it is `o`'s own member (not inherited, e.g. `constructor`); most keys are absent, so read first. */
const own = (o: Record<string, unknown>, key: string): unknown => {
  const v = o[key];
  return v !== undefined && Object.prototype.hasOwnProperty.call(o, key) ? v : undefined;
};

/**
 * Tool names that run shell commands, lower case: the shell tools of Claude Code, Codex, Cursor,
 * Copilot, VS Code, Cline, Windsurf, Gemini CLI, OpenAI, LangChain, OpenClaw and OpenCode, the
 * AARTS canonical names, and common MCP server tools (matched on the last `__`, `.` or `/` part).
 */
export const SHELL_TOOL_NAMES: ReadonlySet<string> = new Set([
  "bash",
  "sh",
  "zsh",
  "shell",
  "terminal",
  "powershell",
  "pwsh",
  "exec",
  "execute",
  "command",
  "cmd",
  "run",
  "run_command",
  "runcommand",
  "run_commands",
  "runcommands",
  "run_shell_command",
  "run_terminal_cmd",
  "run_terminal_command",
  "run_in_terminal",
  "runinterminal",
  "execute_command",
  "executecommand",
  "exec_command",
  "shell_command",
  "shell_exec",
  "local_shell",
  "local_shell_call",
  "shell_call",
  "container.exec",
  "write_bash",
  "bash_tool",
  "terminal_tool",
  "start_process",
  "pre_run_command",
  "post_run_command",
  "package_install",
]);

/** Whether a tool name (any case, MCP-prefixed or namespaced) names a shell tool. */
export function isShellToolName(name: string): boolean {
  const lower = name.toLowerCase();
  if (SHELL_TOOL_NAMES.has(lower)) return true;
  const cut = Math.max(lower.lastIndexOf("__"), lower.lastIndexOf("/"), lower.lastIndexOf("."));
  if (cut < 0) return false;
  return SHELL_TOOL_NAMES.has(lower.slice(cut + (lower.startsWith("__", cut) ? 2 : 1)));
}

/** Members that hold a shell command, in order of preference (AARTS spec §3.5 plus common variants). */
export const COMMAND_KEYS: readonly string[] = Object.freeze([
  "command",
  "commands",
  "cmd",
  "command_line",
  "commandLine",
  "cmdline",
  "script",
]);

/** A shell command found in a tool input, with the member that holds it. */
export interface ShellCommandField {
  readonly command: string;
  /** `tool_input.<member>` (`.<index>` for one element of `commands`). */
  readonly sourceField: string;
}

/** POSIX single-quoting of one argv element when it needs it (AARTS spec §3.5). */
export function quoteArg(arg: string): string {
  if (arg !== "" && !/[\s'"\\$`!*?#&;|<>(){}[\]~]/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * The shell command(s) of a tool input: `command` (a string, or an argv array joined with POSIX
 * quoting), `commands` (one per element), `cmd`, `command_line`, `commandLine`, `cmdline`,
 * `script` (the first member present).
 */
export function shellCommands(toolInput: Record<string, unknown>, prefix = "tool_input"): ShellCommandField[] {
  const out: ShellCommandField[] = [];
  for (const key of COMMAND_KEYS) {
    const v = own(toolInput, key);
    if (typeof v === "string") out.push({ command: v, sourceField: `${prefix}.${key}` });
    else if (Array.isArray(v) && v.length > 0 && v.every((e) => typeof e === "string")) {
      if (key === "commands") v.forEach((c, i) => out.push({ command: c, sourceField: `${prefix}.${key}.${i}` }));
      else out.push({ command: v.map(quoteArg).join(" "), sourceField: `${prefix}.${key}` });
    }
    if (out.length > 0) return out;
  }
  return out;
}

/** The command texts {@link shellCommands} finds, appended to `out`, without building their field names; true when it found any. */
function commandTexts(toolInput: Record<string, unknown>, out: string[]): boolean {
  const o = toolInput;
  return (
    textsAt(o, "command", o["command"], out) ||
    textsAt(o, "commands", o["commands"], out) ||
    textsAt(o, "cmd", o["cmd"], out) ||
    textsAt(o, "command_line", o["command_line"], out) ||
    textsAt(o, "commandLine", o["commandLine"], out) ||
    textsAt(o, "cmdline", o["cmdline"], out) ||
    textsAt(o, "script", o["script"], out)
  );
}

/** One member of {@link COMMAND_KEYS} (`v` is `o[key]`): its command text(s) appended to `out`; true when there were any. */
function textsAt(o: Record<string, unknown>, key: string, v: unknown, out: string[]): boolean {
  if (v === undefined || !hasOwn(o, key)) return false;
  if (typeof v === "string") {
    out.push(v);
    return true;
  }
  if (Array.isArray(v) && v.length > 0 && v.every((e) => typeof e === "string")) {
    if (key === "commands") for (const c of v) out.push(c);
    else out.push(v.map(quoteArg).join(" "));
    return true;
  }
  return false;
}

/** One tool call, normalized. */
export interface ToolCall {
  /** The tool's name as sent (first string of `tool_name`, `tool`, `name`, `toolName`, `function.name`, ...). */
  readonly name: string | undefined;
  /** Other names the payload gives the same tool (AARTS `tool_name_native`, ACP `kind`). */
  readonly aliases: readonly string[];
  /** The arguments as an object (parsed from JSON text when they arrive as a string). */
  readonly arguments: Record<string, unknown> | undefined;
  /** The tool runs shell commands (by name, by ACP kind `execute`, or by OpenAI item type). */
  readonly shell: boolean;
  /** Shell command texts found in the call (argv arrays joined with POSIX quoting). */
  readonly commands: readonly string[];
  /** The working directory the call names (`cwd`, `workdir`, `working_directory`). */
  readonly cwd: string | undefined;
  /** Paths a file tool (write, edit, patch, move, delete …) changes, or a code tool's code opens for writing, as given; `[]` for other tools and read-only calls. */
  readonly writes: readonly string[];
  /** The language of a code-execution tool (`python`, `javascript` …), whose code is among `commands`. */
  readonly code: string | undefined;
}

const ARGUMENT_KEYS = ["tool_input", "arguments", "args", "input", "parameters", "params", "rawInput", "toolArgs", "action"] as const;
const MAX_DEPTH = 4;

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const t = text.trimStart();
  if (!t.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

// The lookups below name each key in the code: a named load of an absent member is cheap for the
// few payload shapes an agent sends, where a load by a key from a list is not (most keys are absent).
const hasOwn = (o: Record<string, unknown>, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);
/** `own(o, key)` where `v` is `o[key]`, read by name. */
const ownAt = (o: Record<string, unknown>, key: string, v: unknown): unknown => (v !== undefined && hasOwn(o, key) ? v : undefined);
const stringAt = (o: Record<string, unknown>, key: string, v: unknown): string | undefined =>
  typeof v === "string" && hasOwn(o, key) ? v : undefined;

/** The first string of `tool_name`, `tool`, `name`, `toolName`. */
function nameOf(o: Record<string, unknown>): string | undefined {
  return (
    stringAt(o, "tool_name", o["tool_name"]) ??
    stringAt(o, "tool", o["tool"]) ??
    stringAt(o, "name", o["name"]) ??
    stringAt(o, "toolName", o["toolName"])
  );
}

/** The first string of `cwd`, `workdir`, `working_directory`, `workingDirectory`. */
function cwdOf(o: Record<string, unknown>): string | undefined {
  return (
    stringAt(o, "cwd", o["cwd"]) ??
    stringAt(o, "workdir", o["workdir"]) ??
    stringAt(o, "working_directory", o["working_directory"]) ??
    stringAt(o, "workingDirectory", o["workingDirectory"])
  );
}

/** Containers a call may be wrapped in: Chat Completions `function`, MCP `params`, ACP `toolCall`, Responses `item`. */
function inner(o: Record<string, unknown>): Record<string, unknown> | undefined {
  const fn = o["function"];
  if (isRecord(fn) && hasOwn(o, "function")) return fn;
  const toolCall = o["toolCall"];
  if (isRecord(toolCall) && hasOwn(o, "toolCall")) return toolCall;
  const toolCallSnake = o["tool_call"];
  if (isRecord(toolCallSnake) && hasOwn(o, "tool_call")) return toolCallSnake;
  const item = o["item"];
  if (isRecord(item) && hasOwn(o, "item")) return item;
  const params = ownAt(o, "params", o["params"]);
  if (isRecord(params) && (typeof own(o, "method") === "string" || typeof own(params, "name") === "string") && nameOf(o) === undefined) {
    return params;
  }
  return undefined;
}

function callOf(o: Record<string, unknown>, payload: Record<string, unknown>): ToolCall {
  const type = ownAt(o, "type", o["type"]);
  const kind = ownAt(o, "kind", o["kind"]);
  const acp = typeof kind === "string" && (own(o, "toolCallId") !== undefined || own(o, "rawInput") !== undefined);
  let name = nameOf(o);
  const aliases: string[] = [];
  const native = ownAt(o, "tool_name_native", o["tool_name_native"]);
  if (typeof native === "string") aliases.push(native);
  if (acp) {
    if (name === undefined) name = `acp:${kind}`;
    else aliases.push(`acp:${kind}`);
  }
  if (name === undefined && (type === "local_shell_call" || type === "shell_call")) name = type;

  let args: Record<string, unknown> | undefined;
  let text: string | undefined;
  for (const key of ARGUMENT_KEYS) {
    const v = own(o, key);
    if (key === "params" && v !== undefined && typeof own(o, "method") === "string") continue;
    if (isRecord(v)) {
      args = v;
      break;
    }
    if (typeof v === "string") {
      const parsed = parseJsonObject(v);
      if (parsed !== undefined) {
        args = parsed;
        break;
      }
      text ??= v;
    }
  }
  let kindCode: string | undefined;
  let writesFiles = false;
  if (name !== undefined) {
    const kind = toolKind(name);
    kindCode = kind.code;
    writesFiles = kind.writesFiles;
  }
  for (const alias of aliases) {
    const kind = toolKind(alias);
    kindCode ??= kind.code;
    writesFiles ||= kind.writesFiles;
  }
  const language = kindCode === undefined ? undefined : languageOf(kindCode, args);
  const shell =
    language !== undefined ||
    (name !== undefined && isShellToolName(name)) ||
    aliases.some(isShellToolName) ||
    kind === "execute" ||
    type === "local_shell_call" ||
    type === "shell_call";

  const commands: string[] = [];
  let codeWritten: readonly string[] = NO_WRITES;
  if (language !== undefined) {
    // Code is read first: its `script` or `input` member is program text, not a shell command.
    const code = codeOf(args, text);
    if (code !== undefined) {
      commands.push(...codeCommands(language, code));
      codeWritten = codeWrites(code);
    }
  }
  if (commands.length === 0 && args !== undefined) commandTexts(args, commands);
  if (commands.length === 0) commandTexts(o, commands);
  if (commands.length === 0 && o !== payload) commandTexts(payload, commands);
  // A shell tool called with bare text: the text is the command.
  if (commands.length === 0 && shell && language === undefined && text !== undefined) commands.push(text);
  if (commands.length === 0) {
    const input = own(payload, "input");
    if (isRecord(input)) commandTexts(input, commands);
  }

  const cwd = (args === undefined ? undefined : cwdOf(args)) ?? cwdOf(o) ?? cwdOf(payload);
  // A code tool's writes are the literal paths its code opens for writing (`open('/etc/hosts', 'w')`).
  const writes = writesFiles ? writesOf(args, o, text) : codeWritten;
  return { name, aliases, arguments: args, shell, commands, cwd, writes, code: language };
}

const NO_WRITES: readonly string[] = Object.freeze([]);

const NOTHING: ToolCall = Object.freeze({
  name: undefined,
  aliases: Object.freeze([]),
  arguments: undefined,
  shell: false,
  commands: Object.freeze([]),
  cwd: undefined,
  writes: NO_WRITES,
  code: undefined,
});

/**
 * The tool calls of an event payload, normalized. Always at least one entry: a payload that
 * names no tool and carries no command gives one call without name and commands.
 */
export function toolCalls(payload: unknown): ToolCall[] {
  if (!isRecord(payload)) return [NOTHING];
  const list = ownAt(payload, "tool_calls", payload["tool_calls"]);
  if (Array.isArray(list) && list.length > 0) {
    const calls = list.filter(isRecord).map((c) => callOf(inner(c) ?? c, payload));
    if (calls.length > 0) return calls;
  }
  let o = payload;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    if (nameOf(o) !== undefined && !isRecord(ownAt(o, "function", o["function"]))) break;
    const next = inner(o);
    if (next === undefined) break;
    o = next;
  }
  return [callOf(o, payload)];
}

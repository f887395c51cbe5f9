/**
 * File tools and code-execution tools seen through their arguments: which paths a write, edit,
 * patch, move or delete tool changes (whatever the framework calls it), and the source code a
 * code-execution tool runs, turned into the interpreter command line that runs the same code so
 * that the shell analysis applies to it unchanged.
 */

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const own = (o: Record<string, unknown>, key: string): unknown => {
  const v = o[key];
  return v !== undefined && Object.prototype.hasOwnProperty.call(o, key) ? v : undefined;
};

/** The last part of a namespaced or MCP-prefixed tool name (`mcp__fs__write_file` → `write_file`), lower case. */
export function baseToolName(name: string): string {
  const lower = name.toLowerCase();
  const cut = Math.max(lower.lastIndexOf("__"), lower.lastIndexOf("/"), lower.lastIndexOf("."));
  if (cut < 0) return lower;
  return lower.slice(cut + (lower.startsWith("__", cut) ? 2 : 1));
}

/**
 * Tool names (last part, lower case) that write, edit, patch, create, move or delete files: the
 * file tools of Claude Code, Codex, Cursor, Cline, Windsurf, Copilot, OpenHands, the Anthropic
 * text editor tool, the MCP filesystem server and ACP (`acp:edit`, `acp:delete`, `acp:move`).
 */
export const FILE_WRITE_TOOL_NAMES: ReadonlySet<string> = new Set([
  "write",
  "write_file",
  "writefile",
  "write_to_file",
  "create_file",
  "createfile",
  "save_file",
  "overwrite_file",
  "update_file",
  "append_file",
  "append_to_file",
  "edit",
  "edit_file",
  "editfile",
  "multiedit",
  "multi_edit",
  "search_replace",
  "replace_in_file",
  "str_replace",
  "str_replace_editor",
  "str_replace_based_edit_tool",
  "insert",
  "apply_patch",
  "applypatch",
  "apply_diff",
  "patch",
  "notebookedit",
  "notebook_edit",
  "edit_notebook",
  "delete_file",
  "remove_file",
  "move_file",
  "rename_file",
  "copy_file",
  "create_directory",
  "make_directory",
  "acp:edit",
  "acp:delete",
  "acp:move",
]);

/** Whether a tool name (any case, MCP-prefixed or namespaced) names a file-writing tool. */
export function isFileWriteToolName(name: string): boolean {
  return FILE_WRITE_TOOL_NAMES.has(name.toLowerCase()) || FILE_WRITE_TOOL_NAMES.has(baseToolName(name));
}

/** What kind of tool a name gives: a code-execution tool's default language, and whether it writes files. */
export interface ToolKind {
  readonly code: string | undefined;
  readonly writesFiles: boolean;
}
const PLAIN: ToolKind = Object.freeze({ code: undefined, writesFiles: false });
const WRITER: ToolKind = Object.freeze({ code: undefined, writesFiles: true });
const KINDS = new Map<string, ToolKind>();

/** {@link ToolKind} of a tool name; most names are neither, answered after one lower-casing and two lookups (cached per name). */
export function toolKind(name: string): ToolKind {
  let kind = KINDS.get(name);
  if (kind !== undefined) return kind;
  const lower = name.toLowerCase();
  const base = baseToolName(lower);
  const code = CODE_TOOL_NAMES.get(lower) ?? CODE_TOOL_NAMES.get(base);
  const writes = FILE_WRITE_TOOL_NAMES.has(lower) || FILE_WRITE_TOOL_NAMES.has(base);
  kind = code !== undefined ? { code, writesFiles: writes } : writes ? WRITER : PLAIN;
  // Bounded: names come from payloads.
  if (KINDS.size >= 1024) KINDS.clear();
  KINDS.set(name, kind);
  return kind;
}

/** Argument members holding one path a file tool changes. */
const PATH_KEYS = [
  "path",
  "file_path",
  "filePath",
  "filename",
  "file",
  "target_file",
  "targetFile",
  "notebook_path",
  "destination",
  "dest",
  "target",
  "source",
  "new_path",
  "old_path",
  "uri",
] as const;
/** Argument members holding a list of paths, or of objects with a path. */
const LIST_KEYS = ["paths", "files", "edits", "locations", "changes"] as const;
/** Argument members holding patch text. */
const PATCH_KEYS = ["input", "patch", "diff", "content"] as const;
/** `command` (read first), then the path, list and patch keys in this order. */
const RANKED_KEYS: readonly string[] = ["command", ...PATH_KEYS, ...LIST_KEYS, ...PATCH_KEYS];
const KEY_RANK: ReadonlyMap<string, number> = new Map(RANKED_KEYS.map((k, i) => [k, i]));
/** Text editor commands that only read (the Anthropic `str_replace_editor` tool). */
const READ_COMMANDS = new Set(["view", "read", "list"]);

/** `*** Add File: p`, `*** Update File: p`, `*** Delete File: p`, `*** Move to: p` (Codex), `+++ b/p` / `--- a/p` (unified diff). */
const PATCH_PATH = /^(?:\*\*\* (?:Add|Update|Delete) File: |\*\*\* Move to: |\+\+\+ |--- )(.+?)\s*$/gm;

/** The file paths named by patch text (Codex `apply_patch` envelope or a unified diff). */
export function patchPaths(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PATCH_PATH)) {
    let p = m[1]!.split("\t")[0]!;
    if (p === "/dev/null") continue;
    if (m[0].startsWith("+++ ") || m[0].startsWith("--- ")) p = p.replace(/^[ab]\//, "");
    if (p.length > 0) out.push(p);
  }
  return out;
}

/** Text that may hold a patch header line (scanning file contents line by line is left to those that do). */
const mayBePatch = (t: string): boolean => t.includes("\n") && (t.includes("*** ") || t.includes("+++ ") || t.includes("--- "));

const pushPath = (v: unknown, out: string[]): void => {
  if (typeof v === "string" && v.length > 0) out.push(v);
};

/**
 * The paths a file tool call changes, as given (not resolved): `[]` when the tool is not a file
 * write tool or only reads (`str_replace_editor` with `command: view`). `container` is the
 * object the call was found in (ACP `locations` sit next to `rawInput`), `text` bare-text
 * arguments (an `apply_patch` called with the patch itself).
 */
export function fileToolWrites(
  names: readonly string[],
  args: Record<string, unknown> | undefined,
  container: Record<string, unknown>,
  text: string | undefined,
): string[] {
  if (!names.some(isFileWriteToolName)) return [];
  return writesOf(args, container, text);
}

/** The paths a call of a file-writing tool changes (see {@link fileToolWrites}). */
export function writesOf(
  args: Record<string, unknown> | undefined,
  container: Record<string, unknown>,
  text: string | undefined,
): string[] {
  const out: string[] = [];
  for (const o of args === undefined || args === container ? [container] : [args, container]) {
    // The object's own members (a few) are looked up among the known keys, read in the keys' order.
    let found: number[] | undefined;
    for (const key in o) {
      const rank = KEY_RANK.get(key);
      if (rank !== undefined && Object.prototype.hasOwnProperty.call(o, key)) (found ??= []).push(rank);
    }
    if (found === undefined) continue;
    if (found.length > 1) found.sort((a, b) => a - b);
    for (const rank of found) {
      const key = RANKED_KEYS[rank]!;
      const v = o[key];
      if (rank === 0) {
        if (typeof v === "string" && READ_COMMANDS.has(v.toLowerCase())) return [];
      } else if (rank <= PATH_KEYS.length) pushPath(v, out);
      else if (rank <= PATH_KEYS.length + LIST_KEYS.length) {
        if (!Array.isArray(v)) continue;
        for (const item of v) {
          if (typeof item === "string") out.push(item);
          else if (isRecord(item)) for (const k of ["path", "file_path", "filePath", "file"]) pushPath(own(item, k), out);
        }
      } else if (typeof v === "string" && mayBePatch(v)) out.push(...patchPaths(v));
    }
  }
  if (text !== undefined && mayBePatch(text)) out.push(...patchPaths(text));
  return out;
}

/** Languages a code-execution tool may run, with the interpreter command that runs the same text. */
const INTERPRETER_COMMAND: Readonly<Record<string, string>> = {
  python: "python3 -c",
  javascript: "node -e",
  typescript: "node -e",
  ruby: "ruby -e",
  perl: "perl -e",
  php: "php -r",
  r: "Rscript -e",
  bash: "bash -c",
  shell: "bash -c",
};

/** Language names and kernel names as calls give them, to the keys of {@link INTERPRETER_COMMAND}. */
const LANGUAGE_ALIASES: Readonly<Record<string, string>> = {
  python: "python",
  py: "python",
  ipython: "python",
  python3: "python",
  javascript: "javascript",
  js: "javascript",
  node: "javascript",
  nodejs: "javascript",
  deno: "javascript",
  typescript: "typescript",
  ts: "typescript",
  ruby: "ruby",
  rb: "ruby",
  perl: "perl",
  php: "php",
  r: "r",
  ir: "r",
  bash: "bash",
  sh: "bash",
  shell: "bash",
  zsh: "bash",
};

/** Code-execution tool names (last part, lower case) and the language each runs when the call does not say. */
export const CODE_TOOL_NAMES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    python: "python",
    python3: "python",
    ipython: "python",
    run_python: "python",
    execute_python: "python",
    execute_python_code: "python",
    python_exec: "python",
    python_repl: "python",
    python_repl_ast: "python",
    python_interpreter: "python",
    code_interpreter: "python",
    codeinterpreter: "python",
    code_execution: "python",
    execute_code: "python",
    run_code: "python",
    exec_code: "python",
    jupyter: "python",
    jupyter_execute: "python",
    execute_cell: "python",
    run_cell: "python",
    notebook_execute: "python",
    node: "javascript",
    nodejs: "javascript",
    javascript: "javascript",
    js: "javascript",
    run_javascript: "javascript",
    execute_javascript: "javascript",
    run_js: "javascript",
    deno: "javascript",
    ruby: "ruby",
    r: "r",
  }),
);

/** Members holding the source code of a code-execution tool, in order of preference. */
const CODE_KEYS = ["code", "source", "source_code", "cell", "program", "snippet", "script", "input", "query"] as const;
const LANGUAGE_KEYS = ["language", "lang", "kernel", "kernel_name", "runtime"] as const;

/** The language a code-execution tool call runs, or undefined when it is not one. */
export function codeToolLanguage(names: readonly string[], args: Record<string, unknown> | undefined): string | undefined {
  let language: string | undefined;
  for (const n of names) {
    language = toolKind(n).code;
    if (language !== undefined) break;
  }
  return language === undefined ? undefined : languageOf(language, args);
}

/** The language a code-execution call names in its arguments (`language`, `kernel` …), else the tool's own. */
export function languageOf(language: string, args: Record<string, unknown> | undefined): string {
  if (args !== undefined) {
    for (const key of LANGUAGE_KEYS) {
      const v = own(args, key);
      if (typeof v !== "string") continue;
      return LANGUAGE_ALIASES[v.toLowerCase().replace(/[\s_-]*[0-9.]+$/, "")] ?? v.toLowerCase();
    }
  }
  return language;
}

/** The source code of a code-execution call: the first string of {@link CODE_KEYS}, else bare text. */
export function codeOf(args: Record<string, unknown> | undefined, text: string | undefined): string | undefined {
  if (args !== undefined) {
    for (const key of CODE_KEYS) {
      const v = own(args, key);
      if (typeof v === "string") return v;
      if (Array.isArray(v) && v.length > 0 && v.every((e) => typeof e === "string")) return v.join(key === "source" ? "" : "\n");
    }
  }
  return text;
}

/** POSIX single quoting (always quoted: code is never a bare word). */
const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** `%%bash` / `%%sh` / `%%script bash` cell magic: the rest of the cell is a shell script. */
const SHELL_CELL = /^\s*%%(?:bash|sh|zsh|script\s+\S*(?:ba|z)?sh|system)\b[^\n]*\n([\s\S]*)$/;
/** IPython shell escapes: `!cmd`, `!!cmd`, `%sx cmd`, `%system cmd`, `x = !cmd`. */
const SHELL_ESCAPE = /^[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*[ \t]*=[ \t]*)?(?:!!?|%(?:sx|system|sc)\b)(.*)$/gm;

/**
 * The command lines that run what a code-execution tool call runs: the interpreter with the code
 * (`python3 -c '<code>'`), plus the shell commands of notebook shell escapes and `%%bash` cells.
 * Empty when the language has no known interpreter: the caller cannot analyse the call.
 */
export function codeCommands(language: string, code: string): string[] {
  const cell = SHELL_CELL.exec(code);
  if (cell !== null) return [cell[1]!];
  const out: string[] = [];
  if (language === "python") {
    for (const m of code.matchAll(SHELL_ESCAPE)) if (m[1]!.trim().length > 0) out.push(m[1]!);
  }
  const interpreter = INTERPRETER_COMMAND[language];
  if (interpreter === undefined) return [];
  out.unshift(`${interpreter} ${quote(code)}`);
  return out;
}

/**
 * Host tool-name tables (adapter spec §3.3, and the `ahp` table of §5.7), as data. An entry maps
 * a native tool name to a canonical name, to `patch` (rule 5: decided by inspecting the
 * operations), and carries `noCategoryFits` where the spec maps a built-in tool to `other`
 * because none of the 13 categories applies (used by the Standard-level coverage check, §2.6).
 */
import type { CanonicalToolName } from "../catalog.js";

/** One native tool of a host table: its canonical name, or `patch` (decided from the operations, spec §3.2 rule 5). */
export interface ToolTableEntry {
  /** Canonical name the native tool maps to. */
  readonly canonical: CanonicalToolName | "patch";
  /** `other` entries whose note says "no category fits". */
  readonly noCategoryFits?: boolean;
}

/** How a host names MCP tools (spec §3.2 rule 1). */
export type McpNamingRule =
  | { readonly kind: "prefix"; readonly prefix: string }
  | { readonly kind: "cursor" }
  /** Membership in a host-supplied set of MCP tool names. */
  | { readonly kind: "set" };

/**
 * A host's tool-name table (spec §3.3): native names, MCP naming rule and the input fields artifacts
 * are extracted from.
 */
export interface HostToolTable {
  /** Native tool name → entry. */
  readonly tools: Readonly<Record<string, ToolTableEntry>>;
  /** How the host names MCP tools. */
  readonly mcp: McpNamingRule;
  /** Input fields holding a file path, first present wins (spec §3.5). */
  readonly filePathFields: readonly string[];
  /** Input fields holding written / replacement content (spec §3.5). */
  readonly contentFields: readonly string[];
}

const entries = (canonical: ToolTableEntry["canonical"], names: string[], noCategoryFits = false) =>
  Object.fromEntries(names.map((n) => [n, noCategoryFits ? { canonical, noCategoryFits } : { canonical }]));

const table = (...groups: Record<string, ToolTableEntry>[]): Record<string, ToolTableEntry> =>
  Object.assign({}, ...groups) as Record<string, ToolTableEntry>;

/**
 * The tool-name tables of every host this package maps (spec §3.3) plus the `ahp` table the reverse
 * bridge uses (spec §5.7), keyed by `host_id`; {@link canonicalize} reads them.
 */
export const HOST_TOOL_TABLES = {
  "claude-code": {
    tools: table(
      entries("shell", ["Bash", "PowerShell"]),
      entries("other", ["BashOutput", "KillShell", "KillBash"], true),
      entries("file_write", ["Write"]),
      entries("file_edit", ["Edit", "MultiEdit", "NotebookEdit"]),
      entries("file_read", ["Read", "NotebookRead", "Glob", "Grep", "LS", "LSP"]),
      entries("web_request", ["WebFetch", "WebSearch"]),
      entries("delegate", ["Task", "Agent"]),
      entries("other", ["Skill"], true),
      entries("mcp_call", ["ListMcpResourcesTool", "ReadMcpResourceTool"]),
      entries("other", ["TodoWrite", "TodoRead", "ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "SlashCommand"], true),
    ),
    mcp: { kind: "prefix", prefix: "mcp__" },
    filePathFields: ["file_path", "notebook_path", "path"],
    contentFields: ["content", "new_string", "new_source"],
  },
  cursor: {
    tools: table(
      entries("shell", ["Shell"]),
      entries("file_read", ["Read", "Grep", "Glob", "LS"]),
      entries("file_write", ["Write"]),
      entries("file_edit", ["Edit", "StrReplace", "MultiEdit", "TabWrite"]),
      entries("file_delete", ["Delete"]),
      entries("web_request", ["WebFetch", "WebSearch"]),
      entries("delegate", ["Task"]),
    ),
    mcp: { kind: "cursor" },
    filePathFields: ["file_path", "path", "filePath", "target_file", "filename"],
    contentFields: ["content", "new_string", "newString", "streamContent"],
  },
  "copilot-cli": {
    tools: table(
      entries("shell", ["bash", "powershell", "write_bash"]),
      entries("other", ["read_bash", "stop_bash", "list_bash"], true),
      entries("file_read", ["view", "glob", "grep"]),
      entries("file_write", ["create"]),
      entries("file_edit", ["edit", "str_replace"]),
      entries("web_request", ["web_fetch"]),
      entries("delegate", ["task"]),
      entries("other", ["report_intent", "update_todo", "fetch_copilot_cli_documentation"], true),
    ),
    mcp: { kind: "set" },
    filePathFields: ["path"],
    contentFields: ["file_text", "new_str"],
  },
  vscode: {
    tools: table(
      entries("shell", ["run_in_terminal", "runInTerminal", "runCommands"]),
      entries("file_write", ["create_file", "createFile"]),
      entries("file_edit", ["editFiles", "replace_string_in_file", "multi_replace_string_in_file", "insert_edit_into_file"]),
      entries("patch", ["apply_patch"]),
      entries("file_read", ["read_file", "readFile", "file_search", "grep_search", "list_dir", "semantic_search", "codebase", "search"]),
      entries("web_request", ["fetch_webpage", "fetch"]),
      entries("code_exec", ["run_notebook_cell", "runNotebookCell"]),
      entries("browser", ["open_simple_browser", "openSimpleBrowser"]),
      entries("delegate", ["runSubagent"]),
    ),
    mcp: { kind: "prefix", prefix: "mcp__" },
    filePathFields: ["filePath", "file_path", "path"],
    contentFields: ["content", "newString", "new_string", "code"],
  },
  cline: {
    tools: table(
      entries("shell", ["execute_command"]),
      entries("file_write", ["write_to_file"]),
      entries("file_edit", ["replace_in_file"]),
      entries("file_read", ["read_file", "search_files", "list_files", "list_code_definition_names"]),
      entries("web_request", ["web_fetch"]),
      entries("browser", ["browser_action"]),
      entries("mcp_call", ["use_mcp_tool", "access_mcp_resource"]),
      entries("delegate", ["new_task"]),
      entries("other", ["ask_followup_question", "attempt_completion", "plan_mode_respond", "load_mcp_documentation"], true),
    ),
    mcp: { kind: "set" },
    filePathFields: ["path"],
    contentFields: ["content", "diff"],
  },
  windsurf: {
    tools: table(
      entries("shell", ["pre_run_command", "post_run_command"]),
      entries("file_edit", ["pre_write_code", "post_write_code"]),
      entries("file_read", ["pre_read_code", "post_read_code"]),
      entries("mcp_call", ["pre_mcp_tool_use", "post_mcp_tool_use"]),
    ),
    mcp: { kind: "set" },
    filePathFields: ["file_path", "path"],
    contentFields: ["new_string", "content"],
  },
  openclaw: {
    tools: table(
      entries("shell", ["exec", "bash"]),
      entries("file_write", ["write"]),
      entries("file_edit", ["edit"]),
      entries("file_read", ["read"]),
      entries("patch", ["apply_patch"]),
      entries("web_request", ["web_fetch"]),
      entries("browser", ["browser"]),
    ),
    mcp: { kind: "set" },
    filePathFields: ["path"],
    contentFields: ["content", "new_string"],
  },
  opencode: {
    tools: table(
      entries("shell", ["bash"]),
      entries("file_write", ["write"]),
      entries("file_edit", ["edit"]),
      entries("patch", ["patch"]),
      entries("file_read", ["read", "read_lines", "glob", "grep", "ls", "list", "codesearch"]),
      entries("web_request", ["webfetch", "websearch"]),
      entries("delegate", ["task"]),
      entries("other", ["todowrite", "todoread", "question"], true),
    ),
    mcp: { kind: "set" },
    filePathFields: ["filePath"],
    contentFields: ["content", "newString"],
  },
  "openai-agents": {
    tools: table(
      entries("shell", ["shell", "local_shell"]),
      entries("patch", ["apply_patch"]),
      entries("browser", ["computer"]),
      entries("mcp_call", ["hosted_mcp"]),
      entries("web_request", ["web_search"]),
      entries("file_read", ["file_search"]),
      entries("code_exec", ["code_interpreter"]),
      entries("other", ["image_generation"], true),
    ),
    mcp: { kind: "set" },
    filePathFields: ["path", "file_path"],
    contentFields: ["content", "diff"],
  },
  langchain: {
    tools: table(
      entries("shell", ["terminal", "bash", "shell"]),
      entries("web_request", [
        "requests_get",
        "requests_post",
        "requests_put",
        "requests_patch",
        "requests_delete",
        "tavily_search",
        "tavily_search_results_json",
        "duckduckgo_search",
        "wikipedia-api",
        "web_browser",
      ]),
      entries("file_read", ["read_file", "list_directory", "file_search"]),
      entries("file_write", ["write_file", "copy_file", "move_file"]),
      entries("file_delete", ["file_delete"]),
      entries("code_exec", ["python_repl", "Python_REPL"]),
      entries("database", ["sql_db_query", "query-sql", "sql_db_schema", "sql_db_list_tables"]),
      entries("browser", [
        "navigate_browser",
        "click_element",
        "extract_text",
        "extract_hyperlinks",
        "get_elements",
        "current_webpage",
        "previous_webpage",
      ]),
    ),
    mcp: { kind: "set" },
    filePathFields: ["file_path", "path", "dir_path", "source_path", "destination_path"],
    contentFields: ["text", "content"],
  },
  /** `payload.tool_name` of AHP events without AARTS data (spec §5.7). */
  ahp: {
    tools: table(
      entries("shell", ["bash", "sh", "shell", "exec", "terminal", "run_command"]),
      entries("file_read", ["read", "read_file", "cat"]),
      entries("file_write", ["write", "write_file", "create_file"]),
      entries("file_edit", ["edit", "edit_file", "str_replace"]),
      entries("patch", ["apply_patch"]),
      entries("file_delete", ["delete", "delete_file", "rm"]),
      entries("web_request", ["fetch", "web_fetch", "http_request", "curl"]),
      entries("code_exec", ["python_exec", "jupyter", "eval"]),
      entries("browser", ["browser_navigate", "click", "type", "screenshot"]),
      entries("database", ["sql_query", "db_exec"]),
      entries("delegate", ["task", "spawn_agent"]),
    ),
    mcp: { kind: "prefix", prefix: "mcp__" },
    filePathFields: ["file_path", "path", "filePath", "filename"],
    contentFields: ["content", "new_string", "text", "code"],
  },
} as const satisfies Record<string, HostToolTable>;

/** A `host_id` that has a table in {@link HOST_TOOL_TABLES}. */
export type ToolTableId = keyof typeof HOST_TOOL_TABLES;

/**
 * The canonicalisation algorithm (adapter spec §3.2): native tool name → canonical name.
 * Pure, deterministic, no I/O.
 */
import { shellCommands } from "@ahp/shell";
import { isCanonicalToolName, type CanonicalToolName } from "../catalog.js";
import { parseInstalls } from "../shell/installs.js";
import { HOST_TOOL_TABLES, type HostToolTable, type ToolTableId } from "./tables.js";

/** Options of {@link canonicalize}: what the host knows beyond the tool name. */
export interface CanonicalizeOptions {
  /**
   * The native event itself is MCP-specific (Cursor `beforeMCPExecution`, Windsurf
   * `pre_mcp_tool_use`, Copilot SDK `preMcpToolCall`): rule 1 applies regardless of the name.
   */
  readonly mcpEvent?: boolean;
  /** Host-supplied MCP tool names (hosts whose MCP rule is set membership). */
  readonly mcpTools?: ReadonlySet<string> | readonly string[];
  /** User map for app-defined tools (rule 3); values must be canonical names. */
  readonly toolMap?: Readonly<Record<string, string>>;
}

/** Result of {@link canonicalize}: the Tool Context names (spec §1.3). */
export interface CanonicalTool {
  /** Canonical name; `other` when no rule applies. */
  readonly tool_name: CanonicalToolName;
  /** The host's own name, unchanged. */
  readonly tool_name_native: string;
}

function isMcpName(table: HostToolTable, name: string, options: CanonicalizeOptions): boolean {
  switch (table.mcp.kind) {
    case "prefix":
      if (name.startsWith(table.mcp.prefix)) return true;
      break;
    case "cursor":
      if (name === "MCP" || name.startsWith("MCP:")) return true;
      break;
    case "set":
      break;
  }
  const set = options.mcpTools;
  if (set === undefined) return false;
  return set instanceof Set ? set.has(name) : (set as readonly string[]).includes(name);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Collects string leaves of a value up to `maxDepth` levels of nesting. */
function stringLeaves(value: unknown, maxDepth: number, out: string[] = [], depth = 0): string[] {
  if (typeof value === "string") out.push(value);
  else if (depth < maxDepth && Array.isArray(value)) for (const v of value) stringLeaves(v, maxDepth, out, depth + 1);
  else if (depth < maxDepth && isRecord(value)) for (const v of Object.values(value)) stringLeaves(v, maxDepth, out, depth + 1);
  return out;
}

/** Operation kinds found in a patch tool's input. */
export interface PatchOperations {
  add: boolean;
  update: boolean;
  delete: boolean;
}

/**
 * Rule 5: inspects structured operations (`{type: "create_file"|"update_file"|"delete_file"}`),
 * V4A headers (`*** Add File:` …) and unified-diff headers (`--- /dev/null` ⇒ add,
 * `+++ /dev/null` ⇒ delete).
 */
export function patchOperations(toolInput: unknown): PatchOperations {
  const ops: PatchOperations = { add: false, update: false, delete: false };
  const visitOp = (op: unknown) => {
    if (!isRecord(op)) return;
    if (op.type === "create_file") ops.add = true;
    else if (op.type === "update_file") ops.update = true;
    else if (op.type === "delete_file") ops.delete = true;
  };
  if (isRecord(toolInput)) {
    visitOp(toolInput);
    visitOp(toolInput.operation);
    if (Array.isArray(toolInput.operations)) for (const op of toolInput.operations) visitOp(op);
  }
  for (const text of stringLeaves(toolInput, 4)) {
    if (/^\*\*\* Add File:/m.test(text)) ops.add = true;
    if (/^\*\*\* Update File:/m.test(text)) ops.update = true;
    if (/^\*\*\* Delete File:/m.test(text)) ops.delete = true;
    if (/^--- \/dev\/null\s*$/m.test(text)) ops.add = true;
    if (/^\+\+\+ \/dev\/null\s*$/m.test(text)) ops.delete = true;
    if (/^(---|\+\+\+) (?!\/dev\/null)\S/m.test(text)) ops.update = true;
  }
  return ops;
}

/** Rule 5 result: any delete ⇒ `file_delete`; else any add ⇒ `file_write`; else `file_edit`. */
export function classifyPatch(toolInput: unknown): CanonicalToolName {
  const ops = patchOperations(toolInput);
  if (ops.delete) return "file_delete";
  if (ops.add) return "file_write";
  return "file_edit";
}

export { quoteArg, shellCommands, type ShellCommandField } from "@ahp/shell";

/**
 * `canonicalize(hostId, nativeName, toolInput, options)` (spec §3.2). `hostId` names a table of
 * §3.3 (`claude-code`, `cursor`, …, or `ahp` for AHP payloads); unknown hosts only get rules 1,
 * 3, 4 and 6.
 */
export function canonicalize(hostId: string, nativeName: string, toolInput: unknown, options: CanonicalizeOptions = {}): CanonicalTool {
  const table: HostToolTable | undefined = Object.prototype.hasOwnProperty.call(HOST_TOOL_TABLES, hostId)
    ? HOST_TOOL_TABLES[hostId as ToolTableId]
    : undefined;
  let name: CanonicalToolName;
  if (
    options.mcpEvent ||
    (table !== undefined ? isMcpName(table, nativeName, options) : isMcpName(HOST_TOOL_TABLES.ahp, nativeName, options))
  ) {
    name = "mcp_call";
  } else {
    const entry =
      table !== undefined && Object.prototype.hasOwnProperty.call(table.tools, nativeName) ? table.tools[nativeName] : undefined;
    const mapped =
      options.toolMap !== undefined && Object.prototype.hasOwnProperty.call(options.toolMap, nativeName)
        ? options.toolMap[nativeName]
        : undefined;
    if (entry !== undefined) name = entry.canonical === "patch" ? classifyPatch(toolInput) : entry.canonical;
    else if (hostId === "ahp" && isCanonicalToolName(nativeName)) name = nativeName;
    else if (mapped !== undefined && isCanonicalToolName(mapped)) name = mapped;
    else name = "other";
  }
  if (name === "shell" && isRecord(toolInput)) {
    if (shellCommands(toolInput).some((c) => parseInstalls(c.command).isInstall)) name = "package_install";
  }
  return { tool_name: name, tool_name_native: nativeName };
}

/** Whether every `other` entry of a host table is marked "no category fits" (spec §2.6). */
export function tableCoversAllCategories(hostId: ToolTableId): boolean {
  return Object.values(HOST_TOOL_TABLES[hostId].tools).every(
    (e: { canonical: string; noCategoryFits?: boolean }) => e.canonical !== "other" || e.noCategoryFits === true,
  );
}

/** Canonical names a host table can emit (with `package_install` derived from `shell`, and rule-5 outcomes). */
export function tableCoverage(hostId: ToolTableId): CanonicalToolName[] {
  const names = new Set<CanonicalToolName>();
  const table: HostToolTable = HOST_TOOL_TABLES[hostId];
  for (const entry of Object.values(table.tools)) {
    if (entry.canonical === "patch") ["file_write", "file_edit", "file_delete"].forEach((n) => names.add(n as CanonicalToolName));
    else names.add(entry.canonical);
    if (entry.canonical === "shell") names.add("package_install");
  }
  names.add("mcp_call"); // rule 1 applies on every host
  names.add("other");
  return [...names];
}

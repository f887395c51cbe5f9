/**
 * Artifact extraction per canonical tool (adapter spec §3.5). Values are provided verbatim
 * (spec §1.6): no decoding, no path resolution; `content` is cut at 65 536 UTF-16 code units.
 * `source_field` is always set (dotted path relative to the event).
 */
import type { CanonicalToolName } from "../catalog.js";
import { shellCommands, tokenizeShell } from "@ahp/shell";
import { parseInstalls, segmentBinary } from "../shell/installs.js";
import { HOST_TOOL_TABLES, type ToolTableId } from "../taxonomy/tables.js";
import type { Artifact } from "../types.js";

/** Cap for `content` artifacts, in UTF-16 code units (spec §1.6). */
export const CONTENT_CAP = 65_536;

const URL_RE = /https?:\/\/[^\s"'<>`]+/g;
const TRAILING = /[.,;:!?)\]}]+$/;
const PIPE_READERS = /^(sh|bash|zsh|dash|ksh|node|python[0-9.]*)$/;

/** `https?://…` matches in a text, trailing punctuation stripped (spec §3.5), with offsets. */
export function findUrls(text: string): { url: string; index: number }[] {
  const out: { url: string; index: number }[] = [];
  for (const m of text.matchAll(URL_RE)) {
    const url = m[0].replace(TRAILING, "");
    if (url.length > "https://".length - 1 && /^https?:\/\/./.test(url)) out.push({ url, index: m.index });
  }
  return out;
}

/** Masks a credential: first 4 characters followed by `****` (spec §3.5). */
export function maskCredential(value: string): string {
  return `${value.slice(0, 4)}****`;
}

/** Well-known secret shapes, masked in audit records (spec §2.7: logs never hold unredacted secrets). */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-[A-Za-z0-9_-]{16,}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g,
  /\bglpat-[A-Za-z0-9_-]{16,}\b/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];
const SECRET_ASSIGNMENT =
  /\b([A-Za-z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth)[A-Za-z0-9_.-]*)(\s*[=:]\s*|\s+)(["']?)([^\s"'&;|]{4,})\3/gi;
const BEARER = /\b(Bearer|Basic)\s+([A-Za-z0-9._~+/=-]{8,})/g;

/** Masks credentials inside free text (`ghp_abcd…` → `ghp_****`; `TOKEN=abc123` → `TOKEN=abc1****`). */
export function redactSecrets(text: string): string {
  let out = text;
  for (const re of SECRET_PATTERNS) out = out.replace(re, (m) => maskCredential(m));
  out = out.replace(BEARER, (_m, scheme: string, value: string) => `${scheme} ${maskCredential(value)}`);
  out = out.replace(
    SECRET_ASSIGNMENT,
    (_m, key: string, sep: string, quote: string, value: string) => `${key}${sep}${quote}${maskCredential(value)}${quote}`,
  );
  return out;
}

/**
 * Cuts `text` to {@link CONTENT_CAP} UTF-16 code units for a `content` artifact (spec §1.6); shorter
 * text is returned unchanged.
 */
export const capContent = (text: string): string => (text.length > CONTENT_CAP ? text.slice(0, CONTENT_CAP) : text);

/** Shell artifacts (spec §3.5 row `shell`): the command verbatim, then its URLs. */
export function shellArtifacts(command: string, sourceField: string): Artifact[] {
  const artifacts: Artifact[] = [{ type: "command", value: command, source_field: sourceField }];
  const urls = findUrls(command);
  if (urls.length === 0) return artifacts;
  const { segments } = tokenizeShell(command);
  for (const { url, index } of urls) {
    const k = segments.findIndex((s) => index >= s.start && index < s.end);
    const segment = segments[k];
    const next = segments[k + 1];
    const piped =
      segment !== undefined &&
      next !== undefined &&
      (segment.operator === "|" || segment.operator === "|&") &&
      PIPE_READERS.test(segmentBinary(next.words) ?? "");
    artifacts.push({ type: "url", value: url, context: piped ? "piped_to_shell" : "in_command", source_field: sourceField });
  }
  return artifacts;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function firstString(input: Record<string, unknown>, fields: readonly string[]): [string, string] | undefined {
  for (const f of fields) {
    const v = input[f];
    if (typeof v === "string") return [f, v];
  }
  return undefined;
}

function contentWithUrls(out: Artifact[], text: string, sourceField: string, context: string): void {
  out.push({ type: "content", value: capContent(text), context, source_field: sourceField });
  for (const { url } of findUrls(text)) out.push({ type: "url", value: url, context, source_field: sourceField });
}

/** URL matches in string leaves of a value, depth ≤ 4 (spec §3.5 row `mcp_call`). */
function leafUrls(out: Artifact[], value: unknown, path: string, depth: number): void {
  if (typeof value === "string") {
    for (const { url } of findUrls(value)) out.push({ type: "url", value: url, source_field: path });
    return;
  }
  if (depth >= 4) return;
  if (Array.isArray(value)) value.forEach((v, i) => leafUrls(out, v, `${path}.${i}`, depth + 1));
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) leafUrls(out, v, `${path}.${k}`, depth + 1);
}

/** Options of {@link extractArtifacts}. */
export interface ExtractOptions {
  /** Host table for the per-host field names (spec §3.5); default: every known field name. */
  readonly hostId?: string;
  /** Native tool name (distinguishes search tools from fetch tools, glob from grep). */
  readonly nativeName?: string;
}

const ALL_PATH_FIELDS = ["file_path", "notebook_path", "path", "filePath", "target_file", "filename"];
const ALL_CONTENT_FIELDS = ["content", "new_string", "new_source", "newString", "streamContent", "file_text", "new_str", "diff", "text"];

/**
 * Required artifacts for a tool call (spec §3.5), in the listed order, de-duplicated by
 * type + value + context + source field.
 */
export function extractArtifacts(tool: CanonicalToolName, toolInput: Record<string, unknown>, options: ExtractOptions = {}): Artifact[] {
  const table =
    options.hostId !== undefined && Object.prototype.hasOwnProperty.call(HOST_TOOL_TABLES, options.hostId)
      ? HOST_TOOL_TABLES[options.hostId as ToolTableId]
      : undefined;
  const pathFields = table?.filePathFields ?? ALL_PATH_FIELDS;
  const contentFields = table?.contentFields ?? ALL_CONTENT_FIELDS;
  const native = options.nativeName ?? "";
  const out: Artifact[] = [];
  const at = (field: string) => `tool_input.${field}`;

  switch (tool) {
    case "shell":
    case "package_install":
      for (const { command, sourceField } of shellCommands(toolInput)) {
        out.push(...shellArtifacts(command, sourceField));
        if (tool === "package_install") out.push(...parseInstalls(command, { sourceField }).artifacts);
      }
      break;
    case "file_write": {
      const p = firstString(toolInput, pathFields);
      if (p) out.push({ type: "file_path", value: p[1], source_field: at(p[0]) });
      const c = firstString(toolInput, contentFields);
      if (c) contentWithUrls(out, c[1], at(c[0]), "from_file_content");
      break;
    }
    case "file_edit": {
      const p = firstString(toolInput, pathFields);
      if (p) out.push({ type: "file_path", value: p[1], source_field: at(p[0]) });
      for (const f of contentFields) {
        const v = toolInput[f];
        if (typeof v === "string") contentWithUrls(out, v, at(f), "from_edit_content");
      }
      const edits = toolInput.edits;
      if (Array.isArray(edits)) {
        edits.forEach((e, i) => {
          if (!isRecord(e)) return;
          for (const f of ["new_string", "newString", "new_str"]) {
            if (typeof e[f] === "string") contentWithUrls(out, e[f], `tool_input.edits.${i}.${f}`, "from_edit_content");
          }
        });
      }
      break;
    }
    case "file_read": {
      const p = firstString(toolInput, pathFields);
      if (p) out.push({ type: "file_path", value: p[1], source_field: at(p[0]) });
      const pattern = toolInput.pattern;
      if (typeof pattern === "string") {
        if (/grep|search/i.test(native) || typeof toolInput.regex === "boolean") {
          out.push({ type: "content", value: capContent(pattern), context: "search_pattern", source_field: at("pattern") });
        } else out.push({ type: "file_path", value: pattern, context: "glob_pattern", source_field: at("pattern") });
      }
      for (const f of ["glob", "include"]) {
        if (typeof toolInput[f] === "string") {
          out.push({ type: "file_path", value: toolInput[f], context: "glob_pattern", source_field: at(f) });
        }
      }
      for (const f of ["regex", "query"]) {
        if (typeof toolInput[f] === "string") {
          out.push({ type: "content", value: capContent(toolInput[f]), context: "search_pattern", source_field: at(f) });
        }
      }
      break;
    }
    case "file_delete": {
      const p = firstString(toolInput, pathFields);
      if (p) out.push({ type: "file_path", value: p[1], source_field: at(p[0]) });
      break;
    }
    case "web_request": {
      const u = firstString(toolInput, ["url", "uri", "href"]);
      if (u) out.push({ type: "url", value: u[1], source_field: at(u[0]) });
      const q = firstString(toolInput, ["query", "q", "search_query"]);
      if (q) out.push({ type: "content", value: capContent(q[1]), context: "search_query", source_field: at(q[0]) });
      break;
    }
    case "mcp_call":
      leafUrls(out, toolInput, "tool_input", 0);
      break;
    case "code_exec": {
      const c = firstString(toolInput, ["code", "source", "new_source", "input", "query", "command"]);
      if (c) out.push({ type: "content", value: capContent(c[1]), context: "code", source_field: at(c[0]) });
      break;
    }
    case "browser": {
      const u = firstString(toolInput, ["url", "uri", "href"]);
      if (u) out.push({ type: "url", value: u[1], source_field: at(u[0]) });
      const t = firstString(toolInput, ["text", "typed_text", "value"]);
      if (t) out.push({ type: "content", value: capContent(t[1]), context: "typed_text", source_field: at(t[0]) });
      break;
    }
    case "database": {
      const q = firstString(toolInput, ["query", "sql", "statement"]);
      if (q) out.push({ type: "content", value: capContent(q[1]), context: "sql", source_field: at(q[0]) });
      break;
    }
    case "delegate": {
      const d = firstString(toolInput, ["prompt", "description", "task", "message", "input"]);
      if (d) out.push({ type: "content", value: capContent(d[1]), context: "delegated_task", source_field: at(d[0]) });
      break;
    }
    case "other":
      break;
  }
  return dedupe(out);
}

function dedupe(artifacts: Artifact[]): Artifact[] {
  const seen = new Set<string>();
  return artifacts.filter((a) => {
    const key = `${a.type}\u0000${a.value}\u0000${a.context ?? ""}\u0000${a.source_field ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

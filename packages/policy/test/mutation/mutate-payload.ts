/**
 * A deterministic mutation generator for the tool-call payloads of file tools and code tools:
 * from one payload it derives payloads that ask the host for the same effect, spelled
 * differently. Each operator is an equivalence that holds for the tool as hosts run it:
 *
 * - shape (any tool call): the same tool name and input in another envelope the policy reads
 *   (`tool_name` + `arguments` or `tool_input`, `arguments` as a JSON string, an MCP `tools/call`,
 *   an OpenAI function call), and the input's keys in another order;
 * - file tools: the path written spelled with a doubled slash, a `/./` segment or a `dir/../dir`
 *   detour through a directory of the path itself (the kernel resolves all three to the same
 *   file), and `Write` as the other write tools (`write_file`, `write_to_file`, the
 *   `str_replace_editor` `create` command) with the same path and content;
 * - code tools: a comment line in front, blank lines between lines, trailing spaces, single and
 *   double quotes swapped where the code has no other quote or escape (Python and JavaScript read
 *   both the same), a Python `import x` aliased (`import x as _x`, every `x.` rewritten), and a
 *   Python tool as the other Python tools (`python`, `run_python`, `execute_code` with
 *   `language: python`, `jupyter_execute` for code without `!` or `%` lines).
 *
 * Operators that do not apply to a payload are skipped; a variant equal to its source or to an
 * earlier variant is dropped.
 */
import { rng } from "./mutate.js";

type Rand = () => number;
type Json = Record<string, unknown>;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A tool call read out of the shapes the corpus uses: its name, input, and the keys around it. */
interface Call {
  name: string;
  input: Json;
  /** Top-level members besides the call itself (e.g. `cwd`), kept in every shape. */
  extra: Json;
}

function readCall(p: unknown): Call | undefined {
  if (!isObj(p)) return undefined;
  const { tool_name, arguments: args, tool_input, name, input, method, params, type, function: fn, ...rest } = p;
  const object = (v: unknown): Json | undefined => {
    if (isObj(v)) return v;
    if (typeof v === "string") {
      try {
        const parsed: unknown = JSON.parse(v);
        return isObj(parsed) ? parsed : undefined;
      } catch {
        return undefined;
      }
    }
    return undefined;
  };
  if (typeof tool_name === "string") {
    const i = object(tool_input ?? args);
    return i === undefined ? undefined : { name: tool_name, input: i, extra: rest };
  }
  if (typeof name === "string" && method === undefined) {
    const i = object(input ?? args);
    return i === undefined ? undefined : { name, input: i, extra: rest };
  }
  if (method === "tools/call" && isObj(params) && typeof params.name === "string") {
    const i = object(params.arguments);
    return i === undefined ? undefined : { name: params.name, input: i, extra: rest };
  }
  if (type === "function" && isObj(fn) && typeof fn.name === "string") {
    const i = object(fn.arguments);
    return i === undefined ? undefined : { name: fn.name, input: i, extra: rest };
  }
  return undefined;
}

const SHAPES = ["arguments", "tool_input", "json-string", "mcp", "openai"] as const;

function writeCall(c: Call, shape: (typeof SHAPES)[number]): Json {
  switch (shape) {
    case "arguments":
      return { tool_name: c.name, arguments: c.input, ...c.extra };
    case "tool_input":
      return { tool_name: c.name, tool_input: c.input, ...c.extra };
    case "json-string":
      return { tool_name: c.name, arguments: JSON.stringify(c.input), ...c.extra };
    case "mcp":
      return { method: "tools/call", params: { name: c.name, arguments: c.input }, ...c.extra };
    case "openai":
      return { type: "function", function: { name: c.name, arguments: JSON.stringify(c.input) }, ...c.extra };
  }
}

const PATH_KEYS = ["file_path", "path", "destination"] as const;

/** A path with one equivalent detour: `//`, `/./` or `dir/../dir` at a slash inside it. */
function respell(path: string, r: Rand): { path: string; op: string } | undefined {
  const prefix = path.startsWith("~/") ? 2 : path.startsWith("/") ? 1 : 0;
  if (prefix === 0) return undefined; // a relative path stays the workspace's own
  const slashes: number[] = [];
  for (let k = prefix; k < path.length; k++) if (path[k] === "/") slashes.push(k);
  if (slashes.length === 0) return undefined;
  const at = pick(r, slashes);
  const op = pick(r, ["double-slash", "dot", "dotdot"] as const);
  if (op === "double-slash") return { path: `${path.slice(0, at)}/${path.slice(at)}`, op: "path:double-slash" };
  if (op === "dot") return { path: `${path.slice(0, at)}/.${path.slice(at)}`, op: "path:dot" };
  // The directory that ends at this slash, left and entered again.
  const start = path.lastIndexOf("/", at - 1) + 1;
  const dir = path.slice(Math.max(start, prefix), at);
  if (dir === "" || dir === "." || dir === "..") return undefined;
  return { path: `${path.slice(0, at)}/../${dir}${path.slice(at)}`, op: "path:dotdot" };
}

const WRITE_ALIASES: readonly ((path: string, content: string) => Call)[] = [
  (path, content) => ({ name: "Write", input: { file_path: path, content }, extra: {} }),
  (path, content) => ({ name: "write_file", input: { path, content }, extra: {} }),
  (path, content) => ({ name: "write_to_file", input: { path, content }, extra: {} }),
  (path, content) => ({ name: "str_replace_editor", input: { command: "create", path, file_text: content }, extra: {} }),
];

const PYTHON_TOOLS = ["python", "run_python", "execute_code", "jupyter_execute"] as const;

function codeOf(c: Call): { key: "code" | "input"; code: string; language: "python" | "javascript" | "ruby" | undefined } | undefined {
  const lang = typeof c.input.language === "string" ? c.input.language : undefined;
  const key = typeof c.input.code === "string" ? "code" : typeof c.input.input === "string" ? "input" : undefined;
  if (key === undefined) return undefined;
  const name = c.name.toLowerCase();
  const language =
    lang === "python" || /python|jupyter|code_interpreter/.test(name)
      ? "python"
      : lang === "javascript" || /node|javascript/.test(name)
        ? "javascript"
        : /ruby/.test(name)
          ? "ruby"
          : undefined;
  return { key, code: c.input[key] as string, language };
}

/** One operator on a call; undefined when it does not apply. */
function step(c: Call, r: Rand): { call: Call; op: string } | undefined {
  const op = pick(r, ["keys", "path", "write-alias", "comment", "blank-lines", "trailing-space", "quotes", "import-alias", "python-tool"]);
  const input = c.input;
  switch (op) {
    case "keys": {
      const keys = Object.keys(input);
      if (keys.length < 2) return undefined;
      const shuffled = [...keys].sort(() => r() - 0.5);
      return { call: { ...c, input: Object.fromEntries(shuffled.map((k) => [k, input[k]])) }, op: "keys" };
    }
    case "path": {
      const key = PATH_KEYS.find((k) => typeof input[k] === "string");
      if (key === undefined) return undefined;
      const re = respell(input[key] as string, r);
      return re === undefined ? undefined : { call: { ...c, input: { ...input, [key]: re.path } }, op: re.op };
    }
    case "write-alias": {
      const path = typeof input.file_path === "string" ? input.file_path : typeof input.path === "string" ? input.path : undefined;
      const content = typeof input.content === "string" ? input.content : typeof input.file_text === "string" ? input.file_text : undefined;
      const isWrite =
        c.name === "Write" ||
        c.name === "write_file" ||
        c.name === "write_to_file" ||
        (c.name === "str_replace_editor" && input.command === "create");
      if (!isWrite || path === undefined || content === undefined) return undefined;
      const alias = pick(r, WRITE_ALIASES)(path, content);
      return { call: { ...alias, extra: c.extra }, op: `write-alias:${alias.name}` };
    }
    case "python-tool": {
      const code = codeOf(c);
      if (code?.language !== "python" || code.key !== "code" || /^\s*[!%]/m.test(code.code)) return undefined;
      const tool = pick(r, PYTHON_TOOLS);
      const rest = Object.fromEntries(Object.entries(input).filter(([k]) => k !== "language"));
      const next: Json = tool === "execute_code" ? { ...rest, language: "python" } : rest;
      return { call: { ...c, name: tool, input: next }, op: `python-tool:${tool}` };
    }
    default: {
      const code = codeOf(c);
      if (code === undefined || code.language === undefined) return undefined;
      const text = rewriteCode(code.code, code.language, op, r);
      return text === undefined || text === code.code ? undefined : { call: { ...c, input: { ...input, [code.key]: text } }, op };
    }
  }
}

function rewriteCode(code: string, language: "python" | "javascript" | "ruby", op: string, r: Rand): string | undefined {
  const comment = language === "javascript" ? "//" : "#";
  const lines = code.split("\n");
  // A Jupyter cell magic (`%%bash`) must stay the cell's first line.
  if (/^%%/.test(code) && (op === "comment" || op === "blank-lines")) return undefined;
  switch (op) {
    case "comment":
      return `${comment} ${pick(r, ["setup", "step 1", "run it"])}\n${code}`;
    case "blank-lines": {
      if (lines.length < 2 || /^\s/m.test(code) || /["'`]{3}|`/.test(code)) return undefined; // no indented blocks or multi-line strings
      const at = 1 + Math.floor(r() * (lines.length - 1));
      return [...lines.slice(0, at), "", ...lines.slice(at)].join("\n");
    }
    case "trailing-space":
      if (/["'`]{3}|`|\\$/m.test(code)) return undefined; // a multi-line string or a continuation keeps its line ends
      return lines.map((l) => `${l}  `).join("\n");
    case "quotes":
      if (language === "ruby" || code.includes("\\") || code.includes("`")) return undefined;
      if (!code.includes('"') && code.includes("'")) return code.replaceAll("'", '"');
      if (!code.includes("'") && code.includes('"')) return code.replaceAll('"', "'");
      return undefined;
    case "import-alias": {
      if (language !== "python") return undefined;
      const m = /^import ([A-Za-z_][A-Za-z0-9_]*)$/m.exec(code);
      if (m === null) return undefined;
      const mod = m[1]!;
      const body = code.replace(m[0], "");
      // Every other use of the name must be an attribute access, which the alias keeps.
      if (new RegExp(`\\b${mod}\\b(?!\\.)`).test(body)) return undefined;
      return code.replace(m[0], `import ${mod} as _${mod}`).replace(new RegExp(`\\b${mod}\\.`, "g"), `_${mod}.`);
    }
    default:
      return undefined;
  }
}

export interface PayloadVariant {
  payload: Json;
  ops: string[];
  source: unknown;
}

/** One variant of `payload`: one to three operators, then a shape. Undefined when nothing applied. */
export function mutatePayload(payload: unknown, r: Rand): PayloadVariant | undefined {
  const call = readCall(payload);
  if (call === undefined) return undefined;
  let c = call;
  const ops: string[] = [];
  const n = 1 + Math.floor(r() * 3);
  for (let k = 0; k < n * 3 && ops.length < n; k++) {
    const s = step(c, r);
    if (s !== undefined) {
      c = s.call;
      ops.push(s.op);
    }
  }
  const shape = pick(r, SHAPES);
  ops.push(`shape:${shape}`);
  return { payload: writeCall(c, shape), ops, source: payload };
}

/** `count` distinct variants (none equal to a source), cycling through the sources; deterministic for a seed. */
export function payloadVariants(sources: readonly unknown[], count: number, seed: number): PayloadVariant[] {
  const r = rng(seed);
  const seen = new Set(sources.map((s) => JSON.stringify(s)));
  const out: PayloadVariant[] = [];
  for (let k = 0, misses = 0; out.length < count && misses < count * 20; k++) {
    const v = mutatePayload(sources[k % sources.length], r);
    const key = v === undefined ? undefined : JSON.stringify(v.payload);
    if (v === undefined || key === undefined || seen.has(key)) {
      misses++;
      continue;
    }
    seen.add(key);
    out.push(v);
  }
  return out;
}

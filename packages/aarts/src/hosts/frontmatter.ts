/**
 * A small YAML-frontmatter reader for skill / agent-definition files (the subset such files
 * use: block and flow scalars, nested maps and lists by indentation, `|` / `>` blocks). Anything
 * outside the subset throws, and the caller then does not fire PreSkillLoad (spec §4.1: "if
 * its frontmatter cannot be parsed, PreSkillLoad is not fired").
 */

/** A skill or agent-definition file split by {@link parseSkillFile}. */
export interface SkillDocument {
  /** The parsed `---` frontmatter (PreSkillLoad `frontmatter`). */
  readonly frontmatter: Record<string, unknown>;
  /** Everything after the frontmatter (PreSkillLoad `body_content`). */
  readonly body: string;
}

/** Splits `---` frontmatter from the body and parses it. Throws when there is none or it is malformed. */
export function parseSkillFile(text: string): SkillDocument {
  const src = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const m = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(src);
  if (m === null) throw new Error("no frontmatter");
  const value = parseYamlSubset(m[1]!);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("frontmatter is not a map");
  return { frontmatter: value as Record<string, unknown>, body: src.slice(m[0].length) };
}

interface Line {
  readonly indent: number;
  readonly text: string;
}

/**
 * Parses the YAML subset skill frontmatter uses: block and flow scalars, nested maps and lists by
 * indentation, `|` and `>` blocks. Throws an `Error` on anything outside the subset (tabs in indentation,
 * bad indentation, flow maps, unterminated strings), so the caller can skip PreSkillLoad instead of guessing.
 */
export function parseYamlSubset(source: string): unknown {
  const lines: Line[] = [];
  for (const raw of source.split("\n")) {
    if (/^\s*(#.*)?$/.test(raw)) continue;
    if (/^ *\t/.test(raw)) throw new Error("tabs in indentation");
    const indent = raw.length - raw.trimStart().length;
    lines.push({ indent, text: raw.trimEnd().slice(indent) });
  }
  if (lines.length === 0) return {};
  const [value, next] = block(lines, 0, lines[0]!.indent);
  if (next !== lines.length) throw new Error(`unexpected content: ${lines[next]!.text}`);
  return value;
}

function block(lines: Line[], i: number, indent: number): [unknown, number] {
  return lines[i]!.text.startsWith("- ") || lines[i]!.text === "-" ? list(lines, i, indent) : map(lines, i, indent);
}

function map(lines: Line[], i: number, indent: number): [Record<string, unknown>, number] {
  const out: Record<string, unknown> = {};
  while (i < lines.length && lines[i]!.indent === indent) {
    const line = lines[i]!;
    const m = /^("[^"]*"|'[^']*'|[^:#][^:]*?)\s*:(?:\s+(.*)|)$/.exec(line.text);
    if (m === null) throw new Error(`not a key: ${line.text}`);
    const key = unquote(m[1]!);
    const rest = m[2]?.trim() ?? "";
    i++;
    if (rest === "|" || rest === ">" || rest === "|-" || rest === ">-") {
      const [text, next] = textBlock(lines, i, indent, rest.startsWith(">"));
      out[key] = text;
      i = next;
    } else if (rest === "") {
      if (i < lines.length && lines[i]!.indent > indent) {
        const [value, next] = block(lines, i, lines[i]!.indent);
        out[key] = value;
        i = next;
      } else if (i < lines.length && lines[i]!.indent === indent && lines[i]!.text.startsWith("- ")) {
        const [value, next] = list(lines, i, indent);
        out[key] = value;
        i = next;
      } else out[key] = null;
    } else out[key] = scalar(rest);
  }
  if (i < lines.length && lines[i]!.indent > indent) throw new Error(`bad indentation: ${lines[i]!.text}`);
  return [out, i];
}

function list(lines: Line[], i: number, indent: number): [unknown[], number] {
  const out: unknown[] = [];
  while (i < lines.length && lines[i]!.indent === indent && (lines[i]!.text.startsWith("- ") || lines[i]!.text === "-")) {
    const rest = lines[i]!.text === "-" ? "" : lines[i]!.text.slice(2).trim();
    i++;
    if (rest === "") {
      if (i < lines.length && lines[i]!.indent > indent) {
        const [value, next] = block(lines, i, lines[i]!.indent);
        out.push(value);
        i = next;
      } else out.push(null);
    } else if (/^("[^"]*"|'[^']*'|[^:#[{"'][^:]*?)\s*:(\s|$)/.test(rest)) {
      // `- key: value` opens a map whose further keys sit at indent + 2.
      const itemIndent = indent + 2;
      const synthetic: Line[] = [{ indent: itemIndent, text: rest }];
      let j = i;
      while (j < lines.length && lines[j]!.indent >= itemIndent) synthetic.push(lines[j++]!);
      const [value, used] = map(synthetic, 0, itemIndent);
      if (used !== synthetic.length) throw new Error(`bad list item: ${rest}`);
      out.push(value);
      i = j;
    } else out.push(scalar(rest));
  }
  return [out, i];
}

function textBlock(lines: Line[], i: number, indent: number, folded: boolean): [string, number] {
  const parts: string[] = [];
  let inner: number | undefined;
  while (i < lines.length && lines[i]!.indent > indent) {
    inner ??= lines[i]!.indent;
    parts.push(" ".repeat(lines[i]!.indent - inner) + lines[i]!.text);
    i++;
  }
  return [parts.join(folded ? " " : "\n"), i];
}

function unquote(s: string): string {
  if ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'"))) return s.slice(1, -1);
  return s;
}

function scalar(raw: string): unknown {
  const s = raw.replace(/\s+#.*$/, "");
  if (s.startsWith('"')) {
    if (!s.endsWith('"') || s.length < 2) throw new Error(`unterminated string: ${s}`);
    return JSON.parse(s) as unknown;
  }
  if (s.startsWith("'")) {
    if (!s.endsWith("'") || s.length < 2) throw new Error(`unterminated string: ${s}`);
    return s.slice(1, -1).replace(/''/g, "'");
  }
  if (s.startsWith("[")) {
    if (!s.endsWith("]")) throw new Error(`unterminated list: ${s}`);
    const inner = s.slice(1, -1).trim();
    return inner === "" ? [] : inner.split(",").map((p) => scalar(p.trim()));
  }
  if (s === "{}") return {};
  if (s.startsWith("{")) throw new Error("flow maps are not supported");
  if (s === "true" || s === "True") return true;
  if (s === "false" || s === "False") return false;
  if (s === "null" || s === "~") return null;
  if (/^-?[0-9]+(\.[0-9]+)?$/.test(s)) return Number(s);
  return s;
}

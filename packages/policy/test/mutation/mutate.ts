/**
 * A deterministic mutation generator for shell command lines: from one line it derives variants
 * that a POSIX shell (bash) runs the same way, spelled differently. Each operator is an
 * equivalence of bash's grammar, applied only where it holds:
 *
 * - line level (any line): `bash -c '…'`, a here-string or here-document fed to `bash`, a
 *   subshell or a group, a neutral statement in front (`true && …`, `: ;`), `;` ↔ newline and a
 *   newline after `&&` / `||`, and a line continuation;
 * - word level, on simple segments only (plain words, no substitution, redirection or here-document
 *   between two control operators): quoting and escaping of words that expand nothing
 *   (`'rm'`, `r''m`, `\r\m`, `$'rm'`, `"rm"`), variable indirection of the program or an argument
 *   (`p=rm; $p -rf /`), wrappers in front of the program (`env`, `nice`, `timeout 60`,
 *   `sudo -u "$USER"`, `command`, `builtin` for builtins, `exec` for the last command, an absolute
 *   program path for external programs), long options from a per-program table of exact
 *   synonyms, and reordering of flags after operands for programs whose option parser permutes
 *   (GNU getopt, no value-taking options in the segment).
 *
 * Words that expand a parameter keep their expansion inside double quotes; words with an unquoted
 * glob are never requoted (quoting would stop the glob). The test also checks every variant with
 * `bash -n`, and replays word-level rewrites with `printf` in place of the program to compare the
 * words bash produces.
 */
import { lex, type Token } from "@ahp/shell";

/** mulberry32: a small, fast, seedable generator (deterministic across platforms). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** POSIX single quoting of a whole text. */
export const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Builtins: not reachable through `env`, `nice`, `timeout`, `sudo` or an absolute path. */
const BUILTINS = new Set([
  "cd",
  "source",
  ".",
  "export",
  "eval",
  "exec",
  "set",
  "unset",
  "alias",
  "read",
  ":",
  "true",
  "false",
  "kill",
  "pushd",
  "popd",
  "builtin",
  "command",
  "declare",
  "local",
  "readonly",
  "typeset",
  "wait",
  "jobs",
  "fg",
  "bg",
  "trap",
  "ulimit",
  "umask",
  "shift",
  "return",
  "exit",
  "break",
  "continue",
  "echo",
  "printf",
  "test",
  "[",
  "pwd",
  "type",
  "hash",
  "history",
  "let",
]);
/** Builtins `builtin X` may call. */
const CALLABLE_BUILTINS = new Set(["cd", "source", ".", "export", "kill", "echo", "printf", "pwd", "test", "type"]);
const RESERVED = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "for",
  "case",
  "esac",
  "in",
  "{",
  "}",
  "!",
  "[[",
  "]]",
  "function",
  "select",
  "time",
]);

/**
 * Exact long-option synonyms (from the programs' manuals). `value`: the option takes the next
 * word as its value. Only letters listed here are rewritten; a cluster with any other letter is left alone.
 */
const LONG: Record<string, Record<string, { long: string; value?: boolean }>> = {
  rm: { r: { long: "recursive" }, R: { long: "recursive" }, f: { long: "force" }, v: { long: "verbose" } },
  chmod: { R: { long: "recursive" }, v: { long: "verbose" }, f: { long: "silent" } },
  chown: { R: { long: "recursive" }, v: { long: "verbose" } },
  chgrp: { R: { long: "recursive" } },
  cp: { r: { long: "recursive" }, R: { long: "recursive" }, f: { long: "force" }, a: { long: "archive" }, v: { long: "verbose" } },
  mkdir: { p: { long: "parents" }, v: { long: "verbose" } },
  curl: {
    s: { long: "silent" },
    S: { long: "show-error" },
    L: { long: "location" },
    f: { long: "fail" },
    k: { long: "insecure" },
    o: { long: "output", value: true },
    O: { long: "remote-name" },
    d: { long: "data", value: true },
    T: { long: "upload-file", value: true },
    F: { long: "form", value: true },
    H: { long: "header", value: true },
    X: { long: "request", value: true },
  },
  wget: { q: { long: "quiet" }, O: { long: "output-document", value: true }, c: { long: "continue" } },
  rsync: { a: { long: "archive" }, z: { long: "compress" }, v: { long: "verbose" }, r: { long: "recursive" } },
  grep: { r: { long: "recursive" }, i: { long: "ignore-case" }, n: { long: "line-number" }, R: { long: "dereference-recursive" } },
  git: {},
  tee: { a: { long: "append" } },
  sed: { i: { long: "in-place" }, n: { long: "quiet" } },
  zip: { r: { long: "recurse-paths" }, q: { long: "quiet" } },
  truncate: { s: { long: "size", value: true } },
  shred: { u: { long: "remove" }, z: { long: "zero" }, v: { long: "verbose" } },
  mv: { f: { long: "force" }, v: { long: "verbose" } },
};
/** Programs whose options GNU getopt permutes and that take no option values here: flags may follow the operands. */
const PERMUTES = new Set(["rm", "chmod", "chown", "chgrp", "mkdir", "touch", "cat", "ls", "cp", "mv", "shred"]);
/** External programs with a known absolute path on a merged-/usr system. */
const ABSOLUTE = new Set([
  "rm",
  "cp",
  "mv",
  "chmod",
  "chown",
  "chgrp",
  "curl",
  "wget",
  "git",
  "tar",
  "zip",
  "find",
  "python3",
  "rsync",
  "scp",
  "ssh",
  "crontab",
  "systemctl",
  "pkill",
  "killall",
  "tee",
  "cat",
  "sed",
  "dd",
  "mkdir",
  "ls",
  "grep",
  "truncate",
  "shred",
  "base64",
  "node",
  "perl",
  "xargs",
  "nc",
  "gzip",
  "jq",
  "tar",
  "sha256sum",
  "make",
  "docker",
  "poweroff",
  "reboot",
  "shutdown",
  "halt",
]);

/** A segment of a line between control operators, as offsets into the line. */
interface Segment {
  start: number;
  end: number;
  /** Plain words only (no substitution, redirection, glob, here-document): word-level operators apply. */
  simple: boolean;
  words: { text: string; raw: string; expands: boolean; pattern: boolean }[];
  /** The next operator (`&&`, `;`, `|` …) or undefined at the end. */
  next: string | undefined;
}

function segments(line: string): Segment[] | undefined {
  if (line.includes("<<")) return undefined;
  let toks: Token[];
  try {
    toks = lex(line);
  } catch {
    return undefined;
  }
  const out: Segment[] = [];
  let cur: Segment | undefined;
  let bad = false;
  for (const t of toks) {
    if (t.kind === "op") {
      if (cur !== undefined) {
        cur.next = t.op;
        out.push(cur);
        cur = undefined;
      }
      if (t.op === "(" || t.op === ")") bad = true;
      continue;
    }
    cur ??= { start: t.start, end: t.end, simple: true, words: [], next: undefined };
    cur.end = t.end;
    if (t.kind === "redir") {
      cur.simple = false;
      continue;
    }
    const raw = line.slice(t.start, t.end);
    if (t.subs.length > 0 || t.pattern || raw.includes("\\") || raw.startsWith("$'")) cur.simple = false;
    // An unquoted leading `~` is expanded by the shell: such a word is handled like a glob (never requoted or moved into a variable).
    const tilde = raw.startsWith("~");
    cur.words.push({ text: t.text, raw, expands: t.expands, pattern: t.pattern || tilde });
  }
  if (cur !== undefined) out.push(cur);
  return bad ? out.map((s) => ({ ...s, simple: false })) : out;
}

/** Another spelling of a word that expands nothing: the same text after quote removal. */
function requote(r: Rand, w: string): string {
  if (w.length === 0) return "''";
  switch (Math.floor(r() * 5)) {
    case 0:
      return sq(w);
    case 1: {
      const k = 1 + Math.floor(r() * Math.max(1, w.length - 1));
      return `${sq(w.slice(0, k))}${sq(w.slice(k))}`;
    }
    case 2:
      return [...w].map((c) => (/[A-Za-z0-9_]/.test(c) ? `\\${c}` : c === "\n" ? sq(c) : `\\${c}`)).join("");
    case 3:
      return `$'${w.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
    default:
      return `"${w.replace(/(["\\$`])/g, "\\$1")}"`;
  }
}

/** A spelling of a word that expands a parameter: double quotes keep the expansion. */
const requoteExpanding = (w: string): string => `"${w.replace(/(["\\`])/g, "\\$1")}"`;

export interface Variant {
  text: string;
  ops: string[];
  /** For word-level rewrites of the first segment: assignments in front and the segment's words, to replay with printf. */
  replay?: { prelude: string; original: string; mutated: string };
}

type WordOp = (
  r: Rand,
  seg: Segment,
  words: string[],
  ctx: { last: boolean; prelude: string[]; counter: { n: number } },
) => string | undefined;

const programIndex = (seg: Segment): number =>
  seg.words.length > 0 && !RESERVED.has(seg.words[0]!.text) && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(seg.words[0]!.text) ? 0 : -1;

const WORD_OPS: Record<string, WordOp> = {
  quoting: (r, seg, words) => {
    const k = Math.floor(r() * seg.words.length);
    const w = seg.words[k]!;
    // Quoting an unquoted expansion would stop its field splitting and keep it when empty (`${X} -rf /`).
    if (w.pattern || (w.expands && !w.raw.startsWith('"'))) return undefined;
    words[k] = w.expands ? requoteExpanding(w.text) : requote(r, w.text);
    return "quoting";
  },
  "program-indirection": (_r, seg, words, ctx) => {
    const p = programIndex(seg);
    const w = seg.words[p];
    if (p < 0 || w === undefined || w.expands || RESERVED.has(w.text)) return undefined;
    const name = `m${ctx.counter.n++}`;
    ctx.prelude.push(`${name}=${sq(w.text)}`);
    words[p] = `$${name}`;
    return "program-indirection";
  },
  "argument-indirection": (r, seg, words, ctx) => {
    const candidates = seg.words
      .map((w, k) => ({ w, k }))
      .filter(({ w, k }) => k > 0 && !w.expands && !w.pattern && !w.text.startsWith("-"));
    if (candidates.length === 0) return undefined;
    const { w, k } = pick(r, candidates);
    const name = `m${ctx.counter.n++}`;
    ctx.prelude.push(`${name}=${sq(w.text)}`);
    words[k] = `"$${name}"`;
    return "argument-indirection";
  },
  wrapper: (r, seg, words, ctx) => {
    const p = programIndex(seg);
    if (p < 0) return undefined;
    const program = seg.words[p]!.text;
    if (program.includes("/") || seg.words[p]!.expands) return undefined;
    const builtin = BUILTINS.has(program);
    const options: string[] = [];
    if (!builtin) options.push("env", "nice", "timeout 600", 'sudo -u "$USER"', "command");
    if (builtin && CALLABLE_BUILTINS.has(program)) options.push("builtin", "command");
    if (ctx.last && program !== "cd" && program !== "source" && program !== "." && program !== "export") options.push("exec");
    if (options.length === 0) return undefined;
    const wrapper = pick(r, options);
    words[p] = `${wrapper} ${words[p]}`;
    return `wrapper:${wrapper.split(" ")[0]}`;
  },
  "absolute-path": (_r, seg, words) => {
    const p = programIndex(seg);
    if (p < 0 || !ABSOLUTE.has(seg.words[p]!.text)) return undefined;
    words[p] = `/usr/bin/${seg.words[p]!.text}`;
    return "absolute-path";
  },
  "long-options": (_r, seg, words) => {
    const p = programIndex(seg);
    const table = p < 0 ? undefined : LONG[seg.words[p]!.text];
    if (table === undefined) return undefined;
    let changed = false;
    for (let k = p + 1; k < seg.words.length; k++) {
      const w = seg.words[k]!;
      if (w.text === "--") break;
      if (!/^-[A-Za-z]+$/.test(w.text) || w.expands) continue;
      const letters = [...w.text.slice(1)];
      // Only the last letter of a cluster may take a value (the next word).
      const specs = letters.map((c) => table[c]);
      if (specs.some((s, i) => s === undefined || (s.value === true && i < letters.length - 1))) continue;
      words[k] = specs.map((s) => `--${s!.long}`).join(" ");
      changed = true;
    }
    return changed ? "long-options" : undefined;
  },
  reorder: (_r, seg, words) => {
    const p = programIndex(seg);
    if (p < 0 || !PERMUTES.has(seg.words[p]!.text)) return undefined;
    const rest = seg.words.slice(p + 1);
    if (rest.some((w) => w.text === "--" || w.text === "-t" || w.text.startsWith("--target") || w.text === "-S")) return undefined;
    const flags: number[] = [];
    const operands: number[] = [];
    rest.forEach((w, i) => (/^-[A-Za-z-]/.test(w.text) && !/^-[0-7]+$/.test(w.text) ? flags : operands).push(p + 1 + i));
    // chmod's mode is its first operand; a mode such as `-w` looks like a flag: leave chmod alone when one does.
    if (seg.words[p]!.text === "chmod" && rest.some((w) => /^-[rwxXst]+$/.test(w.text))) return undefined;
    if (flags.length === 0 || operands.length === 0) return undefined;
    const order = [...operands, ...flags].map((k) => words[k]!);
    for (let i = 0; i < order.length; i++) words[p + 1 + i] = order[i]!;
    return "reorder";
  },
};

/** Line-level operators: each returns the new line, or undefined when it does not apply. */
const LINE_OPS: Record<string, (r: Rand, line: string) => string | undefined> = {
  "bash-c": (_r, line) => `bash -c ${sq(line)}`,
  "here-string": (_r, line) => `bash <<< ${sq(line)}`,
  "here-doc": (_r, line) => (line.split("\n").includes("MUTEOF") ? undefined : `bash <<'MUTEOF'\n${line}\nMUTEOF`),
  subshell: (_r, line) => `( ${line}\n)`,
  group: (_r, line) => `{ ${line}\n}`,
  "neutral-and": (_r, line) => `true && ${line}`,
  "neutral-semicolon": (_r, line) => `: ;\n${line}`,
  "split-newline": (r, line) => {
    const segs = segments(line);
    if (segs === undefined) return undefined;
    // `;` ↔ newline; a newline after `&&` / `||`: the same list to bash.
    const ops = segs.filter((s) => s.next === ";" || s.next === "&&" || s.next === "||");
    if (ops.length === 0) return undefined;
    const seg = pick(r, ops);
    const tail = line.slice(seg.end);
    const m = /^(\s*)(;|&&|\|\|)/.exec(tail);
    if (m === null) return undefined;
    const replacement = m[2] === ";" ? "\n" : `${m[2]}\n`;
    return line.slice(0, seg.end) + replacement + tail.slice(m[0].length);
  },
  continuation: (_r, line) => {
    const segs = segments(line);
    if (segs === undefined || segs.length === 0) return undefined;
    const s = segs[0]!;
    if (!s.simple || s.words.length < 2) return undefined;
    // A backslash-newline between two words is removed before the line is split into words.
    const second = line.indexOf(s.words[1]!.raw, s.start + s.words[0]!.raw.length);
    if (second < 0) return undefined;
    return `${line.slice(0, second)}\\\n${line.slice(second)}`;
  },
};

/**
 * One variant of a line: 1 to 3 operators picked at random; word-level ones rewrite one simple
 * segment. Returns undefined when none of the picked operators applied.
 */
export function mutate(line: string, r: Rand): Variant | undefined {
  const ops: string[] = [];
  let text = line;
  let replay: Variant["replay"];
  const n = 1 + Math.floor(r() * 3);
  const wordFirst = r() < 0.7;
  if (wordFirst) {
    const segs = segments(line)?.filter((s) => s.simple && s.words.length > 0);
    if (segs !== undefined && segs.length > 0) {
      const segIndex = Math.floor(r() * segs.length);
      const seg = segs[segIndex]!;
      const all = segments(line)!;
      const last = all[all.length - 1]!.start === seg.start && all.length === 1;
      const words = seg.words.map((w) => w.raw);
      const ctx = { last, prelude: [] as string[], counter: { n: 1 } };
      const names = Object.keys(WORD_OPS);
      // Operators address words by position: reordering, which moves them, comes last.
      let reorder = false;
      for (let k = 0; k < n; k++) {
        const name = pick(r, names);
        if (name === "reorder") {
          reorder = true;
          continue;
        }
        const applied = WORD_OPS[name]!(r, seg, words, ctx);
        if (applied !== undefined) ops.push(applied);
      }
      if (reorder && WORD_OPS["reorder"]!(r, seg, words, ctx) !== undefined) ops.push("reorder");
      if (ops.length > 0) {
        const mutated = words.join(" ");
        const prelude = ctx.prelude.length > 0 ? `${ctx.prelude.join("; ")}; ` : "";
        text = prelude + line.slice(0, seg.start) + mutated + line.slice(seg.end);
        if (!ops.some((o) => o === "long-options" || o === "reorder" || o.startsWith("wrapper") || o === "absolute-path"))
          replay = { prelude, original: seg.words.map((w) => w.raw).join(" "), mutated };
      }
    }
  }
  const lineOps = Object.keys(LINE_OPS);
  const lineCount = ops.length === 0 ? n : r() < 0.5 ? 1 : 0;
  for (let k = 0; k < lineCount; k++) {
    const name = pick(r, lineOps);
    const next = LINE_OPS[name]!(r, text);
    if (next !== undefined && next !== text) {
      text = next;
      ops.push(name);
      replay = undefined;
    }
  }
  if (ops.length === 0 || text === line) return undefined;
  return replay === undefined ? { text, ops } : { text, ops, replay };
}

/** At least `count` distinct variants of the lines, round robin, from a fixed seed. */
export function variants(lines: readonly string[], count: number, seed: number): (Variant & { source: string })[] {
  const r = rng(seed);
  const out: (Variant & { source: string })[] = [];
  const seen = new Set<string>();
  for (let round = 0; out.length < count && round < 200; round++) {
    for (const source of lines) {
      const v = mutate(source, r);
      if (v === undefined || seen.has(v.text)) continue;
      seen.add(v.text);
      out.push({ ...v, source });
    }
  }
  return out;
}

/**
 * A small shell-words tokenizer and command splitter, enough to match policies on what a
 * command line would run without executing or expanding anything.
 *
 * It understands: single, double and `$'…'` quotes and backslash escapes; the separators
 * `;`, `&`, `&&`, `||`, newlines and `( )`; pipelines `|` and `|&`; redirections (`>`, `>>`,
 * `2>`, `&>`, `<`, here-documents `<<EOF` and here-strings `<<<`); command and process
 * substitutions (`$(…)`, backticks, `<(…)`, `>(…)`), parsed recursively; assignment prefixes
 * (`FOO=1 cmd`); reserved words (`if`, `then`, `do`, `{`, `!` …); wrappers that run another
 * command (`sudo`, `doas`, `env`, `command`, `exec`, `nohup`, `nice`, `timeout`, `xargs`,
 * `busybox`, `python -m`, …); scripts handed to a shell (`sh -c '…'`, `eval …`, `bash <<EOF`,
 * `bash <<< '…'`) and `find … -exec … ;`, parsed recursively.
 *
 * Variables are not expanded: `$HOME` stays `$HOME` (path normalization turns it into `~`).
 * Nothing here throws on odd input; unterminated quotes run to the end of the text.
 */

export interface Redirect {
  /** The operator without a file descriptor number: `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<<`, `<<-`, `<<<`, `<>`, `>&`, `<&`. */
  op: string;
  /** File descriptor written before the operator (`2` in `2>`), when given. */
  fd?: string;
  /** The target word (quotes removed); for here-documents the delimiter. */
  target: string;
  /** Body of a here-document. */
  body?: string;
}

export interface SimpleCommand {
  /** Program name: basename of the command word, lower case (`/usr/bin/RM` → `rm`); `""` for a bare redirection. */
  program: string;
  /** The command words after unwrapping (`argv[0]` is the command word as written). */
  argv: string[];
  /** Positional arguments (not options), paths normalized (see {@link normalizeShellPath}). */
  args: string[];
  /** Flags: `-rf` gives `r`, `f` and `rf`; `--force` and `--force=x` give `force`. */
  flags: Set<string>;
  /** Candidate option values: `--registry=x`, `--registry x`, `-i x`, `-ix` all give the value `x`. */
  options: Map<string, string[]>;
  redirects: Redirect[];
  /** Every word of the command as written: wrappers, assignments, arguments, redirection targets. */
  words: string[];
  /** Programs the output of this command flows into: later pipeline stages, commands holding a substitution. */
  consumers: string[];
  /** Wrapper programs that were removed in front of the command (`sudo`, `env` …). */
  wrappers: string[];
  /** 0 for top-level commands; +1 per substitution or nested script. */
  depth: number;
}

export interface ParseShellOptions {
  /** How deep substitutions and nested scripts are followed. Default 4. */
  maxDepth?: number;
}

// ---------------------------------------------------------------- lexer

interface WordTok {
  kind: "word";
  text: string;
  /** Inner text of command/process substitutions in the word. */
  subs: string[];
}
interface OpTok {
  kind: "op";
  op: string;
}
interface RedirTok {
  kind: "redir";
  redirect: Redirect;
}
type Tok = WordTok | OpTok | RedirTok;

const isBlank = (c: string | undefined) => c === " " || c === "\t" || c === "\r";
const isMeta = (c: string | undefined) => c === "|" || c === "&" || c === ";" || c === "(" || c === ")" || c === "\n";

/** Index just past the `)` matching the `(` at `open`, respecting quotes and nesting. */
function skipParens(src: string, open: number): number {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") i++;
    else if (c === "'") {
      const end = src.indexOf("'", i + 1);
      i = end < 0 ? src.length : end;
    } else if (c === '"') i = skipDouble(src, i + 1);
    else if (c === "`") {
      const end = findBacktick(src, i + 1);
      i = end;
    } else if (c === "(") depth++;
    else if (c === ")") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return src.length;
}

/** Index of the closing `"` of a double-quoted string starting after `from`. */
function skipDouble(src: string, from: number): number {
  for (let i = from; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") i++;
    else if (c === '"') return i;
    else if (c === "$" && src[i + 1] === "(") i = skipParens(src, i + 1) - 1;
    else if (c === "`") i = findBacktick(src, i + 1);
  }
  return src.length;
}

function findBacktick(src: string, from: number): number {
  for (let i = from; i < src.length; i++) {
    if (src[i] === "\\") i++;
    else if (src[i] === "`") return i;
  }
  return src.length;
}

function skipBraces(src: string, open: number): number {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") i++;
    else if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return src.length;
}

const ANSI: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

const REDIRECT_OPS = ["<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">|", ">&", ">"];
/** Characters that end a word or start quoting, escaping or substitution. */
const PLAIN = /[^\s|&;()<>\\'"$`]+/y;

function lex(src: string): Tok[] {
  const toks: Tok[] = [];
  const pendingHeredocs: { redirect: Redirect; strip: boolean }[] = [];
  const n = src.length;
  let i = 0;

  const readHeredocBodies = () => {
    // `i` is just past a newline.
    for (const { redirect, strip } of pendingHeredocs) {
      const lines: string[] = [];
      while (i < n) {
        let end = src.indexOf("\n", i);
        if (end < 0) end = n;
        let line = src.slice(i, end);
        i = end + 1;
        if (strip) line = line.replace(/^\t+/, "");
        if (line === redirect.target) break;
        lines.push(line);
      }
      redirect.body = lines.join("\n");
    }
    pendingHeredocs.length = 0;
  };

  const readWord = (): WordTok => {
    let text = "";
    const subs: string[] = [];
    while (i < n) {
      // Fast path: a run of characters with no special meaning.
      PLAIN.lastIndex = i;
      if (PLAIN.test(src)) {
        text += src.slice(i, PLAIN.lastIndex);
        i = PLAIN.lastIndex;
        if (i >= n) break;
      }
      const c = src[i]!;
      if (isBlank(c) || isMeta(c)) break;
      if (c === "<" || c === ">") {
        if (src[i + 1] === "(") {
          const end = skipParens(src, i + 1);
          subs.push(src.slice(i + 2, Math.max(i + 2, end - 1)));
          text += src.slice(i, end);
          i = end;
          continue;
        }
        break;
      }
      if (c === "\\") {
        if (src[i + 1] === "\n") i += 2;
        else {
          text += src[i + 1] ?? "";
          i += 2;
        }
        continue;
      }
      if (c === "'") {
        const end = src.indexOf("'", i + 1);
        const stop = end < 0 ? n : end;
        text += src.slice(i + 1, stop);
        i = stop + 1;
        continue;
      }
      if (c === "$" && src[i + 1] === "'") {
        i += 2;
        while (i < n && src[i] !== "'") {
          if (src[i] === "\\" && i + 1 < n) {
            const e = src[i + 1]!;
            if (e === "x") {
              const m = /^[0-9a-fA-F]{1,2}/.exec(src.slice(i + 2, i + 4));
              if (m !== null) {
                text += String.fromCharCode(parseInt(m[0], 16));
                i += 2 + m[0].length;
                continue;
              }
            }
            text += ANSI[e] ?? `\\${e}`;
            i += 2;
          } else text += src[i++];
        }
        i++;
        continue;
      }
      if (c === '"') {
        i++;
        while (i < n && src[i] !== '"') {
          const d = src[i]!;
          if (d === "\\" && i + 1 < n) {
            const e = src[i + 1]!;
            if (e === "\n") i += 2;
            else if (e === "$" || e === "`" || e === '"' || e === "\\") {
              text += e;
              i += 2;
            } else {
              text += d;
              i++;
            }
          } else if (d === "$" && src[i + 1] === "(") {
            const end = skipParens(src, i + 1);
            if (src[i + 2] !== "(") subs.push(src.slice(i + 2, Math.max(i + 2, end - 1)));
            text += src.slice(i, end);
            i = end;
          } else if (d === "$" && src[i + 1] === "{") {
            const end = skipBraces(src, i + 1);
            text += src.slice(i, end);
            i = end;
          } else if (d === "`") {
            const end = findBacktick(src, i + 1);
            subs.push(src.slice(i + 1, end));
            text += src.slice(i, end + 1);
            i = end + 1;
          } else {
            text += d;
            i++;
          }
        }
        i++;
        continue;
      }
      if (c === "$" && src[i + 1] === "(") {
        const end = skipParens(src, i + 1);
        if (src[i + 2] !== "(") subs.push(src.slice(i + 2, Math.max(i + 2, end - 1)));
        text += src.slice(i, end);
        i = end;
        continue;
      }
      if (c === "$" && src[i + 1] === "{") {
        const end = skipBraces(src, i + 1);
        text += src.slice(i, end);
        i = end;
        continue;
      }
      if (c === "`") {
        const end = findBacktick(src, i + 1);
        subs.push(src.slice(i + 1, end));
        text += src.slice(i, end + 1);
        i = end + 1;
        continue;
      }
      text += c;
      i++;
    }
    return { kind: "word", text, subs };
  };

  const readRedirect = (fd: string | undefined, ampersand: boolean) => {
    let op: string;
    if (ampersand) {
      op = src.startsWith("&>>", i) ? "&>>" : "&>";
    } else {
      op = REDIRECT_OPS.find((candidate) => src.startsWith(candidate, i)) ?? src[i]!;
    }
    i += op.length;
    while (i < n && isBlank(src[i])) i++;
    const target =
      i < n && !isMeta(src[i]) && src[i] !== "<" && src[i] !== ">" ? readWord() : { kind: "word" as const, text: "", subs: [] };
    const redirect: Redirect = { op, target: target.text };
    if (fd !== undefined) redirect.fd = fd;
    toks.push({ kind: "redir", redirect });
    // Substitutions in a redirection target still run: keep them as a pseudo-word.
    if (target.subs.length > 0) toks.push({ kind: "word", text: "", subs: target.subs });
    if (op === "<<" || op === "<<-") pendingHeredocs.push({ redirect, strip: op === "<<-" });
  };

  while (i < n) {
    const c = src[i]!;
    if (isBlank(c)) {
      i++;
      continue;
    }
    if (c === "\\" && src[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (c === "\n") {
      toks.push({ kind: "op", op: ";" });
      i++;
      if (pendingHeredocs.length > 0) readHeredocBodies();
      continue;
    }
    if (c === "#") {
      const end = src.indexOf("\n", i);
      i = end < 0 ? n : end;
      continue;
    }
    if ((c === "<" || c === ">") && src[i + 1] !== "(") {
      readRedirect(undefined, false);
      continue;
    }
    if (c === "&" && src[i + 1] === ">") {
      readRedirect(undefined, true);
      continue;
    }
    if (c === "|" || c === "&" || c === ";") {
      const two = src.slice(i, i + 2);
      const op = two === "||" || two === "&&" || two === "|&" || two === ";;" ? two : c;
      toks.push({ kind: "op", op });
      i += op.length;
      continue;
    }
    if (c === "(" || c === ")") {
      toks.push({ kind: "op", op: c });
      i++;
      continue;
    }
    const start = i;
    const word = readWord();
    // `2>file`: a word of digits directly followed by a redirection operator is a file descriptor.
    if ((src[i] === ">" || src[i] === "<") && src[i + 1] !== "(" && /^\d+$/.test(word.text) && /^\d+$/.test(src.slice(start, i))) {
      readRedirect(word.text, false);
      continue;
    }
    toks.push(word);
  }
  return toks;
}

// ---------------------------------------------------------------- commands

const RESERVED = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "esac",
  "time",
  "coproc",
  "[[",
  "]]",
]);
const SKIP_SEGMENT = new Set(["for", "select", "case"]);
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox-sh"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

interface WrapperSpec {
  /** Short option letters and long option names that take a value. */
  values: ReadonlySet<string>;
  /** Positional arguments before the wrapped command (e.g. the duration of `timeout`). */
  positionals?: number;
  /** Assignments may follow the options (`env`, `sudo`). */
  assignments?: boolean;
}

const spec = (values: string[], extra: Omit<WrapperSpec, "values"> = {}): WrapperSpec => ({ values: new Set(values), ...extra });

const WRAPPERS = new Map<string, WrapperSpec>(
  Object.entries({
    sudo: spec(
      [
        "u",
        "g",
        "h",
        "p",
        "C",
        "D",
        "r",
        "t",
        "T",
        "U",
        "user",
        "group",
        "host",
        "prompt",
        "close-from",
        "chdir",
        "role",
        "type",
        "command-timeout",
        "other-user",
      ],
      { assignments: true },
    ),
    doas: spec(["u", "C"]),
    env: spec(["u", "C", "unset", "chdir", "S", "split-string"], { assignments: true }),
    command: spec([]),
    builtin: spec([]),
    exec: spec(["a"]),
    nohup: spec([]),
    nice: spec(["n", "adjustment"]),
    ionice: spec(["c", "n", "p", "P", "u", "class", "classdata"]),
    time: spec(["f", "o", "format", "output"]),
    timeout: spec(["s", "k", "signal", "kill-after"], { positionals: 1 }),
    stdbuf: spec(["i", "o", "e", "input", "output", "error"]),
    setsid: spec([]),
    unbuffer: spec([]),
    chronic: spec([]),
    caffeinate: spec(["t", "w"]),
    xargs: spec([
      "a",
      "d",
      "E",
      "e",
      "I",
      "i",
      "L",
      "l",
      "n",
      "P",
      "s",
      "arg-file",
      "delimiter",
      "eof",
      "replace",
      "max-lines",
      "max-args",
      "max-procs",
      "max-chars",
      "process-slot-var",
    ]),
    busybox: spec([]),
    strace: spec(["e", "o", "p", "s", "u", "E"]),
    flock: spec(["w", "E", "timeout", "conflict-exit-code"], { positionals: 1 }),
    watch: spec(["n", "d", "interval", "differences"]),
    proxychains: spec(["f"]),
    proxychains4: spec(["f"]),
    torsocks: spec([]),
  }),
);

/** A command word that is itself a substitution (`$(curl …)`) runs whatever it prints: reported as `eval`. */
const programName = (word: string) => (/\$\(|`|[<>]\(/.test(word) ? "eval" : basename(word));

const basename = (word: string) => {
  const slash = word.lastIndexOf("/");
  return (slash >= 0 ? word.slice(slash + 1) : word).toLowerCase();
};

/**
 * Lexical path normalization used for positional arguments: `$HOME` and `${HOME}` become `~`,
 * repeated slashes collapse, `.` and `..` segments are resolved, and a trailing slash is
 * dropped (`/usr/../` → `/`, `~/` → `~`, `./build/` → `build`). Words that do not look like
 * paths are returned unchanged.
 */
export function normalizeShellPath(word: string): string {
  let w = word;
  if (w.startsWith("$HOME") && (w.length === 5 || w[5] === "/")) w = `~${w.slice(5)}`;
  else if (w.startsWith("${HOME}") && (w.length === 7 || w[7] === "/")) w = `~${w.slice(7)}`;
  if (!w.includes("/") && w !== "~") return w;
  // Not a plain path: URLs, words with blanks, substitutions.
  if (/:\/\/|\s|\$\(|`|[<>]\(/.test(w)) return word;
  const absolute = w.startsWith("/");
  const home = w === "~" || w.startsWith("~/");
  const parts = (home ? w.slice(1) : w).split("/");
  const out: string[] = [];
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute && !home) out.push("..");
      continue;
    }
    out.push(part);
  }
  const body = out.join("/");
  if (absolute) return `/${body}`;
  if (home) return body.length === 0 ? "~" : `~/${body}`;
  return body.length === 0 ? "." : body;
}

/**
 * Options known to take a value, per program: their value is not a positional argument
 * (`pip install --index-url URL pkg` has the positional arguments `install pkg`). For other
 * programs the word after an option is both a candidate value and a positional argument.
 */
const VALUE_OPTIONS: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const pip = [
    "index-url",
    "extra-index-url",
    "i",
    "r",
    "requirement",
    "c",
    "constraint",
    "f",
    "find-links",
    "trusted-host",
    "t",
    "target",
    "prefix",
    "root",
    "src",
    "upgrade-strategy",
    "python-version",
    "platform",
    "abi",
    "implementation",
    "cache-dir",
    "log",
    "proxy",
    "retries",
    "timeout",
    "exists-action",
    "cert",
    "client-cert",
    "only-binary",
    "no-binary",
    "progress-bar",
    "report",
    "index",
    "default-index",
    "python",
    "p",
  ];
  const npm = ["registry", "prefix", "C", "dir", "filter", "F", "cache", "userconfig", "workspace", "w", "tag", "otp", "scope", "loglevel"];
  const table: Record<string, string[]> = {
    git: ["C", "c", "git-dir", "work-tree", "namespace", "exec-path", "config-env"],
    pip,
    pip3: pip,
    uv: pip,
    pipx: pip,
    npm,
    pnpm: npm,
    yarn: npm,
    bun: npm,
  };
  return new Map(Object.entries(table).map(([k, v]) => [k, new Set(v)]));
})();

function splitOptions(argv: readonly string[], program = ""): { args: string[]; flags: Set<string>; options: Map<string, string[]> } {
  const takesValue = VALUE_OPTIONS.get(program) ?? (/^pip3\.\d+$/.test(program) ? VALUE_OPTIONS.get("pip") : undefined);
  const args: string[] = [];
  const flags = new Set<string>();
  const options = new Map<string, string[]>();
  const addValue = (name: string, value: string | undefined) => {
    if (value === undefined) return;
    const list = options.get(name);
    if (list === undefined) options.set(name, [value]);
    else list.push(value);
  };
  let endOfOptions = false;
  for (let k = 1; k < argv.length; k++) {
    const word = argv[k]!;
    const next = argv[k + 1];
    const nextValue = next !== undefined && !next.startsWith("-") ? next : undefined;
    if (endOfOptions || word === "-" || !word.startsWith("-")) {
      args.push(normalizeShellPath(word));
      continue;
    }
    if (word === "--") {
      endOfOptions = true;
      continue;
    }
    if (word.startsWith("--")) {
      const eq = word.indexOf("=");
      const name = eq < 0 ? word.slice(2) : word.slice(2, eq);
      flags.add(name);
      if (!options.has(name)) options.set(name, []);
      addValue(name, eq < 0 ? nextValue : word.slice(eq + 1));
      if (eq < 0 && takesValue?.has(name) && next !== undefined) {
        addValue(name, next.startsWith("-") ? next : undefined);
        k++;
      }
      continue;
    }
    // A short cluster: `-rf` gives r, f and rf; `-ix` may be -i with value x; the last letter may take the next word.
    const body = word.slice(1);
    flags.add(body);
    for (const letter of body) flags.add(letter);
    const first = body[0]!;
    if (!options.has(first)) options.set(first, []);
    if (body.length > 1) addValue(first, body.slice(1));
    const last = body[body.length - 1]!;
    if (!options.has(last)) options.set(last, []);
    addValue(last, nextValue);
    if (body.length > 1) {
      if (!options.has(body)) options.set(body, []);
      addValue(body, nextValue);
    }
    if (body.length === 1 && takesValue?.has(body) && next !== undefined) {
      addValue(body, next.startsWith("-") ? next : undefined);
      k++;
    }
  }
  return { args, flags, options };
}

/** Skips the options of a wrapper; returns the index of the wrapped command word, or -1 when there is none. */
function skipWrapperOptions(words: readonly string[], from: number, wrapper: WrapperSpec): number {
  let k = from;
  while (k < words.length) {
    const word = words[k]!;
    if (word === "--") return k + 1;
    if (!word.startsWith("-") || word === "-") break;
    if (word.startsWith("--")) {
      const name = word.slice(2).split("=")[0]!;
      k += !word.includes("=") && wrapper.values.has(name) ? 2 : 1;
      continue;
    }
    let consumed = 1;
    for (let j = 1; j < word.length; j++) {
      if (wrapper.values.has(word[j]!)) {
        if (j === word.length - 1) consumed = 2;
        break;
      }
    }
    k += consumed;
  }
  if (wrapper.assignments) while (k < words.length && ASSIGNMENT.test(words[k]!)) k++;
  k += wrapper.positionals ?? 0;
  return k < words.length ? k : -1;
}

interface Stage {
  words: WordTok[];
  redirects: Redirect[];
}

interface Prepared {
  allWords: string[];
  program: string;
  argv: string[];
  wrappers: string[];
}

class Builder {
  readonly commands: SimpleCommand[] = [];
  constructor(readonly maxDepth: number) {}

  script(text: string, depth: number, outerConsumers: readonly string[]): void {
    if (depth > this.maxDepth || text.length === 0) return;
    const toks = lex(text);
    let pipeline: Stage[] = [];
    let stage: Stage = { words: [], redirects: [] };
    const endStage = () => {
      if (stage.words.length > 0 || stage.redirects.length > 0) pipeline.push(stage);
      stage = { words: [], redirects: [] };
    };
    const endPipeline = () => {
      endStage();
      const prepared = pipeline.map((s) => this.#prepare(s));
      for (let k = 0; k < prepared.length; k++) {
        const consumers: string[] = [];
        for (let j = k + 1; j < prepared.length; j++) if (prepared[j]!.program !== "") consumers.push(prepared[j]!.program);
        for (const c of outerConsumers) consumers.push(c);
        this.#stage(pipeline[k]!, prepared[k]!, depth, consumers);
      }
      pipeline = [];
    };
    for (const tok of toks) {
      if (tok.kind === "word") stage.words.push(tok);
      else if (tok.kind === "redir") stage.redirects.push(tok.redirect);
      else if (tok.op === "|" || tok.op === "|&") endStage();
      else endPipeline();
    }
    endPipeline();
  }

  /** Words, program and unwrapped argv of a stage (no nested parsing yet). */
  #prepare(stage: Stage): Prepared {
    const allWords = stage.words.map((w) => w.text);
    const commandWords = this.#commandWords(allWords);
    if (commandWords === undefined) return { allWords, program: "", argv: [], wrappers: [] };
    return { allWords, ...this.#unwrap(commandWords) };
  }

  /** Drops reserved words and assignments in front; undefined when the segment is not a command (for/case). */
  #commandWords(all: readonly string[]): string[] | undefined {
    let k = 0;
    while (k < all.length) {
      const w = all[k]!;
      if (SKIP_SEGMENT.has(w)) return undefined;
      if (w === "function") {
        k += 2;
        continue;
      }
      if (RESERVED.has(w) || ASSIGNMENT.test(w)) {
        k++;
        continue;
      }
      break;
    }
    return all.slice(k);
  }

  #unwrap(words: readonly string[]): { program: string; argv: string[]; wrappers: string[] } {
    let argv = [...words];
    const wrappers: string[] = [];
    for (let guard = 0; guard < 16 && argv.length > 0; guard++) {
      const name = basename(argv[0]!);
      const wrapper = WRAPPERS.get(name);
      if (wrapper !== undefined) {
        const at = skipWrapperOptions(argv, 1, wrapper);
        wrappers.push(name);
        if (at < 0) return { program: name, argv, wrappers: wrappers.slice(0, -1) };
        argv = argv.slice(at);
        continue;
      }
      // `python -m pip install …` runs the module as the program.
      if (name.startsWith("python") && /^python[0-9.]*$/.test(name)) {
        const m = argv.indexOf("-m");
        if (m > 0 && m + 1 < argv.length && argv.slice(1, m).every((w) => w.startsWith("-"))) {
          wrappers.push(name);
          argv = argv.slice(m + 1);
          continue;
        }
      }
      break;
    }
    return { program: argv.length > 0 ? programName(argv[0]!) : "", argv, wrappers };
  }

  #stage(stage: Stage, prepared: Prepared, depth: number, consumers: string[]): void {
    const { allWords, program, argv, wrappers } = prepared;
    const { args, flags, options } = splitOptions(argv, program);
    const command: SimpleCommand = {
      program,
      argv,
      args,
      flags,
      options,
      redirects: stage.redirects,
      words: stage.redirects.length === 0 ? allWords : [...allWords, ...stage.redirects.map((r) => r.target)],
      consumers,
      wrappers,
      depth,
    };
    if (argv.length > 0 || stage.redirects.length > 0) this.commands.push(command);

    // Substitutions run first; their output becomes part of this command.
    const subConsumers = program === "" ? consumers : [program, ...consumers];
    for (const word of stage.words) for (const sub of word.subs) this.script(sub, depth + 1, subConsumers);

    // Scripts this command hands to a shell.
    if (SHELLS.has(program)) {
      const script = shellScriptArg(argv);
      if (script !== undefined) this.script(script, depth + 1, consumers);
      else {
        for (const r of stage.redirects) {
          if ((r.op === "<<" || r.op === "<<-") && r.body !== undefined) this.script(r.body, depth + 1, consumers);
          if (r.op === "<<<") this.script(r.target, depth + 1, consumers);
        }
      }
    } else if (program === "eval" && argv[0] === "eval") this.script(argv.slice(1).join(" "), depth + 1, consumers);
    else if (program === "su") {
      const script = optionValue(argv, "c", "command");
      if (script !== undefined) this.script(script, depth + 1, consumers);
    } else if (wrappers.includes("env") || program === "env") {
      const split = optionValue(words(stage), "S", "split-string");
      if (split !== undefined) this.script(split, depth + 1, consumers);
    }
    // Text printed into a shell is run by it: `echo 'rm -rf /' | sh`, `cat <<EOF | bash`.
    if ((program === "echo" || program === "printf" || program === "cat") && consumers.some((c) => SHELLS.has(c) || c === "eval")) {
      const shellConsumers = consumers.slice(consumers.findIndex((c) => SHELLS.has(c) || c === "eval") + 1);
      if (program !== "cat")
        this.script(
          argv
            .slice(1)
            .filter((w) => !w.startsWith("-"))
            .join(" "),
          depth + 1,
          shellConsumers,
        );
      for (const r of stage.redirects) {
        if ((r.op === "<<" || r.op === "<<-") && r.body !== undefined) this.script(r.body, depth + 1, shellConsumers);
        if (r.op === "<<<") this.script(r.target, depth + 1, shellConsumers);
      }
    }
    if (program === "find") {
      for (let k = 1; k < argv.length; k++) {
        if (argv[k] === "-exec" || argv[k] === "-execdir" || argv[k] === "-ok" || argv[k] === "-okdir") {
          let end = k + 1;
          while (end < argv.length && argv[end] !== ";" && argv[end] !== "+") end++;
          const inner = argv.slice(k + 1, end);
          if (inner.length > 0 && depth + 1 <= this.maxDepth) {
            const innerStage: Stage = { words: inner.map((text) => ({ kind: "word", text, subs: [] })), redirects: [] };
            this.#stage(innerStage, this.#prepare(innerStage), depth + 1, [...consumers]);
          }
          k = end;
        }
      }
    }
  }
}

const words = (stage: Stage) => stage.words.map((w) => w.text);

/** `-c script` of a shell (also clustered, as in `-ec` or `-lc`). */
function shellScriptArg(argv: readonly string[]): string | undefined {
  for (let k = 1; k < argv.length; k++) {
    const w = argv[k]!;
    if (w === "--") return undefined;
    if (w.startsWith("--")) continue;
    if ((w.startsWith("-") || w.startsWith("+")) && w.length > 1) {
      if (w.startsWith("-") && w.slice(1).includes("c")) return argv[k + 1];
      if (w === "-o" || w === "+o" || w === "-O" || w === "+O") k++;
      continue;
    }
    return undefined;
  }
  return undefined;
}

function optionValue(argv: readonly string[], short: string, long: string): string | undefined {
  for (let k = 1; k < argv.length; k++) {
    const w = argv[k]!;
    if (w === `-${short}` || w === `--${long}`) return argv[k + 1];
    if (w.startsWith(`--${long}=`)) return w.slice(long.length + 3);
    if (w.startsWith(`-${short}`) && !w.startsWith("--")) return w.slice(2);
  }
  return undefined;
}

/** Splits a command line into simple commands (including those in substitutions and nested scripts). */
export function parseShell(text: string, options: ParseShellOptions = {}): SimpleCommand[] {
  const builder = new Builder(options.maxDepth ?? 4);
  builder.script(text, 0, []);
  return builder.commands;
}

/** Shell words of a command line (quotes removed, no expansion), for tests and tools. */
export function shellWords(text: string): string[] {
  return lex(text).flatMap((t) => (t.kind === "word" ? [t.text] : t.kind === "redir" ? [t.redirect.op, t.redirect.target] : [t.op]));
}

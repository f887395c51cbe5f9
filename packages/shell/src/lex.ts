/**
 * The lexer: a POSIX/bash command line as words, operators and redirections, with offsets.
 *
 * It understands single, double and `$'…'` quotes and backslash escapes; the operators `;`, `&`,
 * `&&`, `||`, `|`, `|&`, `;;`, `(`, `)` and newlines; redirections (`>`, `>>`, `>|`, `2>`, `&>`,
 * `&>>`, `<`, `<>`, `>&`, `<&`, here-documents `<<EOF` / `<<-EOF` with their bodies, here-strings
 * `<<<`); command and process substitutions (`$(…)`, backquotes, `<(…)`, `>(…)`), whose inner
 * text is collected for recursive parsing; `${…}` and `$((…))` kept inside their word; comments.
 *
 * Nothing is expanded. Nothing throws on odd input: an unterminated quote or substitution runs
 * to the end of the text. Every loop advances, so the lexer is linear in the input.
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

/** The text of a command or process substitution, for recursive parsing. */
export interface Substitution {
  readonly text: string;
  /** Offset of `text` in the lexed source. */
  readonly start: number;
}

/** A word of the command line with its quotes removed, and what it may expand to at run time. */
export interface WordToken {
  readonly kind: "word";
  /** The word after quote removal (substitutions and `${…}` kept as written). */
  readonly text: string;
  readonly subs: readonly Substitution[];
  readonly start: number;
  readonly end: number;
  /** Contains a parameter expansion or a substitution (`$X`, `${X}`, `$(…)`, backquotes, `<(…)`), quoted or not. */
  readonly expands: boolean;
  /** Contains an unquoted glob or brace-expansion character (`*`, `?`, `[`, `{`). */
  readonly pattern: boolean;
}

/** A control operator (`;`, `&`, `&&`, `||`, `|`, `|&`, `;;`, `(`, `)`) or a newline, with its offsets. */
export interface OperatorToken {
  readonly kind: "op";
  readonly op: string;
  readonly start: number;
  readonly end: number;
}

/** A redirection with its target word (already read) and its offsets, file descriptor included. */
export interface RedirectToken {
  readonly kind: "redir";
  readonly redirect: Redirect;
  /** Substitutions in the target (they still run). */
  readonly subs: readonly Substitution[];
  readonly start: number;
  readonly end: number;
}

/** What {@link lex} returns, in source order: words, operators and redirections. */
export type Token = WordToken | OperatorToken | RedirectToken;

const isBlank = (c: string | undefined) => c === " " || c === "\t" || c === "\r" || c === "\f" || c === "\v";
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
    else if (c === "`") i = findBacktick(src, i + 1);
    else if (c === "(") depth++;
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

/** Shared by every word and redirection without substitutions (most of them). */
const NO_SUBSTITUTIONS: readonly Substitution[] = Object.freeze([]);
const REDIRECT_OPS = ["<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">|", ">&", ">"];
/** Characters with no special meaning in a word. */
const PLAIN = /[^\s|&;()<>\\'"$`*?[{]+/y;
const VARIABLE = /[A-Za-z_0-9@*#?$!-]/;

/** Lexes a command line into tokens. */
export function lex(src: string): Token[] {
  const toks: Token[] = [];
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
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (strip) line = line.replace(/^\t+/, "");
        if (line === redirect.target) break;
        lines.push(line);
      }
      redirect.body = lines.join("\n");
    }
    if (i > n) i = n;
    pendingHeredocs.length = 0;
  };

  // State of the word being read; the helpers below are created once per line, not per word.
  let subs: Substitution[] | undefined;
  let expands = false;
  const substitution = (at: number, innerStart: number): number => {
    const end = skipParens(src, at);
    (subs ??= []).push({ text: src.slice(innerStart, Math.max(innerStart, end - 1)), start: innerStart });
    expands = true;
    return end;
  };
  const backquote = (at: number): number => {
    const end = findBacktick(src, at + 1);
    (subs ??= []).push({ text: src.slice(at + 1, end).replace(/\\([\\`$])/g, "$1"), start: at + 1 });
    expands = true;
    return Math.min(n, end + 1);
  };
  /** `$…` at `i` (unquoted or inside double quotes); returns the index after it, or -1 when `$` is literal. */
  const dollar = (): number => {
    const next = src[i + 1];
    if (next === "(") {
      if (src[i + 2] === "(") {
        expands = true;
        return skipParens(src, i + 1); // arithmetic: no command
      }
      return substitution(i + 1, i + 2);
    }
    if (next === "{") {
      expands = true;
      return skipBraces(src, i + 1);
    }
    if (next !== undefined && VARIABLE.test(next)) {
      expands = true;
      let j = i + 2;
      if (/[A-Za-z_]/.test(next)) while (j < n && /[A-Za-z_0-9]/.test(src[j]!)) j++;
      return j;
    }
    return -1;
  };

  const readWord = (): WordToken => {
    const start = i;
    let text = "";
    let pattern = false;
    subs = undefined;
    expands = false;
    while (i < n) {
      PLAIN.lastIndex = i;
      if (PLAIN.test(src)) {
        text += src.slice(i, PLAIN.lastIndex);
        i = PLAIN.lastIndex;
        if (i >= n) break;
      }
      const c = src[i]!;
      if (isBlank(c) || c === "\n" || isMeta(c)) break;
      if (c === "<" || c === ">") {
        if (src[i + 1] === "(") {
          const end = substitution(i + 1, i + 2);
          text += src.slice(i, end);
          i = end;
          continue;
        }
        break;
      }
      if (c === "*" || c === "?" || c === "[" || c === "{") {
        pattern = true;
        text += c;
        i++;
        continue;
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
          } else if (d === "$") {
            const end = dollar();
            if (end < 0) {
              text += d;
              i++;
            } else {
              text += src.slice(i, end);
              i = end;
            }
          } else if (d === "`") {
            const end = backquote(i);
            text += src.slice(i, end);
            i = end;
          } else {
            text += d;
            i++;
          }
        }
        i++;
        continue;
      }
      if (c === "$") {
        const end = dollar();
        if (end < 0) {
          text += c;
          i++;
        } else {
          text += src.slice(i, end);
          i = end;
        }
        continue;
      }
      if (c === "`") {
        const end = backquote(i);
        text += src.slice(i, end);
        i = end;
        continue;
      }
      text += c;
      i++;
    }
    if (i > n) i = n;
    return { kind: "word", text, subs: subs ?? NO_SUBSTITUTIONS, start, end: i, expands, pattern };
  };

  const readRedirect = (start: number, fd: string | undefined, ampersand: boolean) => {
    let op: string;
    if (ampersand) op = src.startsWith("&>>", i) ? "&>>" : "&>";
    else op = REDIRECT_OPS.find((candidate) => src.startsWith(candidate, i)) ?? src[i]!;
    i += op.length;
    while (i < n && isBlank(src[i])) i++;
    const target = i < n && !isMeta(src[i]) && src[i] !== "<" && src[i] !== ">" ? readWord() : undefined;
    const redirect: Redirect = { op, target: target?.text ?? "" };
    if (fd !== undefined) redirect.fd = fd;
    toks.push({ kind: "redir", redirect, subs: target?.subs ?? NO_SUBSTITUTIONS, start, end: i });
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
      const start = i;
      i++;
      if (pendingHeredocs.length > 0) readHeredocBodies();
      // A newline token ends after the here-document bodies it introduced.
      toks.push({ kind: "op", op: "\n", start, end: i });
      continue;
    }
    if (c === "#") {
      const end = src.indexOf("\n", i);
      i = end < 0 ? n : end;
      continue;
    }
    if ((c === "<" || c === ">") && src[i + 1] !== "(") {
      readRedirect(i, undefined, false);
      continue;
    }
    if (c === "&" && src[i + 1] === ">") {
      readRedirect(i, undefined, true);
      continue;
    }
    if (c === "|" || c === "&" || c === ";") {
      const two = src.slice(i, i + 2);
      const op = two === "||" || two === "&&" || two === "|&" || two === ";;" ? two : c;
      toks.push({ kind: "op", op, start: i, end: i + op.length });
      i += op.length;
      continue;
    }
    if (c === "(" || c === ")") {
      toks.push({ kind: "op", op: c, start: i, end: i + 1 });
      i++;
      continue;
    }
    const start = i;
    const word = readWord();
    // `2>file`: a word of digits directly followed by a redirection operator is a file descriptor.
    if ((src[i] === ">" || src[i] === "<") && src[i + 1] !== "(" && /^\d+$/.test(word.text) && /^\d+$/.test(src.slice(start, i))) {
      readRedirect(start, word.text, false);
      continue;
    }
    if (i === start) {
      // Defensive: a character no branch consumed (cannot happen for valid branches) still advances.
      i++;
      continue;
    }
    toks.push(word);
  }
  return toks;
}

/** Shell words of a command line (quotes removed, no expansion), operators and redirections as words. */
export function shellWords(text: string): string[] {
  return lex(text).flatMap((t) =>
    t.kind === "word" ? [t.text] : t.kind === "redir" ? [t.redirect.op, t.redirect.target] : [t.op === "\n" ? ";" : t.op],
  );
}

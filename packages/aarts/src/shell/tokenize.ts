/**
 * A POSIX-like shell tokenizer (adapter spec §3.4 "Tokenising"): splits a command line into
 * segments of words, removing quotes, redirections and heredoc bodies, and collecting the text
 * of command substitutions for recursive parsing. It is a parser for security *extraction*, not
 * an interpreter: no expansion is performed, and malformed input (an unterminated quote) never
 * throws; the rest of the text is taken literally.
 */

export interface ShellWord {
  /** The word after quote removal. */
  readonly text: string;
  /** Offset of the word's first character in the parsed text. */
  readonly start: number;
  /**
   * Index in `text` of the first character that came from a quoted or escaped part; `-1` when
   * the word is entirely unquoted. Operators (redirections) are only recognised before it.
   */
  readonly firstQuoted: number;
}

export interface ShellSegment {
  /** Words of the simple command, redirections and their targets removed. */
  readonly words: readonly string[];
  /** Offsets of the segment in the parsed text (`end` exclusive). */
  readonly start: number;
  readonly end: number;
  /** The operator that ended the segment: `&&`, `||`, `;`, `|`, `|&`, `&`, newline, `(`, `)`, or undefined at the end. */
  readonly operator?: string;
}

export interface ShellSubstitution {
  /** The command text inside `$( … )`, backquotes, `<( … )` or `>( … )`. */
  readonly text: string;
  /** Offset of `text` in the parsed text. */
  readonly start: number;
}

export interface TokenizedShell {
  readonly segments: readonly ShellSegment[];
  readonly substitutions: readonly ShellSubstitution[];
}

/** A word that is a redirection (spec §3.4 rule 3), after quote removal. */
const REDIRECTION = /^[0-9]*(>>?|<<?|>&|<&|&>>?)([0-9-]*|.+)$/s;
/** Operators in the order of longest match first. */
const REDIRECT_OPS = ["&>>", "&>", ">>", ">&", ">|", "<<", "<&", ">", "<"];

interface RedirectionInfo {
  /** True when the operator word has no target of its own (the next word is the target). */
  needsTarget: boolean;
  /** Heredoc: the delimiter (may be empty when it is the next word) and whether leading tabs are stripped. */
  heredoc?: { delimiter: string; stripTabs: boolean };
}

/** Classifies a word as a redirection, or returns undefined. */
export function redirectionOf(word: ShellWord): RedirectionInfo | undefined {
  const text = word.text;
  if (!REDIRECTION.test(text)) return undefined;
  let i = 0;
  while (i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
  const op = REDIRECT_OPS.find((candidate) => text.startsWith(candidate, i));
  if (op === undefined) return undefined;
  const opEnd = i + op.length;
  // The operator itself must be unquoted (`echo '>'` is an argument, not a redirection).
  if (word.firstQuoted !== -1 && word.firstQuoted < opEnd) return undefined;
  let rest = text.slice(opEnd);
  if (op === "<<") {
    if (rest.startsWith("<")) return { needsTarget: rest.length === 1 }; // here-string `<<<word`
    const stripTabs = rest.startsWith("-");
    if (stripTabs) rest = rest.slice(1);
    return { needsTarget: rest.length === 0, heredoc: { delimiter: rest, stripTabs } };
  }
  return { needsTarget: rest.length === 0 };
}

const isBlank = (c: string) => c === " " || c === "\t" || c === "\r" || c === "\f" || c === "\v";

/**
 * Finds the end of a `$( … )` / `<( … )` group starting after its opening parenthesis at `i`.
 * Returns the index of the matching `)` (or the text length when unterminated).
 */
function matchParen(s: string, i: number): number {
  let depth = 1;
  let quote: string | undefined;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === "\\") {
      i++;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i;
  }
  return s.length;
}

/** Finds the closing backquote for one opened before `i`. */
function matchBackquote(s: string, i: number): number {
  for (; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === "`") return i;
  }
  return s.length;
}

/** Tokenizes a command line into segments (spec §3.4 tokenising rules 1–5). */
export function tokenizeShell(s: string): TokenizedShell {
  const segments: ShellSegment[] = [];
  const substitutions: ShellSubstitution[] = [];
  let words: ShellWord[] = [];
  /** Words since the last newline, for heredoc detection. */
  let lineWords: ShellWord[] = [];
  let cur = "";
  let inWord = false;
  let wordStart = 0;
  let firstQuoted = -1;
  let segStart = 0;

  const startWord = (at: number) => {
    if (!inWord) {
      inWord = true;
      wordStart = at;
      firstQuoted = -1;
    }
  };
  const quotedChar = (c: string) => {
    if (firstQuoted === -1) firstQuoted = cur.length;
    cur += c;
  };
  const endWord = () => {
    if (!inWord) return;
    const word: ShellWord = { text: cur, start: wordStart, firstQuoted };
    words.push(word);
    lineWords.push(word);
    cur = "";
    inWord = false;
  };
  const endSegment = (operator: string | undefined, at: number, next: number) => {
    endWord();
    segments.push({ words: removeRedirections(words), start: segStart, end: at, ...(operator === undefined ? {} : { operator }) });
    words = [];
    segStart = next;
  };
  /** Skips heredoc bodies announced on the line that just ended; returns the new index. */
  const skipHeredocs = (i: number): number => {
    const found: { delimiter: string; stripTabs: boolean }[] = [];
    for (let w = 0; w < lineWords.length; w++) {
      const info = redirectionOf(lineWords[w]!);
      if (info?.heredoc === undefined) continue;
      const delimiter = info.heredoc.delimiter !== "" ? info.heredoc.delimiter : (lineWords[w + 1]?.text ?? "");
      if (delimiter !== "") found.push({ delimiter, stripTabs: info.heredoc.stripTabs });
    }
    lineWords = [];
    for (const { delimiter, stripTabs } of found) {
      while (i < s.length) {
        let nl = s.indexOf("\n", i);
        if (nl === -1) nl = s.length;
        let line = s.slice(i, nl);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (stripTabs) line = line.replace(/^\t+/, "");
        i = nl + 1;
        if (line === delimiter) break;
      }
    }
    return Math.min(i, s.length);
  };

  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    // ---- quoting
    if (c === "'") {
      startWord(i);
      const close = s.indexOf("'", i + 1);
      const end = close === -1 ? s.length : close;
      if (firstQuoted === -1) firstQuoted = cur.length;
      cur += s.slice(i + 1, end);
      i = end + 1;
      continue;
    }
    if (c === '"') {
      startWord(i);
      if (firstQuoted === -1) firstQuoted = cur.length;
      i++;
      while (i < s.length && s[i] !== '"') {
        const d = s[i]!;
        if (d === "\\" && i + 1 < s.length) {
          const e = s[i + 1]!;
          if (e === '"' || e === "\\" || e === "$" || e === "`") {
            cur += e;
            i += 2;
            continue;
          }
          if (e === "\n") {
            i += 2;
            continue;
          }
          cur += d;
          i++;
          continue;
        }
        if (d === "$" && s[i + 1] === "(") {
          i = substitution(i, "$(");
          continue;
        }
        if (d === "`") {
          i = backquote(i);
          continue;
        }
        cur += d;
        i++;
      }
      i++;
      continue;
    }
    if (c === "\\") {
      if (s[i + 1] === "\n") {
        i += 2;
        continue;
      }
      startWord(i);
      if (i + 1 < s.length) quotedChar(s[i + 1]!);
      i += 2;
      continue;
    }
    // ---- expansions that may contain blanks or operators
    if (c === "$" && s[i + 1] === "(") {
      startWord(i);
      i = substitution(i, "$(");
      continue;
    }
    if ((c === "<" || c === ">") && s[i + 1] === "(" && !inWord) {
      startWord(i);
      i = substitution(i, `${c}(`);
      continue;
    }
    if (c === "`") {
      startWord(i);
      i = backquote(i);
      continue;
    }
    if (c === "$" && s[i + 1] === "{") {
      startWord(i);
      const close = s.indexOf("}", i + 2);
      const end = close === -1 ? s.length : close + 1;
      cur += s.slice(i, end);
      i = end;
      continue;
    }
    // ---- comments
    if (c === "#" && !inWord) {
      const nl = s.indexOf("\n", i);
      i = nl === -1 ? s.length : nl;
      continue;
    }
    // ---- blanks and operators
    if (isBlank(c)) {
      endWord();
      i++;
      continue;
    }
    if (c === "\n") {
      endSegment("\n", i, i + 1);
      i = skipHeredocs(i + 1);
      segStart = i;
      continue;
    }
    if (c === ";") {
      endSegment(";", i, i + 1);
      i++;
      continue;
    }
    if (c === "|") {
      const op = s[i + 1] === "|" ? "||" : s[i + 1] === "&" ? "|&" : "|";
      // `>|` is a redirection operator (clobber), not a pipe.
      if (op === "|" && inWord && cur.endsWith(">") && (firstQuoted === -1 || firstQuoted < cur.length - 1)) {
        cur += c;
        i++;
        continue;
      }
      endSegment(op, i, i + op.length);
      i += op.length;
      continue;
    }
    if (c === "&") {
      if (s[i + 1] === "&") {
        endSegment("&&", i, i + 2);
        i += 2;
        continue;
      }
      // `>&`, `<&` (redirection continues) and `&>`, `&>>` (redirection starts).
      const unquotedTail = inWord && (firstQuoted === -1 || firstQuoted === cur.length) && /[<>]$/.test(cur);
      if (unquotedTail || s[i + 1] === ">") {
        if (s[i + 1] === ">" && !unquotedTail) endWord();
        startWord(i);
        cur += c;
        i++;
        continue;
      }
      endSegment("&", i, i + 1);
      i++;
      continue;
    }
    if (c === "(" || c === ")") {
      endSegment(c, i, i + 1);
      i++;
      continue;
    }
    if ((c === ">" || c === "<") && inWord && !/^[0-9]*$/.test(cur) && !/[<>&]$/.test(cur)) {
      // `cmd>file`: the operator starts a new word.
      endWord();
    }
    startWord(i);
    cur += c;
    i++;
  }
  endSegment(undefined, s.length, s.length);
  return { segments: segments.filter((seg) => seg.words.length > 0), substitutions };

  function substitution(at: number, opener: string): number {
    const innerStart = at + opener.length;
    if (opener === "$(" && s[innerStart] === "(") {
      // `$(( … ))` is arithmetic, not a command.
      const close = matchParen(s, innerStart + 1);
      const end = Math.min(s.length, close + 2);
      cur += s.slice(at, end);
      return end;
    }
    const close = matchParen(s, innerStart);
    substitutions.push({ text: s.slice(innerStart, close), start: innerStart });
    const end = Math.min(s.length, close + 1);
    cur += s.slice(at, end);
    return end;
  }

  function backquote(at: number): number {
    const close = matchBackquote(s, at + 1);
    substitutions.push({ text: s.slice(at + 1, close).replace(/\\([\\`$])/g, "$1"), start: at + 1 });
    const end = Math.min(s.length, close + 1);
    cur += s.slice(at, end);
    return end;
  }
}

/** Drops redirection words and, for operators without an attached target, the following word. */
function removeRedirections(words: readonly ShellWord[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const info = redirectionOf(words[i]!);
    if (info === undefined) {
      out.push(words[i]!.text);
      continue;
    }
    if (info.needsTarget) i++;
  }
  return out;
}

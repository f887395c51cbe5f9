/**
 * The segment view of a command line: the words of each simple command between operators, with
 * offsets, and the substitutions to parse recursively. It is what the AARTS adapter's
 * `package_install` derivation and URL artifacts use (adapter spec §3.4, §3.5); the policy uses
 * {@link parseShell}. Both come from the same lexer.
 */
import { lex, type Substitution } from "./lex.js";

/** The words of one simple command between operators (redirections left out), with its offsets. */
export interface ShellSegment {
  /** Words of the simple command, redirections and their targets removed. */
  readonly words: readonly string[];
  /** Offsets of the segment in the parsed text (`end` exclusive). */
  readonly start: number;
  readonly end: number;
  /** The operator that ended the segment: `&&`, `||`, `;`, `;;`, `|`, `|&`, `&`, newline, `(`, `)`, or undefined at the end. */
  readonly operator?: string;
}

/** A top-level command or process substitution of a line: its inner text and where it starts (the AARTS adapter's name for {@link Substitution}). */
export type ShellSubstitution = Substitution;

/** The segment view of a command line, as {@link tokenizeShell} returns it. */
export interface TokenizedShell {
  /** Segments with at least one word, in order. */
  readonly segments: readonly ShellSegment[];
  /** Top-level command and process substitutions (not arithmetic `$((…))`), in order. */
  readonly substitutions: readonly ShellSubstitution[];
}

/** Splits a command line into segments of words and collects its substitutions. */
export function tokenizeShell(text: string): TokenizedShell {
  const segments: ShellSegment[] = [];
  const substitutions: ShellSubstitution[] = [];
  let words: string[] = [];
  let start = 0;
  for (const tok of lex(text)) {
    if (tok.kind === "word") {
      words.push(tok.text);
      for (const sub of tok.subs) substitutions.push(sub);
    } else if (tok.kind === "redir") {
      for (const sub of tok.subs) substitutions.push(sub);
    } else {
      if (words.length > 0) segments.push({ words, start, end: tok.start, operator: tok.op });
      words = [];
      start = tok.end;
    }
  }
  if (words.length > 0) segments.push({ words, start, end: text.length });
  return { segments, substitutions };
}

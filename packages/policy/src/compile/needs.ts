/**
 * What an event must have for a rule to match at all, read from the rule's `match` at compile
 * time: a shell command line, one of a set of programs in it, a command writing a file, an
 * unanalysable command, a tool call writing a file, a code-execution tool. The engine checks
 * these facts (each computed once per evaluation) before the rule's own conditions, so a rule
 * about `systemctl` costs one lookup on a line running `npm test`, and a rule about file tools
 * one test on a shell call. The facts only ever skip a rule whose conditions could not hold.
 */
import { hasGlobSyntax } from "../glob.js";
import type { PolicyMatchInput, ShellMatch } from "../schema.js";
import type { Predicate } from "./conditions.js";
import type { EvalContext } from "./context.js";

/** The facts a match requires; a member left out requires nothing. */
export interface Needs {
  /** A command line at the default shell fields (analysed or not). */
  readonly shell?: true;
  /** One of these programs (lower case) among the analysed commands. */
  readonly programs?: ReadonlySet<string>;
  /** An analysed command that writes a file (`SimpleCommand.writes`). */
  readonly shellWrites?: true;
  /** A command that cannot be analysed (an opaque reason, or a line not analysed). */
  readonly opaque?: true;
  /** A tool call that changes files (`ToolCall.writes`). */
  readonly callWrites?: true;
  /** A code-execution tool call. */
  readonly code?: true;
}

const NONE: Needs = Object.freeze({});

const plainNames = (v: string | string[] | undefined): ReadonlySet<string> | undefined => {
  if (v === undefined) return undefined;
  const names = typeof v === "string" ? [v] : v;
  return names.some(hasGlobSyntax) ? undefined : new Set(names.map((n) => n.toLowerCase()));
};

function shellNeeds(m: ShellMatch): Needs {
  // Another list of texts than the default one: nothing is known about them here.
  if (m.fields !== undefined) return NONE;
  const out: { -readonly [K in keyof Needs]: Needs[K] } = { shell: true };
  // A line condition or a `too-long` reason also matches lines that were not analysed.
  const unanalysed = m.line !== undefined || m.opaque === true || (Array.isArray(m.opaque) && m.opaque.includes("too-long"));
  if (!unanalysed) {
    out.programs = plainNames(m.program) ?? plainNames(m.piped_to);
    if (out.programs === undefined) delete out.programs;
    if (m.writes !== undefined) out.shellWrites = true;
  }
  if (m.opaque === true || (Array.isArray(m.opaque) && m.opaque.length > 0)) out.opaque = true;
  return out;
}

/** Both sets of needs (the smaller program set is kept: either one must be met). */
function both(a: Needs, b: Needs): Needs {
  if (a === NONE) return b;
  if (b === NONE) return a;
  const programs =
    a.programs === undefined ? b.programs : b.programs === undefined || a.programs.size <= b.programs.size ? a.programs : b.programs;
  return {
    ...(a.shell || b.shell ? { shell: true } : {}),
    ...(programs === undefined ? {} : { programs }),
    ...(a.shellWrites || b.shellWrites ? { shellWrites: true } : {}),
    ...(a.opaque || b.opaque ? { opaque: true } : {}),
    ...(a.callWrites || b.callWrites ? { callWrites: true } : {}),
    ...(a.code || b.code ? { code: true } : {}),
  };
}

/** What every branch of an `any` needs (programs: the union, when every branch names some). */
function either(list: readonly Needs[]): Needs {
  if (list.length === 0) return NONE;
  let programs: Set<string> | undefined = new Set();
  for (const n of list) {
    if (n.programs === undefined) programs = undefined;
    else if (programs !== undefined) for (const p of n.programs) programs.add(p);
  }
  const all = (k: "shell" | "shellWrites" | "opaque" | "callWrites" | "code") => list.every((n) => n[k] === true);
  const out = {
    ...(all("shell") ? { shell: true as const } : {}),
    ...(programs === undefined ? {} : { programs }),
    ...(all("shellWrites") ? { shellWrites: true as const } : {}),
    ...(all("opaque") ? { opaque: true as const } : {}),
    ...(all("callWrites") ? { callWrites: true as const } : {}),
    ...(all("code") ? { code: true as const } : {}),
  };
  return Object.keys(out).length === 0 ? NONE : out;
}

/** The facts a `match` requires of an event. */
export function needsOf(m: PolicyMatchInput): Needs {
  let out = NONE;
  if (m.shell !== undefined) out = both(out, shellNeeds(m.shell));
  const tc = m.tool_call;
  if (tc !== undefined) {
    if (tc.writes !== undefined || tc.writes_outside_workspace !== undefined) out = both(out, { callWrites: true });
    if (tc.code === true) out = both(out, { code: true });
  }
  if (m.all !== undefined) for (const x of m.all) out = both(out, needsOf(x));
  if (m.any !== undefined) out = both(out, either(m.any.map(needsOf)));
  return out;
}

/** The check of `needs` against an evaluation, cheapest facts first; undefined when nothing is needed. */
export function compileNeeds(needs: Needs): Predicate | undefined {
  const tests: Predicate[] = [];
  if (needs.code) tests.push((ctx) => ctx.hasCode);
  if (needs.callWrites) tests.push((ctx) => ctx.hasCallWrites);
  if (needs.shell) tests.push((ctx) => ctx.shellTexts.length > 0);
  const programs = needs.programs;
  if (programs !== undefined)
    tests.push((ctx: EvalContext) => {
      for (const p of ctx.programs) if (programs.has(p)) return true;
      return false;
    });
  if (needs.shellWrites) tests.push((ctx) => ctx.hasShellWrites);
  if (needs.opaque) tests.push((ctx) => ctx.hasOpaque);
  if (tests.length === 0) return undefined;
  if (tests.length === 1) return tests[0];
  return (ctx) => {
    for (const t of tests) if (!t(ctx)) return false;
    return true;
  };
}

/**
 * Conditions on single values (`equals`, `one_of`, `glob`, `regex`, `contains`, comparisons,
 * `exists`, `not`) and numbers, name globs, and the collector of problems found while compiling.
 */
import { compileGlobs, hasGlobSyntax } from "../glob.js";
import type { PolicyIssue } from "../errors.js";
import { jsonEqual } from "../json.js";
import { compileRegex } from "../regex.js";
import type { FieldConditionInput, NumberCondition } from "../schema.js";
import type { EvalContext } from "./context.js";

/** Where in the policy document a compiled part comes from (for issues). */
export type DocPath = (string | number)[];
/** A compiled condition on one evaluation. */
export type Predicate = (ctx: EvalContext) => boolean;
/** A compiled condition on one value. */
export type ValueTest = (value: unknown) => boolean;

export class Issues {
  readonly list: PolicyIssue[] = [];
  constructor(readonly ruleId: (path: DocPath) => string | undefined) {}
  add(path: DocPath, message: string, key = false): void {
    const ruleId = this.ruleId(path);
    const issue: PolicyIssue & { key?: boolean } = { message, path: [...path] };
    if (ruleId !== undefined) issue.ruleId = ruleId;
    if (key) issue.key = true;
    this.list.push(issue);
  }
  /** Runs `fn`, turning a thrown Error into an issue at `path`. */
  guard<T>(path: DocPath, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (error) {
      this.add(path, (error as Error).message);
      return undefined;
    }
  }
}

export const asList = (v: string | string[]): string[] => (typeof v === "string" ? [v] : v);

/**
 * Case-insensitive name globs (programs, tools): a Set lookup when no entry uses glob syntax,
 * else one compiled regex.
 */
export function nameMatcher(globs: readonly string[]): (lowerCaseName: string) => boolean {
  const literal = new Set(globs.filter((g) => !hasGlobSyntax(g)).map((g) => g.toLowerCase()));
  const simple: ((name: string) => boolean)[] = [];
  const patterns: string[] = [];
  for (const g of globs) {
    if (!hasGlobSyntax(g)) continue;
    const test = simpleGlob(g);
    if (test === undefined) patterns.push(g);
    else simple.push(test);
  }
  const re = patterns.length === 0 ? undefined : compileGlobs(patterns, { ignoreCase: true });
  if (simple.length === 0) return re === undefined ? (name) => literal.has(name) : (name) => literal.has(name) || re.test(name);
  return (name) => {
    if (literal.has(name)) return true;
    for (const t of simple) if (t(name)) return true;
    return re !== undefined && re.test(name);
  };
}

const SIMPLE_GLOB = /^(\*?)([\x20-\x7e]+?)(\*?)$/;

/**
 * `prefix*`, `*suffix` and `*part*` with a plain ASCII part, as string tests on a lower-case
 * name (what the regex would answer: `*` never crosses `/`); undefined for any other glob.
 */
function simpleGlob(glob: string): ((lowerCaseName: string) => boolean) | undefined {
  const m = SIMPLE_GLOB.exec(glob);
  if (m === null || /[*?[\]{}\\/]/.test(m[2]!)) return undefined;
  const part = m[2]!.toLowerCase();
  const leading = m[1] === "*";
  const trailing = m[3] === "*";
  if (leading && trailing) return (name) => name.includes(part) && !name.includes("/");
  if (leading) return (name) => name.endsWith(part) && !name.includes("/");
  if (trailing) return (name) => name.startsWith(part) && !name.includes("/");
  return undefined;
}
const ALWAYS: ValueTest = () => true;
const NEVER: ValueTest = () => false;

export function and(tests: ValueTest[]): ValueTest {
  if (tests.length === 0) return ALWAYS;
  if (tests.length === 1) return tests[0]!;
  return (v) => {
    for (const t of tests) if (!t(v)) return false;
    return true;
  };
}

export function andP(preds: Predicate[]): Predicate {
  if (preds.length === 0) return () => true;
  if (preds.length === 1) return preds[0]!;
  return (ctx) => {
    for (const p of preds) if (!p(ctx)) return false;
    return true;
  };
}

function numberTest(c: NumberCondition | FieldConditionInput): ((n: number) => boolean)[] {
  const out: ((n: number) => boolean)[] = [];
  const { lt, lte, gt, gte } = c;
  if (lt !== undefined) out.push((n) => n < lt);
  if (lte !== undefined) out.push((n) => n <= lte);
  if (gt !== undefined) out.push((n) => n > gt);
  if (gte !== undefined) out.push((n) => n >= gte);
  return out;
}

export function compileNumberCondition(c: NumberCondition, at: DocPath, issues: Issues): (n: number | undefined) => boolean {
  const tests = numberTest(c);
  if (c.equals !== undefined) {
    const eq = c.equals;
    tests.push((n) => n === eq);
  }
  if (c.one_of !== undefined) {
    const set = new Set(c.one_of);
    tests.push((n) => set.has(n));
  }
  if (tests.length === 0) issues.add(at, "empty numeric condition: give at least one of equals, one_of, lt, lte, gt, gte");
  return (n) => {
    if (typeof n !== "number") return false;
    for (const t of tests) if (!t(n)) return false;
    return true;
  };
}

export function compileFieldCondition(c: FieldConditionInput, at: DocPath, issues: Issues, maxLen: number): ValueTest {
  const tests: ValueTest[] = [];
  const ic = c.ignore_case === true;
  const cut = (s: string) => (s.length > maxLen ? s.slice(0, maxLen) : s);
  const norm = (v: unknown) => (ic && typeof v === "string" ? v.toLowerCase() : v);
  if (c.equals !== undefined) {
    const expected = norm(c.equals);
    tests.push((v) => jsonEqual(norm(v), expected));
  }
  if (c.one_of !== undefined) {
    const options = c.one_of.map(norm);
    const strings = options.every((o) => typeof o === "string") ? new Set(options) : undefined;
    tests.push(
      strings !== undefined
        ? (v) => typeof v === "string" && strings.has(norm(v) as string)
        : (v) => options.some((o) => jsonEqual(norm(v), o)),
    );
  }
  // Substring tests first: every test must hold, and `contains` is the cheapest of the string tests.
  if (c.contains !== undefined) {
    const needles = asList(c.contains).map((n) => (ic ? n.toLowerCase() : n));
    tests.push((v) => {
      if (typeof v === "string") {
        const s = ic ? cut(v).toLowerCase() : cut(v);
        for (const n of needles) if (s.includes(n)) return true;
        return false;
      }
      if (Array.isArray(v)) return v.some((item) => typeof item === "string" && needles.includes(ic ? item.toLowerCase() : item));
      return false;
    });
  }
  if (c.glob !== undefined) {
    const re = issues.guard([...at, "glob"], () => compileGlobs(asList(c.glob!), { ignoreCase: ic }));
    tests.push(re === undefined ? NEVER : (v) => typeof v === "string" && re.test(cut(v)));
  }
  if (c.regex !== undefined) {
    const list = asList(c.regex);
    const res = list.map((source, k) =>
      issues.guard([...at, "regex", ...(typeof c.regex === "string" ? [] : [k])], () => compileRegex(source, ic)),
    );
    const ok = res.filter((r): r is RegExp => r !== undefined);
    tests.push((v) => {
      if (typeof v !== "string") return false;
      const s = cut(v);
      for (const r of ok) if (r.test(s)) return true;
      return false;
    });
  }
  const numeric = numberTest(c);
  if (numeric.length > 0) tests.push((v) => typeof v === "number" && numeric.every((t) => t(v)));
  if (c.exists !== undefined) {
    const want = c.exists;
    tests.push((v) => (v !== undefined && v !== null) === want);
  }
  if (c.not !== undefined) {
    const inner = compileFieldCondition(c.not, [...at, "not"], issues, maxLen);
    tests.push((v) => !inner(v));
  }
  if (tests.length === 0)
    issues.add(at, "empty condition: give at least one operator (equals, one_of, glob, regex, contains, lt, lte, gt, gte, exists, not)");
  return and(tests);
}

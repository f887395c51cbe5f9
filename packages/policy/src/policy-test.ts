/**
 * Policy unit tests: a YAML (or JSON) file names a policy and lists cases, each an event and
 * what the policy must decide (decision tag, rule id, a reason substring). The cases of a file
 * run in order against one engine on a test clock, so session state carries over from case to
 * case: the fourth call inside a rate limit's burst of three is deferred.
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { AhpEvent } from "@ahp/core";
import { DEFAULT_POLICY } from "./default-policy.js";
import { PolicyEngine } from "./engine.js";
import { PolicyError, type PolicyIssue } from "./errors.js";
import { zodIssues, type LocatedIssue } from "./issues.js";
import { loadPolicy, loadPolicyFile, type CompiledPolicy } from "./load.js";
import { PolicyTestFileSchema, type PolicyTestCase, type PolicyTestFile } from "./policy-test-schema.js";
import { decisionTag } from "./shadow.js";
import { parseSource, type SourceLocator } from "./source.js";

/** The outcome of one case. */
export interface PolicyTestCaseResult {
  name: string;
  /** Position in the file's `cases`. */
  index: number;
  /** Line of the case in the test file, when known. */
  line?: number;
  ok: boolean;
  /** What did not hold, one sentence each (empty when ok). */
  failures: string[];
  /** What the policy decided. */
  decision: unknown;
  ruleId: string | undefined;
}

/** The outcome of one test file. */
export interface PolicyTestFileResult {
  file: string;
  /** The policy file tested (`default` for the built-in one). */
  policy: string;
  cases: PolicyTestCaseResult[];
  passed: number;
  failed: number;
}

/** A parsed test file with the positions of its cases. */
export interface ParsedPolicyTests {
  tests: PolicyTestFile;
  lines: (number | undefined)[];
}

const DEFAULT_START = "2026-01-01T00:00:00Z";

function located(issues: LocatedIssue[], locator: SourceLocator | undefined): PolicyIssue[] {
  return issues.map(({ key, ...issue }) => {
    const pos = locator?.locate(issue.path, { key: key === true });
    return pos === undefined ? issue : { ...issue, line: pos.line, column: pos.column };
  });
}

/** Parses and validates a test file's text; throws {@link PolicyError} naming file, line and column. */
export function parsePolicyTests(text: string, file?: string): ParsedPolicyTests {
  const { value, locator } = parseSource(text, file);
  const parsed = PolicyTestFileSchema.safeParse(value);
  if (!parsed.success) throw new PolicyError(located(zodIssues(parsed.error.issues, value), locator), file === undefined ? {} : { file });
  const problems: LocatedIssue[] = [];
  parsed.data.cases.forEach((c, i) => {
    const at = ["cases", i];
    const forms = [c.event !== undefined, c.command !== undefined, c.input !== undefined].filter(Boolean).length;
    if (forms > 1) problems.push({ message: "give one of `event`, `command` or `tool` with `input`", path: at });
    if (forms === 0 && c.tool === undefined)
      problems.push({ message: "a case needs `event`, `command` or `tool` (with `input`)", path: at });
    if (c.event !== undefined && c.tool !== undefined)
      problems.push({ message: "`tool` is a shorthand; with `event`, put the tool in the payload", path: [...at, "tool"] });
    const e = c.expect;
    if (e.decision === undefined && e.rule === undefined && e.reason === undefined) {
      problems.push({ message: "`expect` needs `decision`, `rule` or `reason`", path: [...at, "expect"] });
    }
  });
  if (problems.length > 0) throw new PolicyError(located(problems, locator), file === undefined ? {} : { file });
  return { tests: parsed.data, lines: parsed.data.cases.map((_, i) => locator.locate(["cases", i])?.line) };
}

/** The event a case stands for (shorthands expanded, defaults filled in). */
export function caseEvent(c: PolicyTestCase, session: string, timestamp: string): AhpEvent {
  const base = { session_id: c.session ?? session, agent_id: "test-agent", depth: 0, timestamp };
  if (c.event !== undefined) return { ...base, payload: {}, ...c.event };
  const payload =
    c.command !== undefined
      ? { tool_name: c.tool ?? "bash", arguments: { command: c.command } }
      : { tool_name: c.tool, arguments: c.input ?? {} };
  return { ...base, event_type: "pre_action", payload };
}

const show = (v: unknown) => (v === undefined ? "nothing" : JSON.stringify(v));

/** Runs the cases in order against `policy` (one engine, one test clock). */
export function runPolicyTests(parsed: ParsedPolicyTests, policy: CompiledPolicy, file: string, policyName: string): PolicyTestFileResult {
  const { tests, lines } = parsed;
  let now = Date.parse(tests.start_time ?? DEFAULT_START);
  const engine = new PolicyEngine(policy, { clock: () => now });
  const session = tests.session ?? "test";
  const cases = tests.cases.map((c, index): PolicyTestCaseResult => {
    now += c.advance_ms ?? 0;
    const event = caseEvent(c, session, new Date(now).toISOString());
    const failures: string[] = [];
    let decision: unknown;
    let ruleId: string | undefined;
    try {
      const result = engine.evaluate(event);
      decision = result.decision;
      ruleId = result.source === "rule" ? result.ruleId : undefined;
    } catch (error) {
      failures.push(`the event could not be evaluated: ${(error as Error).message}`);
    }
    if (failures.length === 0) {
      const e = c.expect;
      const tag = decisionTag(decision);
      if (e.decision !== undefined && e.decision !== tag) failures.push(`expected decision ${e.decision}, got ${tag}`);
      if (e.rule !== undefined && e.rule !== (ruleId ?? null)) {
        failures.push(
          `expected ${e.rule === null ? "no rule" : `rule ${e.rule}`}, got ${ruleId === undefined ? "no rule" : `rule ${ruleId}`}`,
        );
      }
      if (e.reason !== undefined) {
        const reason = (decision as { reason?: unknown } | undefined)?.reason;
        if (typeof reason !== "string" || !reason.includes(e.reason)) {
          failures.push(
            `expected a reason containing ${JSON.stringify(e.reason)}, got ${typeof reason === "string" ? JSON.stringify(reason) : "no reason"}`,
          );
        }
      }
    }
    const out: PolicyTestCaseResult = { name: c.name, index, ok: failures.length === 0, failures, decision, ruleId };
    const line = lines[index];
    if (line !== undefined) out.line = line;
    return out;
  });
  const failed = cases.filter((c) => !c.ok).length;
  return { file, policy: policyName, cases, passed: cases.length - failed, failed };
}

/**
 * Reads a test file, loads the policy it names (relative to the file; `default` is the built-in
 * policy) and runs its cases. Throws {@link PolicyError} for an invalid test file or policy.
 */
export async function runPolicyTestFile(file: string): Promise<PolicyTestFileResult> {
  const parsed = parsePolicyTests(await readFile(file, "utf8"), file);
  const name = parsed.tests.policy;
  const policy = name === "default" ? loadPolicy(DEFAULT_POLICY) : await loadPolicyFile(resolve(dirname(file), name));
  return runPolicyTests(parsed, policy, file, name);
}

/** One failure as printed by `ahp policy test`: where, which case, what did not hold, what was decided. */
export function formatPolicyTestFailure(result: PolicyTestFileResult, c: PolicyTestCaseResult): string {
  const where = `${result.file}${c.line === undefined ? "" : `:${c.line}`}`;
  const decided = `decided: ${show(c.decision)}${c.ruleId === undefined ? "" : ` (rule ${c.ruleId})`}`;
  return `FAIL ${where} ${c.name}\n${c.failures.map((f) => `  ${f}\n`).join("")}  ${decided}\n`;
}

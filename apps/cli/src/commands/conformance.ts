/**
 * `ahp conformance harness -- <command>`: replays the wire vectors of `@ahp/schemas`
 * (`vectors/harness/*.jsonl`) against any stdio harness, one process per case, and compares
 * what it writes with what a compliant harness writes. The same runner exists as a Python
 * script without dependencies (`vectors/run.py`); both follow `vectors/README.md`.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { parse, toInt } from "../args.js";
import { EXIT_OK, UsageError, type CliIo } from "../io.js";

export const usage = `Usage: ahp conformance harness [options] -- COMMAND [ARG...]

Runs the AHP wire vectors against a harness that speaks stdio: COMMAND is started once per
vector, gets the vector's lines on stdin (then end of input), and what it writes to stdout is
compared with the vector (ids and error codes exactly, messages by the specification's
prefixes). The harness must be configured as the vectors' profile says (vectors/README.md,
vectors/harness/profile.json); for this repository's harness:

  ahp conformance harness -- ahp serve --config <vectors>/harness/ahp-serve.yaml

Options:
  --filter TEXT     only vectors whose id contains TEXT (repeatable: any of them)
  --verbose         show the exchange and the differences of every failing vector
  --jobs N          vectors run in parallel (default: the number of CPUs)
  --timeout-ms N    time a vector may take (default 10000)
  --vectors DIR     the vectors folder (default: the one shipped in @ahp/schemas)
  --list            list the vectors and exit
  -h, --help        this text

Exit code 0 when every vector passed, 1 when one failed, 64 on a usage error.
`;

// ---------------------------------------------------------------- vectors

export type Line = { json: unknown } | { text: string; eol?: string };
export interface Step {
  send: Line[];
  expect?: unknown[];
}
export interface Outcome {
  name: string;
  note: string;
  expect: unknown[];
}
export interface HarnessCase {
  id: string;
  area: string;
  title: string;
  checklist: number[];
  spec: string[];
  steps: Step[];
  outcomes?: Outcome[];
}

/** The vectors folder shipped with `@ahp/schemas`. */
export function defaultVectorsDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("@ahp/schemas/package.json")), "vectors");
}

/** Every case of `<dir>/harness/*.jsonl`, files in name order, lines in file order. */
export function loadHarnessCases(dir: string): HarnessCase[] {
  const folder = join(dir, "harness");
  const files = readdirSync(folder)
    .filter((f) => f.endsWith(".jsonl"))
    .sort();
  const cases: HarnessCase[] = [];
  for (const file of files) {
    const lines = readFileSync(join(folder, file), "utf8").split("\n");
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new Error(`${file}:${i + 1}: ${(error as Error).message}`, { cause: error });
      }
      const c = value as HarnessCase;
      if (typeof c?.id !== "string" || !Array.isArray(c.steps) || c.steps.length === 0) throw new Error(`${file}:${i + 1}: not a vector`);
      cases.push(c);
    });
  }
  return cases;
}

// ---------------------------------------------------------------- templates and matching

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isMatcher = (v: unknown): v is Record<string, unknown> => {
  if (!isObject(v)) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => k.startsWith("$")) && !(keys.length === 1 && keys[0] === "$extra");
};

/** Expands `{"$repeat": [text, n]}` and `{"$literal": v}` in a value to send. */
export function expandTemplates(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expandTemplates);
  if (!isObject(value)) return value;
  if (isMatcher(value)) {
    if ("$repeat" in value) {
      const [text, count] = value.$repeat as [string, number];
      return text.repeat(count);
    }
    if ("$literal" in value) return value.$literal;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandTemplates(v)]));
}

/** The text written for one line, without the line end. */
export function lineText(line: Line): string {
  return "json" in line ? JSON.stringify(expandTemplates(line.json)) : line.text;
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Text cut to `max` characters, saying how long it was. */
export const clip = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
/** A value as short JSON text, for messages. */
export const short = (v: unknown, max = 160): string => (v === undefined ? "(absent)" : clip(JSON.stringify(v), max));

/** Captured values of a client vector; empty for harness vectors. */
export type Captures = Map<string, unknown>;

/**
 * Compares a value with a pattern (README: Matching). Returns the differences, each prefixed
 * with the JSON path; `[]` means it matches. `undefined` stands for an absent member.
 */
export function match(pattern: unknown, actual: unknown, path = "$", captures: Captures = new Map()): string[] {
  if (isMatcher(pattern)) return matchMatcher(pattern, actual, path, captures);
  if (actual === undefined) return [`${path}: missing, expected ${short(pattern)}`];
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${short(actual)}`];
    if (actual.length !== pattern.length) return [`${path}: expected ${pattern.length} elements, got ${actual.length}: ${short(actual)}`];
    return pattern.flatMap((p, i) => match(p, actual[i], `${path}[${i}]`, captures));
  }
  if (isObject(pattern)) {
    if (!isObject(actual)) return [`${path}: expected an object, got ${short(actual)}`];
    const problems: string[] = [];
    for (const [k, p] of Object.entries(pattern)) if (k !== "$extra") problems.push(...match(p, actual[k], `${path}.${k}`, captures));
    if (pattern.$extra !== true) {
      for (const k of Object.keys(actual)) if (!(k in pattern)) problems.push(`${path}.${k}: unexpected member ${short(actual[k])}`);
    }
    return problems;
  }
  if (typeof pattern === "number")
    return typeof actual === "number" && actual === pattern ? [] : [`${path}: expected ${pattern}, got ${short(actual)}`];
  return pattern === actual ? [] : [`${path}: expected ${short(pattern)}, got ${short(actual)}`];
}

function matchMatcher(m: Record<string, unknown>, actual: unknown, path: string, captures: Captures): string[] {
  if (actual === undefined) {
    if (m.$nullish === true || "$optional" in m) return [];
    return [`${path}: missing, expected ${short(m)}`];
  }
  const problems: string[] = [];
  const fail = (what: string) => problems.push(`${path}: expected ${what}, got ${short(actual)}`);
  if ("$literal" in m && !deepEqual(m.$literal, actual)) fail(short(m.$literal));
  if (m.$nullish === true && actual !== null) fail("null or nothing");
  if ("$optional" in m) problems.push(...match(m.$optional, actual, path, captures));
  if ("$type" in m) {
    const types = [m.$type].flat() as string[];
    const t = typeOf(actual);
    if (!types.includes(t) && !(t === "integer" && types.includes("number"))) fail(`a value of type ${types.join(" or ")}`);
  }
  if ("$prefix" in m && !(typeof actual === "string" && actual.startsWith(m.$prefix as string)))
    fail(`a string starting with ${short(m.$prefix)}`);
  if ("$contains" in m) {
    for (const part of [m.$contains].flat() as string[])
      if (!(typeof actual === "string" && actual.includes(part))) fail(`a string containing ${short(part)}`);
  }
  if ("$format" in m) {
    const re = m.$format === "uuid-v4" ? UUID_V4 : RFC3339;
    if (!(typeof actual === "string" && re.test(actual))) fail(`a ${String(m.$format)} string`);
  }
  if ("$approx" in m) {
    const tolerance = typeof m.$tolerance === "number" ? m.$tolerance : 1e-6;
    if (!(typeof actual === "number" && Math.abs(actual - (m.$approx as number)) <= tolerance))
      fail(`${String(m.$approx)} within ${tolerance}`);
  }
  if ("$repeat" in m) {
    const [text, count] = m.$repeat as [string, number];
    if (actual !== text.repeat(count)) fail(`${short(text)} repeated ${count} times`);
  }
  if ("$same" in m) {
    const name = m.$same as string;
    if (!captures.has(name)) problems.push(`${path}: nothing captured as ${name}`);
    else if (!deepEqual(captures.get(name), actual)) fail(`the value captured as ${name} (${short(captures.get(name))})`);
  }
  if (m.$any !== true && Object.keys(m).length === 0) fail("something");
  if ("$capture" in m && problems.length === 0) captures.set(m.$capture as string, actual);
  return problems;
}

// ---------------------------------------------------------------- responses

/** A line the harness wrote, parsed, with the problems of its envelope (§3.3). */
export interface Written {
  text: string;
  value?: unknown;
  problems: string[];
}

export function parseWritten(text: string): Written {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { text, problems: [`stdout line is not JSON: ${short(text, 120)}`] };
  }
  const problems: string[] = [];
  if (!isObject(value)) problems.push(`stdout line is not a JSON-RPC response: ${short(text, 120)}`);
  else {
    if (value.jsonrpc !== "2.0") problems.push(`response ${short(value.id)}: jsonrpc is ${short(value.jsonrpc)}, not "2.0"`);
    if (!("id" in value) || !["string", "integer", "null"].includes(typeOf(value.id)))
      problems.push(`response without a string, integer or null id: ${short(value)}`);
    const hasResult = "result" in value;
    const hasError = "error" in value;
    if (hasResult === hasError) problems.push(`response ${short(value.id)} must carry exactly one of result and error: ${short(value)}`);
    if (hasResult && value.result === null) problems.push(`response ${short(value.id)} has "result": null`);
    if (hasError && !(isObject(value.error) && Number.isInteger(value.error.code) && typeof value.error.message === "string")) {
      problems.push(`response ${short(value.id)}: error needs an integer code and a string message: ${short(value.error)}`);
    }
  }
  return { text, value, problems };
}

const idOf = (v: unknown): unknown => (isObject(v) ? v.id : undefined);
const sameId = (a: unknown, b: unknown) => a === b;

/** `error.data` is optional and free-form: it is not compared. */
function withoutErrorData(v: unknown): unknown {
  if (!isObject(v) || !isObject(v.error) || !("data" in v.error)) return v;
  const { data: _d, ...error } = v.error;
  return { ...v, error };
}

/** Matches expected responses to written ones by id (null ids in order); reports missing and unexpected ones. */
export function compareResponses(expected: unknown[], written: unknown[]): string[] {
  const remaining = [...written];
  const problems: string[] = [];
  for (const e of expected) {
    const id = idOf(e);
    const i = remaining.findIndex((w) => sameId(idOf(w), id));
    if (i < 0) {
      problems.push(`no response with id ${short(id)}; expected ${short(e, 300)}`);
      continue;
    }
    const [w] = remaining.splice(i, 1);
    problems.push(...match(e, withoutErrorData(w)).map((p) => `response ${short(id)}: ${p}`));
  }
  for (const w of remaining) problems.push(`unexpected response ${short(w, 300)}`);
  return problems;
}

// ---------------------------------------------------------------- running one case

export interface CaseResult {
  id: string;
  area: string;
  passed: boolean;
  /** Name of the outcome that matched (cases with alternatives). */
  outcome?: string;
  problems: string[];
  written: string[];
  stderr: string;
}

export interface RunOptions {
  timeoutMs: number;
}

const STDERR_TAIL = 4096;

/** Runs one case: a fresh harness process, the steps, end of input, then the comparison. */
export async function runCase(c: HarnessCase, command: string, args: string[], options: RunOptions): Promise<CaseResult> {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  const lines: string[] = [];
  let pending: Buffer = Buffer.alloc(0);
  let stderr = "";
  let wake: (() => void) | undefined;
  const notify = () => wake?.();
  let ended = false;
  let spawnError: Error | undefined;
  const stdoutEnded = new Promise<void>((resolve) => child.stdout.on("end", resolve));
  child.stdout.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let nl: number;
    while ((nl = pending.indexOf(0x0a)) >= 0) {
      lines.push(pending.subarray(0, nl).toString("utf8").replace(/\r$/, ""));
      pending = pending.subarray(nl + 1);
    }
    notify();
  });
  child.stdout.on("end", () => {
    if (pending.length > 0) lines.push(pending.toString("utf8").replace(/\r$/, ""));
    ended = true;
    notify();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
  });
  child.stdin.on("error", () => {}); // a harness that exits early: reported by the comparison
  const exited = new Promise<number | null>((resolve) => {
    child.on("error", (error) => {
      spawnError = error;
      ended = true;
      notify();
      resolve(null);
    });
    child.on("close", (code) => resolve(code));
  });

  const deadline = Date.now() + options.timeoutMs;
  const waitUntil = async (done: () => boolean): Promise<boolean> => {
    while (!done()) {
      if (ended) return done();
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
    return true;
  };
  const write = (text: string) =>
    new Promise<void>((resolve) => {
      if (child.stdin.destroyed) return resolve();
      child.stdin.write(text, () => resolve());
    });

  const problems: string[] = [];
  const consumed = new Set<number>();
  const parsed = () => lines.map(parseWritten);
  try {
    for (const [index, step] of c.steps.entries()) {
      for (const line of step.send) await write(`${lineText(line)}${"text" in line ? (line.eol ?? "\n") : "\n"}`);
      const last = index === c.steps.length - 1;
      if (last || step.expect === undefined) continue;
      // Wait for this step's responses before the next step.
      const ids = step.expect.map(idOf);
      const arrived = () => {
        const values = parsed().map((w) => w.value);
        return ids.every((id) => values.some((v, i) => !consumed.has(i) && sameId(idOf(v), id)));
      };
      if (!(await waitUntil(arrived))) {
        problems.push(`step ${index + 1}: no answer with id ${ids.map((id) => short(id)).join(", ")} within ${options.timeoutMs} ms`);
        break;
      }
      const values = parsed().map((w) => w.value);
      const taken: unknown[] = [];
      for (const id of ids) {
        const i = values.findIndex((v, j) => !consumed.has(j) && sameId(idOf(v), id));
        consumed.add(i);
        taken.push(values[i]);
      }
      problems.push(...compareResponses(step.expect, taken).map((p) => `step ${index + 1}: ${p}`));
    }
    child.stdin.end();
    if (!(await waitUntil(() => ended)))
      problems.push(`the harness did not end its output within ${options.timeoutMs} ms after end of input`);
  } finally {
    // Output ended: give the process a moment to exit by itself, then make sure it is gone.
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (ended) await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  await Promise.all([stdoutEnded, exited]);
  if (spawnError !== undefined) problems.unshift(`cannot start ${command}: ${spawnError.message}`);

  const written = parsed();
  for (const w of written) problems.push(...w.problems);
  const rest = written.filter((_, i) => !consumed.has(i)).map((w) => w.value ?? w.text);
  const last = c.steps[c.steps.length - 1]!;
  let outcome: string | undefined;
  if (problems.length === 0 && c.outcomes !== undefined) {
    const tries = c.outcomes.map((o) => ({ name: o.name, problems: compareResponses(o.expect, rest) }));
    const hit = tries.find((t) => t.problems.length === 0);
    if (hit !== undefined) outcome = hit.name;
    else {
      const closest = tries.reduce((a, b) => (b.problems.length < a.problems.length ? b : a));
      problems.push(`matches none of the allowed outcomes (${tries.map((t) => t.name).join(", ")}); closest: ${closest.name}`);
      problems.push(...closest.problems.map((p) => `${closest.name}: ${p}`));
    }
  } else if (problems.length === 0) {
    problems.push(...compareResponses(last.expect ?? [], rest));
  }
  return {
    id: c.id,
    area: c.area,
    passed: problems.length === 0,
    ...(outcome === undefined ? {} : { outcome }),
    problems,
    written: lines,
    stderr,
  };
}

/** Runs cases with at most `jobs` harness processes at a time; results in case order. */
export async function runCases(
  cases: HarnessCase[],
  command: string,
  args: string[],
  options: RunOptions & { jobs: number; onResult?: (r: CaseResult) => void },
): Promise<CaseResult[]> {
  const results: CaseResult[] = new Array<CaseResult>(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      results[i] = await runCase(cases[i]!, command, args, options);
      options.onResult?.(results[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs, cases.length)) }, worker));
  return results;
}

// ---------------------------------------------------------------- report

function describeFailure(c: HarnessCase, r: CaseResult, verbose: boolean): string {
  const out = [`FAIL ${r.id}: ${r.problems[0] ?? "failed"}${r.problems.length > 1 ? ` (+${r.problems.length - 1} more)` : ""}`];
  if (!verbose) return `${out[0]}\n`;
  out.push(`  ${c.title}`, `  checklist: ${c.checklist.join(", ") || "-"}; spec: ${c.spec.join(", ")}`);
  c.steps.forEach((step, i) => {
    out.push(`  step ${i + 1} sent:`);
    for (const line of step.send) out.push(`    > ${clip(JSON.stringify(lineText(line)).slice(1, -1), 300)}`);
    if (step.expect !== undefined) for (const e of step.expect) out.push(`    expected: ${short(e, 300)}`);
  });
  for (const o of c.outcomes ?? []) {
    out.push(`  outcome ${o.name}: ${o.note}`);
    for (const e of o.expect) out.push(`    expected: ${short(e, 300)}`);
    if (o.expect.length === 0) out.push("    expected: nothing");
  }
  out.push("  written:");
  for (const w of r.written) out.push(`    < ${clip(JSON.stringify(w).slice(1, -1), 300)}`);
  if (r.written.length === 0) out.push("    (nothing)");
  out.push("  differences:");
  for (const p of r.problems) out.push(`    - ${p}`);
  if (r.stderr.trim() !== "")
    out.push(
      "  stderr (tail):",
      ...r.stderr
        .trimEnd()
        .split("\n")
        .map((l) => `    ${l}`),
    );
  return `${out.join("\n")}\n`;
}

export function summary(results: CaseResult[]): string {
  const areas = new Map<string, { passed: number; failed: number }>();
  const outcomes = new Map<string, number>();
  for (const r of results) {
    const a = areas.get(r.area) ?? { passed: 0, failed: 0 };
    if (r.passed) a.passed++;
    else a.failed++;
    areas.set(r.area, a);
    if (r.outcome !== undefined) outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
  }
  const width = Math.max(4, ...[...areas.keys()].map((k) => k.length));
  const rows = [`${"area".padEnd(width)}  passed  failed`];
  for (const [name, a] of areas) rows.push(`${name.padEnd(width)}  ${String(a.passed).padStart(6)}  ${String(a.failed).padStart(6)}`);
  if (outcomes.size > 0) rows.push(`outcomes where the spec allows alternatives: ${[...outcomes].map(([k, n]) => `${k} ${n}`).join(", ")}`);
  const passed = results.filter((r) => r.passed).length;
  rows.push(`${passed} passed, ${results.length - passed} failed`);
  return `${rows.join("\n")}\n`;
}

// ---------------------------------------------------------------- command

const options = {
  filter: { type: "string", multiple: true },
  verbose: { type: "boolean" },
  jobs: { type: "string" },
  "timeout-ms": { type: "string" },
  vectors: { type: "string" },
  list: { type: "boolean" },
} as const;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const split = argv.indexOf("--");
  const own = split < 0 ? argv : argv.slice(0, split);
  const harness = split < 0 ? [] : argv.slice(split + 1);
  const { values, positionals } = parse(own, options, true);
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  if (positionals[0] !== "harness" || positionals.length > 1)
    throw new UsageError("expected: ahp conformance harness [options] -- COMMAND [ARG...]");
  const dir = values.vectors ?? defaultVectorsDir();
  let cases: HarnessCase[];
  try {
    cases = loadHarnessCases(dir);
  } catch (error) {
    throw new UsageError(`cannot read the vectors in ${dir}: ${(error as Error).message}`);
  }
  const filters = values.filter ?? [];
  if (filters.length > 0) cases = cases.filter((c) => filters.some((f) => c.id.includes(f)));
  if (values.list) {
    for (const c of cases) io.stdout.write(`${c.id}  ${c.title}\n`);
    return EXIT_OK;
  }
  if (cases.length === 0) throw new UsageError(`no vector matches ${filters.map((f) => JSON.stringify(f)).join(", ")}`);
  const [command, ...args] = harness;
  if (command === undefined) throw new UsageError("give the command that starts the harness after --");
  const jobs = toInt("jobs", values.jobs, { min: 1 }) ?? availableParallelism();
  const timeoutMs = toInt("timeout-ms", values["timeout-ms"], { min: 1 }) ?? 10_000;
  const byId = new Map(cases.map((c) => [c.id, c]));
  const results = await runCases(cases, command, args, {
    jobs,
    timeoutMs,
    onResult: (r) => {
      if (!r.passed) io.stdout.write(describeFailure(byId.get(r.id)!, r, values.verbose === true));
    },
  });
  io.stdout.write(summary(results));
  return results.every((r) => r.passed) ? EXIT_OK : 1;
}

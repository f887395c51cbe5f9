/** `ahp policy test|explain|replay`: change a policy safely. */
import { readFile } from "node:fs/promises";
import {
  PolicyError,
  decisionTag,
  explainEvent,
  formatPolicyTestFailure,
  runPolicyTestFile,
  type PolicyExplanation,
  type PolicyTestFileResult,
} from "@ahp/policy";
import { parse } from "../args.js";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, type CliIo } from "../io.js";
import { policyArgument } from "./policy-args.js";
import { replay, replayUsage } from "./policy-replay.js";

export const usage = `Usage: ahp policy <test|explain|replay> [options]

  ahp policy test FILE... [--json]
      Runs policy unit tests (YAML or JSON; format: schemas/policy-test.schema.json). Each FILE
      names its policy (relative to the file, or \`default\`) and cases: an event, or a shorthand
      (\`command: "rm -rf /"\`, or \`tool\` with \`input\`), and what must be decided (\`expect\`:
      decision, rule, reason substring). Cases of a file run in order with session state carried
      over (rate limits). Prints each failure with what was decided, then "N passed, N failed".
      Exit 0 when every case passed, 1 when one failed, 2 when a file or its policy is invalid.

  ahp policy explain --policy FILE (--event JSON | --command "LINE") [--json]
      Shows the rules in evaluation order, which matched and why (each member of match), the
      rule that decided, and the analysis the rules saw: programs, flags, paths read and written,
      what could not be analysed, file paths resolved against the workspace root. --policy
      default explains the built-in policy. --event takes an AHP event (event_type and payload;
      @FILE reads it from a file); --command is a pre_action of the shell tool bash.

${replayUsage}`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h") {
    io.stdout.write(usage);
    return sub === undefined ? EXIT_USAGE : EXIT_OK;
  }
  switch (sub) {
    case "test":
      return test(rest, io);
    case "explain":
      return explain(rest, io);
    case "replay":
      return replay(rest, io);
    default:
      throw new UsageError(`unknown policy command ${JSON.stringify(sub)}`);
  }
}

const message = (error: unknown) =>
  PolicyError.isInstance(error) ? error.details : error instanceof Error ? error.message : String(error);

async function test(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: "boolean" } }, true);
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  if (positionals.length === 0) throw new UsageError("ahp policy test needs a FILE");
  let passed = 0;
  let failed = 0;
  let broken = 0;
  const results: PolicyTestFileResult[] = [];
  for (const file of positionals) {
    let result: PolicyTestFileResult;
    try {
      result = await runPolicyTestFile(file);
    } catch (error) {
      broken++;
      io.stderr.write(`ahp policy test: ${message(error)}\n`);
      continue;
    }
    passed += result.passed;
    failed += result.failed;
    if (values.json) results.push(result);
    else for (const c of result.cases) if (!c.ok) io.stdout.write(formatPolicyTestFailure(result, c));
  }
  if (values.json) io.stdout.write(`${JSON.stringify({ passed, failed, invalid_files: broken, files: results })}\n`);
  else io.stdout.write(`${passed} passed, ${failed} failed\n`);
  if (broken > 0) return EXIT_FAILURE;
  return failed > 0 ? 1 : EXIT_OK;
}

async function explain(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { policy: { type: "string" }, event: { type: "string" }, command: { type: "string" }, json: { type: "boolean" } },
    true,
  );
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.policy === undefined) throw new UsageError("ahp policy explain needs --policy FILE (or --policy default)");
  if ((values.event === undefined) === (values.command === undefined)) throw new UsageError("give one of --event JSON or --command LINE");
  let event: unknown;
  if (values.command !== undefined) {
    event = { event_type: "pre_action", payload: { tool_name: "bash", arguments: { command: values.command } } };
  } else {
    const text = values.event!.startsWith("@") ? await readFile(values.event!.slice(1), "utf8") : values.event!;
    try {
      event = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`--event is not JSON: ${(error as Error).message}`);
    }
    if (event === null || typeof event !== "object" || typeof (event as { event_type?: unknown }).event_type !== "string") {
      throw new UsageError("--event needs a JSON object with event_type (and payload)");
    }
  }
  let x: PolicyExplanation;
  try {
    x = explainEvent(await policyArgument(values.policy), event as never);
  } catch (error) {
    io.stderr.write(`ahp policy explain: ${message(error)}\n`);
    return EXIT_FAILURE;
  }
  io.stdout.write(values.json ? `${JSON.stringify(x)}\n` : formatExplanation(x));
  return EXIT_OK;
}

/** The readable form of an explanation. */
export function formatExplanation(x: PolicyExplanation): string {
  const out: string[] = [];
  const decided = x.ruleId === undefined ? `(${x.source})` : `rule ${x.ruleId}`;
  out.push(`policy ${x.policy ?? "(unnamed)"}, event ${x.eventType}`);
  out.push(`decision: ${decisionTag(x.decision)} by ${decided}: ${JSON.stringify(x.decision)}`);
  out.push("", "rules in evaluation order:");
  for (const r of x.rules) {
    const origin = r.origin === undefined ? "" : ` [${r.origin}]`;
    let state: string;
    if (!r.enabled) state = "off (enabled: false)";
    else if (!r.applies) state = `does not apply to ${x.eventType}`;
    else {
      const why =
        r.conditions.length === 0 ? "no conditions" : r.conditions.map((c) => `${c.member} ${c.held ? "held" : "did not hold"}`).join(", ");
      state = `${r.matched ? "matched" : "no match"} (${why})${r.rateLimited ? ", rate-limited: decides only when its bucket is empty" : ""}`;
    }
    const mark = r.decided ? "=>" : r.afterDecision ? " ·" : "  ";
    out.push(
      `${mark} ${String(r.index + 1).padStart(3)} ${r.id}${origin}: ${state}${r.afterDecision && r.applies && r.enabled ? " (not reached)" : ""}`,
    );
  }
  const a = x.analysis;
  out.push("", "what the rules saw:", `  tool: ${a.tool ?? "(none)"}`);
  if (a.shell.length === 0) out.push("  shell: (no command line)");
  for (const line of a.shell) {
    out.push(`  shell: ${JSON.stringify(line.text)}${line.analysed ? "" : " NOT ANALYSED (too long or nested too deeply)"}`);
    for (const c of line.commands) {
      const parts = [
        `program ${c.program || "(none)"}`,
        c.wrappers.length > 0 ? `via ${c.wrappers.join(" ")}` : "",
        c.flags.length > 0 ? `flags ${c.flags.join(",")}` : "",
        c.args.length > 0 ? `args ${c.args.join(" ")}` : "",
        c.paths.length > 0 ? `paths ${c.paths.join(" ")}` : "",
        c.reads.length > 0 ? `reads ${c.reads.join(" ")}` : "",
        c.writes.length > 0 ? `writes ${c.writes.join(" ")}` : "",
        c.consumers.length > 0 ? `piped to ${c.consumers.join(",")}` : "",
        c.opaque.length > 0 ? `CANNOT ANALYSE: ${c.opaque.join(", ")}` : "",
      ].filter((p) => p !== "");
      out.push(`    ${"  ".repeat(c.depth)}- ${parts.join("; ")}`);
    }
  }
  out.push(`  workspace root: ${a.workspaceRoot ?? "(unknown)"}`);
  for (const f of a.files) {
    const where = f.insideWorkspace === undefined ? "root unknown" : f.insideWorkspace ? "inside the workspace" : "OUTSIDE the workspace";
    out.push(`  file: ${f.path} -> ${f.resolved} (${where})`);
  }
  return `${out.join("\n")}\n`;
}

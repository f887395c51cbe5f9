/** `ahp audit verify|tail|stats`: inspect a tamper-evident audit log. */
import {
  AUDIT_KEY_ENV,
  auditStats,
  formatAuditRecord,
  formatAuditStats,
  formatVerifyReport,
  formatVerifySummary,
  loadAuditKey,
  tailAuditLog,
  verifyAuditLog,
  verifyAuditLogs,
} from "@ahp/audit";
import { parse, toInt } from "../args.js";
import { EXIT_DECISION, EXIT_FAILURE, EXIT_OK, EXIT_WRONG_KEY, UsageError, type CliIo } from "../io.js";

export const usage = `Usage: ahp audit <verify|tail|stats> FILE [options]

  ahp audit verify FILE [FILE...] [--key-file KEYFILE] [--anchor FILE|URL] [--expect-head SEQ:HASH]
                  [--allow-missing-head] [--no-checkpoint] [--each] [--json]
      Verifies the HMAC chain of the log (a single FILE also covers its rotated siblings
      FILE.1, FILE.2, ...) and, by default, checks it against its signed checkpoint
      (FILE.checkpoint), so that records removed from the end are found. Reports the first
      altered, deleted, inserted, reordered or removed record, a wrong key, or a torn last line
      (a crash, not tampering). Key: --key-file or env ${AUDIT_KEY_ENV}.
      The log must start with its first record (seq 1), unless the signed rotation manifest
      (FILE.rotation, written by rotation) says which records left: a log whose head was cut
      fails. --allow-missing-head accepts a log cut on purpose.
      --anchor FILE|URL: the external anchor the harness published its checkpoints to
      (ahp serve --audit-anchor): its latest checkpoint must be covered by the log, so that
      records cut behind it are found even if the checkpoint next to the log went too. A URL is
      read with GET (the anchor answers its latest checkpoint, 404 while it has none).
      Several FILEs that are rotated pieces of one log (FILE.1 FILE) are one chain; otherwise
      (or with --each) each FILE is its own log, e.g. one per replica: each chain is verified
      and reported on its own line.
      Exit codes: 0 every chain verifies (also with a torn tail); 1 tampering found (a record
      altered, deleted, inserted, reordered or removed, the head cut, a checkpoint or anchor that
      does not match); 77 wrong key (the records were written with another key: one line names
      both key ids); 2 other errors (no such log, no key, an unreadable file); 64 bad usage.

  ahp audit tail FILE [-n N] [--follow] [--json]
      Prints the last N records (default 10) readably, or as JSON lines; --follow keeps printing.

  ahp audit stats FILE [FILE...] [--json]
      Counts by decision, rule and event type, handler failures and latency percentiles.
`;

export async function run(argv: string[], io: CliIo, signal?: AbortSignal): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h") {
    io.stdout.write(usage);
    return sub === undefined ? 64 : EXIT_OK;
  }
  switch (sub) {
    case "verify":
      return verify(rest, io);
    case "tail":
      return tail(rest, io, signal);
    case "stats":
      return stats(rest, io);
    default:
      throw new UsageError(`unknown audit command ${JSON.stringify(sub)}`);
  }
}

async function verify(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      "key-file": { type: "string" },
      "expect-head": { type: "string" },
      "require-genesis": { type: "boolean" },
      "allow-missing-head": { type: "boolean" },
      anchor: { type: "string" },
      "no-checkpoint": { type: "boolean" },
      each: { type: "boolean" },
      json: { type: "boolean" },
    },
    true,
  );
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  if (positionals.length === 0) throw new UsageError("ahp audit verify needs a FILE");
  let key;
  try {
    key = await loadAuditKey({ ...(values["key-file"] === undefined ? {} : { keyFile: values["key-file"] }), env: io.env });
  } catch (error) {
    io.stderr.write(`ahp audit verify: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
  const options = {
    ...(values["expect-head"] === undefined ? {} : { expectHead: values["expect-head"] }),
    ...(values["allow-missing-head"] ? { allowMissingHead: true } : {}),
    ...(values.anchor === undefined ? {} : { anchor: values.anchor }),
    ...(values["no-checkpoint"] ? { checkpoint: false as const } : {}),
  };
  if (values["require-genesis"] && values["allow-missing-head"])
    throw new UsageError("--require-genesis and --allow-missing-head contradict");
  if (values.anchor !== undefined && values.anchor.trim() === "") throw new UsageError("--anchor needs a FILE or URL");
  if (positionals.length > 1 && (values.each || !rotatedPieces(positionals))) {
    if (options.expectHead !== undefined) throw new UsageError("--expect-head names the head of one log; verify the logs one by one");
    if (options.anchor !== undefined) throw new UsageError("--anchor holds the checkpoints of one log; verify the logs one by one");
    try {
      const result = await verifyAuditLogs(positionals, key, options);
      if (values.json) io.stdout.write(`${JSON.stringify(result)}\n`);
      else {
        for (const log of result.logs) {
          io.stdout.write(
            `${log.report === undefined ? `${log.path}: ERROR ${log.error ?? ""}` : formatVerifySummary(log.path, log.report)}\n`,
          );
          if (log.report !== undefined && !log.report.ok) io.stdout.write(`  ${log.report.break?.message ?? ""}\n`);
        }
        for (const id of result.duplicateReplicas) io.stdout.write(`WARNING: replica id ${id} appears in more than one log\n`);
        io.stdout.write(result.ok ? `OK: ${result.logs.length} chains verified\n` : "NOT OK: see above\n");
      }
      if (result.logs.some((l) => l.report !== undefined && !l.report.ok && l.report.status !== "wrong_key")) return EXIT_DECISION;
      if (result.logs.some((l) => l.report?.status === "wrong_key")) return EXIT_WRONG_KEY;
      return result.ok ? EXIT_OK : EXIT_FAILURE;
    } catch (error) {
      io.stderr.write(`ahp audit verify: ${(error as Error).message}\n`);
      return EXIT_FAILURE;
    }
  }
  try {
    const report = await verifyAuditLog(positionals.length === 1 ? positionals[0]! : positionals, key, options);
    if (report.status === "wrong_key") {
      // One line, apart from tampering: nothing was verified.
      if (values.json) io.stdout.write(`${JSON.stringify(report)}\n`);
      io.stderr.write(`ahp audit verify: wrong key: ${report.break?.message ?? `the log was not written with key ${key.id}`}\n`);
      return EXIT_WRONG_KEY;
    }
    io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : `${formatVerifyReport(report)}\n`);
    const headOk = report.expectedHead === undefined || report.expectedHead.matched;
    return report.ok && headOk ? EXIT_OK : EXIT_DECISION;
  } catch (error) {
    io.stderr.write(`ahp audit verify: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
}

/** True when the files are the rotated pieces of one log: `X` and `X.<n>` (the same X), or `X.<n>` only. */
function rotatedPieces(files: readonly string[]): boolean {
  const bases = new Set(files.map((f) => f.replace(/\.\d+$/, "")));
  return bases.size === 1;
}

async function tail(argv: string[], io: CliIo, signal?: AbortSignal): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { n: { type: "string", short: "n" }, follow: { type: "boolean", short: "f" }, json: { type: "boolean" } },
    true,
  );
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  if (positionals.length !== 1) throw new UsageError("ahp audit tail needs exactly one FILE");
  const n = toInt("n", values.n) ?? 10;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  signal?.addEventListener("abort", onSignal, { once: true });
  try {
    for await (const entry of tailAuditLog(positionals[0]!, n, values.follow ? { signal: stop.signal } : false)) {
      if (entry.record !== undefined) {
        io.stdout.write(values.json ? `${JSON.stringify(entry.record)}\n` : `${formatAuditRecord(entry.record)}\n`);
      } else io.stdout.write(`${values.json ? JSON.stringify({ raw: entry.raw }) : `? ${entry.raw ?? ""}`}\n`);
    }
    return EXIT_OK;
  } catch (error) {
    io.stderr.write(`ahp audit tail: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  } finally {
    process.off("SIGINT", onSignal);
  }
}

async function stats(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: "boolean" } }, true);
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  if (positionals.length === 0) throw new UsageError("ahp audit stats needs a FILE");
  try {
    const s = await auditStats(positionals.length === 1 ? positionals[0]! : positionals);
    io.stdout.write(values.json ? `${JSON.stringify(s)}\n` : `${formatAuditStats(s)}\n`);
    return EXIT_OK;
  } catch (error) {
    io.stderr.write(`ahp audit stats: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
}

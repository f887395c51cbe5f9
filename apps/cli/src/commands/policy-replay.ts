/** `ahp policy replay`: re-decide recorded decisions with a candidate policy. */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { auditLogFiles, formatVerifySummary, loadAuditKey, parseRecord, verifyAuditLogs, type AuditRecord } from "@ahp/audit";
import { PolicyError, PolicyReplay, type ReplayChange, type ReplaySummary } from "@ahp/policy";
import { parse } from "../args.js";
import { EXIT_FAILURE, EXIT_OK, UsageError, type CliIo } from "../io.js";
import { policyArgument } from "./policy-args.js";

export const replayUsage = `  ahp policy replay LOG... --policy CANDIDATE [--key-file KEYFILE] [--no-verify] [--json]
      Verifies each audit log (refuses one that does not verify unless --no-verify), then
      re-decides every recorded decision with CANDIDATE in recorded order (several LOGs, one per
      replica, are merged by time) with the candidate's session state replayed, and prints each
      decision that would change and a summary. Only records written with payloads
      (ahp serve --audit-payloads) can be re-decided; the others are counted as not replayable.
      --json prints one object {"total": N, "changed": [...], ...}. Key: --key-file or env
      AHP_AUDIT_KEY. Exit 0 after a replay, 1 when a log does not verify, 2 on errors.
`;

/** The records of one log (its rotated files in chain order), line by line; lines that are not records are counted. */
async function* records(path: string, skipped: { lines: number }): AsyncGenerator<AuditRecord> {
  const files = await auditLogFiles(path);
  if (files.length === 0) throw new Error(`no audit log at ${path}`);
  for (const file of files) {
    const lines = createInterface({ input: createReadStream(file, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line === "") continue;
      const parsed = parseRecord(line);
      if (parsed.ok) yield parsed.record;
      else skipped.lines++;
    }
  }
}

interface Head {
  it: AsyncGenerator<AuditRecord>;
  record: AuditRecord;
  at: number;
  order: number;
}

/** Several logs merged by record time (ties: the order the logs were named in); one pending record per log. */
async function* merged(paths: readonly string[], skipped: { lines: number }): AsyncGenerator<AuditRecord> {
  const heads: Head[] = [];
  const advance = async (it: AsyncGenerator<AuditRecord>, order: number) => {
    const next = await it.next();
    if (next.done === true) return;
    const at = Date.parse(next.value.time);
    heads.push({ it, record: next.value, at: Number.isFinite(at) ? at : 0, order });
  };
  for (let i = 0; i < paths.length; i++) await advance(records(paths[i]!, skipped), i);
  while (heads.length > 0) {
    let best = 0;
    for (let i = 1; i < heads.length; i++) {
      const h = heads[i]!;
      const b = heads[best]!;
      if (h.at < b.at || (h.at === b.at && h.order < b.order)) best = i;
    }
    const [head] = heads.splice(best, 1);
    yield head!.record;
    await advance(head!.it, head!.order);
  }
}

const side = (s: { decision: string; rule?: string }) => `${s.decision}${s.rule === undefined ? "" : ` (${s.rule})`}`;

/** One changed decision on one line. */
export function formatChange(c: ReplayChange): string {
  const who = `${c.replica === undefined ? "" : `${c.replica} `}${c.session}`;
  const what = [c.tool ?? c.event_type, c.subject === undefined ? "" : JSON.stringify(c.subject)].filter((s) => s !== "").join(" ");
  return `${c.time}  ${who}  ${what}  ${side(c.recorded)} -> ${side(c.candidate)}\n`;
}

/** The summary printed after the changes. */
export function formatReplaySummary(s: ReplaySummary): string {
  const out = [`decisions: ${s.decisions} (${s.replayed} re-decided, ${s.notReplayable} not replayable)`, `changed: ${s.changed}`];
  if (s.notReplayable > 0) {
    out.push(
      `  ${s.notReplayable} decision records carry no payload (or a truncated one) and were not re-decided; record payloads with ahp serve --audit-payloads`,
    );
  }
  const table = (title: string, map: Record<string, number>) => {
    const rows = Object.entries(map).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (rows.length === 0) return;
    out.push(title);
    for (const [k, n] of rows) out.push(`  ${k}  ${n}`);
  };
  table("by change:", s.byChange);
  table("by rule:", s.byRule);
  return `${out.join("\n")}\n`;
}

export async function replay(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { policy: { type: "string" }, "key-file": { type: "string" }, "no-verify": { type: "boolean" }, json: { type: "boolean" } },
    true,
  );
  if (values.help) {
    io.stdout.write(replayUsage);
    return EXIT_OK;
  }
  if (positionals.length === 0) throw new UsageError("ahp policy replay needs an audit LOG");
  if (values.policy === undefined) throw new UsageError("ahp policy replay needs --policy CANDIDATE");
  const fail = (error: unknown) => {
    io.stderr.write(`ahp policy replay: ${PolicyError.isInstance(error) ? error.details : (error as Error).message}\n`);
    return EXIT_FAILURE;
  };

  let candidate;
  try {
    candidate = await policyArgument(values.policy);
  } catch (error) {
    return fail(error);
  }

  if (!values["no-verify"]) {
    let report;
    try {
      const key = await loadAuditKey({ ...(values["key-file"] === undefined ? {} : { keyFile: values["key-file"] }), env: io.env });
      report = await verifyAuditLogs(positionals, key);
    } catch (error) {
      return fail(error);
    }
    if (!report.ok) {
      for (const log of report.logs) {
        if (log.report?.ok === true) continue;
        io.stderr.write(
          `${log.report === undefined ? `${log.path}: ERROR ${log.error ?? ""}` : formatVerifySummary(log.path, log.report)}\n`,
        );
        if (log.report?.break !== undefined) io.stderr.write(`  ${log.report.break.message}\n`);
      }
      io.stderr.write("ahp policy replay: refusing to replay a log that does not verify (--no-verify replays it anyway)\n");
      return 1;
    }
  }

  const skipped = { lines: 0 };
  let first = true;
  const json = values.json === true;
  if (json) io.stdout.write('{"changed":[');
  const engine = new PolicyReplay(candidate, {
    onChange: (change) => {
      if (json) {
        io.stdout.write(`${first ? "" : ","}\n${JSON.stringify(change)}`);
        first = false;
      } else io.stdout.write(formatChange(change));
    },
  });
  try {
    for await (const record of merged(positionals, skipped)) engine.add(record);
  } catch (error) {
    if (json) io.stdout.write("]}\n");
    return fail(error);
  }
  const s = engine.summary;
  if (json) {
    const tail = {
      total: s.decisions,
      replayed: s.replayed,
      not_replayable: s.notReplayable,
      notifications: s.notifications,
      records: s.records,
      other_lines: skipped.lines,
      changed_count: s.changed,
      by_change: s.byChange,
      by_rule: s.byRule,
    };
    io.stdout.write(`${first ? "" : "\n"}],${JSON.stringify(tail).slice(1)}\n`);
  } else {
    if (s.changed > 0) io.stdout.write("\n");
    io.stdout.write(formatReplaySummary(s));
  }
  return EXIT_OK;
}

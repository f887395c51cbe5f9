/** Text forms of verification reports (for `ahp audit verify`). */
import { formatAuditHead } from "./record.js";
import type { AuditCheckpointFinding, AuditVerifyReport } from "./verify-types.js";

/** Human-readable report (for `ahp audit verify`). */
export function formatVerifyReport(report: AuditVerifyReport): string {
  const lines: string[] = [];
  const files = report.files.length === 1 ? report.files[0]! : `${report.files.length} files (${report.files.join(", ")})`;
  lines.push(`audit log: ${files}`);
  lines.push(`key id: ${report.keyId}`);
  if (report.first !== undefined && report.head !== undefined) {
    const origin = report.startsAtGenesis
      ? "from genesis"
      : report.rotation !== undefined
        ? `starts at seq ${report.first.seq}: records 1..${report.rotation.removedThrough} rotated away (${report.rotation.file}, ${report.rotation.time})`
        : `starts at seq ${report.first.seq}: earlier records missing, accepted unchecked (--allow-missing-head)`;
    lines.push(`records: ${report.records} verified, seq ${report.first.seq}..${report.head.seq} (${origin})`);
    lines.push(`head: ${formatAuditHead(report.head)}`);
  } else {
    lines.push(`records: ${report.records} verified`);
  }
  if (report.replica !== undefined) lines.push(`replica: ${report.replica}`);
  if (report.replicas !== undefined) lines.push(`replicas: ${report.replicas.join(", ")} (records of several writers in one chain)`);
  for (const r of report.recovered) lines.push(`recovered torn line at ${r.file}:${r.line} (${r.bytes} bytes, earlier crash)`);
  const cp = report.checkpoint;
  if (cp !== undefined && cp.status !== "failed") lines.push(`checkpoint: ${describeCheckpoint(cp)}`);
  const anchor = report.anchor;
  if (anchor !== undefined && anchor.status !== "failed") {
    lines.push(
      anchor.status === "none"
        ? `anchor: ${anchor.file} holds no checkpoint yet: removal of records at the end is not checked against it`
        : `anchor: ${anchor.file}: ${describeCheckpoint(anchor)}`,
    );
  }
  if (report.expectedHead?.matched) lines.push(`expected head ${formatAuditHead(report.expectedHead.head)}: present`);
  switch (report.status) {
    case "intact":
      lines.push("OK: chain intact");
      break;
    case "torn_tail": {
      const t = report.tornTail!;
      const what =
        t.lines === 1
          ? `the last record at ${t.file}:${t.line} is incomplete (${t.bytes} bytes)`
          : `the last ${t.lines} lines from ${t.file}:${t.line} are incomplete records (${t.bytes} bytes)`;
      lines.push(`OK with warning (torn_tail): ${what}; the writer stopped mid-write (a crash, not tampering)`);
      break;
    }
    case "wrong_key":
      lines.push(`WRONG KEY: ${report.break!.message}`);
      break;
    case "broken":
      lines.push(`TAMPERED (${report.break!.kind}) at ${report.break!.file}:${report.break!.line}: ${report.break!.message}`);
      break;
  }
  return `${lines.join("\n")}\n`;
}

function describeCheckpoint(cp: AuditCheckpointFinding): string {
  switch (cp.status) {
    case "verified":
      return cp.seq === 0
        ? `seq 0 (taken ${cp.time}, before the first record): nothing to compare yet`
        : `seq ${cp.seq} (taken ${cp.time}) present and unchanged: no records removed before it`;
    case "before_start":
      return `seq ${cp.seq} (taken ${cp.time}) is before the first record present (rotated away): not checked`;
    case "none":
      return `none at ${cp.file}: removal of records at the end is not checked`;
    case "skipped":
      return "not checked (skipped)";
    default:
      return cp.status;
  }
}

/** One line per log for a multi-log verification: path, verdict, records, replica, checkpoint. */
export function formatVerifySummary(path: string, report: AuditVerifyReport): string {
  const verdict =
    report.status === "intact"
      ? "OK"
      : report.status === "torn_tail"
        ? "OK (torn tail)"
        : report.status === "wrong_key"
          ? "WRONG KEY"
          : `TAMPERED (${report.break?.kind ?? "broken"})`;
  const parts = [`${path}: ${verdict}`, `${report.records} records`];
  if (report.head !== undefined) parts.push(`head ${report.head.seq}`);
  parts.push(`replica ${report.replica ?? (report.replicas === undefined ? "-" : report.replicas.join("+"))}`);
  const cp = report.checkpoint;
  if (cp !== undefined) parts.push(`checkpoint ${cp.status}${cp.seq === undefined ? "" : ` (seq ${cp.seq})`}`);
  return parts.join(", ");
}

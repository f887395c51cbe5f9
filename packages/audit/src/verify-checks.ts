/**
 * The checks of a verified chain against what was signed apart from it: the checkpoint next to
 * the log, an external anchor's latest checkpoint, and the rotation manifest that accounts for a
 * missing head.
 */
import { basename } from "node:path";
import type { readAuditAnchor } from "./anchor.js";
import { checkCheckpointMac, type AuditCheckpoint, type readCheckpoint } from "./checkpoint.js";
import type { AuditKey } from "./key.js";
import { checkRotationManifestMac, readRotationManifest, type AuditRotationManifest } from "./manifest.js";
import { genesisHash } from "./record.js";
import type { AuditBreakKind, AuditCheckpointFinding, AuditVerifyReport, Entry, VerifyAuditOptions } from "./verify-types.js";

export interface CheckpointBreak {
  at: Entry;
  kind: AuditBreakKind;
  message: string;
  expectedSeq?: number;
}

/**
 * Compares the verified chain with its signed checkpoint (read before the log: `read`, from
 * `file`); returns the break it finds, if any. `at`: the last line of the log; `named`: the
 * chain's record of a seq the checkpoint names.
 */
export function checkAgainstCheckpoint(
  report: AuditVerifyReport,
  at: Entry,
  named: (seq: number) => Entry | undefined,
  file: string | undefined,
  read: Awaited<ReturnType<typeof readCheckpoint>>,
  key: AuditKey,
  options: VerifyAuditOptions,
  declared: string | undefined,
): CheckpointBreak | undefined {
  if (file === undefined) {
    if (options.checkpoint === false) report.checkpoint = { file: "", status: "skipped" };
    return undefined;
  }
  const failed = (finding: Partial<AuditCheckpointFinding>, kind: AuditBreakKind, message: string, expectedSeq?: number, where = at) => {
    report.checkpoint = { file, status: "failed", ...finding };
    return { at: where, kind, message, ...(expectedSeq === undefined ? {} : { expectedSeq }) };
  };
  if (read === undefined) {
    // The writer said it kept checkpoints under this name: their absence is a finding.
    if (declared !== undefined && options.checkpoint === undefined && declared === basename(file)) {
      return failed(
        {},
        "checkpoint",
        `the checkpoint file ${file} is missing, although the log's writer kept one: removal of records at the end cannot be ruled out`,
      );
    }
    report.checkpoint = { file, status: "none" };
    return undefined;
  }
  if ("problem" in read) return failed({}, "checkpoint", `the checkpoint is not valid: ${read.problem}`);
  return compareWithCheckpoint(report, named, at, key, read.checkpoint, file, "checkpoint", (finding) => {
    report.checkpoint = finding;
  });
}

/**
 * Compares the verified chain with a signed checkpoint (the one next to the log, or an
 * anchor's): it must verify under the key, belong to the same replica, and name a record the
 * log holds unchanged. `what` names it in messages; `record` stores the finding.
 */
function compareWithCheckpoint(
  report: AuditVerifyReport,
  named: (seq: number) => Entry | undefined,
  at: Entry,
  key: AuditKey,
  cp: AuditCheckpoint,
  file: string,
  what: "checkpoint" | "anchor",
  record: (finding: AuditCheckpointFinding) => void,
): CheckpointBreak | undefined {
  const seen = { seq: cp.seq, time: cp.time };
  const name = what === "checkpoint" ? `the checkpoint ${file}` : `the anchor's checkpoint (${file})`;
  const failed = (kind: AuditBreakKind, message: string, expectedSeq?: number, where = at): CheckpointBreak => {
    record({ file, status: "failed", ...seen });
    return { at: where, kind, message, ...(expectedSeq === undefined ? {} : { expectedSeq }) };
  };
  if (cp.kid !== key.id) return failed("checkpoint", `${name} was written with key ${cp.kid}, the given key is ${key.id}`);
  if (!checkCheckpointMac(cp, key)) return failed("checkpoint", `${name} does not verify: it was altered or forged`);
  if (report.replica !== cp.replica && report.replicas === undefined && report.head !== undefined) {
    return failed(
      "checkpoint",
      `${name} belongs to ${cp.replica === undefined ? "no replica" : `replica ${cp.replica}`}, the log to ${report.replica === undefined ? "none" : `replica ${report.replica}`}`,
    );
  }
  const headSeq = report.head?.seq ?? 0;
  if (cp.seq > headSeq) {
    const range = cp.seq - headSeq === 1 ? `record ${cp.seq} is` : `records ${headSeq + 1}..${cp.seq} are`;
    const torn =
      report.tornTail === undefined
        ? ""
        : ` The last line is cut short, but the checkpoint proves that the records up to seq ${cp.seq} were completely written: this is not a crash.`;
    report.tornTail = undefined;
    const signed = what === "checkpoint" ? "its signed checkpoint" : `the checkpoint published to the anchor ${file}`;
    return failed(
      "truncated",
      `the log ends at seq ${headSeq}, but ${signed} (taken ${cp.time}) names seq ${cp.seq}: ${range} missing (truncated).${torn}`,
      cp.seq,
    );
  }
  if (cp.seq === 0) {
    // Taken when the log was still empty (a writer's first checkpoint): nothing to compare.
    if (cp.head !== genesisHash(key.id)) return failed("checkpoint", `${name} names seq 0 with a head that is not the genesis value`);
    record({ file, status: "verified", ...seen });
    return undefined;
  }
  if (report.first !== undefined && cp.seq < report.first.seq) {
    record({ file, status: "before_start", ...seen });
    return undefined;
  }
  const match = named(cp.seq);
  if (match === undefined || match.hash !== cp.head) {
    return failed("altered", `record seq ${cp.seq} differs from ${name} (taken ${cp.time})`, cp.seq, match ?? at);
  }
  record({ file, status: "verified", ...seen });
  return undefined;
}

/** Compares the verified chain with the latest checkpoint an external anchor holds (read before the log: `read`). */
export function checkAgainstAnchor(
  report: AuditVerifyReport,
  at: Entry,
  named: (seq: number) => Entry | undefined,
  target: string,
  read: Awaited<ReturnType<typeof readAuditAnchor>> | undefined,
  key: AuditKey,
): CheckpointBreak | undefined {
  const name = /^https?:/i.test(target) ? target.replace(/\/\/[^/@]*@/, "//") : target;
  if (read === undefined) {
    report.anchor = { file: name, status: "none" };
    return undefined;
  }
  if ("problem" in read) {
    report.anchor = { file: name, status: "failed" };
    return { at, kind: "checkpoint", message: `the anchor cannot be checked: ${read.problem}` };
  }
  return compareWithCheckpoint(report, named, at, key, read.checkpoint, name, "anchor", (finding) => {
    report.anchor = finding;
  });
}

/** Reads and checks a rotation manifest: undefined when there is none. */
export async function loadManifest(
  file: string,
  key: AuditKey,
): Promise<{ file: string; manifest: AuditRotationManifest } | { file: string; problem: string } | undefined> {
  const read = await readRotationManifest(file);
  if (read === undefined) return undefined;
  if ("problem" in read) return { file, problem: read.problem };
  const m = read.manifest;
  if (m.kid !== key.id) return { file, problem: `${file} was written with key ${m.kid}, the given key is ${key.id}` };
  if (!checkRotationManifestMac(m, key)) return { file, problem: `${file} does not verify: it was altered or forged` };
  return { file, manifest: m };
}

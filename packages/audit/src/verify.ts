/**
 * Verification of an audit log (one file or a rotated set, in chain order). Reports the first
 * break and what kind it is:
 *
 * - `altered`: a record's MAC does not match its content (a field was changed), or a line is
 *   not a record and the chain does not continue around it;
 * - `inserted`: a line that does not belong (a forged record whose MAC fails, or a copy of an
 *   earlier record), with the chain continuing around it;
 * - `deleted`: a seq gap with no later record filling it (the next record's `prev` does not
 *   match because records are missing);
 * - `reordered`: records out of seq order (the missing seq appears later, or a seq reappears);
 * - `truncated`: the log ends before a published head (`expectHead`);
 * - `wrong_key`: no record was written with the given key (key id differs): not tampering.
 *
 * A torn last line (a writer killed mid-write) is reported as `tornTail`, not as a break.
 * Torn lines that a later writer recovered (a `recovery` record naming their length and hash)
 * are accepted and listed.
 */
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { AuditError } from "./errors.js";
import { auditLogFiles } from "./file-sink.js";
import { toAuditKey, type AuditKeyInput } from "./key.js";
import { readRawLines } from "./lines.js";
import { checkRecordMac, formatAuditHead, genesisHash, parseAuditHead, recordHash, type AuditHead, type AuditRecord } from "./record.js";

export type AuditBreakKind = "altered" | "deleted" | "inserted" | "reordered" | "truncated" | "wrong_key";

export interface AuditBreak {
  kind: AuditBreakKind;
  file: string;
  /** 1-based line number in `file` (for `truncated`: the last line). */
  line: number;
  /** Seq of the offending record when it has one. */
  seq?: number;
  /** The seq the chain expected at this point. */
  expectedSeq?: number;
  message: string;
}

export interface AuditVerifyReport {
  /**
   * `intact`: the chain verifies; `torn_tail`: it verifies up to a torn last line (a crash, not
   * tampering); `broken`: tampering found (see `break`); `wrong_key`: the key does not match.
   */
  status: "intact" | "torn_tail" | "broken" | "wrong_key";
  /** True for `intact` and `torn_tail`. */
  ok: boolean;
  keyId: string;
  files: string[];
  /** Records verified (chained) before the end or the break. */
  records: number;
  /** First record of the verified chain. */
  first?: { seq: number; file: string; line: number };
  /**
   * True when the chain starts at seq 1 with the genesis value. False when earlier records were
   * rotated away (or removed: only an external anchor or `requireGenesis` can tell).
   */
  startsAtGenesis: boolean;
  /** Last verified record: publish it (`formatAuditHead`) to detect later truncation. */
  head?: AuditHead;
  break?: AuditBreak;
  tornTail?: { file: string; line: number; bytes: number };
  /** Torn lines covered by a `recovery` record. */
  recovered: { file: string; line: number; bytes: number }[];
  /** Result of the `expectHead` check, when one was asked for. */
  expectedHead?: { head: AuditHead; matched: boolean };
}

export interface VerifyAuditOptions {
  /** A head published earlier (`"<seq>:<hash>"` or an object): the log must contain it unchanged. */
  expectHead?: AuditHead | string;
  /** Fail (`deleted`) when the chain does not start at seq 1 from the genesis value. Default false. */
  requireGenesis?: boolean;
}

interface Entry {
  file: string;
  line: number;
  bytes: number;
  terminated: boolean;
  record?: AuditRecord;
  problem?: string;
  /** For lines that are not records: SHA-256 of their bytes. */
  sha256?: string;
  hash?: string;
  macOk: boolean;
}

/**
 * Verifies `files` with `key`. A single path stands for the log and its rotated siblings
 * (`auditLogFiles(path)`); an array is taken as the chain order. Throws `INVALID_ARGUMENT`
 * when a file cannot be read.
 */
export async function verifyAuditLog(
  files: string | readonly string[],
  keyInput: AuditKeyInput,
  options: VerifyAuditOptions = {},
): Promise<AuditVerifyReport> {
  const key = toAuditKey(keyInput);
  const list = typeof files === "string" ? await auditLogFiles(files) : [...files];
  if (typeof files === "string" && list.length === 0) throw new AuditError("INVALID_ARGUMENT", `no audit log at ${files}`);
  let expectHead: AuditHead | undefined;
  if (options.expectHead !== undefined) {
    expectHead = typeof options.expectHead === "string" ? parseAuditHead(options.expectHead) : options.expectHead;
    if (expectHead === undefined) throw new AuditError("INVALID_ARGUMENT", 'expectHead must be "<seq>:<sha256 hex>"');
  }

  const entries: Entry[] = [];
  for (const file of list) {
    try {
      await stat(file);
    } catch {
      throw new AuditError("INVALID_ARGUMENT", `cannot read audit file ${file}`);
    }
    for await (const raw of readRawLines(file)) {
      const entry: Entry = { file, line: raw.line, bytes: raw.bytes.length, terminated: raw.terminated, macOk: false };
      const parsed = parseLine(raw.bytes);
      if (parsed.record !== undefined) {
        entry.record = parsed.record;
        entry.hash = recordHash(parsed.record);
        entry.macOk = parsed.record.kid === key.id && checkRecordMac(parsed.record, key);
      } else {
        entry.problem = parsed.problem;
        entry.sha256 = createHash("sha256").update(raw.bytes).digest("hex");
      }
      entries.push(entry);
    }
  }

  const report: AuditVerifyReport = {
    status: "intact",
    ok: true,
    keyId: key.id,
    files: list,
    records: 0,
    startsAtGenesis: false,
    recovered: [],
  };
  const fail = (entry: Entry, kind: AuditBreakKind, message: string, expectedSeq?: number): AuditVerifyReport => {
    report.status = kind === "wrong_key" ? "wrong_key" : "broken";
    report.ok = false;
    report.break = {
      kind,
      file: entry.file,
      line: entry.line,
      ...(entry.record === undefined ? {} : { seq: entry.record.seq }),
      ...(expectedSeq === undefined ? {} : { expectedSeq }),
      message,
    };
    return report;
  };

  const parsedRecords = entries.filter((e) => e.record !== undefined);
  const firstRecord = parsedRecords[0];
  if (firstRecord !== undefined && !parsedRecords.some((e) => e.record!.kid === key.id)) {
    return fail(
      firstRecord,
      "wrong_key",
      `the records were written with key ${firstRecord.record!.kid}; the given key is ${key.id} (wrong key, not tampering)`,
    );
  }

  const genesis = genesisHash(key.id);
  let prevHash: string | undefined;
  let expectedSeq: number | undefined;
  const continuesChain = (next: Entry | undefined): boolean => {
    if (next === undefined || !next.macOk) return false;
    const r = next.record!;
    if (prevHash === undefined) return r.seq === 1 && r.prev === genesis;
    return r.seq === expectedSeq && r.prev === prevHash;
  };
  const where = (e: Entry) => `${e.file}:${e.line}`;

  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.record === undefined) {
      let j = i;
      while (j < entries.length && entries[j]!.record === undefined) j++;
      const run = entries.slice(i, j);
      const lastFile = list[list.length - 1];
      if (j === entries.length && run.every((r) => r.file === lastFile)) {
        const torn = run[0]!;
        report.tornTail = { file: torn.file, line: torn.line, bytes: run.reduce((n, r) => n + r.bytes, 0) };
        report.status = "torn_tail";
        break;
      }
      const next = entries[j];
      if (next?.macOk && next.record!.kind === "recovery" && tornMatches(next.record!, run)) {
        for (const r of run) report.recovered.push({ file: r.file, line: r.line, bytes: r.bytes });
        i = j - 1;
        continue;
      }
      if (continuesChain(next)) {
        return fail(e, "inserted", `line ${where(e)} is not an audit record (${e.problem}) and the chain continues around it: inserted`);
      }
      return fail(e, "altered", `line ${where(e)} is not a valid audit record (${e.problem})`, expectedSeq);
    }

    const r = e.record;
    if (!e.macOk) {
      if (continuesChain(entries[i + 1])) {
        return fail(
          e,
          "inserted",
          `record at ${where(e)} (seq ${r.seq}) has an invalid MAC and the chain continues around it: a forged record was inserted`,
          expectedSeq,
        );
      }
      const why = r.kid !== key.id ? `its key id ${r.kid} differs from ${key.id}` : "its MAC does not match its content";
      return fail(e, "altered", `record at ${where(e)} (seq ${r.seq}) was altered: ${why}`, expectedSeq);
    }

    if (prevHash === undefined || expectedSeq === undefined) {
      if (r.seq === 1 && r.prev !== genesis) {
        return fail(e, "altered", `record at ${where(e)} is seq 1 but does not start from the genesis value`);
      }
      report.startsAtGenesis = r.seq === 1;
      if (!report.startsAtGenesis && options.requireGenesis) {
        return fail(e, "deleted", `the log starts at seq ${r.seq}: records 1..${r.seq - 1} are missing`, 1);
      }
      report.first = { seq: r.seq, file: e.file, line: e.line };
    } else if (r.seq === expectedSeq) {
      if (r.prev !== prevHash) {
        return fail(
          e,
          "altered",
          `record at ${where(e)} (seq ${r.seq}) does not chain to the previous record (prev mismatch): it comes from another chain`,
          expectedSeq,
        );
      }
    } else if (r.seq > expectedSeq) {
      const later = entries.findIndex((x, k) => k > i && x.macOk && x.record!.seq === expectedSeq);
      if (later >= 0) {
        return fail(
          e,
          "reordered",
          `record seq ${r.seq} at ${where(e)} comes before seq ${expectedSeq}, which appears later at ${where(entries[later]!)}: reordered`,
          expectedSeq,
        );
      }
      const missing = r.seq - expectedSeq === 1 ? `record ${expectedSeq} is` : `records ${expectedSeq}..${r.seq - 1} are`;
      return fail(e, "deleted", `${missing} missing before ${where(e)} (seq ${r.seq}): deleted`, expectedSeq);
    } else {
      const earlier = entries.findIndex((x, k) => k < i && x.macOk && x.record!.seq === r.seq && x.hash === e.hash);
      if (earlier >= 0) {
        return fail(
          e,
          "inserted",
          `record at ${where(e)} is a copy of seq ${r.seq} from ${where(entries[earlier]!)}: inserted`,
          expectedSeq,
        );
      }
      return fail(e, "reordered", `record seq ${r.seq} at ${where(e)} comes after seq ${expectedSeq - 1}: reordered`, expectedSeq);
    }
    prevHash = e.hash!;
    expectedSeq = r.seq + 1;
    report.records++;
    report.head = { seq: r.seq, hash: e.hash! };
  }

  if (expectHead !== undefined) {
    const match = entries.find((x) => x.macOk && x.record!.seq === expectHead.seq);
    const lastEntry = entries[entries.length - 1];
    if (match === undefined || report.head === undefined || report.head.seq < expectHead.seq) {
      report.expectedHead = { head: expectHead, matched: false };
      const ends = report.head === undefined ? "the log has no records" : `the log ends at seq ${report.head.seq}`;
      const at = lastEntry ?? { file: list[list.length - 1] ?? "", line: 0, bytes: 0, terminated: true, macOk: false };
      return fail(
        at,
        "truncated",
        `${ends}, but the published head is ${formatAuditHead(expectHead)}: trailing records were removed`,
        expectHead.seq,
      );
    }
    if (match.hash !== expectHead.hash) {
      report.expectedHead = { head: expectHead, matched: false };
      return fail(
        match,
        "altered",
        `record seq ${expectHead.seq} at ${where(match)} differs from the published head ${formatAuditHead(expectHead)}`,
        expectHead.seq,
      );
    }
    report.expectedHead = { head: expectHead, matched: true };
  }
  return report;
}

function parseLine(bytes: Buffer): { record?: AuditRecord; problem?: string } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { problem: "not valid UTF-8" };
  }
  if (text.length === 0) return { problem: "empty line" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "not valid JSON" };
  }
  // Structure checks are shared with the writer.
  const checked = checkStructure(value);
  return checked;
}

function checkStructure(value: unknown): { record?: AuditRecord; problem?: string } {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { problem: "not a JSON object" };
  const r = value as Record<string, unknown>;
  const hash = /^[0-9a-f]{64}$/;
  if (typeof r.seq !== "number" || !Number.isSafeInteger(r.seq) || r.seq < 1) return { problem: "seq is not a positive integer" };
  if (typeof r.prev !== "string" || !hash.test(r.prev)) return { problem: "prev is not a SHA-256 hex digest" };
  if (typeof r.mac !== "string" || !hash.test(r.mac)) return { problem: "mac is not a SHA-256 hex digest" };
  if (typeof r.kid !== "string") return { problem: "kid is missing" };
  // A structurally odd but complete record still goes through the MAC check (and fails it).
  return { record: value as AuditRecord };
}

function tornMatches(recovery: AuditRecord, run: Entry[]): boolean {
  const torn = recovery.torn;
  if (!Array.isArray(torn) || torn.length !== run.length) return false;
  return torn.every((t, k) => t.bytes === run[k]!.bytes && t.sha256 === run[k]!.sha256);
}

/** Human-readable report (for `ahp audit verify`). */
export function formatVerifyReport(report: AuditVerifyReport): string {
  const lines: string[] = [];
  const files = report.files.length === 1 ? report.files[0]! : `${report.files.length} files (${report.files.join(", ")})`;
  lines.push(`audit log: ${files}`);
  lines.push(`key id: ${report.keyId}`);
  if (report.first !== undefined && report.head !== undefined) {
    const origin = report.startsAtGenesis ? "from genesis" : `starts at seq ${report.first.seq}: earlier records rotated away or removed`;
    lines.push(`records: ${report.records} verified, seq ${report.first.seq}..${report.head.seq} (${origin})`);
    lines.push(`head: ${formatAuditHead(report.head)}`);
  } else {
    lines.push(`records: ${report.records} verified`);
  }
  for (const r of report.recovered) lines.push(`recovered torn line at ${r.file}:${r.line} (${r.bytes} bytes, earlier crash)`);
  if (report.expectedHead?.matched) lines.push(`expected head ${formatAuditHead(report.expectedHead.head)}: present`);
  switch (report.status) {
    case "intact":
      lines.push("OK: chain intact");
      break;
    case "torn_tail":
      lines.push(
        `OK with warning (torn_tail): the last line at ${report.tornTail!.file}:${report.tornTail!.line} is incomplete (${report.tornTail!.bytes} bytes); the writer stopped mid-write`,
      );
      break;
    case "wrong_key":
      lines.push(`WRONG KEY: ${report.break!.message}`);
      break;
    case "broken":
      lines.push(`TAMPERED (${report.break!.kind}) at ${report.break!.file}:${report.break!.line}: ${report.break!.message}`);
      break;
  }
  return `${lines.join("\n")}\n`;
}

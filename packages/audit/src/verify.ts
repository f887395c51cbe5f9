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
 * - `truncated`: the log ends before its signed checkpoint (checked by default) or before a
 *   published head (`expectHead`);
 * - `checkpoint`: the checkpoint file does not verify, belongs to another key or replica, or is
 *   missing although the log's writer said it kept one;
 * - `wrong_key`: no record was written with the given key (key id differs): not tampering.
 *
 * A torn last line (a writer killed mid-write: one unterminated line that is not a record) is
 * reported as `tornTail`, not as a break, unless the checkpoint proves that the record it cut
 * was once complete (then it is `truncated`). Torn lines that a later writer recovered (a
 * `recovery` record naming their length and hash) are accepted and listed.
 */
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { readAuditAnchor } from "./anchor.js";
import { checkCheckpointMac, checkpointPathFor, readCheckpoint, type AuditCheckpoint } from "./checkpoint.js";
import { AuditError } from "./errors.js";
import { auditLogFiles } from "./file-sink.js";
import { toAuditKey, type AuditKey, type AuditKeyInput } from "./key.js";
import { readRawLines } from "./lines.js";
import { checkRotationManifestMac, readRotationManifest, rotationPathFor, type AuditRotationManifest } from "./manifest.js";
import { checkRecordMac, formatAuditHead, genesisHash, parseAuditHead, recordHash, type AuditHead, type AuditRecord } from "./record.js";

/**
 * How a chain is broken: a record `altered`, `deleted`, `inserted` or `reordered`; records
 * `truncated` from the end (found by the checkpoint or an expected head); a `checkpoint` that does
 * not match the log; or a `wrong_key` (the records were MACed with another key).
 */
export type AuditBreakKind = "altered" | "deleted" | "inserted" | "reordered" | "truncated" | "checkpoint" | "wrong_key";

/** What the checkpoint check found. */
export interface AuditCheckpointFinding {
  /** The checkpoint file looked at. */
  file: string;
  /**
   * - `verified`: the log holds the checkpoint's record unchanged;
   * - `before_start`: it names a record before the first one present (rotated away): not checkable;
   * - `none`: no checkpoint file, and the log's writers did not keep one;
   * - `skipped`: not checked (`checkpoint: false`);
   * - `failed`: see the report's `break` (`truncated`, `altered` or `checkpoint`).
   */
  status: "verified" | "before_start" | "none" | "skipped" | "failed";
  seq?: number;
  /** When the checkpoint was taken. */
  time?: string;
}

/** Where and how {@link verifyAuditLog} found the chain broken: the kind, the file and line, the seq. */
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

/** The result of {@link verifyAuditLog}: the status, what was verified, where it broke, the head and the checkpoint check. */
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
   * rotated away (as the signed rotation manifest says, see `rotation`) or, with
   * `allowMissingHead`, cut on purpose.
   */
  startsAtGenesis: boolean;
  /** When the log does not start at genesis: the rotation manifest that accounts for the missing head. */
  rotation?: { file: string; removedThrough: number; time: string };
  /** True when the head was missing and accepted only because `allowMissingHead` was given. */
  headUnchecked?: boolean;
  /** Last verified record: publish it (`formatAuditHead`) to detect later truncation. */
  head?: AuditHead;
  break?: AuditBreak;
  /** The incomplete line(s) at the end of the last file (a writer died mid-write): where, how long, how many. */
  tornTail?: { file: string; line: number; bytes: number; lines: number };
  /** The checkpoint check (absent when the chain broke before it could be made). */
  checkpoint?: AuditCheckpointFinding;
  /** The external anchor check, when an `anchor` was given (`file` is the anchor's path or URL). */
  anchor?: AuditCheckpointFinding;
  /** The replica id the records carry, when they carry one (all the same). */
  replica?: string;
  /** Every distinct replica id seen, when the records disagree (`"-"` for records without one). */
  replicas?: string[];
  /** Torn lines covered by a `recovery` record. */
  recovered: { file: string; line: number; bytes: number }[];
  /** Result of the `expectHead` check, when one was asked for. */
  expectedHead?: { head: AuditHead; matched: boolean };
}

/** Options of {@link verifyAuditLog}: the checkpoint to check against, an expected head, genesis required or not. */
export interface VerifyAuditOptions {
  /** A head published earlier (`"<seq>:<hash>"` or an object): the log must contain it unchanged. */
  expectHead?: AuditHead | string;
  /**
   * Accept a log whose first records are missing although no rotation manifest accounts for
   * them (a log cut on purpose). Default false: a chain must start at seq 1 from the genesis
   * value, or where the signed rotation manifest (`<live file>.rotation`) says rotation removed
   * the records before it; otherwise it is `deleted`.
   */
  allowMissingHead?: boolean;
  /** @deprecated Genesis (or a rotation manifest) is required by default; `false` is `allowMissingHead: true`. */
  requireGenesis?: boolean;
  /** The rotation manifest to accept a missing head with. Default `<live file>.rotation`. */
  rotationManifest?: string;
  /**
   * An external anchor (file path, `file:` URL or `http(s)://` URL, see `toAuditAnchor`): its
   * latest checkpoint must verify and be covered by the log, else records were removed behind
   * it (`truncated`) or rewritten (`altered`). An anchor that cannot be read, or holds a
   * checkpoint that does not verify, is `checkpoint`; one that holds none yet is reported (`none`).
   */
  anchor?: string;
  /**
   * The signed checkpoint to check the log against: a path, or `false` to skip the check.
   * Default `<live file>.checkpoint` (the live file: the path given, or the last of a list).
   */
  checkpoint?: string | false;
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
  if (firstRecord !== undefined && !parsedRecords.some((e) => e.macOk)) {
    // Not one record verifies. With the records' own key id differing from the key's, or with
    // their chain hashes consistent (each prev is the hash of the record before it), this is
    // the wrong key; a chain broken as well is still reported as tampering below.
    const ids = new Set(parsedRecords.map((e) => e.record!.kid));
    const consistent = chainConsistent(parsedRecords);
    if (!ids.has(key.id) || consistent) {
      const written = ids.size === 1 ? `key ${firstRecord.record!.kid}` : `keys ${[...ids].join(", ")}`;
      return fail(
        firstRecord,
        "wrong_key",
        ids.has(key.id)
          ? `no record verifies with the given key ${key.id}, although the chain's hashes are consistent: wrong key, not tampering`
          : `the records were written with ${written}; the given key is ${key.id} (wrong key, not tampering)`,
      );
    }
  }
  const allowMissingHead = options.allowMissingHead === true || options.requireGenesis === false;
  const live = typeof files === "string" ? files : list.at(-1);
  const manifest =
    allowMissingHead || live === undefined ? undefined : await loadManifest(options.rotationManifest ?? rotationPathFor(live), key);

  const genesis = genesisHash(key.id);
  const replicas = new Set<string>();
  let declaredCheckpoint: string | undefined;
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
      // A writer that dies mid-write leaves the start of a record: never valid JSON. (Several
      // such lines: it also died while starting again, before its recovery record was written.)
      if (j === entries.length && run.every((r) => r.file === lastFile && isCutShort(r))) {
        const torn = run[0]!;
        report.tornTail = { file: torn.file, line: torn.line, bytes: run.reduce((n, r) => n + r.bytes, 0), lines: run.length };
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
      if (!report.startsAtGenesis) {
        const missing = r.seq === 2 ? "record 1 is" : `records 1..${r.seq - 1} are`;
        const genesisLater = entries.findIndex((x, k) => k > i && x.macOk && x.record!.seq === 1);
        if (genesisLater >= 0) {
          return fail(
            e,
            "reordered",
            `record seq ${r.seq} at ${where(e)} comes before seq 1, which appears later at ${where(entries[genesisLater]!)}: reordered`,
            1,
          );
        }
        if (allowMissingHead) report.headUnchecked = true;
        else if (manifest === undefined || "problem" in manifest) {
          const why =
            manifest === undefined
              ? "no rotation manifest says they were rotated away"
              : `the rotation manifest does not account for them (${manifest.problem})`;
          return fail(
            e,
            "deleted",
            `the log starts at seq ${r.seq}: ${missing} missing and ${why}: the head of the log was cut (--allow-missing-head accepts a log cut on purpose)`,
            1,
          );
        } else {
          const m = manifest.manifest;
          if (r.seq > m.removed_through + 1) {
            return fail(
              e,
              "deleted",
              `the log starts at seq ${r.seq}, but its rotation manifest (${manifest.file}, ${m.time}) says only records 1..${m.removed_through} were rotated away: records ${m.removed_through + 1}..${r.seq - 1} are missing`,
              m.removed_through + 1,
            );
          }
          if (r.seq === m.removed_through + 1 && r.prev !== m.head) {
            return fail(
              e,
              "altered",
              `record at ${where(e)} (seq ${r.seq}) does not chain to the last rotated record named by the rotation manifest ${manifest.file}`,
              r.seq,
            );
          }
          report.rotation = { file: manifest.file, removedThrough: m.removed_through, time: m.time };
        }
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
    replicas.add(typeof r.replica === "string" ? r.replica : "-");
    if (typeof r.writer?.checkpoint === "string") declaredCheckpoint = r.writer.checkpoint;
  }
  if (replicas.size === 1 && !replicas.has("-")) report.replica = [...replicas][0]!;
  else if (replicas.size > 1) report.replicas = [...replicas].sort();

  const checked = await checkAgainstCheckpoint(report, entries, list, live, key, options, declaredCheckpoint);
  if (checked !== undefined) return fail(checked.at, checked.kind, checked.message, checked.expectedSeq);
  if (options.anchor !== undefined) {
    const anchored = await checkAgainstAnchor(report, entries, list, key, options.anchor);
    if (anchored !== undefined) return fail(anchored.at, anchored.kind, anchored.message, anchored.expectedSeq);
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

interface CheckpointBreak {
  at: Entry;
  kind: AuditBreakKind;
  message: string;
  expectedSeq?: number;
}

/** Compares the verified chain with its signed checkpoint; returns the break it finds, if any. */
async function checkAgainstCheckpoint(
  report: AuditVerifyReport,
  entries: Entry[],
  list: string[],
  live: string | undefined,
  key: AuditKey,
  options: VerifyAuditOptions,
  declared: string | undefined,
): Promise<CheckpointBreak | undefined> {
  const lastEntry = entries[entries.length - 1];
  const at: Entry = lastEntry ?? { file: list[list.length - 1] ?? "", line: 0, bytes: 0, terminated: true, macOk: false };
  if (options.checkpoint === false || live === undefined) {
    if (options.checkpoint === false) report.checkpoint = { file: "", status: "skipped" };
    return undefined;
  }
  const file = options.checkpoint ?? checkpointPathFor(live);
  const failed = (finding: Partial<AuditCheckpointFinding>, kind: AuditBreakKind, message: string, expectedSeq?: number, where = at) => {
    report.checkpoint = { file, status: "failed", ...finding };
    return { at: where, kind, message, ...(expectedSeq === undefined ? {} : { expectedSeq }) };
  };
  const read = await readCheckpoint(file);
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
  return compareWithCheckpoint(report, entries, at, key, read.checkpoint, file, "checkpoint", (finding) => {
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
  entries: Entry[],
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
  const match = entries.find((x) => x.macOk && x.record!.seq === cp.seq);
  if (match === undefined || match.hash !== cp.head) {
    return failed("altered", `record seq ${cp.seq} differs from ${name} (taken ${cp.time})`, cp.seq, match ?? at);
  }
  record({ file, status: "verified", ...seen });
  return undefined;
}

/** Compares the verified chain with the latest checkpoint an external anchor holds. */
async function checkAgainstAnchor(
  report: AuditVerifyReport,
  entries: Entry[],
  list: string[],
  key: AuditKey,
  target: string,
): Promise<CheckpointBreak | undefined> {
  const at: Entry = entries.at(-1) ?? { file: list.at(-1) ?? "", line: 0, bytes: 0, terminated: true, macOk: false };
  const read = await readAuditAnchor(target);
  const name = /^https?:/i.test(target) ? target.replace(/\/\/[^/@]*@/, "//") : target;
  if (read === undefined) {
    report.anchor = { file: name, status: "none" };
    return undefined;
  }
  if ("problem" in read) {
    report.anchor = { file: name, status: "failed" };
    return { at, kind: "checkpoint", message: `the anchor cannot be checked: ${read.problem}` };
  }
  return compareWithCheckpoint(report, entries, at, key, read.checkpoint, name, "anchor", (finding) => {
    report.anchor = finding;
  });
}

/** Reads and checks a rotation manifest: undefined when there is none. */
async function loadManifest(
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

/** True when consecutive records chain by hash and seq (whatever their MACs say). */
function chainConsistent(records: Entry[]): boolean {
  for (let i = 1; i < records.length; i++) {
    const a = records[i - 1]!;
    const b = records[i]!;
    if (b.record!.seq !== a.record!.seq + 1 || b.record!.prev !== a.hash) return false;
  }
  return true;
}

/** The start of a record cut off by a crash: not valid JSON (or UTF-8), never empty. */
const isCutShort = (e: Entry): boolean => e.bytes > 0 && (e.problem === "not valid JSON" || e.problem === "not valid UTF-8");

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

/** The result of verifying several logs (one per replica), each with its own chain. */
export interface AuditLogsReport {
  logs: Array<{ path: string; report?: AuditVerifyReport; error?: string }>;
  /** True when every log verified (intact or torn tail). */
  ok: boolean;
  /** Replica ids claimed by more than one of the logs (a copy, or two writers configured alike). */
  duplicateReplicas: string[];
}

/**
 * Verifies each path as its own log (with its rotated siblings and its checkpoint). A log that
 * cannot be read is reported with `error`, and the others are still verified.
 */
export async function verifyAuditLogs(
  paths: readonly string[],
  key: AuditKeyInput,
  options: VerifyAuditOptions = {},
): Promise<AuditLogsReport> {
  const k = toAuditKey(key);
  const logs: AuditLogsReport["logs"] = [];
  for (const path of paths) {
    try {
      logs.push({ path, report: await verifyAuditLog(path, k, options) });
    } catch (error) {
      logs.push({ path, error: error instanceof Error ? error.message : String(error) });
    }
  }
  const owners = new Map<string, number>();
  for (const { report } of logs) if (report?.replica !== undefined) owners.set(report.replica, (owners.get(report.replica) ?? 0) + 1);
  return {
    logs,
    ok: logs.every((l) => l.report?.ok === true),
    duplicateReplicas: [...owners].filter(([, n]) => n > 1).map(([id]) => id),
  };
}

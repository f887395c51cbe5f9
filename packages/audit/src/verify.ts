/**
 * Verification of an audit log (one file or a rotated set, in chain order). Reports the first
 * break and what kind it is:
 *
 * - `altered`: a record's MAC does not match its content (a field was changed), or a line is
 *   not a record and the chain does not continue around it;
 * - `inserted`: a line that does not belong (a forged record whose MAC fails, or a copy of an
 *   earlier record), with the chain continuing around it;
 * - `deleted`: a seq gap with no later record filling it (the next record's `prev` does not
 *   match because records are missing), or a missing head (the log does not start at seq 1)
 *   that no signed rotation manifest accounts for, unless `allowMissingHead`;
 * - `reordered`: records out of seq order (the missing seq appears later, or a seq reappears);
 * - `truncated`: the log ends before its signed checkpoint (checked by default), before an
 *   external anchor's latest checkpoint (`anchor`) or before a published head (`expectHead`);
 * - `checkpoint`: the checkpoint file (or the anchor) does not verify, belongs to another key or
 *   replica, or is missing although the log's writer said it kept one;
 * - `wrong_key`: no record verifies with the given key, and the records carry another key id or
 *   their chain hashes are consistent: not tampering.
 *
 * A torn last line (a writer killed mid-write: one unterminated line that is not a record) is
 * reported as `tornTail`, not as a break, unless the checkpoint proves that the record it cut
 * was once complete (then it is `truncated`). Torn lines that a later writer recovered (a
 * `recovery` record naming their length and hash) are accepted and listed.
 */
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { AuditError } from "./errors.js";
import { auditLogFiles } from "./file-sink.js";
import { toAuditKey, type AuditKeyInput } from "./key.js";
import { readRawLines } from "./lines.js";
import { rotationPathFor } from "./manifest.js";
import { checkRecordMac, formatAuditHead, genesisHash, parseAuditHead, recordHash, type AuditHead, type AuditRecord } from "./record.js";
import { chainConsistent, checkAgainstAnchor, checkAgainstCheckpoint, loadManifest } from "./verify-checks.js";
import type { AuditBreakKind, AuditVerifyReport, Entry, VerifyAuditOptions } from "./verify-types.js";

export type { AuditBreak, AuditBreakKind, AuditCheckpointFinding, AuditVerifyReport, VerifyAuditOptions } from "./verify-types.js";
export { formatVerifyReport, formatVerifySummary } from "./verify-format.js";

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

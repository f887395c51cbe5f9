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
import { AuditError } from "./errors.js";
import { readAuditAnchor } from "./anchor.js";
import { checkpointPathFor, readCheckpoint } from "./checkpoint.js";
import { auditLogFiles } from "./file-sink.js";
import { toAuditKey, type AuditKey, type AuditKeyInput } from "./key.js";
import { rotationPathFor } from "./manifest.js";
import { formatAuditHead, genesisHash, parseAuditHead, type AuditHead, type AuditRecord } from "./record.js";
import { checkAgainstAnchor, checkAgainstCheckpoint, loadManifest, type CheckpointBreak } from "./verify-checks.js";
import { EntryStream, checkReadable, findEntry, readEntries, type IndexedEntry } from "./verify-entries.js";
import type { AuditBreakKind, AuditVerifyReport, Entry, VerifyAuditOptions } from "./verify-types.js";

export type { AuditBreak, AuditBreakKind, AuditCheckpointFinding, AuditVerifyReport, VerifyAuditOptions } from "./verify-types.js";
export { formatVerifyReport, formatVerifySummary } from "./verify-format.js";

/**
 * Verifies `files` with `key`. A single path stands for the log and its rotated siblings
 * (`auditLogFiles(path)`); an array is taken as the chain order. Throws `INVALID_ARGUMENT`
 * when a file cannot be read.
 *
 * The log is read as a stream: memory stays flat whatever its length (what is kept is the
 * previous record's hash and seq, and the few records the checkpoint, the anchor or `expectHead`
 * name). The checkpoint and the anchor are read before the log, so that a log still being
 * written holds at least what they name.
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
  await checkReadable(list);

  const report: AuditVerifyReport = {
    status: "intact",
    ok: true,
    keyId: key.id,
    files: list,
    records: 0,
    startsAtGenesis: false,
    recovered: [],
  };
  const allowMissingHead = options.allowMissingHead === true || options.requireGenesis === false;
  const live = typeof files === "string" ? files : list.at(-1);
  const checkpointFile = options.checkpoint === false || live === undefined ? undefined : (options.checkpoint ?? checkpointPathFor(live));
  const checkpointRead = checkpointFile === undefined ? undefined : await readCheckpoint(checkpointFile);
  const anchorRead = options.anchor === undefined ? undefined : await readAuditAnchor(options.anchor);
  // The records these name are kept when the chain reaches them.
  const wanted = new Set<number>();
  if (checkpointRead !== undefined && "checkpoint" in checkpointRead) wanted.add(checkpointRead.checkpoint.seq);
  if (anchorRead !== undefined && "checkpoint" in anchorRead) wanted.add(anchorRead.checkpoint.seq);
  if (expectHead !== undefined) wanted.add(expectHead.seq);

  const walk: Walk = {
    report,
    list,
    key,
    allowMissingHead,
    manifest:
      allowMissingHead || live === undefined ? undefined : await loadManifest(options.rotationManifest ?? rotationPathFor(live), key),
    wanted,
    named: new Map(),
    anyMacOk: false,
  };
  const fail = async (found: CheckpointBreak): Promise<AuditVerifyReport> => {
    // Not one record verified before the break: with no record verifying anywhere, this may be the wrong key.
    const wrong = walk.anyMacOk ? undefined : await wrongKey(list, key);
    const { at, kind, message, expectedSeq } = wrong ?? found;
    report.status = kind === "wrong_key" ? "wrong_key" : "broken";
    report.ok = false;
    report.break = {
      kind,
      file: at.file,
      line: at.line,
      ...(at.record === undefined ? {} : { seq: at.record.seq }),
      ...(expectedSeq === undefined ? {} : { expectedSeq }),
      message,
    };
    return report;
  };

  const broken = await walkChain(walk);
  if (broken !== undefined) return fail(broken);
  const at: Entry = walk.last ?? { file: list[list.length - 1] ?? "", line: 0, bytes: 0, terminated: true, macOk: false };
  const named = (seq: number) => walk.named.get(seq);

  const checked = checkAgainstCheckpoint(report, at, named, checkpointFile, checkpointRead, key, options, walk.declaredCheckpoint);
  if (checked !== undefined) return fail(checked);
  if (options.anchor !== undefined) {
    const anchored = checkAgainstAnchor(report, at, named, options.anchor, anchorRead, key);
    if (anchored !== undefined) return fail(anchored);
  }

  if (expectHead !== undefined) {
    const match = named(expectHead.seq);
    if (match === undefined || report.head === undefined || report.head.seq < expectHead.seq) {
      report.expectedHead = { head: expectHead, matched: false };
      const ends = report.head === undefined ? "the log has no records" : `the log ends at seq ${report.head.seq}`;
      return fail({
        at,
        kind: "truncated",
        message: `${ends}, but the published head is ${formatAuditHead(expectHead)}: trailing records were removed`,
        expectedSeq: expectHead.seq,
      });
    }
    if (match.hash !== expectHead.hash) {
      report.expectedHead = { head: expectHead, matched: false };
      return fail({
        at: match,
        kind: "altered",
        message: `record seq ${expectHead.seq} at ${where(match)} differs from the published head ${formatAuditHead(expectHead)}`,
        expectedSeq: expectHead.seq,
      });
    }
    report.expectedHead = { head: expectHead, matched: true };
  }
  return report;
}

/** What {@link walkChain} works with and leaves behind. */
interface Walk {
  report: AuditVerifyReport;
  list: string[];
  key: AuditKey;
  allowMissingHead: boolean;
  manifest: Awaited<ReturnType<typeof loadManifest>>;
  /** Seqs whose chain records are kept in `named`. */
  wanted: Set<number>;
  named: Map<number, Entry>;
  /** True once a record whose MAC verifies was read. */
  anyMacOk: boolean;
  /** The last line read. */
  last?: Entry;
  /** The checkpoint file name the log's last writer declared. */
  declaredCheckpoint?: string;
}

const where = (e: Entry) => `${e.file}:${e.line}`;

/** Reads the chain from its first line to its end or its first break (returned). */
async function walkChain(walk: Walk): Promise<CheckpointBreak | undefined> {
  const stream = new EntryStream(readEntries(walk.list, walk.key));
  try {
    return await walkStream(walk, stream);
  } finally {
    await stream.close();
  }
}

async function walkStream(walk: Walk, stream: EntryStream): Promise<CheckpointBreak | undefined> {
  const { report, list, key, allowMissingHead, manifest } = walk;
  const genesis = genesisHash(key.id);
  const replicas = new Set<string>();
  let prevHash: string | undefined;
  let expectedSeq: number | undefined;
  const continuesChain = (next: Entry | undefined): boolean => {
    if (next === undefined || !next.macOk) return false;
    const r = next.record!;
    if (prevHash === undefined) return r.seq === 1 && r.prev === genesis;
    return r.seq === expectedSeq && r.prev === prevHash;
  };
  const broke = (at: Entry, kind: AuditBreakKind, message: string, expected?: number): CheckpointBreak => ({
    at,
    kind,
    message,
    ...(expected === undefined ? {} : { expectedSeq: expected }),
  });

  for (;;) {
    const e = await stream.next();
    if (e === undefined) break;
    walk.last = e;
    if (e.record === undefined) {
      const run: IndexedEntry[] = [e];
      for (let peeked = await stream.peek(); peeked !== undefined && peeked.record === undefined; peeked = await stream.peek()) {
        run.push((await stream.next())!);
      }
      walk.last = run[run.length - 1]!;
      const next = await stream.peek();
      const lastFile = list[list.length - 1];
      // A writer that dies mid-write leaves the start of a record: never valid JSON. (Several
      // such lines: it also died while starting again, before its recovery record was written.)
      if (next === undefined && run.every((r) => r.file === lastFile && isCutShort(r))) {
        const torn = run[0]!;
        report.tornTail = { file: torn.file, line: torn.line, bytes: run.reduce((n, r) => n + r.bytes, 0), lines: run.length };
        report.status = "torn_tail";
        break;
      }
      if (next?.macOk && next.record!.kind === "recovery" && tornMatches(next.record!, run)) {
        for (const r of run) report.recovered.push({ file: r.file, line: r.line, bytes: r.bytes });
        continue;
      }
      if (continuesChain(next)) {
        return broke(e, "inserted", `line ${where(e)} is not an audit record (${e.problem}) and the chain continues around it: inserted`);
      }
      return broke(e, "altered", `line ${where(e)} is not a valid audit record (${e.problem})`, expectedSeq);
    }

    const r = e.record;
    if (!e.macOk) {
      if (continuesChain(await stream.peek())) {
        return broke(
          e,
          "inserted",
          `record at ${where(e)} (seq ${r.seq}) has an invalid MAC and the chain continues around it: a forged record was inserted`,
          expectedSeq,
        );
      }
      const why = r.kid !== key.id ? `its key id ${r.kid} differs from ${key.id}` : "its MAC does not match its content";
      return broke(e, "altered", `record at ${where(e)} (seq ${r.seq}) was altered: ${why}`, expectedSeq);
    }
    walk.anyMacOk = true;

    if (prevHash === undefined || expectedSeq === undefined) {
      if (r.seq === 1 && r.prev !== genesis) {
        return broke(e, "altered", `record at ${where(e)} is seq 1 but does not start from the genesis value`);
      }
      report.startsAtGenesis = r.seq === 1;
      if (!report.startsAtGenesis) {
        const missing = r.seq === 2 ? "record 1 is" : `records 1..${r.seq - 1} are`;
        const genesisLater = await findEntry(
          list,
          key,
          { after: e.index },
          (x) => x.seq === 1,
          (x) => x.macOk && x.record!.seq === 1,
        );
        if (genesisLater !== undefined) {
          return broke(
            e,
            "reordered",
            `record seq ${r.seq} at ${where(e)} comes before seq 1, which appears later at ${where(genesisLater)}: reordered`,
            1,
          );
        }
        if (allowMissingHead) report.headUnchecked = true;
        else if (manifest === undefined || "problem" in manifest) {
          const why =
            manifest === undefined
              ? "no rotation manifest says they were rotated away"
              : `the rotation manifest does not account for them (${manifest.problem})`;
          return broke(
            e,
            "deleted",
            `the log starts at seq ${r.seq}: ${missing} missing and ${why}: the head of the log was cut (--allow-missing-head accepts a log cut on purpose)`,
            1,
          );
        } else {
          const m = manifest.manifest;
          if (r.seq > m.removed_through + 1) {
            return broke(
              e,
              "deleted",
              `the log starts at seq ${r.seq}, but its rotation manifest (${manifest.file}, ${m.time}) says only records 1..${m.removed_through} were rotated away: records ${m.removed_through + 1}..${r.seq - 1} are missing`,
              m.removed_through + 1,
            );
          }
          if (r.seq === m.removed_through + 1 && r.prev !== m.head) {
            return broke(
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
        return broke(
          e,
          "altered",
          `record at ${where(e)} (seq ${r.seq}) does not chain to the previous record (prev mismatch): it comes from another chain`,
          expectedSeq,
        );
      }
    } else if (r.seq > expectedSeq) {
      const seq = expectedSeq;
      const later = await findEntry(
        list,
        key,
        { after: e.index },
        (x) => x.seq === seq,
        (x) => x.macOk && x.record!.seq === seq,
      );
      if (later !== undefined) {
        return broke(
          e,
          "reordered",
          `record seq ${r.seq} at ${where(e)} comes before seq ${expectedSeq}, which appears later at ${where(later)}: reordered`,
          expectedSeq,
        );
      }
      const missing = r.seq - expectedSeq === 1 ? `record ${expectedSeq} is` : `records ${expectedSeq}..${r.seq - 1} are`;
      return broke(e, "deleted", `${missing} missing before ${where(e)} (seq ${r.seq}): deleted`, expectedSeq);
    } else {
      const earlier = await findEntry(
        list,
        key,
        { before: e.index },
        (x) => x.seq === r.seq,
        (x) => x.macOk && x.record!.seq === r.seq && x.hash === e.hash,
      );
      if (earlier !== undefined) {
        return broke(e, "inserted", `record at ${where(e)} is a copy of seq ${r.seq} from ${where(earlier)}: inserted`, expectedSeq);
      }
      return broke(e, "reordered", `record seq ${r.seq} at ${where(e)} comes after seq ${expectedSeq - 1}: reordered`, expectedSeq);
    }
    prevHash = e.hash!;
    expectedSeq = r.seq + 1;
    report.records++;
    report.head = { seq: r.seq, hash: e.hash! };
    if (walk.wanted.has(r.seq) && !walk.named.has(r.seq)) walk.named.set(r.seq, e);
    replicas.add(typeof r.replica === "string" ? r.replica : "-");
    if (typeof r.writer?.checkpoint === "string") walk.declaredCheckpoint = r.writer.checkpoint;
  }
  if (replicas.size === 1 && !replicas.has("-")) report.replica = [...replicas][0]!;
  else if (replicas.size > 1) report.replicas = [...replicas].sort();
  return undefined;
}

/**
 * When no record of the log verifies with the key: with the records' own key id differing from
 * the key's, or with their chain hashes consistent (each prev is the hash of the record before
 * it), this is the wrong key, reported at the first record. A chain broken as well is still
 * tampering (undefined: the break found stands).
 */
async function wrongKey(list: readonly string[], key: AuditKey): Promise<CheckpointBreak | undefined> {
  let first: Entry | undefined;
  const ids = new Set<string>();
  let consistent = true;
  let previous: { seq: number; hash: string } | undefined;
  for await (const e of readEntries(list, key)) {
    const r = e.record;
    if (r === undefined) continue;
    if (e.macOk) return undefined;
    first ??= e;
    ids.add(r.kid);
    if (previous !== undefined && (r.seq !== previous.seq + 1 || r.prev !== previous.hash)) consistent = false;
    previous = { seq: r.seq, hash: e.hash! };
  }
  if (first === undefined || (ids.has(key.id) && !consistent)) return undefined;
  const written = ids.size === 1 ? `key ${first.record!.kid}` : `keys ${[...ids].join(", ")}`;
  return {
    at: first,
    kind: "wrong_key",
    message: ids.has(key.id)
      ? `no record verifies with the given key ${key.id}, although the chain's hashes are consistent: wrong key, not tampering`
      : `the records were written with ${written}; the given key is ${key.id} (wrong key, not tampering)`,
  };
}

/** The start of a record cut off by a crash: not valid JSON (or UTF-8), never empty. */
const isCutShort = (e: Entry): boolean => e.bytes > 0 && (e.problem === "not valid JSON" || e.problem === "not valid UTF-8");

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

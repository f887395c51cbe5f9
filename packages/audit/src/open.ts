/**
 * Opening a log: the options are checked, the sink opened (and proved writable), the existing
 * chain and checkpoint checked, the first checkpoint written, and a torn tail put on record.
 */
import { basename } from "node:path";
import { toAuditAnchor } from "./anchor.js";
import { checkCheckpointMac, checkpointPathFor, readCheckpoint, sealCheckpoint, writeCheckpoint } from "./checkpoint.js";
import { AuditError } from "./errors.js";
import { FileAuditSink } from "./file-sink.js";
import { toAuditKey, type AuditKey } from "./key.js";
import { AUDIT_SYNC_MODES, AuditLog, DEFAULT_CHECKPOINT_INTERVAL_MS, type AuditLogOptions } from "./log.js";
import { rotationPathFor } from "./manifest.js";
import { checkRecordMac, genesisHash, recordHash, type AuditRecord, type AuditWriterInfo } from "./record.js";
import type { AuditSinkState } from "./sink.js";

const REPLICA_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** Opens (or creates) a log and continues its chain. */
export async function openAuditLog(options: AuditLogOptions): Promise<AuditLog> {
  const key = toAuditKey(options.key);
  const sync = options.sync ?? "write";
  if (!AUDIT_SYNC_MODES.includes(sync)) throw new AuditError("INVALID_ARGUMENT", `sync must be none, write or fsync, got ${String(sync)}`);
  if (options.replicaId !== undefined && !REPLICA_ID.test(options.replicaId)) {
    throw new AuditError("INVALID_ARGUMENT", "replicaId must be 1 to 64 letters, digits or ._:- (starting with a letter or digit)");
  }
  const fileFsync = options.file?.fsync;
  if (sync === "fsync" && fileFsync !== undefined && fileFsync !== "always") {
    throw new AuditError("INVALID_ARGUMENT", `sync "fsync" needs file.fsync "always", got ${fileFsync}`);
  }
  let sink = options.sink;
  let ownSink = false;
  if (sink === undefined) {
    if (options.path === undefined) throw new AuditError("INVALID_ARGUMENT", "openAuditLog needs a path or a sink");
    sink = new FileAuditSink({ ...options.file, path: options.path, fsync: fileFsync ?? (sync === "fsync" ? "always" : "never") });
    ownSink = true;
  }
  const checkpointOption = options.checkpoint;
  const checkpointPath =
    checkpointOption === false
      ? undefined
      : (checkpointOption?.path ?? (options.path === undefined ? undefined : checkpointPathFor(options.path)));
  const intervalMs = checkpointOption === false ? 0 : (checkpointOption?.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS);
  if (!(intervalMs >= 0)) throw new AuditError("INVALID_ARGUMENT", "checkpoint.intervalMs must be 0 or more");

  const anchor =
    options.anchor === undefined ? undefined : typeof options.anchor === "string" ? toAuditAnchor(options.anchor) : options.anchor;
  if (anchor !== undefined && (checkpointPath === undefined || intervalMs === 0)) {
    throw new AuditError("INVALID_ARGUMENT", "an audit anchor publishes checkpoints: it needs checkpoints on");
  }
  const where = options.path ?? (sink instanceof FileAuditSink ? sink.path : "sink");
  let state: AuditSinkState;
  try {
    state = (await sink.open?.()) ?? {};
  } catch (error) {
    throw unwritable(where, error);
  }
  let seq = 0;
  let prev = genesisHash(key.id);
  /** Seq of the existing checkpoint; undefined when there is none. */
  let checkpointSeq: number | undefined;
  try {
    const last = state.last;
    if (last !== undefined) {
      if (last.kid !== key.id) {
        throw new AuditError(
          "KEY_MISMATCH",
          `the existing audit log was written with key ${last.kid}, this key is ${key.id}; start a new log for a new key`,
        );
      }
      if (!checkRecordMac(last, key)) {
        throw new AuditError(
          "CHAIN_BROKEN",
          `the last record of the existing audit log (seq ${last.seq}) does not verify; run verification before writing`,
        );
      }
      if (last.replica !== options.replicaId) {
        throw new AuditError(
          "REPLICA_MISMATCH",
          `the existing audit log was written by ${last.replica === undefined ? "a writer without replica id" : `replica ${last.replica}`}, ` +
            `this writer is ${options.replicaId === undefined ? "without replica id" : `replica ${options.replicaId}`}; each replica keeps its own log`,
        );
      }
      seq = last.seq;
      prev = recordHash(last);
    }
    // Also a writer that keeps no checkpoints itself checks an existing one (default path or given).
    const existing = checkpointOption === false && options.path !== undefined ? checkpointPathFor(options.path) : checkpointPath;
    if (existing !== undefined) checkpointSeq = await checkExistingCheckpoint(existing, key, options.replicaId, last);
  } catch (error) {
    await sink.close().catch(() => undefined);
    throw error;
  }
  // The first record says that checkpoints are kept, so one must exist before it is written
  // (else a crash within the first interval would leave a log whose checkpoint looks removed).
  let keepsCheckpoints = checkpointPath !== undefined && intervalMs > 0;
  if (keepsCheckpoints && checkpointSeq === undefined) {
    try {
      await sink.sync?.();
      const time = (options.clock?.() ?? new Date()).toISOString();
      await writeCheckpoint(
        checkpointPath!,
        sealCheckpoint({ seq, hash: prev }, key, { time, ...(options.replicaId === undefined ? {} : { replica: options.replicaId }) }),
      );
      checkpointSeq = seq;
    } catch (error) {
      keepsCheckpoints = false;
      const cause = error instanceof Error ? error : new Error(String(error));
      options.onincident?.({
        kind: "checkpoint_failed",
        message: `audit checkpoint ${checkpointPath} could not be created: ${cause.message}; this writer keeps none`,
        error: cause,
        consecutive: 1,
      });
    }
  }
  const writer: AuditWriterInfo = { pid: process.pid, sync, ...(keepsCheckpoints ? { checkpoint: basename(checkpointPath!) } : {}) };
  const manifestPath = options.rotationManifest ?? (where === "sink" ? undefined : rotationPathFor(where));
  const log = new AuditLog(key, sink, options, {
    seq,
    prev,
    sync,
    writer,
    syncEachGroup: sync === "fsync" && !ownSink,
    ...(keepsCheckpoints ? { checkpoint: { path: checkpointPath!, intervalMs, seq: checkpointSeq ?? 0 } } : {}),
    ...(anchor === undefined || !keepsCheckpoints ? {} : { anchor }),
    ...(manifestPath === undefined ? {} : { manifestPath }),
  });
  if (state.torn !== undefined && state.torn.length > 0) {
    const bytes = state.torn.reduce((n, t) => n + t.bytes, 0);
    // Pinned: kept and retried until written (the torn lines are only accepted with it).
    void log.appendPinned({
      kind: "recovery",
      torn: state.torn,
      reason: `previous writer stopped mid-record: ${state.torn.length} torn line(s), ${bytes} bytes, kept outside the chain`,
    });
    await log.flush();
  }
  if (log.checkpointPath !== undefined && anchor !== undefined) void log.checkpoint();
  return log;
}

/** An open that failed for a reason of the file system becomes `WRITE_FAILED`, naming the log; audit errors stay as they are. */
function unwritable(where: string, error: unknown): Error {
  if (AuditError.isInstance(error) && error.code !== "WRITE_FAILED") return error;
  const cause = error instanceof Error ? error : new Error(String(error));
  let root: Error = cause;
  while (root.cause instanceof Error) root = root.cause;
  return new AuditError("WRITE_FAILED", `audit log ${where} is not writable: ${root.message}`, { cause });
}

/** Checks an existing checkpoint file against the log's last record; returns its seq (undefined when there is none). */
async function checkExistingCheckpoint(
  path: string,
  key: AuditKey,
  replicaId: string | undefined,
  last: AuditRecord | undefined,
): Promise<number | undefined> {
  const read = await readCheckpoint(path);
  if (read === undefined) return undefined;
  const aside = "verify the log (ahp audit verify) and move the log and its checkpoint aside to start a new one";
  if ("problem" in read) throw new AuditError("CHAIN_BROKEN", `the audit checkpoint is damaged: ${read.problem}; ${aside}`);
  const cp = read.checkpoint;
  if (cp.kid !== key.id) {
    throw new AuditError("KEY_MISMATCH", `the audit checkpoint ${path} was written with key ${cp.kid}, this key is ${key.id}`);
  }
  if (!checkCheckpointMac(cp, key))
    throw new AuditError("CHAIN_BROKEN", `the audit checkpoint ${path} does not verify (altered); ${aside}`);
  if (cp.replica !== replicaId) {
    throw new AuditError(
      "REPLICA_MISMATCH",
      `the audit checkpoint ${path} belongs to ${cp.replica === undefined ? "no replica" : `replica ${cp.replica}`}`,
    );
  }
  const lastSeq = last?.seq ?? 0;
  if (cp.seq > lastSeq) {
    const range = cp.seq - lastSeq === 1 ? `record ${cp.seq} was` : `records ${lastSeq + 1}..${cp.seq} were`;
    throw new AuditError(
      "CHAIN_BROKEN",
      `the audit log ends at seq ${lastSeq}, but its signed checkpoint (taken ${cp.time}) names seq ${cp.seq}: ${range} removed (truncated); ${aside}`,
    );
  }
  if (cp.seq === lastSeq && cp.head !== (last === undefined ? genesisHash(key.id) : recordHash(last))) {
    throw new AuditError("CHAIN_BROKEN", `the last audit record (seq ${lastSeq}) differs from the signed checkpoint (altered); ${aside}`);
  }
  return cp.seq;
}

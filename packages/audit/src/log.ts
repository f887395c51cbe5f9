/**
 * The audit log writer: redacts, seals (seq, prev, mac) and appends records through one
 * write queue, so the order of `append()` calls is the chain order.
 *
 * Group commit: the records appended during one turn of the event loop are sealed together and
 * handed to the sink in one write at the end of that turn (and, with `sync: "fsync"`, flushed
 * with one fdatasync); records appended while a write is in flight form the next group. An
 * append resolves once its group is stored, which is when `withAudit` releases the decision
 * (write-ahead). A sink that stores a group synchronously (`appendBatchNow`, the file sink in
 * `write` mode) has its group sealed, written and its appends resolved in one callback at the
 * end of the turn. See docs/adr/0040-audit-write-ahead.md and 0172.
 */
import { SENSITIVE_KEY, redactSecrets, type Redactor } from "@ahp/core";
import type { AuditAnchor } from "./anchor.js";
import { sealCheckpoint, writeCheckpoint, type AuditCheckpoint } from "./checkpoint.js";
import { AuditError } from "./errors.js";
import type { FileAuditSinkOptions } from "./file-sink.js";
import type { AuditKey, AuditKeyInput } from "./key.js";
import { sealRotationManifest, writeRotationManifest } from "./manifest.js";
import { isoClock, memoizeRedactor, redactMember } from "./prepare.js";
import { recordHash, recordLine, sealRecord, type AuditEntry, type AuditHead, type AuditRecord, type AuditWriterInfo } from "./record.js";
import type { AuditSink, AuditSinkIncident } from "./sink.js";

/**
 * When a decision is released relative to its record:
 * - `none`: at once; the record follows (a crash can lose records of decisions already released);
 * - `write` (default): after the record's group was handed to the operating system (`write`
 *   returned): survives a crash of the process, not of the machine;
 * - `fsync`: after the group was also flushed to the disk (one fdatasync per group): survives
 *   power loss.
 */
export type AuditSyncMode = "none" | "write" | "fsync";
/** Every {@link AuditSyncMode}, for argument checking. */
export const AUDIT_SYNC_MODES: readonly AuditSyncMode[] = Object.freeze(["none", "write", "fsync"]);

/** Default interval of signed checkpoints (ms). */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1000;

/** What the log tells its owner (a harness logs these and counts them). Library code never logs. */
export interface AuditIncident {
  /**
   * - `write_failed`: a group could not be stored; its records are not in the log (their appends
   *   rejected with WRITE_FAILED), except recovery and incident records, which are retried;
   * - `restored`: the first group stored after failures;
   * - `file_replaced`: the live file was deleted while open; a new file continues the chain;
   * - `checkpoint_failed`: a checkpoint could not be written (records are still written);
   * - `anchor_failed`: a checkpoint could not be published to the external anchor (records and
   *   decisions are never held up by it; the next checkpoint is published again);
   * - `rotation_failed`: the rotation manifest could not be written, so no rotated file was
   *   deleted (the log keeps more files than `maxFiles` until it can).
   */
  kind: "write_failed" | "restored" | "file_replaced" | "checkpoint_failed" | "anchor_failed" | "rotation_failed";
  message: string;
  error?: Error;
  /** `write_failed`: records in the failed group. */
  records?: number;
  /** `write_failed`, `checkpoint_failed`, `anchor_failed`: failures in a row, this one included. */
  consecutive?: number;
}

/** Counters of an open log's writer (groups, records, failures, checkpoints). */
export interface AuditLogStats {
  /** Groups stored (writes). */
  groups: number;
  /** Records stored. */
  records: number;
  /** Most records stored in one group. */
  largestGroup: number;
  /** Groups that failed to store. */
  failedGroups: number;
  /** Checkpoints written. */
  checkpoints: number;
  /** Checkpoints published to the external anchor. */
  anchored: number;
  /** Publications to the external anchor that failed. */
  anchorFailures: number;
  /** Seq of the last checkpoint the anchor stored (0: none yet). */
  anchoredSeq: number;
}

/** Options of {@link openAuditLog}: the key, where records go, the sync mode, the replica id and checkpoints. */
export interface AuditLogOptions {
  /** The HMAC key (see `loadAuditKey`). Never logged; records carry its id only. */
  key: AuditKeyInput;
  /** Where records go. Default: a {@link FileAuditSink} at `path`. */
  sink?: AuditSink;
  /** Path of the live log file (when no `sink` is given). */
  path?: string;
  /** File sink options (rotation, ...) when `path` is used. `fsync` follows `sync` unless given. */
  file?: Omit<FileAuditSinkOptions, "path">;
  /** When decisions are released relative to their records (see {@link AuditSyncMode}). Default `write`. */
  sync?: AuditSyncMode;
  /**
   * The replica this writer is, for deployments with several harness processes (each keeps its
   * own chain). Recorded in every record and checkpoint; a log written by another replica (or
   * by none) is not continued (`REPLICA_MISMATCH`). Letters, digits and `._:-`, at most 64.
   */
  replicaId?: string;
  /**
   * Signed checkpoints (the chain head, MACed) written to `path` (default `<log>.checkpoint`)
   * every `intervalMs` (default 1000) while records were added, and on close. Default on for
   * logs opened with `path`; `false` turns it off. An existing checkpoint is always checked on
   * open: a log that ends before it is refused (`CHAIN_BROKEN`), since continuing it would hide
   * the truncation.
   */
  checkpoint?: false | { path?: string; intervalMs?: number };
  /**
   * An external anchor: each checkpoint written is also published there (a file path or
   * `file:` URL, replaced atomically; an `http(s)://` URL, POSTed), so that records removed
   * behind it are found by `verifyAuditLog(..., { anchor })` even when the checkpoint next to
   * the log went too. Publishing runs beside the write path and never holds up a decision;
   * failures are reported (`anchor_failed`) and counted (`stats.anchorFailures`). Needs
   * checkpoints. See docs/adr/0156-audit-head-and-anchor.md.
   */
  anchor?: string | AuditAnchor;
  /**
   * Where the signed rotation manifest goes (default `<log>.rotation`): written before rotation
   * deletes the oldest files, it says which records left the log on purpose.
   */
  rotationManifest?: string;
  /**
   * Applied to every string of every record before it is sealed. Default {@link redactSecrets};
   * pass e.g. a policy engine's detector, or `composeRedactors(redactSecrets, mine)`.
   * Values under sensitive keys (`password`, `token`, `authorization`, ...) are always replaced.
   */
  redactor?: Redactor;
  /** Largest record (bytes of its JSON line). A larger `payload` is dropped (`payload_truncated`); otherwise the append fails. Default 1 MiB. */
  maxRecordBytes?: number;
  /** Most records per group commit. Default 512. */
  maxBatch?: number;
  /** After a failed write, records that must not be lost (recovery, incident) are tried again after this long (ms) if nothing else is appended. Default 1000. */
  retryMs?: number;
  /** Clock for the `time` member. Default `() => new Date()`. */
  clock?: () => Date;
  /** Incidents: failed writes, recovery from them, a deleted live file, failed checkpoints. */
  onincident?: (incident: AuditIncident) => void;
}

/** How many records of a group were stored, and the failure that stopped the rest. */
interface StoreResult {
  count: number;
  error?: Error;
}

const storeError = (error: unknown): Error =>
  AuditError.isInstance(error)
    ? error
    : new AuditError("WRITE_FAILED", `audit sink failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });

interface Pending {
  entry: AuditEntry & { time: string };
  /** Recovery and incident records: kept and tried again when their group fails, never dropped. */
  pinned: boolean;
  resolve: (record: AuditRecord) => void;
  reject: (error: Error) => void;
}

/** Where a log starts (from {@link openAuditLog}). */
export interface Start {
  seq: number;
  prev: string;
  sync: AuditSyncMode;
  writer: AuditWriterInfo;
  /** A custom sink with sync "fsync": call its sync() after every group. */
  syncEachGroup: boolean;
  checkpoint?: { path: string; intervalMs: number; seq: number };
  anchor?: AuditAnchor;
  manifestPath?: string;
}

/**
 * An open audit log: appends HMAC-chained records in group commits and releases each call's
 * answer only when its record reached the configured sync point (`write` by default: handed to
 * the operating system). Opened with {@link openAuditLog}; `close()` writes the last checkpoint.
 */
export class AuditLog {
  /** When decisions are released relative to their records. */
  readonly sync: AuditSyncMode;
  readonly replicaId: string | undefined;
  /** Where checkpoints go, when this writer keeps them. */
  readonly checkpointPath: string | undefined;
  readonly #key: AuditKey;
  readonly #sink: AuditSink;
  readonly #redactor: Redactor;
  readonly #clock: () => Date;
  /** The `time` of a record: the clock's reading as RFC 3339. */
  readonly #now: () => string;
  readonly #maxRecordBytes: number;
  readonly #maxBatch: number;
  readonly #retryMs: number;
  readonly #onincident: ((incident: AuditIncident) => void) | undefined;
  readonly #syncEachGroup: boolean;
  #writer: AuditWriterInfo | undefined;
  #seq: number;
  #prev: string;
  #queue: Pending[] = [];
  /** A group waits for the end of the event-loop turn. */
  #scheduled = false;
  /** A group's store did not finish synchronously and is still running. */
  #storing = false;
  /** Callers of flush() waiting until no group is scheduled or being stored. */
  #flushWaiters: Array<() => void> = [];
  /** The end of the turn: the group is sealed and stored. */
  readonly #onTurnEnd = (): void => {
    this.#scheduled = false;
    this.#commitGroup();
  };
  #closing?: Promise<void>;
  #retryTimer?: ReturnType<typeof setTimeout>;
  #available = true;
  #outage?: { since: string; groups: number; records: number };
  readonly #stats: AuditLogStats = {
    groups: 0,
    records: 0,
    largestGroup: 0,
    failedGroups: 0,
    checkpoints: 0,
    anchored: 0,
    anchorFailures: 0,
    anchoredSeq: 0,
  };
  readonly #anchor: AuditAnchor | undefined;
  /** The publication in progress, and the checkpoint waiting to follow it (only the newest is kept). */
  #anchoring?: Promise<void>;
  #anchorNext?: AuditCheckpoint;
  #anchorFailures = 0;
  #checkpointTimer?: ReturnType<typeof setInterval>;
  #checkpointSeq = 0;
  #checkpointing?: Promise<void>;
  #checkpointFailures = 0;

  /** Use {@link openAuditLog}. */
  constructor(key: AuditKey, sink: AuditSink, options: AuditLogOptions, start: Start) {
    this.#key = key;
    this.#sink = sink;
    this.#redactor = memoizeRedactor(options.redactor ?? redactSecrets);
    this.#clock = options.clock ?? (() => new Date());
    const clock = options.clock;
    this.#now = clock === undefined ? isoClock() : () => clock().toISOString();
    this.#maxRecordBytes = options.maxRecordBytes ?? 1024 * 1024;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 512);
    this.#retryMs = options.retryMs ?? 1000;
    this.#onincident = options.onincident;
    this.#syncEachGroup = start.syncEachGroup;
    this.#writer = start.writer;
    this.#seq = start.seq;
    this.#prev = start.prev;
    this.sync = start.sync;
    this.replicaId = options.replicaId;
    this.checkpointPath = start.checkpoint?.path;
    sink.onincident = (incident) => this.#sinkIncident(incident);
    this.#anchor = start.anchor;
    const manifestPath = start.manifestPath;
    if (manifestPath !== undefined) sink.onremove = (last) => this.#rotationManifest(manifestPath, last);
    if (start.checkpoint !== undefined) {
      this.#checkpointSeq = start.checkpoint.seq;
      this.#checkpointTimer = setInterval(() => void this.checkpoint(), start.checkpoint.intervalMs);
      this.#checkpointTimer.unref();
    }
  }

  /** Id of the key (first 8 hex digits of its SHA-256). */
  get keyId(): string {
    return this.#key.id;
  }

  /** The last written record's seq and hash (publish it elsewhere as an anchor); undefined while empty. */
  get head(): AuditHead | undefined {
    return this.#seq === 0 ? undefined : { seq: this.#seq, hash: this.#prev };
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.#queue.length;
  }

  /** False from a failed write until the next successful one. */
  get available(): boolean {
    return this.#available;
  }

  /** Group commit figures (for benchmarks and metrics). */
  get stats(): Readonly<AuditLogStats> {
    return { ...this.#stats };
  }

  /**
   * Appends one record. Resolves with the sealed record once its group is stored by the sink
   * (written; with `sync: "fsync"` also flushed). Rejects with `CLOSED`, `RECORD_TOO_LARGE`,
   * `NOT_CANONICAL` or `WRITE_FAILED`; a rejected record is not part of the chain.
   */
  append(entry: AuditEntry): Promise<AuditRecord> {
    return this.#enqueue(entry, false);
  }

  /**
   * Appends a record that must not be lost to a transient failure (an incident note): when its
   * group fails it stays queued and is tried again with the next group. Resolves once written.
   */
  appendPinned(entry: AuditEntry): Promise<AuditRecord> {
    return this.#enqueue(entry, true);
  }

  /** Resolves when every record appended so far has been written or has failed (pinned ones may still wait for a retry). */
  async flush(): Promise<void> {
    if (!this.#scheduled && !this.#storing) return;
    await new Promise<void>((resolve) => this.#flushWaiters.push(resolve));
  }

  /**
   * Writes a signed checkpoint of the current head now (when it moved since the last one):
   * what was written is made durable first, then the checkpoint file is replaced. Failures
   * are reported as `checkpoint_failed` incidents, never thrown.
   */
  checkpoint(): Promise<void> {
    this.#checkpointing ??= this.#writeCheckpoint().finally(() => {
      this.#checkpointing = undefined;
    });
    return this.#checkpointing;
  }

  /** Writes what is queued, a last checkpoint, then closes the sink. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.flush();
      if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
      if (this.#checkpointTimer !== undefined) {
        clearInterval(this.#checkpointTimer);
        await this.#checkpointing;
        await this.checkpoint();
      }
      while (this.#anchoring !== undefined) await this.#anchoring;
      for (const item of this.#queue.splice(0))
        item.reject(new AuditError("CLOSED", "audit log closed before this record could be written"));
      await this.#sink.close();
    })();
    return this.#closing;
  }

  #enqueue(entry: AuditEntry, pinned: boolean): Promise<AuditRecord> {
    if (this.#closing !== undefined) return Promise.reject(new AuditError("CLOSED", "audit log is closed"));
    let prepared: AuditEntry & { time: string };
    try {
      prepared = this.#prepare(entry);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return new Promise<AuditRecord>((resolve, reject) => {
      this.#queue.push({ entry: prepared, pinned, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#storing) return;
    this.#scheduled = true;
    // End of the current event-loop turn: every record appended during it joins this group.
    setImmediate(this.#onTurnEnd);
  }

  /** Nothing scheduled or being stored: what flush() waits for. */
  #settled(): void {
    if (this.#scheduled || this.#storing || this.#flushWaiters.length === 0) return;
    const waiters = this.#flushWaiters;
    this.#flushWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #prepare(entry: AuditEntry): AuditEntry & { time: string } {
    // One copy, redacted member by member (nested values through redactValue), rather than
    // copies of copies: the allocations were a good part of a record's cost.
    const source = entry as unknown as Record<string, unknown>;
    const prepared: Record<string, unknown> = {};
    for (const k of Object.keys(source)) {
      const value = source[k];
      if (k === "time" || value === undefined) continue;
      if (SENSITIVE_KEY.test(k) && value !== null && value !== "") prepared[k] = `[REDACTED:${k.toLowerCase()}]`;
      else if (typeof value === "string") prepared[k] = this.#redactor(value);
      else prepared[k] = value === null || typeof value !== "object" ? value : redactMember(value, this.#redactor);
    }
    prepared.time = entry.time ?? this.#now();
    if (this.replicaId !== undefined) prepared.replica = this.replicaId;
    return prepared as unknown as AuditEntry & { time: string };
  }

  /** Seals an entry; an oversize payload is dropped (`payload_truncated`), any other oversize record is refused. */
  #seal(entry: AuditEntry & { time: string }, seq: number, prev: string): AuditRecord {
    let record = sealRecord(entry, { seq, prev, key: this.#key });
    const line = recordLine(record);
    // Three bytes of UTF-8 per UTF-16 code unit at most: most lines need no count.
    if (line.length * 3 <= this.#maxRecordBytes || Buffer.byteLength(line) <= this.#maxRecordBytes) return record;
    if (entry.payload !== undefined) {
      const { payload: _dropped, ...rest } = entry;
      record = sealRecord({ ...rest, payload_truncated: true }, { seq, prev, key: this.#key });
      if (Buffer.byteLength(recordLine(record)) <= this.#maxRecordBytes) return record;
    }
    throw new AuditError(
      "RECORD_TOO_LARGE",
      `audit record of ${Buffer.byteLength(recordLine(record))} bytes exceeds maxRecordBytes ${this.#maxRecordBytes}`,
    );
  }

  /** Seals one group and stores it; its appends settle when it is stored (at once when the sink stores it synchronously). */
  #commitGroup(): void {
    const taken = this.#queue.splice(0, this.#maxBatch);
    const batch: Pending[] = [];
    const records: AuditRecord[] = [];
    let seq = this.#seq;
    let prev = this.#prev;
    for (const item of taken) {
      let entry = item.entry;
      // The first record this writer stores says who wrote the records that follow.
      if (records.length === 0 && this.#writer !== undefined) entry = { ...entry, writer: this.#writer };
      let record: AuditRecord;
      try {
        record = this.#seal(entry, seq + 1, prev);
      } catch (error) {
        item.reject(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      batch.push(item);
      records.push(record);
      seq = record.seq;
      prev = recordHash(record);
    }
    if (records.length === 0) {
      this.#next(true);
      return;
    }
    const written = this.#store(records);
    if (!(written instanceof Promise)) {
      this.#stored(batch, records, prev, written);
      return;
    }
    this.#storing = true;
    void written.then((result) => {
      this.#storing = false;
      this.#stored(batch, records, prev, result);
    });
  }

  /** A group's store finished: the chain moves on, its appends settle, the next group is scheduled. */
  #stored(batch: Pending[], records: AuditRecord[], head: string, written: StoreResult): void {
    if (written.count > 0) {
      const last = records[written.count - 1]!;
      this.#seq = last.seq;
      this.#prev = written.count === records.length ? head : recordHash(last);
      this.#writer = undefined;
      this.#stats.groups++;
      this.#stats.records += written.count;
      if (written.count > this.#stats.largestGroup) this.#stats.largestGroup = written.count;
    }
    for (let i = 0; i < written.count; i++) batch[i]!.resolve(records[i]!);
    if (written.error === undefined) {
      if (!this.#available) this.#restored();
      this.#next(true);
      return;
    }
    const unwritten = batch.slice(written.count);
    const retry = unwritten.filter((item) => item.pinned);
    for (const item of unwritten) if (!item.pinned) item.reject(written.error);
    this.#queue.unshift(...retry);
    this.#failed(written.error, unwritten.length - retry.length);
    this.#next(false);
  }

  /** After a group: the next one, or (a failed group and only records that must not be lost left) the retry timer. */
  #next(ok: boolean): void {
    if (!ok && this.#queue.every((item) => item.pinned)) {
      // They wait for the next append, or for the retry timer. (Other records are tried at once:
      // their calls wait for an answer.)
      if (this.#queue.length > 0 && this.#retryTimer === undefined && this.#closing === undefined) {
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined;
          if (this.#queue.length > 0) this.#schedule();
        }, this.#retryMs);
        this.#retryTimer.unref();
      }
    } else if (this.#queue.length > 0) this.#schedule();
    this.#settled();
  }

  /**
   * Stores records in order: synchronously when the sink can (`appendBatchNow`), else through a
   * promise. The result says how many were stored before a failure.
   */
  #store(records: AuditRecord[]): StoreResult | Promise<StoreResult> {
    const sink = this.#sink;
    if (sink.appendBatchNow !== undefined && !this.#syncEachGroup) {
      let pending: Promise<void> | undefined;
      try {
        pending = sink.appendBatchNow(records);
      } catch (error) {
        return { count: 0, error: storeError(error) };
      }
      if (pending === undefined) return { count: records.length };
      return pending.then(
        () => ({ count: records.length }),
        (error: unknown) => ({ count: 0, error: storeError(error) }),
      );
    }
    return this.#storeAsync(records);
  }

  async #storeAsync(records: AuditRecord[]): Promise<StoreResult> {
    let count = records.length;
    try {
      if (this.#sink.appendBatch !== undefined) await this.#sink.appendBatch(records);
      else {
        for (count = 0; count < records.length; count++) await this.#sink.append(records[count]!);
      }
      if (this.#syncEachGroup) await this.#sink.sync?.();
      return { count: records.length };
    } catch (error) {
      return { count: this.#sink.appendBatch !== undefined ? 0 : count, error: storeError(error) };
    }
  }

  #failed(error: Error, dropped: number): void {
    this.#stats.failedGroups++;
    if (this.#available) {
      this.#available = false;
      this.#outage = { since: this.#clock().toISOString(), groups: 0, records: 0 };
    }
    const outage = this.#outage!;
    outage.groups++;
    outage.records += dropped;
    this.#report({
      kind: "write_failed",
      message: `audit log unavailable: ${error.message}`,
      error,
      records: dropped,
      consecutive: outage.groups,
    });
  }

  #restored(): void {
    const outage = this.#outage;
    this.#available = true;
    this.#outage = undefined;
    if (outage === undefined) return;
    const until = this.#clock().toISOString();
    const message = `audit log writable again; from ${outage.since} to ${until} ${outage.groups} write(s) failed and ${outage.records} record(s) could not be written`;
    this.#report({ kind: "restored", message });
    // On record: the chain says that it has a gap in coverage, and how large.
    this.appendPinned({
      kind: "incident",
      reason: message,
      data: { incident: "unavailable", since: outage.since, until, failed_writes: outage.groups, records_not_written: outage.records },
    }).catch(() => undefined);
  }

  #sinkIncident(incident: AuditSinkIncident): void {
    this.#report({ kind: incident.kind, message: incident.message });
    if (this.#closing === undefined)
      this.appendPinned({ kind: "incident", reason: incident.message, data: incident.data }).catch(() => undefined);
  }

  async #writeCheckpoint(): Promise<void> {
    const path = this.checkpointPath;
    const seq = this.#seq;
    if (path === undefined || seq === 0 || seq === this.#checkpointSeq) return;
    const head = { seq, hash: this.#prev };
    try {
      // The records up to the head must be durable before a checkpoint names them.
      if (this.sync !== "fsync") await this.#sink.sync?.();
      const sealed = sealCheckpoint(head, this.#key, {
        time: this.#clock().toISOString(),
        ...(this.replicaId === undefined ? {} : { replica: this.replicaId }),
      });
      await writeCheckpoint(path, sealed);
      this.#checkpointSeq = seq;
      this.#checkpointFailures = 0;
      this.#stats.checkpoints++;
      this.#publish(sealed);
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      this.#report({
        kind: "checkpoint_failed",
        message: `audit checkpoint ${path} could not be written: ${cause.message}`,
        error: cause,
        consecutive: ++this.#checkpointFailures,
      });
    }
  }

  /** Publishes a checkpoint to the anchor beside the write path; while one is in flight only the newest waits. */
  #publish(checkpoint: AuditCheckpoint): void {
    const anchor = this.#anchor;
    if (anchor === undefined) return;
    if (this.#anchoring !== undefined) {
      this.#anchorNext = checkpoint;
      return;
    }
    this.#anchoring = (async () => {
      let next: AuditCheckpoint | undefined = checkpoint;
      while (next !== undefined) {
        const current: AuditCheckpoint = next;
        this.#anchorNext = undefined;
        try {
          await anchor.publish(current);
          this.#stats.anchored++;
          this.#stats.anchoredSeq = current.seq;
          this.#anchorFailures = 0;
        } catch (error) {
          const cause = error instanceof Error ? error : new Error(String(error));
          this.#stats.anchorFailures++;
          this.#report({
            kind: "anchor_failed",
            message: `audit checkpoint seq ${current.seq} could not be published to the anchor ${anchor.target}: ${cause.message}`,
            error: cause,
            consecutive: ++this.#anchorFailures,
          });
        }
        next = this.#anchorNext;
      }
    })().finally(() => {
      this.#anchoring = undefined;
    });
  }

  /** Before rotation deletes records for good: the signed manifest naming the last one. */
  async #rotationManifest(path: string, last: AuditRecord): Promise<void> {
    try {
      await writeRotationManifest(
        path,
        sealRotationManifest({ seq: last.seq, hash: recordHash(last) }, this.#key, {
          time: this.#clock().toISOString(),
          ...(this.replicaId === undefined ? {} : { replica: this.replicaId }),
        }),
      );
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      this.#report({
        kind: "rotation_failed",
        message: `audit rotation manifest ${path} could not be written (${cause.message}): rotated files are kept`,
        error: cause,
      });
      throw cause;
    }
  }

  #report(incident: AuditIncident): void {
    try {
      this.#onincident?.(incident);
    } catch {
      // A listener that throws must not break the write path.
    }
  }
}

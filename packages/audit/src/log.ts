/**
 * The audit log writer: redacts, seals (seq, prev, mac) and appends records through one
 * write queue, so the order of `append()` calls is the chain order. Records queued while a
 * write is in progress are committed together (group commit: one write, one fsync).
 */
import { AuditError } from "./errors.js";
import { FileAuditSink, type FileAuditSinkOptions } from "./file-sink.js";
import { toAuditKey, type AuditKey, type AuditKeyInput } from "./key.js";
import {
  checkRecordMac,
  genesisHash,
  recordHash,
  recordLine,
  sealRecord,
  type AuditEntry,
  type AuditHead,
  type AuditRecord,
} from "./record.js";
import { redactSecrets, redactValue, type Redactor } from "@ahp/core";
import type { AuditSink } from "./sink.js";

export interface AuditLogOptions {
  /** The HMAC key (see `loadAuditKey`). Never logged; records carry its id only. */
  key: AuditKeyInput;
  /** Where records go. Default: a {@link FileAuditSink} at `path`. */
  sink?: AuditSink;
  /** Path of the live log file (when no `sink` is given). */
  path?: string;
  /** File sink options (fsync policy, rotation) when `path` is used. */
  file?: Omit<FileAuditSinkOptions, "path">;
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
  /** Clock for the `time` member. Default `() => new Date()`. */
  clock?: () => Date;
}

interface Pending {
  entry: AuditEntry & { time: string };
  resolve: (record: AuditRecord) => void;
  reject: (error: Error) => void;
}

/** Opens (or creates) a log and continues its chain. */
export async function openAuditLog(options: AuditLogOptions): Promise<AuditLog> {
  const key = toAuditKey(options.key);
  let sink = options.sink;
  if (sink === undefined) {
    if (options.path === undefined) throw new AuditError("INVALID_ARGUMENT", "openAuditLog needs a path or a sink");
    sink = new FileAuditSink({ ...options.file, path: options.path });
  }
  const state = (await sink.open?.()) ?? {};
  let seq = 0;
  let prev = genesisHash(key.id);
  if (state.last !== undefined) {
    const last = state.last;
    if (last.kid !== key.id) {
      await sink.close().catch(() => undefined);
      throw new AuditError(
        "KEY_MISMATCH",
        `the existing audit log was written with key ${last.kid}, this key is ${key.id}; start a new log for a new key`,
      );
    }
    if (!checkRecordMac(last, key)) {
      await sink.close().catch(() => undefined);
      throw new AuditError(
        "CHAIN_BROKEN",
        `the last record of the existing audit log (seq ${last.seq}) does not verify; run verification before writing`,
      );
    }
    seq = last.seq;
    prev = recordHash(last);
  }
  const log = new AuditLog(key, sink, options, seq, prev);
  if (state.torn !== undefined && state.torn.length > 0) {
    const bytes = state.torn.reduce((n, t) => n + t.bytes, 0);
    try {
      await log.append({
        kind: "recovery",
        torn: state.torn,
        reason: `previous writer stopped mid-record: ${state.torn.length} torn line(s), ${bytes} bytes, kept outside the chain`,
      });
    } catch (error) {
      await log.close().catch(() => undefined);
      throw error;
    }
  }
  return log;
}

export class AuditLog {
  readonly #key: AuditKey;
  readonly #sink: AuditSink;
  readonly #redactor: Redactor;
  readonly #clock: () => Date;
  readonly #maxRecordBytes: number;
  readonly #maxBatch: number;
  #seq: number;
  #prev: string;
  #queue: Pending[] = [];
  #draining?: Promise<void>;
  #closing?: Promise<void>;

  /** Use {@link openAuditLog}. */
  constructor(key: AuditKey, sink: AuditSink, options: AuditLogOptions, seq: number, prev: string) {
    this.#key = key;
    this.#sink = sink;
    this.#redactor = options.redactor ?? redactSecrets;
    this.#clock = options.clock ?? (() => new Date());
    this.#maxRecordBytes = options.maxRecordBytes ?? 1024 * 1024;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 512);
    this.#seq = seq;
    this.#prev = prev;
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

  /**
   * Appends one record. Resolves with the sealed record once the sink has stored it (and, with
   * `fsync: "always"`, flushed it). Rejects with `CLOSED`, `RECORD_TOO_LARGE`, `NOT_CANONICAL`
   * or `WRITE_FAILED`; a rejected record is not part of the chain.
   */
  append(entry: AuditEntry): Promise<AuditRecord> {
    if (this.#closing !== undefined) return Promise.reject(new AuditError("CLOSED", "audit log is closed"));
    let prepared: AuditEntry & { time: string };
    try {
      prepared = this.#prepare(entry);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AuditRecord>((resolve, reject) => {
      this.#queue.push({ entry: prepared, resolve, reject });
      this.#draining ??= this.#drain();
    });
  }

  /** Resolves when every record appended so far has been written (or has failed). */
  async flush(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
  }

  /** Writes what is queued, then closes the sink. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.flush();
      await this.#sink.close();
    })();
    return this.#closing;
  }

  #prepare(entry: AuditEntry): AuditEntry & { time: string } {
    const { time, ...rest } = entry;
    const redacted = redactValue(rest, this.#redactor) as AuditEntry;
    const prepared: AuditEntry & { time: string } = { ...redacted, time: time ?? this.#clock().toISOString() };
    return prepared;
  }

  /** Seals an entry; an oversize payload is dropped (`payload_truncated`), any other oversize record is refused. */
  #seal(entry: AuditEntry & { time: string }, seq: number, prev: string): AuditRecord {
    let record = sealRecord(entry, { seq, prev, key: this.#key });
    if (Buffer.byteLength(recordLine(record)) <= this.#maxRecordBytes) return record;
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

  async #drain(): Promise<void> {
    try {
      await Promise.resolve(); // let appends of the same tick join the first batch
      while (this.#queue.length > 0) {
        const taken = this.#queue.splice(0, this.#maxBatch);
        const batch: Pending[] = [];
        const records: AuditRecord[] = [];
        let seq = this.#seq;
        let prev = this.#prev;
        for (const item of taken) {
          let record: AuditRecord;
          try {
            record = this.#seal(item.entry, seq + 1, prev);
          } catch (error) {
            item.reject(error instanceof Error ? error : new Error(String(error)));
            continue;
          }
          batch.push(item);
          records.push(record);
          seq = record.seq;
          prev = recordHash(record);
        }
        if (records.length === 0) continue;
        const written = await this.#store(records);
        for (let i = 0; i < batch.length; i++) {
          const item = batch[i]!;
          if (i < written.count) item.resolve(records[i]!);
          else item.reject(written.error!);
        }
        if (written.count > 0) {
          const last = records[written.count - 1]!;
          this.#seq = last.seq;
          this.#prev = recordHash(last);
        }
      }
    } finally {
      this.#draining = undefined;
    }
  }

  /** Stores records in order; returns how many were stored before a failure. */
  async #store(records: AuditRecord[]): Promise<{ count: number; error?: Error }> {
    const fail = (error: unknown) =>
      AuditError.isInstance(error)
        ? error
        : new AuditError("WRITE_FAILED", `audit sink failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    if (this.#sink.appendBatch !== undefined) {
      try {
        await this.#sink.appendBatch(records);
        return { count: records.length };
      } catch (error) {
        return { count: 0, error: fail(error) };
      }
    }
    for (let i = 0; i < records.length; i++) {
      try {
        await this.#sink.append(records[i]!);
      } catch (error) {
        return { count: i, error: fail(error) };
      }
    }
    return { count: records.length };
  }
}

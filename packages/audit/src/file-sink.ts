/**
 * The embedded default sink: one JSON line per record, appended to a file.
 *
 * - Each batch of records is written with one `write` of complete lines (O_APPEND); a failed or
 *   short write is truncated back, so a line is either complete in the file or absent.
 * - Flushing per policy: `always` (fdatasync before an append resolves), `interval` (every
 *   `fsyncIntervalMs` when something was written), `never` (left to the OS).
 * - Size-based rotation: before a write that would take the file over `maxBytes`, `audit.log`
 *   is renamed to `audit.log.<n>` (n = highest existing + 1) and a new `audit.log` is started;
 *   the oldest rotated files beyond `maxFiles` (total, including the live file) are deleted.
 *   The chain simply continues: the first record of a new file carries the hash of the last
 *   record of the previous one. Chain order is `audit.log.1`, `audit.log.2`, …, `audit.log`.
 * - On open, the last complete record (in the live file, else in the newest rotated file) is
 *   handed to the log so that it continues the chain; a torn tail (a writer died mid-line) is
 *   terminated with `\n` and reported, never rewritten or deleted.
 * - A lock file (`<path>.lock`, holding the writer's pid) keeps two writers off one chain; the
 *   lock of a dead process is taken over.
 * - The file's link count is checked (`fstat`) at most every {@link LINK_CHECK_MS} ms, after a
 *   write (a write sooner than that arms a timer, so a check always follows a write within that
 *   time), before rotation and on close: a live file that was deleted while open would swallow
 *   records no one can read. Every batch written since the last check is written again into a
 *   new file at the same path (the chain continues), the deleted file stays open (readable at
 *   `/proc/<pid>/fd/<fd>` until the writer closes) and an incident is reported, which the log
 *   records. When the new file cannot be created, the batch that found it out fails, the next
 *   one tries again and the earlier batches are written into the new file once it exists.
 * - A batch is written synchronously (`appendBatchNow`, one `write(2)` into the page cache on
 *   the event loop) when nothing else is queued; rotation, a lost file and `fdatasync` take the
 *   asynchronous path.
 */
import { createHash } from "node:crypto";
import { constants as fsConstants, fstatSync, ftruncateSync, writeSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { AuditError } from "./errors.js";
import { parseRecord, recordLine, type AuditRecord, type TornLine } from "./record.js";
import type { AuditSink, AuditSinkIncident, AuditSinkState } from "./sink.js";

/** When {@link FileAuditSink} flushes to disk: before each append resolves, every `fsyncIntervalMs`, or never (the OS decides). */
export type FsyncPolicy = "always" | "interval" | "never";

/** Options of {@link FileAuditSink}: the live file, flushing, rotation, file mode and locking. */
export interface FileAuditSinkOptions {
  /** The live file, e.g. `/var/log/ahp/audit.log`. Its directory is created when missing. */
  path: string;
  /** Default `always`. */
  fsync?: FsyncPolicy;
  /** For `fsync: "interval"`. Default 1000. */
  fsyncIntervalMs?: number;
  /** Rotate before a write that would take the live file over this size. Default 64 MiB; `Infinity` disables. */
  maxBytes?: number;
  /** Files kept, the live one included; older rotated files are deleted. Default 10; `Infinity` keeps all. */
  maxFiles?: number;
  /** File mode for new files. Default 0o600. */
  mode?: number;
  /** Take `<path>.lock`. Default true. */
  lock?: boolean;
  /** How far back `open()` searches for the last complete record. Default 16 MiB. */
  maxTailScanBytes?: number;
  /** Non-fatal problems (a failed interval fsync, a rotated file that could not be deleted). */
  onerror?: (error: Error) => void;
  /** Incidents the sink survived (the live file deleted while open). The log sets this itself when it creates the sink. */
  onincident?: (incident: AuditSinkIncident) => void;
}

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_FILES = 10;
const MAX_TORN_LINES = 8;
/**
 * Longest time between a write and the check of the live file's link count. A write sooner
 * than this after the last check leaves the check to a timer: an `fstat(2)` per group cost as
 * much as the group's `write(2)`. Records written into a deleted file in that window are
 * released before the check finds it (they are readable at `/proc/<pid>/fd/<fd>`), and the
 * check copies them into the new file.
 */
export const LINK_CHECK_MS = 50;
/** Bytes written since the last link check after which the next write checks at once. */
const LINK_CHECK_BYTES = 1024 * 1024;

/** The rotated files of `path` and the live file, in chain order (oldest first). Missing files are left out. */
export async function auditLogFiles(path: string): Promise<string[]> {
  const rotated = await rotatedIndexes(path);
  const files = rotated.map((n) => `${path}.${n}`);
  const live = await stat(path).then(
    () => true,
    () => false,
  );
  if (live) files.push(path);
  return files;
}

async function rotatedIndexes(path: string): Promise<number[]> {
  const dir = dirname(path);
  const base = basename(path);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const prefix = `${base}.`;
  const out: number[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    if (/^[1-9]\d{0,8}$/.test(rest)) out.push(Number(rest));
  }
  return out.sort((a, b) => a - b);
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

interface TailScan {
  last?: AuditRecord;
  torn: TornLine[];
  /** True when the file does not end with `\n` (its last line is unterminated). */
  unterminated: boolean;
}

/** Finds the last record of a file and the invalid lines after it. */
async function scanTail(file: string, size: number, maxScan: number): Promise<TailScan> {
  if (size === 0) return { torn: [], unterminated: false };
  const handle = await open(file, "r");
  try {
    let window = Math.min(size, 64 * 1024);
    for (;;) {
      const start = size - window;
      const buffer = Buffer.alloc(window);
      await handle.read(buffer, 0, window, start);
      const unterminated = buffer[buffer.length - 1] !== 0x0a;
      const newlineBefore = (index: number) => (index <= 0 ? -1 : buffer.lastIndexOf(0x0a, index - 1));
      // Walk lines backwards; the first one is incomplete unless the window starts at the file start.
      let end = unterminated ? buffer.length : buffer.length - 1;
      let pos = newlineBefore(end);
      const torn: TornLine[] = [];
      for (;;) {
        if (pos < 0 && start > 0) break; // the line may begin before the window
        const line = buffer.subarray(pos + 1, end);
        const parsed = parseRecord(line.toString("utf8"));
        if (parsed.ok) return { last: parsed.record, torn: torn.reverse(), unterminated };
        if (isJsonObject(line)) {
          throw new AuditError("CHAIN_BROKEN", `${file}: the last line that is valid JSON is not an audit record; refusing to extend it`);
        }
        torn.push({ bytes: line.length, sha256: sha256(line) });
        if (torn.length > MAX_TORN_LINES) {
          throw new AuditError(
            "CHAIN_BROKEN",
            `${file}: more than ${MAX_TORN_LINES} trailing lines are not audit records; is this an audit log?`,
          );
        }
        if (pos < 0) return { torn: torn.reverse(), unterminated };
        end = pos;
        pos = newlineBefore(end);
      }
      if (window >= size) return { torn: torn.reverse(), unterminated };
      if (window >= maxScan) {
        throw new AuditError("CHAIN_BROKEN", `${file}: no complete audit record within the last ${maxScan} bytes`);
      }
      window = Math.min(size, window * 4, maxScan);
    }
  } finally {
    await handle.close();
  }
}

function isJsonObject(line: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(line.toString("utf8"));
    return value !== null && typeof value === "object";
  } catch {
    return false;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The default sink: JSON lines appended to a file, with rotation, a lock and torn-tail recovery (see the module comment). */
export class FileAuditSink implements AuditSink {
  readonly path: string;
  onincident?: (incident: AuditSinkIncident) => void;
  onremove?: (last: AuditRecord) => Promise<void>;
  readonly #options: FileAuditSinkOptions;
  readonly #fsync: FsyncPolicy;
  readonly #maxBytes: number;
  readonly #maxFiles: number;
  #handle?: FileHandle;
  #size = 0;
  #dirty = false;
  #broken?: Error;
  #closed = false;
  #timer?: ReturnType<typeof setInterval>;
  #lockPath?: string;
  #highestRotated = 0;
  /** Serializes writes, rotation, interval fsync and close. */
  #ops: Promise<unknown> = Promise.resolve();
  /** Handles of live files that were deleted while open: kept open (their records stay readable through /proc) until close. */
  readonly #orphans: FileHandle[] = [];
  /** Set when the live file was found deleted and no new one could be created yet; `lines`: what the new file must get first. */
  #lost?: { ino: number; fd: number; lastSeq?: number; lines: Buffer[] };
  /** Batches written since the last link check (written again into a new file if the live one is gone), and their size. */
  #unchecked: Buffer[] = [];
  #uncheckedBytes = 0;
  /** Seq of the record before the first unchecked batch. */
  #uncheckedAfter = 0;
  /** When the link count was last checked (performance.now()). */
  #checkedAt = 0;
  /** Runs the link check that a write left to later. */
  #checkTimer?: ReturnType<typeof setTimeout>;
  /** Operations queued or running (the synchronous path runs only when none is). */
  #busy = 0;
  /** An fdatasync started by sync(), which closing the handle waits for. */
  #syncing?: Promise<void>;

  constructor(options: FileAuditSinkOptions) {
    if (typeof options.path !== "string" || options.path.length === 0) {
      throw new AuditError("INVALID_ARGUMENT", "FileAuditSink needs a path");
    }
    this.path = options.path;
    this.#options = options;
    this.#fsync = options.fsync ?? "always";
    if (!["always", "interval", "never"].includes(this.#fsync)) {
      throw new AuditError("INVALID_ARGUMENT", `fsync must be always, interval or never, got ${String(this.#fsync)}`);
    }
    if (options.onincident !== undefined) this.onincident = options.onincident;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
    if (!(this.#maxBytes > 0)) throw new AuditError("INVALID_ARGUMENT", "maxBytes must be positive");
    if (!(this.#maxFiles >= 1)) throw new AuditError("INVALID_ARGUMENT", "maxFiles must be at least 1");
  }

  /** Current size of the live file in bytes. */
  get size(): number {
    return this.#size;
  }

  async open(): Promise<AuditSinkState> {
    if (this.#handle !== undefined) throw new AuditError("INVALID_ARGUMENT", "FileAuditSink is already open");
    this.#closed = false;
    await mkdir(dirname(this.path), { recursive: true });
    if (this.#options.lock ?? true) await this.#lock();
    try {
      const maxScan = this.#options.maxTailScanBytes ?? 16 * 1024 * 1024;
      this.#handle = await open(this.path, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT, this.#options.mode ?? 0o600);
      this.#size = (await this.#handle.stat()).size;
      const live = await scanTail(this.path, this.#size, maxScan);
      await this.#probe();
      if (live.unterminated) {
        // Keep the torn bytes (evidence) but end their line, so the next record starts on its own.
        this.#writeNow(Buffer.from("\n"));
        await this.#handle.datasync();
      }
      const rotated = await rotatedIndexes(this.path);
      this.#highestRotated = rotated.at(-1) ?? 0;
      let last = live.last;
      let torn = live.torn;
      if (last === undefined && this.#highestRotated > 0) {
        const previous = `${this.path}.${this.#highestRotated}`;
        const scan = await scanTail(previous, (await stat(previous)).size, maxScan);
        last = scan.last;
        torn = [...scan.torn, ...torn];
      }
      if (this.#fsync === "interval") {
        this.#timer = setInterval(() => void this.#intervalSync(), this.#options.fsyncIntervalMs ?? 1000);
        this.#timer.unref();
      }
      const state: AuditSinkState = {};
      if (last !== undefined) state.last = last;
      if (torn.length > 0) state.torn = torn;
      return state;
    } catch (error) {
      await this.#handle?.close().catch(() => undefined);
      this.#handle = undefined;
      await this.#unlock();
      throw error;
    }
  }

  append(record: AuditRecord): Promise<void> {
    return this.appendBatch([record]);
  }

  appendBatch(records: readonly AuditRecord[]): Promise<void> {
    try {
      return this.appendBatchNow(records) ?? Promise.resolve();
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /**
   * Stores the records as {@link appendBatch} does, synchronously when it can: with nothing else
   * queued, the file open and no rotation due, the batch is written with one `write(2)` on the
   * event loop and the result is `undefined` once it is in the file (a failure throws). Otherwise
   * (and for the `fdatasync` of `fsync: "always"`) it returns a promise.
   */
  appendBatchNow(records: readonly AuditRecord[]): Promise<void> | undefined {
    let text = "";
    for (let i = 0; i < records.length; i++) text += recordLine(records[i]!);
    const data = Buffer.from(text, "utf8");
    const before = (records[0]?.seq ?? 1) - 1;
    if (
      this.#busy === 0 &&
      !this.#closed &&
      this.#broken === undefined &&
      this.#lost === undefined &&
      this.#handle !== undefined &&
      !(this.#size > 0 && this.#size + data.length > this.#maxBytes)
    ) {
      this.#writeNow(data);
      this.#noteWritten(data, before);
      if (this.#linkCheckDue()) {
        if (this.#deleted())
          return this.#enqueue(async () => {
            await this.#replaceDeleted(data);
            await this.#afterWrite(true);
          });
        this.#checked();
      }
      return this.#afterWrite(false);
    }
    return this.#enqueue(async () => {
      if (this.#closed) throw new AuditError("CLOSED", "audit sink is closed");
      if (this.#broken !== undefined) {
        throw new AuditError("WRITE_FAILED", `audit file is unusable after an earlier failure: ${this.#broken.message}`, {
          cause: this.#broken,
        });
      }
      if (this.#lost !== undefined) await this.#recreate();
      if (this.#handle === undefined) throw new AuditError("CLOSED", "audit sink is not open");
      if (this.#size > 0 && this.#size + data.length > this.#maxBytes) await this.#rotate();
      this.#writeNow(data);
      this.#noteWritten(data, before);
      if (this.#linkCheckDue()) {
        if (this.#deleted()) await this.#replaceDeleted(data);
        else this.#checked();
      }
      await this.#afterWrite(true);
    });
  }

  /**
   * After a batch is in the file: the flush of `fsync: "always"` (queued unless `queued`, when
   * the caller runs in the queue already), or the note that there is something to flush.
   */
  #afterWrite(queued: boolean): Promise<void> | undefined {
    if (this.#fsync !== "always") {
      this.#dirty = true;
      return undefined;
    }
    const handle = this.#handle!;
    return queued ? handle.datasync() : this.#enqueue(() => handle.datasync());
  }

  /** Remembers a written batch until the next link check. */
  #noteWritten(data: Buffer, before: number): void {
    if (this.#unchecked.length === 0) this.#uncheckedAfter = before;
    this.#unchecked.push(data);
    this.#uncheckedBytes += data.length;
  }

  /** True when the link count should be checked now; otherwise makes sure a timer will check it. */
  #linkCheckDue(): boolean {
    if (performance.now() - this.#checkedAt >= LINK_CHECK_MS || this.#uncheckedBytes >= LINK_CHECK_BYTES) return true;
    if (this.#checkTimer === undefined) {
      this.#checkTimer = setTimeout(() => {
        this.#checkTimer = undefined;
        void this.#enqueue(() => this.#checkLinks()).catch((error: unknown) => this.#report(error));
      }, LINK_CHECK_MS);
      this.#checkTimer.unref();
    }
    return false;
  }

  /** The live file's link count was found intact: what was written is in a file that can be opened. */
  #checked(): void {
    this.#checkedAt = performance.now();
    this.#unchecked = [];
    this.#uncheckedBytes = 0;
  }

  /** Checks the link count now (timer, rotation, close); a deleted live file is replaced. */
  async #checkLinks(): Promise<void> {
    if (this.#handle === undefined || this.#unchecked.length === 0) return;
    if (this.#deleted()) await this.#replaceDeleted(undefined);
    else this.#checked();
  }

  /**
   * The live file was found deleted: what was written since the last check goes again into a
   * new file. `failing`: the batch being stored now, which is left out of what the new file must
   * get when this fails (its append rejects, so its records are not part of the chain).
   */
  async #replaceDeleted(failing: Buffer | undefined): Promise<void> {
    const lines = this.#unchecked;
    const lastSeq = this.#uncheckedAfter;
    this.#unchecked = [];
    this.#uncheckedBytes = 0;
    this.#lose(lastSeq, lines);
    try {
      await this.#recreate();
    } catch (error) {
      if (failing !== undefined && this.#lost !== undefined) this.#lost.lines = this.#lost.lines.filter((b) => b !== failing);
      throw error;
    }
  }

  /**
   * Makes everything written so far durable (fdatasync), without holding up writes queued
   * meanwhile. Rotation and close wait for it before they close the handle.
   */
  async sync(): Promise<void> {
    const handle = this.#handle;
    if (handle === undefined || this.#closed) return;
    const run = handle.datasync();
    this.#syncing = run;
    try {
      await run;
    } finally {
      if (this.#syncing === run) this.#syncing = undefined;
    }
  }

  /** True when the live file's last link is gone (it was deleted while open). */
  #deleted(): boolean {
    const handle = this.#handle;
    if (handle === undefined) return false;
    try {
      return fstatSync(handle.fd).nlink === 0;
    } catch {
      return false;
    }
  }

  /**
   * The live file was deleted: keep its handle open as evidence and ask for a new file.
   * `lastSeq`: the last record only that file holds; `lines`: what the new file must get first.
   */
  #lose(lastSeq: number, lines: Buffer[]): void {
    const handle = this.#handle!;
    let ino = 0;
    try {
      ino = fstatSync(handle.fd).ino;
    } catch {
      // the number is only for the incident text
    }
    this.#orphans.push(handle);
    this.#handle = undefined;
    this.#size = 0;
    this.#lost = { ino, fd: handle.fd, ...(lastSeq > 0 ? { lastSeq } : {}), lines };
  }

  /** Creates the live file again after it was deleted; reports the incident once it exists. Throws WRITE_FAILED otherwise. */
  async #recreate(): Promise<void> {
    const lost = this.#lost!;
    try {
      await mkdir(dirname(this.path), { recursive: true });
      this.#handle = await open(this.path, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT, this.#options.mode ?? 0o600);
      this.#size = (await this.#handle.stat()).size;
      this.#checked();
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      throw new AuditError(
        "WRITE_FAILED",
        `audit file ${this.path} was deleted while open and cannot be created again: ${(cause as NodeJS.ErrnoException).code ?? cause.message}`,
        { cause },
      );
    }
    this.#lost = undefined;
    // The batches only the deleted file held, in order, before anything new.
    if (lost.lines.length > 0) {
      const data = lost.lines.length === 1 ? lost.lines[0]! : Buffer.concat(lost.lines);
      try {
        this.#writeNow(data);
      } catch (error) {
        this.#lost = lost;
        throw error;
      }
      this.#checked();
    }
    const upTo = lost.lastSeq === undefined ? "" : ` (its records up to seq ${lost.lastSeq})`;
    this.onincident?.({
      kind: "file_replaced",
      message:
        `audit file ${this.path} was deleted while open${upTo}; a new file continues the chain. ` +
        `The deleted file stays readable at /proc/${process.pid}/fd/${lost.fd} until this writer closes.`,
      data: {
        incident: "file_replaced",
        deleted_inode: lost.ino,
        ...(lost.lastSeq === undefined ? {} : { last_seq_in_deleted_file: lost.lastSeq }),
      },
    });
  }

  async close(): Promise<void> {
    await this.#enqueue(async () => {
      if (this.#closed) return;
      if (this.#checkTimer !== undefined) clearTimeout(this.#checkTimer);
      this.#checkTimer = undefined;
      // What was written since the last check must not stay in a deleted file.
      if (this.#broken === undefined) await this.#checkLinks().catch((error: unknown) => this.#report(error));
      this.#closed = true;
      if (this.#timer !== undefined) clearInterval(this.#timer);
      this.#timer = undefined;
      const handle = this.#handle;
      this.#handle = undefined;
      await this.#syncing?.catch(() => undefined);
      if (handle !== undefined) {
        try {
          if (this.#fsync !== "never" && this.#broken === undefined) await handle.datasync();
        } finally {
          await handle.close();
        }
      }
      for (const orphan of this.#orphans.splice(0)) await orphan.close().catch(() => undefined);
      await this.#unlock();
    });
  }

  #enqueue<T>(op: () => Promise<T>): Promise<T> {
    this.#busy++;
    const run = this.#ops.then(op, op);
    this.#ops = run.then(
      () => {
        this.#busy--;
      },
      () => {
        this.#busy--;
      },
    );
    return run;
  }

  /**
   * Proves that the file takes writes before the log relies on it: a few bytes are written at
   * its end and truncated away again. A file that cannot take them (disk full, `/dev/full`, an
   * I/O error) fails the open with WRITE_FAILED instead of failing every decision later. The
   * bytes are the start of a line that is never valid JSON: should the process die before the
   * truncation, the next open finds them as a torn line and records their recovery.
   */
  async #probe(): Promise<void> {
    const handle = this.#handle!;
    const regular = (await handle.stat()).isFile();
    this.#writeNow(Buffer.from("{ahp-audit-probe", "utf8"));
    if (!regular) {
      this.#size = 0;
      return;
    }
    try {
      await handle.truncate(this.#size - 16);
      this.#size -= 16;
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      throw new AuditError("WRITE_FAILED", `cannot write audit file ${this.path}: ${cause.message}`, { cause });
    }
  }

  /**
   * Writes all of `data` at the end of the live file, or nothing: a failed write is truncated
   * back. On the event loop: `write(2)` into the page cache costs less CPU than a thread-pool
   * round trip (the flush, fdatasync, stays asynchronous).
   */
  #writeNow(data: Buffer): void {
    const handle = this.#handle!;
    const before = this.#size;
    let offset = 0;
    try {
      while (offset < data.length) {
        const bytesWritten = writeSync(handle.fd, data, offset, data.length - offset);
        if (bytesWritten <= 0) throw new Error("write made no progress");
        offset += bytesWritten;
      }
      this.#size = before + data.length;
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      if (offset > 0) {
        try {
          ftruncateSync(handle.fd, before);
        } catch (truncateError) {
          this.#broken = truncateError instanceof Error ? truncateError : cause;
        }
      }
      throw new AuditError("WRITE_FAILED", `cannot write audit file ${this.path}: ${cause.message}`, { cause });
    }
  }

  async #rotate(): Promise<void> {
    // What was written since the last check must be in a file that can be opened before it is rotated.
    await this.#checkLinks();
    if (this.#handle === undefined) return;
    const handle = this.#handle;
    // Always flushed before the rename (one fdatasync per rotated file): a checkpoint may name
    // records in it, and the rotated file never changes again.
    await this.#syncing?.catch(() => undefined);
    await handle.datasync();
    await handle.close();
    this.#handle = undefined;
    const next = this.#highestRotated + 1;
    const target = `${this.path}.${next}`;
    try {
      await rename(this.path, target);
      this.#highestRotated = next;
    } finally {
      // Reopen the live path whatever happened, so that the sink stays usable.
      this.#handle = await open(this.path, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT, this.#options.mode ?? 0o600);
      this.#size = (await this.#handle.stat()).size;
    }
    await this.#syncDir();
    if (Number.isFinite(this.#maxFiles)) {
      const rotated = await rotatedIndexes(this.path);
      const excess = rotated.slice(0, Math.max(0, rotated.length - (this.#maxFiles - 1)));
      if (excess.length === 0) return;
      // The records leave the log for good: first say so (signed, by the log), then delete.
      try {
        const newest = `${this.path}.${excess.at(-1)!}`;
        const last = (await scanTail(newest, (await stat(newest)).size, this.#options.maxTailScanBytes ?? 16 * 1024 * 1024)).last;
        if (last !== undefined) await this.onremove?.(last);
      } catch (error) {
        this.#report(error);
        return;
      }
      for (const n of excess) {
        await unlink(`${this.path}.${n}`).catch((error: unknown) => this.#report(error));
      }
    }
  }

  async #syncDir(): Promise<void> {
    try {
      const dir = await open(dirname(this.path), "r");
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch {
      // Not supported everywhere (Windows); the rename itself is still atomic.
    }
  }

  async #intervalSync(): Promise<void> {
    await this.#enqueue(async () => {
      if (!this.#dirty || this.#handle === undefined) return;
      this.#dirty = false;
      await this.#handle.datasync();
    }).catch((error: unknown) => this.#report(error));
  }

  async #lock(): Promise<void> {
    const lockPath = `${this.path}.lock`;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const handle = await open(lockPath, "wx", 0o600);
        try {
          await handle.writeFile(`${process.pid}\n`);
        } finally {
          await handle.close();
        }
        this.#lockPath = lockPath;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const owner = Number.parseInt((await readFile(lockPath, "utf8").catch(() => "")).trim(), 10);
        if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
          throw new AuditError("LOCKED", `audit log ${this.path} is in use by process ${owner} (${lockPath})`);
        }
        await unlink(lockPath).catch(() => undefined); // stale: its writer is gone
      }
    }
    throw new AuditError("LOCKED", `cannot take the audit lock ${lockPath}`);
  }

  async #unlock(): Promise<void> {
    const lockPath = this.#lockPath;
    this.#lockPath = undefined;
    if (lockPath !== undefined) await unlink(lockPath).catch(() => undefined);
  }

  #report(error: unknown): void {
    this.#options.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }
}

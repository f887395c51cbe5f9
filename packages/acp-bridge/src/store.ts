/**
 * Where suspensions live so that they survive a restart of the bridge. The bridge writes a
 * session's record before it reports the session suspended (a failed write refuses the suspend)
 * and reads every record at start (a corrupt one stops the start with an error naming it).
 */
import type { StoredSuspension } from "./schema.js";

export type { StoredSuspension } from "./schema.js";

/** Where suspensions live across bridge restarts: the file store (durable on `save`) or the memory store (tests, single process). */
export interface SuspensionStore {
  /** Every stored record. Throws {@link SuspensionStoreError} (`CORRUPT`) rather than skip a bad one. */
  loadAll(): Promise<StoredSuspension[]>;
  /** Durable when it resolves (the file store: written, fsynced and renamed into place). */
  save(record: StoredSuspension): Promise<void>;
  /** Forgets a session (after `session/delete`). Missing records are fine. */
  remove(sessionId: string): Promise<void>;
  /** Releases resources. */
  close?(): Promise<void>;
}

/** What went wrong in a store: a record that cannot be read back as a suspension, a failed write, a failed read. */
export type SuspensionStoreErrorCode = "CORRUPT" | "WRITE_FAILED" | "READ_FAILED";

/**
 * A store failure, with the path of the record when the store has files. A `CORRUPT` record stops
 * the bridge from starting; a failed write refuses the suspend.
 */
export class SuspensionStoreError extends Error {
  override name = "SuspensionStoreError";
  constructor(
    readonly code: SuspensionStoreErrorCode,
    message: string,
    readonly path?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Keeps records in memory only (tests, embedding where the host persists by itself). */
export class MemorySuspensionStore implements SuspensionStore {
  readonly records = new Map<string, StoredSuspension>();
  /** When set, `save` fails with this error (to test refusal paths). */
  failWrites: Error | undefined;

  loadAll(): Promise<StoredSuspension[]> {
    return Promise.resolve([...this.records.values()].map((r) => structuredClone(r)));
  }

  save(record: StoredSuspension): Promise<void> {
    if (this.failWrites !== undefined)
      return Promise.reject(new SuspensionStoreError("WRITE_FAILED", this.failWrites.message, undefined, { cause: this.failWrites }));
    this.records.set(record.sessionId, structuredClone(record));
    return Promise.resolve();
  }

  remove(sessionId: string): Promise<void> {
    this.records.delete(sessionId);
    return Promise.resolve();
  }
}

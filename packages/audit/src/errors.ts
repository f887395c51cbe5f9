/** Local failures of the audit log (never sent on the wire). */

export type AuditErrorCode =
  /** The key is missing, too short or not decodable. */
  | "INVALID_KEY"
  /** An existing log was written with another key (key id differs). */
  | "KEY_MISMATCH"
  /** An existing log's last record does not verify; refusing to extend a broken chain. */
  | "CHAIN_BROKEN"
  /** Another writer holds the log (lock file present and its process alive). */
  | "LOCKED"
  /** The log (or sink) is closed. */
  | "CLOSED"
  /** Writing to the sink failed; the record is not in the log. */
  | "WRITE_FAILED"
  /** A record is larger than `maxRecordBytes`. */
  | "RECORD_TOO_LARGE"
  /** A value cannot be canonicalized (non-finite number, bigint, function, ...). */
  | "NOT_CANONICAL"
  /** A caller passed something unusable (bad option, bad head string). */
  | "INVALID_ARGUMENT"
  /** An existing log was written by another replica (its records carry another replica id). */
  | "REPLICA_MISMATCH"
  /** The audit log cannot record right now (write failed, file gone); the call was answered fail-closed. */
  | "UNAVAILABLE";

const BRAND = Symbol.for("@ahp/audit.AuditError");

/** An audit failure with a stable `code` ({@link AuditErrorCode}); recognized across package copies by `AuditError.isInstance`. */
export class AuditError extends Error {
  readonly code: AuditErrorCode;
  declare readonly [BRAND]: true;

  constructor(code: AuditErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AuditError";
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for any AuditError, also one created by another copy of this package. */
  static isInstance(value: unknown): value is AuditError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

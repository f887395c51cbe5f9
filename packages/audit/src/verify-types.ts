/** The types of audit verification: reports, breaks, findings, options (see `verifyAuditLog`). */
import type { AuditHead, AuditRecord } from "./record.js";

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

/** One line of the verified files, parsed (internal to verification). */
export interface Entry {
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

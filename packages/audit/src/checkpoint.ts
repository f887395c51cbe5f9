/**
 * Signed checkpoints: the head of the chain (seq and record hash) with the time it was taken
 * and, when set, the replica id, authenticated with the audit key. The writer keeps the latest
 * one in a small file next to the log (`<log>.checkpoint`), replaced atomically at an interval
 * and on close. A log that ends before its checkpoint's seq lost records at its end
 * (truncation); one whose record at that seq has another hash was rewritten. See
 * docs/adr/0041-audit-checkpoints.md.
 */
import type { AuditKey } from "./key.js";
import { AUDIT_FORMAT_VERSION, type AuditHead } from "./record.js";
import { checkSignedFileMac, parseSignedFile, readSignedFile, sealSignedFile, writeSignedFile } from "./signed-file.js";

export { replaceFile } from "./signed-file.js";

/** The checkpoint file of a log: `<live log path>.checkpoint`. */
export const CHECKPOINT_SUFFIX = ".checkpoint";
/** The checkpoint file that belongs to the log at `logPath`. */
export const checkpointPathFor = (logPath: string): string => `${logPath}${CHECKPOINT_SUFFIX}`;

/** A signed checkpoint: the chain head at a moment, MACed with the audit key, so that dropping the last records is detected. */
export interface AuditCheckpoint {
  v: typeof AUDIT_FORMAT_VERSION;
  type: "checkpoint";
  /** Seq of the last record the log held, completely written, when the checkpoint was taken (0: none yet). */
  seq: number;
  /** Hash of that record (`recordHash`); for seq 0 the genesis value. */
  head: string;
  /** RFC 3339. */
  time: string;
  /** Key id, as in records. */
  kid: string;
  replica?: string;
  /** HMAC-SHA256(key, "ahp-audit/v1/checkpoint\n" + canonical JSON without `mac`): never valid as a record MAC. */
  mac: string;
}

/** Builds and MACs the checkpoint of a chain head (the writer calls it; exported for tools that write logs themselves). */
export function sealCheckpoint(head: AuditHead, key: AuditKey, options: { time: string; replica?: string }): AuditCheckpoint {
  return sealSignedFile(
    {
      v: AUDIT_FORMAT_VERSION,
      type: "checkpoint" as const,
      seq: head.seq,
      head: head.hash,
      time: options.time,
      kid: key.id,
      ...(options.replica === undefined ? {} : { replica: options.replica }),
    },
    key,
  );
}

/** True when the checkpoint's MAC matches under `key` (constant-time compare). */
export function checkCheckpointMac(checkpoint: AuditCheckpoint, key: AuditKey): boolean {
  return checkSignedFileMac("checkpoint", checkpoint, key);
}

/** Parses the text of a checkpoint file, or says why it is not one. */
export function parseCheckpoint(text: string): { ok: true; checkpoint: AuditCheckpoint } | { ok: false; problem: string } {
  const parsed = parseSignedFile<AuditCheckpoint>(text, "checkpoint", "an audit checkpoint", (c) =>
    typeof c.seq !== "number" || !Number.isSafeInteger(c.seq) || c.seq < 0 ? "seq is not a non-negative integer" : undefined,
  );
  return parsed.ok ? { ok: true, checkpoint: parsed.value } : parsed;
}

/**
 * Reads a checkpoint file: `undefined` when there is none, else the checkpoint or the problem
 * with the file (unreadable, not a checkpoint). The MAC is not checked here.
 */
export async function readCheckpoint(path: string): Promise<{ checkpoint: AuditCheckpoint } | { problem: string } | undefined> {
  const read = await readSignedFile(path, (text) => {
    const parsed = parseCheckpoint(text);
    return parsed.ok ? { ok: true as const, value: parsed.checkpoint } : parsed;
  });
  return read === undefined || "problem" in read ? read : { checkpoint: read.value };
}

/**
 * Replaces the checkpoint file atomically: the new checkpoint is written to `<path>.tmp`,
 * flushed, and renamed over `path`. A crash leaves either the old or the new checkpoint.
 */
export async function writeCheckpoint(path: string, checkpoint: AuditCheckpoint, mode = 0o600): Promise<void> {
  await writeSignedFile(path, checkpoint, mode);
}

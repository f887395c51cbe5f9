/**
 * Signed checkpoints: the head of the chain (seq and record hash) with the time it was taken
 * and, when set, the replica id, authenticated with the audit key. The writer keeps the latest
 * one in a small file next to the log (`<log>.checkpoint`), replaced atomically at an interval
 * and on close. A log that ends before its checkpoint's seq lost records at its end
 * (truncation); one whose record at that seq has another hash was rewritten. See
 * docs/adr/0041-audit-checkpoints.md.
 */
import { timingSafeEqual } from "node:crypto";
import { open, readFile, rename } from "node:fs/promises";
import { canonicalJson } from "./canonical.js";
import type { AuditKey } from "./key.js";
import { AUDIT_FORMAT_VERSION, type AuditHead } from "./record.js";

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

const DOMAIN = `ahp-audit/v${AUDIT_FORMAT_VERSION}/checkpoint\n`;
const HEX64 = /^[0-9a-f]{64}$/;

/** Builds and MACs the checkpoint of a chain head (the writer calls it; exported for tools that write logs themselves). */
export function sealCheckpoint(head: AuditHead, key: AuditKey, options: { time: string; replica?: string }): AuditCheckpoint {
  const unsigned: Omit<AuditCheckpoint, "mac"> = {
    v: AUDIT_FORMAT_VERSION,
    type: "checkpoint",
    seq: head.seq,
    head: head.hash,
    time: options.time,
    kid: key.id,
    ...(options.replica === undefined ? {} : { replica: options.replica }),
  };
  return { ...unsigned, mac: key.mac(DOMAIN + canonicalJson(unsigned)) };
}

/** True when the checkpoint's MAC matches under `key` (constant-time compare). */
export function checkCheckpointMac(checkpoint: AuditCheckpoint, key: AuditKey): boolean {
  const { mac, ...rest } = checkpoint;
  if (typeof mac !== "string" || !HEX64.test(mac)) return false;
  let expected: string;
  try {
    expected = key.mac(DOMAIN + canonicalJson(rest));
  } catch {
    return false;
  }
  return timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(mac, "hex"));
}

/** Parses the text of a checkpoint file, or says why it is not one. */
export function parseCheckpoint(text: string): { ok: true; checkpoint: AuditCheckpoint } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, problem: "not a JSON object" };
  const c = value as Record<string, unknown>;
  if (c.v !== AUDIT_FORMAT_VERSION || c.type !== "checkpoint") return { ok: false, problem: "not an audit checkpoint" };
  if (typeof c.seq !== "number" || !Number.isSafeInteger(c.seq) || c.seq < 0)
    return { ok: false, problem: "seq is not a non-negative integer" };
  if (typeof c.head !== "string" || !HEX64.test(c.head)) return { ok: false, problem: "head is not a SHA-256 hex digest" };
  if (typeof c.kid !== "string" || !/^[0-9a-f]{8}$/.test(c.kid)) return { ok: false, problem: "kid is not 8 hex digits" };
  if (typeof c.time !== "string") return { ok: false, problem: "time is missing" };
  if (c.replica !== undefined && typeof c.replica !== "string") return { ok: false, problem: "replica is not a string" };
  if (typeof c.mac !== "string" || !HEX64.test(c.mac)) return { ok: false, problem: "mac is not a SHA-256 hex digest" };
  return { ok: true, checkpoint: value as AuditCheckpoint };
}

/**
 * Reads a checkpoint file: `undefined` when there is none, else the checkpoint or the problem
 * with the file (unreadable, not a checkpoint). The MAC is not checked here.
 */
export async function readCheckpoint(path: string): Promise<{ checkpoint: AuditCheckpoint } | { problem: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    return { problem: `cannot read ${path}: ${code ?? (error as Error).message}` };
  }
  const parsed = parseCheckpoint(text.trim());
  return parsed.ok ? { checkpoint: parsed.checkpoint } : { problem: `${path}: ${parsed.problem}` };
}

/**
 * Replaces the checkpoint file atomically: the new checkpoint is written to `<path>.tmp`,
 * flushed, and renamed over `path`. A crash leaves either the old or the new checkpoint.
 */
export async function writeCheckpoint(path: string, checkpoint: AuditCheckpoint, mode = 0o600): Promise<void> {
  await replaceFile(path, `${canonicalJson(checkpoint)}\n`, mode);
}

/** Replaces a small file atomically: written to `<path>.tmp`, flushed, renamed over `path`. */
export async function replaceFile(path: string, text: string, mode = 0o600): Promise<void> {
  const tmp = `${path}.tmp`;
  const handle = await open(tmp, "w", mode);
  try {
    await handle.writeFile(text);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(tmp, path);
}

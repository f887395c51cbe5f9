/**
 * Rotation manifests: the writer's signed statement of which records left the log on purpose.
 *
 * A log must start at seq 1 from the genesis value, unless records were removed by rotation
 * (the oldest rotated files beyond `maxFiles` are deleted). Before the rotation deletes a file,
 * it replaces `<log>.rotation` atomically with `{removed_through, head, time, kid, replica?,
 * mac}`: every record up to seq `removed_through` may be absent, and the record at that seq had
 * hash `head` (so the first record still present must chain to it). The MAC uses the audit key
 * under its own domain, so a manifest is never a valid record or checkpoint MAC. Without a
 * manifest (or beyond it), a log whose head is missing fails verification. See
 * docs/adr/0156-audit-head-and-anchor.md.
 */
import type { AuditKey } from "./key.js";
import { AUDIT_FORMAT_VERSION, type AuditHead } from "./record.js";
import { checkSignedFileMac, parseSignedFile, readSignedFile, sealSignedFile, writeSignedFile } from "./signed-file.js";

/** The rotation manifest of a log: `<live log path>.rotation`. */
export const ROTATION_SUFFIX = ".rotation";
/** The rotation manifest that belongs to the log at `logPath`. */
export const rotationPathFor = (logPath: string): string => `${logPath}${ROTATION_SUFFIX}`;

/** A signed rotation manifest: records 1..`removed_through` left the log through rotation. */
export interface AuditRotationManifest {
  v: typeof AUDIT_FORMAT_VERSION;
  type: "rotation";
  /** Seq of the last record removed (the records 1..removed_through may be absent). */
  removed_through: number;
  /** `recordHash` of that record: the `prev` of the record after it. */
  head: string;
  /** RFC 3339: when the rotation removed them. */
  time: string;
  kid: string;
  replica?: string;
  /** HMAC-SHA256(key, "ahp-audit/v1/rotation\n" + canonical JSON without `mac`). */
  mac: string;
}

/** Builds and MACs the manifest saying that the records up to `last` (inclusive) were removed. */
export function sealRotationManifest(last: AuditHead, key: AuditKey, options: { time: string; replica?: string }): AuditRotationManifest {
  return sealSignedFile(
    {
      v: AUDIT_FORMAT_VERSION,
      type: "rotation" as const,
      removed_through: last.seq,
      head: last.hash,
      time: options.time,
      kid: key.id,
      ...(options.replica === undefined ? {} : { replica: options.replica }),
    },
    key,
  );
}

/** True when the manifest's MAC matches under `key` (constant-time compare). */
export function checkRotationManifestMac(manifest: AuditRotationManifest, key: AuditKey): boolean {
  return checkSignedFileMac("rotation", manifest, key);
}

/** Parses the text of a manifest, or says why it is not one. The MAC is not checked here. */
export function parseRotationManifest(text: string): { ok: true; manifest: AuditRotationManifest } | { ok: false; problem: string } {
  const parsed = parseSignedFile<AuditRotationManifest>(text, "rotation", "an audit rotation manifest", (m) =>
    typeof m.removed_through !== "number" || !Number.isSafeInteger(m.removed_through) || m.removed_through < 1
      ? "removed_through is not a positive integer"
      : undefined,
  );
  return parsed.ok ? { ok: true, manifest: parsed.value } : parsed;
}

/** Reads a manifest file: `undefined` when there is none, else the manifest or the problem with it. */
export async function readRotationManifest(path: string): Promise<{ manifest: AuditRotationManifest } | { problem: string } | undefined> {
  const read = await readSignedFile(path, (text) => {
    const parsed = parseRotationManifest(text);
    return parsed.ok ? { ok: true as const, value: parsed.manifest } : parsed;
  });
  return read === undefined || "problem" in read ? read : { manifest: read.value };
}

/** Replaces the manifest file atomically (written to `<path>.tmp`, flushed, renamed). */
export async function writeRotationManifest(path: string, manifest: AuditRotationManifest, mode = 0o600): Promise<void> {
  await writeSignedFile(path, manifest, mode);
}

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
import { timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { canonicalJson } from "./canonical.js";
import { replaceFile } from "./checkpoint.js";
import type { AuditKey } from "./key.js";
import { AUDIT_FORMAT_VERSION, type AuditHead } from "./record.js";

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

const DOMAIN = `ahp-audit/v${AUDIT_FORMAT_VERSION}/rotation\n`;
const HEX64 = /^[0-9a-f]{64}$/;

/** Builds and MACs the manifest saying that the records up to `last` (inclusive) were removed. */
export function sealRotationManifest(last: AuditHead, key: AuditKey, options: { time: string; replica?: string }): AuditRotationManifest {
  const unsigned: Omit<AuditRotationManifest, "mac"> = {
    v: AUDIT_FORMAT_VERSION,
    type: "rotation",
    removed_through: last.seq,
    head: last.hash,
    time: options.time,
    kid: key.id,
    ...(options.replica === undefined ? {} : { replica: options.replica }),
  };
  return { ...unsigned, mac: key.mac(DOMAIN + canonicalJson(unsigned)) };
}

/** True when the manifest's MAC matches under `key` (constant-time compare). */
export function checkRotationManifestMac(manifest: AuditRotationManifest, key: AuditKey): boolean {
  const { mac, ...rest } = manifest;
  if (typeof mac !== "string" || !HEX64.test(mac)) return false;
  let expected: string;
  try {
    expected = key.mac(DOMAIN + canonicalJson(rest));
  } catch {
    return false;
  }
  return timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(mac, "hex"));
}

/** Parses the text of a manifest, or says why it is not one. The MAC is not checked here. */
export function parseRotationManifest(text: string): { ok: true; manifest: AuditRotationManifest } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, problem: "not a JSON object" };
  const m = value as Record<string, unknown>;
  if (m.v !== AUDIT_FORMAT_VERSION || m.type !== "rotation") return { ok: false, problem: "not an audit rotation manifest" };
  if (typeof m.removed_through !== "number" || !Number.isSafeInteger(m.removed_through) || m.removed_through < 1)
    return { ok: false, problem: "removed_through is not a positive integer" };
  if (typeof m.head !== "string" || !HEX64.test(m.head)) return { ok: false, problem: "head is not a SHA-256 hex digest" };
  if (typeof m.kid !== "string" || !/^[0-9a-f]{8}$/.test(m.kid)) return { ok: false, problem: "kid is not 8 hex digits" };
  if (typeof m.time !== "string") return { ok: false, problem: "time is missing" };
  if (m.replica !== undefined && typeof m.replica !== "string") return { ok: false, problem: "replica is not a string" };
  if (typeof m.mac !== "string" || !HEX64.test(m.mac)) return { ok: false, problem: "mac is not a SHA-256 hex digest" };
  return { ok: true, manifest: value as AuditRotationManifest };
}

/** Reads a manifest file: `undefined` when there is none, else the manifest or the problem with it. */
export async function readRotationManifest(path: string): Promise<{ manifest: AuditRotationManifest } | { problem: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    return { problem: `cannot read ${path}: ${code ?? (error as Error).message}` };
  }
  const parsed = parseRotationManifest(text.trim());
  return parsed.ok ? { manifest: parsed.manifest } : { problem: `${path}: ${parsed.problem}` };
}

/** Replaces the manifest file atomically (written to `<path>.tmp`, flushed, renamed). */
export async function writeRotationManifest(path: string, manifest: AuditRotationManifest, mode = 0o600): Promise<void> {
  await replaceFile(path, `${canonicalJson(manifest)}\n`, mode);
}

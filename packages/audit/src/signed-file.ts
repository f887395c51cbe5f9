/**
 * Small files the writer signs apart from the chain (checkpoints and rotation manifests): one
 * JSON object `{v, type, …, head, time, kid, replica?, mac}` where `mac` is
 * HMAC-SHA256(key, "ahp-audit/v1/<type>\n" + canonical JSON without `mac`). The domain prefix
 * keeps a MAC of one kind from ever being valid as a record's or another kind's. Each file is
 * replaced atomically.
 */
import { timingSafeEqual } from "node:crypto";
import { open, readFile, rename } from "node:fs/promises";
import { canonicalJson } from "./canonical.js";
import type { AuditKey } from "./key.js";
import { AUDIT_FORMAT_VERSION } from "./record.js";

/** The kinds of signed files. */
export type SignedFileType = "checkpoint" | "rotation";

/** Members every signed file has. */
export interface SignedFileBase {
  v: typeof AUDIT_FORMAT_VERSION;
  type: SignedFileType;
  head: string;
  time: string;
  kid: string;
  replica?: string;
  mac: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
const domain = (type: SignedFileType) => `ahp-audit/v${AUDIT_FORMAT_VERSION}/${type}\n`;

/** MACs `unsigned` under the domain of `type`: the sealed file. */
export function sealSignedFile<T extends Omit<SignedFileBase, "mac">>(unsigned: T, key: AuditKey): T & { mac: string } {
  return { ...unsigned, mac: key.mac(domain(unsigned.type) + canonicalJson(unsigned)) };
}

/** True when `file.mac` is the MAC of the rest of it under the domain of `type` (constant-time compare). */
export function checkSignedFileMac(type: SignedFileType, file: { mac: string }, key: AuditKey): boolean {
  const { mac, ...rest } = file;
  if (typeof mac !== "string" || !HEX64.test(mac)) return false;
  let expected: string;
  try {
    expected = key.mac(domain(type) + canonicalJson(rest));
  } catch {
    return false;
  }
  return timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(mac, "hex"));
}

/**
 * Parses the text of a signed file of `type`, or says why it is not one. `what` names the kind
 * in the problem ("an audit checkpoint"); `checkOwn` checks the members only this kind has and
 * returns the problem it finds. The MAC is not checked here.
 */
export function parseSignedFile<T extends SignedFileBase>(
  text: string,
  type: SignedFileType,
  what: string,
  checkOwn: (value: Record<string, unknown>) => string | undefined,
): { ok: true; value: T } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, problem: "not a JSON object" };
  const m = value as Record<string, unknown>;
  if (m.v !== AUDIT_FORMAT_VERSION || m.type !== type) return { ok: false, problem: `not ${what}` };
  const own = checkOwn(m);
  if (own !== undefined) return { ok: false, problem: own };
  if (typeof m.head !== "string" || !HEX64.test(m.head)) return { ok: false, problem: "head is not a SHA-256 hex digest" };
  if (typeof m.kid !== "string" || !/^[0-9a-f]{8}$/.test(m.kid)) return { ok: false, problem: "kid is not 8 hex digits" };
  if (typeof m.time !== "string") return { ok: false, problem: "time is missing" };
  if (m.replica !== undefined && typeof m.replica !== "string") return { ok: false, problem: "replica is not a string" };
  if (typeof m.mac !== "string" || !HEX64.test(m.mac)) return { ok: false, problem: "mac is not a SHA-256 hex digest" };
  return { ok: true, value: value as T };
}

/**
 * Reads a signed file: `undefined` when there is none, else what `parse` made of its text or
 * the problem with it (unreadable, not of this kind).
 */
export async function readSignedFile<T>(
  path: string,
  parse: (text: string) => { ok: true; value: T } | { ok: false; problem: string },
): Promise<{ value: T } | { problem: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    return { problem: `cannot read ${path}: ${code ?? (error as Error).message}` };
  }
  const parsed = parse(text.trim());
  return parsed.ok ? { value: parsed.value } : { problem: `${path}: ${parsed.problem}` };
}

/** Replaces a signed file atomically with its canonical JSON line. */
export async function writeSignedFile(path: string, file: SignedFileBase, mode = 0o600): Promise<void> {
  await replaceFile(path, `${canonicalJson(file)}\n`, mode);
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

/**
 * Protocol version negotiation (spec §2.1): among the client's offered versions accept every
 * well-formed `MAJOR.MINOR.PATCH` with major 1 and value >= 1.0.0, select the highest, echo it.
 * Malformed entries (leading zeros, suffixes, not three integers) are never selected.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from "./constants.js";

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** The three numbers of a well-formed version string, or undefined. */
export function parseVersion(value: unknown): [number, number, number] | undefined {
  if (typeof value !== "string") return undefined;
  const m = SEMVER.exec(value);
  if (m === null) return undefined;
  const parts = [Number(m[1]), Number(m[2]), Number(m[3])] as [number, number, number];
  return parts.every(Number.isSafeInteger) ? parts : undefined;
}

const compare = (a: readonly number[], b: readonly number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;

/** The version to speak, or undefined when no offered version is acceptable. */
export function negotiateProtocolVersion(offered: unknown): string | undefined {
  if (!Array.isArray(offered)) return undefined;
  let best: { text: string; parts: [number, number, number] } | undefined;
  for (const entry of offered) {
    const parts = parseVersion(entry);
    if (parts === undefined || parts[0] !== 1) continue;
    if (best === undefined || compare(parts, best.parts) > 0) best = { text: entry as string, parts };
  }
  return best?.text;
}

/** `data` of the -32005 error. */
export const unsupportedVersionData = () => ({ supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS] });

/** True when `version` (negotiated) is at least `minimum`. Used by the per-version encoder seam. */
export function versionAtLeast(version: string, minimum: string): boolean {
  const a = parseVersion(version);
  const b = parseVersion(minimum);
  return a !== undefined && b !== undefined && compare(a, b) >= 0;
}

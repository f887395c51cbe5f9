/** Access to the vendored Agent Host Protocol conformance data (test/fixtures/agent-host-protocol). */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const FIXTURE_DIR = fileURLToPath(new URL("../fixtures/agent-host-protocol/", import.meta.url));

export interface IndexEntry {
  file: string;
  reducer?: string;
  type?: string;
  group?: string;
  actionTypes?: string[];
  description: string;
  adapterRelevance: "core" | "optional" | "out-of-scope";
}

export const readFixture = <T = unknown>(relative: string): T => JSON.parse(readFileSync(FIXTURE_DIR + relative, "utf8")) as T;
export const fixtureIndex = (): IndexEntry[] => readFixture<IndexEntry[]>("INDEX.json");

/** Every JSON `null` becomes an absent key (array elements stay, as `undefined` has no array form upstream either). */
export function nullToAbsent(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(nullToAbsent);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = nullToAbsent(v);
    return out;
  }
  return value;
}

/** Drops keys whose value is `undefined`, recursively (missing and undefined compare equal). */
export function dropUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropUndefined);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = dropUndefined(v);
    return out;
  }
  return value;
}

/** Deep-freezes a value so a reducer that mutates its input throws. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

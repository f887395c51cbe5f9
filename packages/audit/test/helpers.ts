import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuditKey, type AuditEntry } from "../src/index.js";

/** A fixed test key (not a secret). */
export const KEY_HEX = "7f".repeat(16) + "a5".repeat(16);
export const key = AuditKey.fromText(KEY_HEX);
export const otherKey = AuditKey.fromText("3c".repeat(32));

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "ahp-audit-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const entry = (i: number, extra: Partial<AuditEntry> = {}): AuditEntry => ({
  kind: "decision",
  session: "s-1",
  agent: "a-1",
  event_type: "pre_action",
  depth: 0,
  form: "request",
  decision: i % 3 === 0 ? "block" : "allow",
  latency_us: 100 + i,
  ...extra,
});

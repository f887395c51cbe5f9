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

// Test secrets are assembled at run time so that the source holds no scanner-triggering literals.
const j = (...parts: string[]) => parts.join("");
export const SAMPLES = {
  aws_access_key_id: j("AKIA", "IOSFODNN7", "EXAMPLE"),
  aws_secret: j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"),
  github_classic: j("ghp_", "a".repeat(20), "B".repeat(16)),
  github_pat: j("github_pat_", "11ABCDEFG0123456789_", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV"),
  gitlab: j("glpat-", "x".repeat(20)),
  slack: j("xoxb-", "123456789012-", "abcdefghijABCDEFGHIJ"),
  stripe: j("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc"),
  google: j("AIza", "SyA-", "1234567890abcdefghijklmnopqrstu"),
  openai: j("sk-", "proj-", "abcdefghij0123456789ABCDEFGHIJ"),
  anthropic: j("sk-ant-", "api03-", "abcdefghij0123456789ABCDEFGHIJ"),
  jwt: j("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", ".", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", ".", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
  pem: j("-----BEGIN ", "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\nabcdef==\n-----END ", "RSA PRIVATE KEY-----"),
  password: "hunter2-Secret!",
};

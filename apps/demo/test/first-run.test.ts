/**
 * What a first-time user sees: `pnpm demo` (scripts/demo.mjs) keeps turbo's banner out and says in
 * one line what it is doing while it builds; the audit log is said to be temporary, and
 * `--audit FILE` keeps it with its key next to it.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditKey, verifyAuditLog } from "@ahp/audit";
import { runDemo } from "../src/demo.js";

const SCRIPT = fileURLToPath(new URL("../../../scripts/demo.mjs", import.meta.url));

const collect = () => {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-demo-test-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("pnpm demo", () => {
  it("prints one line while building, no turbo banner, then the demo's own output", async () => {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      // A notice delay of 0 makes the "building" line appear however fast the (cached) build is.
      const child = spawn(process.execPath, [SCRIPT, "--help"], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, AHP_DEMO_NOTICE_MS: "0" },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^demo: building the packages it needs/)]);
    const all = result.stdout + result.stderr;
    expect(all).not.toMatch(/turbo|Tasks:|Packages in scope|Remote caching/i);
    expect(result.stdout).toMatch(/^Usage: ahp-demo .*--audit FILE/);
  });
});

describe("the demo's audit log", () => {
  it("says the log is temporary when no --audit is given", async () => {
    const out = collect();
    const result = await runDemo({ transport: "memory", out: out.stream, err: collect().stream, env: {} });
    expect(out.text()).toMatch(/temporary: deleted now; --audit FILE writes the log where you want it/);
    await expect(stat(result.auditFile)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("--audit FILE keeps the log and its key, and a second run continues the chain", async () => {
    const file = join(dir, "kept", "..", "audit.log");
    const first = await runDemo({ transport: "memory", out: collect().stream, err: collect().stream, env: {}, auditFile: file });
    expect(first.audit.status).toBe("intact");
    const keyText = await readFile(`${file}.key`, "utf8");
    expect((await stat(`${file}.key`)).mode & 0o777).toBe(0o600);
    const out = collect();
    const second = await runDemo({ transport: "memory", out: out.stream, err: collect().stream, env: {}, auditFile: file });
    expect(second.audit.records).toBe(first.audit.records * 2);
    expect(out.text()).toMatch(/key {6}.*audit\.log\.key \(verify: ahp audit verify /);
    expect(out.text()).not.toMatch(/temporary/);
    expect(out.text()).not.toContain(keyText);
    const report = await verifyAuditLog(file, AuditKey.fromBytes(Buffer.from(keyText, "hex")));
    expect(report.ok).toBe(true);
  });
});

/**
 * What a first-time user sees: `pnpm demo` (scripts/demo.mjs) keeps turbo's banner out and, while
 * it builds, says what it is doing (which package, how many of how many, the time so far) with an
 * honest estimate; a failed build shows the failing package's output. The audit log is said to be
 * temporary, and `--audit FILE` keeps it with its key next to it.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AuditKey, verifyAuditLog } from "@ahp/audit";
import { runDemo } from "../src/demo.js";

const SCRIPT = fileURLToPath(new URL("../../../scripts/demo.mjs", import.meta.url));
// The first test runs the real (cached) build: seconds when idle, up to a minute on a busy machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

interface Run {
  code: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
}

function runScript(args: string[], env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, [SCRIPT, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (c) => resolve(c));
  });
  return { code, stdout: () => stdout, stderr: () => stderr };
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A stand-in for turbo on the PATH: it prints what turbo prints for three packages (one from the
 * cache, one built), then waits for the file \`release\` and ends with the exit code written in it.
 */
async function fakeTurbo(): Promise<{ path: string; release: (code: number) => Promise<void> }> {
  const bin = join(dir, `fake-turbo-${Math.random().toString(36).slice(2)}`);
  await mkdir(bin);
  const release = join(bin, "release");
  const script = [
    "#!/usr/bin/env node",
    "const fs = require('node:fs');",
    "console.log('   \u2022 turbo 2.0.0');",
    "console.log('   \u2022 Running build in 3 packages');",
    "console.log('@ahp/core:build: cache hit, replaying logs 1111');",
    "console.log('@ahp/core:build: replayed line of a cached package');",
    "console.log('@ahp/policy:build: cache miss, executing 2222');",
    `const release = ${JSON.stringify(release)};`,
    "const end = Date.now() + 120000;",
    "const wait = () => {",
    "  if (fs.existsSync(release)) {",
    "    const code = Number(fs.readFileSync(release, 'utf8'));",
    "    if (code !== 0) console.error('@ahp/policy:build: src/x.ts(1,1): error TS2322: not assignable');",
    "    process.exit(code);",
    "  }",
    "  if (Date.now() > end) process.exit(3);",
    "  setTimeout(wait, 20);",
    "};",
    "wait();",
  ].join("\n");
  await writeFile(join(bin, "turbo"), script);
  await chmod(join(bin, "turbo"), 0o755);
  return { path: `${bin}:${process.env.PATH ?? ""}`, release: (code) => writeFile(release, String(code)) };
}

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
  it("says what it builds with an honest estimate, no turbo banner, then the demo's own output", async () => {
    // A notice delay of 0 makes the progress appear however fast the (cached) build is.
    const run = runScript(["--help"], { AHP_DEMO_NOTICE_MS: "0" });
    const code = await run.code;
    expect(code, run.stderr()).toBe(0);
    const lines = run.stderr().trim().split("\n");
    expect(lines[0]).toBe(
      "demo: building the packages it needs (the first run takes 1 to 3 minutes, longer on a busy machine; later runs use the cache)",
    );
    for (const line of lines) expect(line).toMatch(/^demo: /);
    expect(lines.at(-1)).toMatch(/^demo: built in \d+ s; starting the demo$/);
    const all = run.stdout() + run.stderr();
    expect(all).not.toMatch(/turbo|Tasks:|Packages in scope|Remote caching/i);
    expect(run.stdout()).toMatch(/^Usage: ahp-demo .*--audit FILE/);
  });

  it("while a package builds: which one, how many of how many, the time so far, repeated while it lasts", async () => {
    const turbo = await fakeTurbo();
    const run = runScript(["--help"], { PATH: turbo.path, AHP_DEMO_NOTICE_MS: "0", AHP_DEMO_TICK_MS: "50" });
    const progress = /^demo: building @ahp\/policy \(2 of 3 packages, 1 from the cache, \d+ s so far\)$/gm;
    // A line per tick while it builds (the time in it is the part that changes).
    await until(() => (run.stderr().match(progress) ?? []).length >= 2, "two progress lines for @ahp/policy");
    await turbo.release(0);
    expect(await run.code, run.stderr()).toBe(0);
    expect(run.stderr()).toMatch(/^demo: built in \d+ s; starting the demo$/m);
    expect(run.stderr()).not.toMatch(/replayed|turbo/);
    expect(run.stdout()).toMatch(/^Usage: ahp-demo /);
  });

  it("a failed build shows the failing package's output, not the cached packages' logs, and its exit code", async () => {
    const turbo = await fakeTurbo();
    const run = runScript(["--help"], { PATH: turbo.path });
    await turbo.release(2);
    expect(await run.code).toBe(2);
    expect(run.stderr()).toContain("@ahp/policy:build: src/x.ts(1,1): error TS2322: not assignable");
    expect(run.stderr()).not.toContain("replayed line of a cached package");
    expect(run.stderr()).toMatch(/demo: the build failed \(exit 2\); the output above says why\n$/);
    expect(run.stdout()).toBe("");
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

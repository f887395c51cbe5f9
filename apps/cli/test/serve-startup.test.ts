/**
 * `ahp serve` refusing to start (the built binary): an address in use on each listener, a file
 * named by a flag that does not exist, an audit log that cannot be written. Each prints exactly
 * one line naming the option, nothing on stdout, no JSON log lines, and exits with its own code.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { AuditError } from "@ahp/audit";
import { EXIT_FAILURE, EXIT_IOERR, EXIT_NOINPUT, EXIT_OSERR, EXIT_WRONG_KEY } from "../src/io.js";
import { StartupLog, auditOpenFailure } from "../src/startup.js";

// Each test starts `ahp` processes; on a busy machine one start can take many seconds.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const KEY = randomBytes(32).toString("hex");

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

const running: ChildProcess[] = [];
function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "serve", ...args], {
      env: { ...process.env, AHP_AUDIT_KEY: KEY, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `ahp serve` and resolves once it logged `listening` for its first listener. */
function serveUntilListening(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, "serve", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  running.push(child);
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes('"msg":"listening"')) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

/** One line on stderr, nothing on stdout, and no JSON log line anywhere. */
function expectOneLine(result: Result, code: number, line: RegExp): void {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout).toBe("");
  const lines = result.stderr.split("\n").filter((l) => l !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(line);
  expect(result.stderr).not.toContain("{");
}

let dir: string;
let holder: Server;
let taken: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-serve-start-"));
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  taken = `127.0.0.1:${(holder.address() as { port: number }).port}`;
});
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});
afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("ahp serve: an address in use (exit 71)", () => {
  it.each(["--http", "--ws", "--metrics"])("%s names the option and the address", async (option) => {
    const args = option === "--metrics" ? ["--http", "127.0.0.1:0", "--metrics", taken] : [option, taken];
    const result = await serve(args);
    expectOneLine(result, EXIT_OSERR, new RegExp(`^ahp serve: ${option} ${escape(taken)}: address already in use$`));
  });

  it("a second listener in use after a first one bound: the first is closed again, still one line", async () => {
    const result = await serve(["--http", "127.0.0.1:0", "--ws", taken]);
    expectOneLine(result, EXIT_OSERR, new RegExp(`^ahp serve: --ws ${escape(taken)}: address already in use$`));
  });

  it("--unix on a socket a live server listens on", async () => {
    const path = join(dir, "live.sock");
    await serveUntilListening(["--unix", path]);
    const result = await serve(["--unix", path]);
    expectOneLine(
      result,
      EXIT_OSERR,
      new RegExp(`^ahp serve: --unix ${escape(path)}: address already in use \\(another server is listening on this socket\\)$`),
    );
  });

  it("--agent-host", async () => {
    const tokens = join(dir, "tokens");
    await writeFile(tokens, `${randomBytes(24).toString("hex")} alice approver\n`, { mode: 0o600 });
    const result = await serve(["--http", "127.0.0.1:0", "--agent-host", taken, "--agent-host-token-file", tokens]);
    expectOneLine(result, EXIT_OSERR, new RegExp(`^ahp serve: --agent-host ${escape(taken)}: address already in use$`));
  });

  it("--log-level debug shows the lines held back before the error", async () => {
    const result = await serve(["--http", taken, "--log-level", "debug"]);
    expect(result.code).toBe(EXIT_OSERR);
    const lines = result.stderr.split("\n").filter((l) => l !== "");
    expect(lines.some((l) => l.includes('"msg":"policy loaded"'))).toBe(true);
    expect(lines.at(-1)).toMatch(/^ahp serve: --http .*: address already in use$/);
  });
});

describe("ahp serve: a file named by a flag that does not exist (exit 66)", () => {
  it.each([
    ["--policy", ["--policy", "nope.yaml"], "nope.yaml"],
    ["--audit-key-file", ["--audit", "a.log", "--audit-key-file", "no.key"], "no.key"],
    ["--agent-host-token-file", ["--agent-host", "127.0.0.1:0", "--agent-host-token-file", "no.tokens"], "no.tokens"],
    ["--state-password-file", ["--state", "redis://127.0.0.1:1", "--state-password-file", "no.pass"], "no.pass"],
    ["--config", ["--config", "no.yaml"], "no.yaml"],
  ])("%s", async (option, args, path) => {
    const result = await serve(["--http", "127.0.0.1:0", ...args]);
    expectOneLine(result, EXIT_NOINPUT, new RegExp(`^ahp serve: ${option} ${escape(path)}: no such file or directory$`));
  });

  it("--policy naming a directory", async () => {
    const result = await serve(["--http", "127.0.0.1:0", "--policy", dir]);
    expectOneLine(result, EXIT_NOINPUT, new RegExp(`^ahp serve: --policy ${escape(dir)}: not a regular file$`));
  });
});

describe("ahp serve: an audit log that cannot be written (exit 74)", () => {
  it.runIf(existsSync("/dev/full") || process.env.CI === "true")("--audit /dev/full does not start", async () => {
    const result = await serve(["--http", "127.0.0.1:0", "--audit", "/dev/full"]);
    expectOneLine(result, EXIT_IOERR, /^ahp serve: --audit \/dev\/full: cannot write the audit log there: not a regular file$/);
  });

  it("--audit naming a directory, or a path under a file", async () => {
    const asDir = await serve(["--http", "127.0.0.1:0", "--audit", dir]);
    expectOneLine(asDir, EXIT_IOERR, /: cannot write the audit log there: is a directory$/);
    const file = join(dir, "plain");
    await writeFile(file, "");
    const under = await serve(["--http", "127.0.0.1:0", "--audit", join(file, "audit.log")]);
    expectOneLine(under, EXIT_IOERR, /: cannot write the audit log: a part of the path is not a directory$/);
  });

  it("what opening the log throws is mapped to its exit code", () => {
    const full = new AuditError("WRITE_FAILED", "audit sink failed: ENOSPC: no space left on device, write", {
      cause: Object.assign(new Error("ENOSPC"), { code: "ENOSPC" }),
    });
    expect(auditOpenFailure("a.log", full)).toMatchObject({
      exitCode: EXIT_IOERR,
      message: expect.stringMatching(/^--audit a\.log: cannot write/),
    });
    const raw = Object.assign(new Error("EROFS: read-only file system, open 'a.log'"), { code: "EROFS" });
    expect(auditOpenFailure("a.log", raw)).toMatchObject({
      exitCode: EXIT_IOERR,
      message: "--audit a.log: cannot write the audit log: read-only file system",
    });
    expect(auditOpenFailure("a.log", new AuditError("KEY_MISMATCH", "written with key 1234"))).toMatchObject({ exitCode: EXIT_WRONG_KEY });
    expect(auditOpenFailure("a.log", new AuditError("LOCKED", "held by pid 7"))).toMatchObject({ exitCode: EXIT_FAILURE });
  });
});

describe("StartupLog", () => {
  it("holds lines until released, then passes them through; a failed start drops them unless kept", () => {
    let out = "";
    const io = { stderr: { write: (c: string) => ((out += c), true) } as unknown as NodeJS.WritableStream };
    const held = new StartupLog(io);
    held.write("a\n");
    expect(out).toBe("");
    held.release();
    held.write("b\n");
    expect(out).toBe("a\nb\n");
    out = "";
    const dropped = new StartupLog(io);
    dropped.write("c\n");
    dropped.discard();
    expect(out).toBe("");
    const kept = new StartupLog(io);
    kept.keepOnFailure = true;
    kept.write("d\n");
    kept.discard();
    expect(out).toBe("d\n");
  });
});

/**
 * What a new user meets first: one-line usage errors with a "did you mean", configuration errors
 * with a hint, arguments checked before anything starts, `--version`, and `ahp send --fail-on`
 * as a gate for shell scripts. The real built `ahp` runs in a child process.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { checkHostPorts, closest, hostPort } from "../src/args.js";

// Each test starts `ahp` processes; on a busy machine one start can take many seconds.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const BIN = fileURLToPath(new URL("../bin/ahp.js", import.meta.url));

function ahp(args: string[], input = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, AHP_AUDIT_KEY: "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const lines = (text: string) => text.split("\n").filter((l) => l !== "");

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-usage-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("HOST:PORT values", () => {
  it("reads HOST:PORT, :PORT, PORT and [IPv6]:PORT", () => {
    expect(hostPort("http", "127.0.0.1:8080")).toEqual({ host: "127.0.0.1", port: 8080 });
    expect(hostPort("http", "0.0.0.0:0")).toEqual({ host: "0.0.0.0", port: 0 });
    expect(hostPort("http", ":9000")).toEqual({ host: "127.0.0.1", port: 9000 });
    expect(hostPort("http", "9000")).toEqual({ host: "127.0.0.1", port: 9000 });
    expect(hostPort("http", "localhost:1")).toEqual({ host: "localhost", port: 1 });
    expect(hostPort("http", "[::1]:8080")).toEqual({ host: "::1", port: 8080 });
  });

  it("refuses a host without a port instead of reading its last digit as the port", () => {
    expect(() => hostPort("http", "127.0.0.1")).toThrow(/--http expects HOST:PORT, got "127.0.0.1" \(no port/);
    expect(() => hostPort("http", "localhost")).toThrow(/no port/);
    expect(() => hostPort("http", "127.0.0.1:99999")).toThrow(/port out of range \(0-65535\): 99999/);
    expect(() => hostPort("http", "127.0.0.1:http")).toThrow(/not a number/);
    expect(() => hostPort("ws", "::1:80")).toThrow(/IPv6 address in brackets/);
    expect(() => checkHostPorts({ http: ["127.0.0.1:1"], metrics: "127.0.0.1" })).toThrow(/--metrics/);
  });
});

describe("did you mean", () => {
  it("suggests the nearest option or command only when it is a likely typo", () => {
    expect(closest("htp", ["http", "ws", "unix"])).toBe("http");
    expect(closest("polcy", ["policy", "audit"])).toBe("policy");
    expect(closest("serv", ["serve", "send"])).toBe("serve");
    expect(closest("frobnicate", ["serve", "send"])).toBeUndefined();
  });
});

describe("ahp usage and configuration errors", () => {
  it("an unknown option is one line with a suggestion and a pointer to --help", async () => {
    const r = await ahp(["serve", "--htp", "127.0.0.1:0"]);
    expect(r.code).toBe(64);
    expect(lines(r.stderr)).toEqual(["ahp serve: unknown option --htp (did you mean --http?); see 'ahp serve --help'"]);
    expect(r.stdout).toBe("");
  });

  it("an unknown command suggests the nearest one", async () => {
    const r = await ahp(["sned"]);
    expect(r.code).toBe(64);
    expect(lines(r.stderr)).toEqual([`ahp: unknown command "sned" (did you mean send?); see 'ahp --help'`]);
  });

  it("a missing value and a missing port are one line each", async () => {
    const missing = await ahp(["send", "--connect"]);
    expect(missing.code).toBe(64);
    expect(lines(missing.stderr)).toEqual(["ahp send: --connect needs a value; see 'ahp send --help'"]);
    const noPort = await ahp(["serve", "--http", "127.0.0.1"]);
    expect(noPort.code).toBe(64);
    expect(lines(noPort.stderr)).toHaveLength(1);
    expect(noPort.stderr).toMatch(/--http expects HOST:PORT, got "127.0.0.1" \(no port; use 127.0.0.1:0 for any free port\)/);
    expect(noPort.stderr).not.toMatch(/ENOTFOUND/);
  });

  it("checks every argument before loading the policy or listening", async () => {
    const r = await ahp(["serve", "--http", "127.0.0.1:99999"]);
    expect(r.code).toBe(64);
    // Nothing was started: no JSON log line (policy loaded, listening) precedes the error.
    expect(lines(r.stderr)).toEqual(["ahp serve: --http: port out of range (0-65535): 99999; see 'ahp serve --help'"]);
    const metrics = await ahp(["serve", "--stdio", "--metrics", "localhost"]);
    expect(metrics.code).toBe(64);
    expect(lines(metrics.stderr)).toHaveLength(1);
  });

  it("a short audit key is a configuration error with a hint, not the usage", async () => {
    const key = join(dir, "short.key");
    await writeFile(key, "too-short");
    const r = await ahp(["serve", "--stdio", "--audit", join(dir, "audit.log"), "--audit-key-file", key]);
    expect(r.code).toBe(78);
    const [first, hint, ...rest] = lines(r.stderr);
    expect(first).toMatch(/^ahp serve: audit key: .*32/);
    expect(hint).toMatch(/^hint: create one with: openssl rand -hex 32 > audit.key/);
    expect(rest).toEqual([]);
    expect(r.stderr).not.toMatch(/Usage:/);
  });

  it("--version prints the package version", async () => {
    const r = await ahp(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
  });
});

describe("ahp send --fail-on", () => {
  // The harness is started by `ahp send` itself: on a loaded machine its start alone can pass the
  // default 10 s per request.
  const SEND_MS = "60000";
  const harness = `stdio:${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} serve --stdio --log-level silent`;
  const rmRoot = JSON.stringify({ tool_name: "bash", arguments: { command: "rm -rf /" } });
  const ls = JSON.stringify({ tool_name: "bash", arguments: { command: "ls" } });
  /** `ahp send` against its own harness, with room for that harness to start. */
  const send = (args: string[], input?: string) => ahp(["send", "--timeout-ms", SEND_MS, "--connect", harness, ...args], input);

  it("exits 1 when a listed decision comes back, and still prints it", async () => {
    const blocked = await send(["--event-type", "pre_action", "--payload", rmRoot, "--fail-on", "block"]);
    expect(blocked.code, blocked.stderr).toBe(1);
    expect(JSON.parse(blocked.stdout)).toMatchObject({ decision: "block" });
    const allowed = await send(["--event-type", "pre_action", "--payload", ls, "--fail-on", "block"]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout)).toEqual({ decision: "allow" });
  });

  it("without --fail-on a block still exits 0 (the answer was received)", async () => {
    const r = await send(["--event-type", "pre_action", "--payload", rmRoot]);
    expect(r.code, r.stderr).toBe(0);
  });

  it("looks at every item of a file and at every decision of a batch", async () => {
    const event = (command: string) => ({
      event_type: "pre_action",
      session_id: "s",
      agent_id: "a",
      timestamp: "2026-01-01T00:00:00Z",
      depth: 0,
      payload: { tool_name: "bash", arguments: { command } },
    });
    const input = [
      JSON.stringify({ event_type: "pre_action", payload: { tool_name: "bash", arguments: { command: "ls" } } }),
      JSON.stringify({ jsonrpc: "2.0", id: "b", method: "ahp/batch", params: { events: [event("ls"), event("rm -rf /")] } }),
    ].join("\n");
    const r = await send(["--file", "-", "--fail-on", "block,escalate"], input);
    expect(r.code, r.stderr).toBe(1);
    expect(lines(r.stdout)).toHaveLength(2);
  });

  it("refuses a tag that is not a decision, with a suggestion", async () => {
    const r = await send(["--event-type", "pre_action", "--fail-on", "blok"]);
    expect(r.code).toBe(64);
    expect(lines(r.stderr)).toEqual([`ahp send: --fail-on: unknown decision "blok" (did you mean block?); see 'ahp send --help'`]);
  });
});

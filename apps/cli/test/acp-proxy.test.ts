/** `ahp acp-proxy` end to end: a stock SDK client over the proxy's stdio, a stock agent as its child. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

/** The initialize result as these assertions read it (capability `_meta` entries are objects). */
interface InitView {
  protocolVersion: number;
  agentCapabilities: { _meta: Record<string, Record<string, unknown>>; [key: string]: unknown };
}

const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const AGENT = fileURLToPath(new URL("./fixtures/acp-agent.mjs", import.meta.url));
const running: ChildProcess[] = [];
afterEach(() => {
  for (const c of running.splice(0)) c.kill("SIGKILL");
});
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-acp-proxy-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function proxy(args: string[]) {
  const child = spawn(process.execPath, [BIN, "acp-proxy", ...args], { stdio: ["pipe", "pipe", "pipe"] });
  running.push(child);
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  // Keep a copy of every stdout byte to check that stdout carries only JSON-RPC.
  const tee = new PassThrough();
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
    tee.write(c);
  });
  child.stdout.on("end", () => tee.end());
  const received: Array<{ update: { content?: { text?: string } } }> = [];
  const conn = client({ name: "e2e" })
    .onNotification("session/update", ({ params }) => {
      received.push(params as never);
    })
    .connect(ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(tee) as ReadableStream<Uint8Array>));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, conn, ctx: conn.agent, received, stderr: () => stderr, stdout: () => stdout, exited };
}

describe("ahp acp-proxy", () => {
  it("--help shows the usage and a Zed settings.json snippet", async () => {
    const child = spawn(process.execPath, [BIN, "acp-proxy", "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(code).toBe(0);
    expect(out).toMatch(/Usage: ahp acp-proxy/);
    expect(out).toContain('"agent_servers"');
    const snippet = out.slice(out.indexOf("{"), out.lastIndexOf("}") + 1);
    expect(JSON.parse(snippet).agent_servers["My agent (suspendable)"].args).toContain("acp-proxy");
  });

  it("refuses a missing agent command with the usage (exit 64)", async () => {
    const child = spawn(process.execPath, [BIN, "acp-proxy", "--store", dir], { stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    expect(await new Promise((resolve) => child.on("exit", resolve))).toBe(64);
    expect(err).toContain("give the agent command after --");
  });

  it("proxies a stock agent with the embedded harness: prompt, suspend, resume; stdout is only ACP, logs are JSON on stderr", async () => {
    const store = join(dir, "store-1");
    const p = proxy(["--store", store, "--", process.execPath, AGENT]);
    const init = (await p.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} })) as unknown as InitView;
    expect(init.agentCapabilities._meta["ahpHarness/suspend"]).toMatchObject({ supportsSuspend: true });
    const { sessionId } = await p.ctx.request("session/new", { cwd: "/work/project", mcpServers: [] });
    expect((await p.ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] })).stopReason).toBe("end_turn");
    const sus = await p.ctx.request<Record<string, unknown>>("_ahpHarness/session/suspend", { sessionId, reason: "lunch" });
    expect(sus.handle).toMatch(/^sus_/);
    expect((await readdir(store)).filter((f) => f.endsWith(".suspension.json"))).toHaveLength(1);
    const bad = await p.ctx
      .request("_ahpHarness/session/suspend", { sessionId, resumeWhen: { timeout: { durationMinutes: 0 } } })
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: -32602, data: { field: "resumeWhen.timeout.durationMinutes" } });
    const res = await p.ctx.request<{ _meta: Record<string, unknown> }>("session/resume", {
      sessionId,
      cwd: "/work/project",
      _meta: { "ahpHarness/resume": { handle: sus.handle, input: "back" } },
    });
    expect(res._meta["ahpHarness/resume"]).toMatchObject({ handle: sus.handle, cause: "explicit_resume" });
    await p.ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go on" }] });
    expect(p.received.map((u) => u.update.content?.text).filter(Boolean)).toEqual(["turn 1: hello", "turn 2: Resume input: back go on"]);
    p.conn.close();
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
    for (const line of p
      .stdout()
      .split("\n")
      .filter((l) => l.trim() !== ""))
      expect(JSON.parse(line).jsonrpc).toBe("2.0");
    const logLines = p
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"));
    expect(logLines.length).toBeGreaterThan(2);
    for (const line of logLines) expect(JSON.parse(line)).toHaveProperty("msg");
    expect(logLines.map((l) => JSON.parse(l).msg)).toEqual(expect.arrayContaining(["harness connected", "serving", "stopped"]));
    expect(p.stderr()).toContain("fixture agent started");
    expect(p.stdout()).not.toContain("fixture agent started");
  });

  it("refuses to start on a corrupt suspension record, naming it", async () => {
    const store = join(dir, "store-bad");
    const { mkdir, writeFile } = await import("node:fs/promises");
    await mkdir(store, { recursive: true });
    await writeFile(join(store, "x.suspension.json"), "{broken");
    const p = proxy(["--store", store, "--", process.execPath, AGENT]);
    expect(await p.exited).toBe(2);
    expect(p.stderr()).toContain(join(store, "x.suspension.json"));
    p.conn.close();
  });

  it("--connect to an unreachable harness fails with a clear log line", async () => {
    const p = proxy(["--connect", `unix:${join(dir, "nobody.sock")}`, "--store", join(dir, "s3"), "--", process.execPath, AGENT]);
    expect(await p.exited).toBe(2);
    expect(p.stderr()).toMatch(/"msg":"harness unreachable"/);
    p.conn.close();
  });
});

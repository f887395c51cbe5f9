/**
 * A suspended session survives a bridge restart: suspend, SIGKILL the bridge process, start it
 * again on the same store, resume with the handle, and the session continues with its history.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { META } from "../src/index.js";
import { resumeWith, suspend, until } from "./helpers/setup.js";

const MAIN = fileURLToPath(new URL("./fixtures/bridge-main.ts", import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function startBridge(store: string, agentStore: string) {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, store, agentStore], { stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const received: Array<{ update: Record<string, any> }> = [];
  const conn = client({ name: "restart-test" })
    .onNotification("session/update", ({ params }) => {
      received.push(params);
    })
    .connect(
      ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
    );
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, conn, ctx: conn.agent, received, stderr: () => stderr, exited };
}

describe("restart", { timeout: 90_000 }, () => {
  it("suspend, SIGKILL the bridge, start it again on the same store, resume: the session continues with its history", async () => {
    const store = mkdtempSync(join(tmpdir(), "acp-store-"));
    const agentStore = mkdtempSync(join(tmpdir(), "acp-agent-"));
    dirs.push(store, agentStore);
    const a = startBridge(store, agentStore);
    await a.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await a.ctx.request("session/new", { cwd: "/work/project", mcpServers: [] });
    await a.ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "remember the parser bug" }] });
    const sus = await suspend(a.ctx, { sessionId, reason: "overnight", resumeWhen: { onEvent: "ci.passed" } });
    expect(readdirSync(store).filter((f) => f.endsWith(".suspension.json"))).toHaveLength(1);
    a.child.kill("SIGKILL");
    await a.exited;
    a.conn.close();

    const b = startBridge(store, agentStore);
    await b.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const status = await b.ctx.request<Record<string, any>>("_ahpHarness/session/suspension", { sessionId });
    expect(status).toMatchObject({ state: "suspended", handle: sus.handle, reason: "overnight", resumeWhen: { onEvent: "ci.passed" } });
    const res = await resumeWith(b.ctx, sessionId, { handle: sus.handle, input: "CI passed" });
    expect(res._meta[META.resume]).toMatchObject({ handle: sus.handle, cause: "explicit_resume", hadResumeInput: true });
    const next = await b.ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "continue" }] });
    expect(next.stopReason).toBe("end_turn");
    await until(
      () => b.received.some((u) => typeof u.update.content?.text === "string" && u.update.content.text.startsWith("turn 2")),
      "the reply",
      1_000_000,
    );
    const reply = b.received.find((u) => u.update.content?.text?.startsWith("turn 2"))!.update.content.text as string;
    expect(reply).toMatch(/^turn 2, history 1: Resume input: CI passed/);
    // The handle is consumed across restarts too.
    expect(await resumeWith(b.ctx, sessionId, { handle: sus.handle }).catch((e: unknown) => e)).toMatchObject({
      code: -31001,
      data: { reason: "handle_consumed" },
    });
    b.conn.close();
  });

  it("refuses to start on a corrupt record, naming the file", async () => {
    const store = mkdtempSync(join(tmpdir(), "acp-store-"));
    const agentStore = mkdtempSync(join(tmpdir(), "acp-agent-"));
    dirs.push(store, agentStore);
    const bad = join(store, "0123.suspension.json");
    writeFileSync(bad, "{not json");
    const c = startBridge(store, agentStore);
    expect(await c.exited).toBe(3);
    expect(c.stderr()).toContain(`corrupt suspension record ${bad}`);
    c.conn.close();
  });
});

/**
 * Real peers over stdio (§9): the stock SDK agent and the legacy 0.4.5 agent as child processes
 * behind the bridge; the agent dying while a session is suspended.
 */
import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as legacy from "@zed-industries/agent-client-protocol";
import { afterEach, describe, expect, it, vi } from "vitest";

// Child processes over real pipes: on a busy machine a scenario may take far longer than usual.
vi.setConfig({ testTimeout: 120_000 });
import { createAcpBridge, ManualClock, MemorySuspensionStore, META, nodeStream, spawnAgent, type AcpBridge } from "../src/index.js";
import { clientDouble, observe, resumeWith, suspend, until } from "./helpers/setup.js";
import { assertStockSafe, indexOf, labels, lifecycleEvents, tappedNodePair, tappedPair, type WireEntry } from "./helpers/wire.js";

const STOCK = fileURLToPath(new URL("./fixtures/stock-agent.mjs", import.meta.url));
const LEGACY = fileURLToPath(new URL("./fixtures/legacy-agent.mjs", import.meta.url));

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function stdioRig(script: string, env: NodeJS.ProcessEnv = {}, clientFace: "memory" | "node" = "memory") {
  const agent = spawnAgent(process.execPath, [script], { env: { ...process.env, ...env }, stderr: "inherit" });
  const exits: Array<{ suspended: string[] }> = [];
  const errors: string[] = [];
  const bridge = await createAcpBridge({
    agent: agent.connector,
    clock: new ManualClock(),
    store: new MemorySuspensionStore(),
    onAgentExit: (i) => exits.push(i),
    onerror: (e) => errors.push(e.message),
  });
  const cd = clientDouble();
  let log: WireEntry[];
  let conn: ReturnType<typeof cd.app.connect>;
  if (clientFace === "node") {
    // The client face on Node streams, as `ahp acp-proxy` serves it: updates take the direct writer.
    const pair = tappedNodePair();
    log = pair.log;
    bridge.connect(nodeStream(pair.up, pair.down));
    conn = cd.app.connect(nodeStream(pair.down, pair.up));
  } else {
    const pair = tappedPair();
    log = pair.log;
    bridge.connect(pair.agentSide);
    conn = cd.app.connect(pair.clientSide);
  }
  cleanup.push(async () => {
    conn.close();
    await bridge.close();
    agent.kill("SIGKILL");
  });
  await conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await conn.agent.request("session/new", { cwd: "/work/project", mcpServers: [] });
  return { agent, bridge, conn, ctx: conn.agent, log, cd, sessionId, exits, errors };
}

const prompt = (ctx: { request: (m: "session/prompt", p: never) => Promise<{ stopReason: string }> }, sessionId: string, text: string) =>
  ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] } as never);

describe("over stdio with the stock SDK agent as a child process", () => {
  it("suspends mid-turn (emulated interrupt), keeps wire order O1, resumes and continues the transcript", async () => {
    const r = await stdioRig(STOCK);
    expect((await prompt(r.ctx, r.sessionId, "hello")).stopReason).toBe("end_turn");
    const p = prompt(r.ctx, r.sessionId, "please wait");
    await until(() => labels(r.log).includes("update:tool_call_update(long:in_progress)"), "long task running");
    const sus = await suspend(r.ctx, { sessionId: r.sessionId, mode: "interrupt_immediate", reason: "review" });
    expect((await p).stopReason).toBe("cancelled");
    await until(() => indexOf(labels(r.log), "lifecycle:suspended") >= 0, "the suspended lifecycle update");
    const ls = labels(r.log);
    expect(indexOf(ls, "resp:session/prompt")).toBeLessThan(indexOf(ls, "lifecycle:suspended"));
    expect(indexOf(ls, "lifecycle:suspended")).toBeLessThan(indexOf(ls, "resp:_ahpHarness/session/suspend"));
    await resumeWith(r.ctx, r.sessionId, { handle: sus.handle, input: "looks good" });
    const after = await prompt(r.ctx, r.sessionId, "go on");
    expect(after.stopReason).toBe("end_turn");
    await until(() => /^turn 3/.test(String(r.cd.received.at(-1)?.update.content?.text)), "the third turn's reply");
    const last = r.cd.received.at(-1)!.update;
    expect(last.content.text).toMatch(/^turn 3, history 2: Resume input: looks good/);
    expect(assertStockSafe(r.log)).toEqual([]);
  });

  it("client face on Node streams (direct writes): every update of a turn precedes its prompt response, and O1 holds", async () => {
    const r = await stdioRig(STOCK, {}, "node");
    expect((await prompt(r.ctx, r.sessionId, "hello")).stopReason).toBe("end_turn");
    await observe(200); // the response was received: a late update of that turn would follow within this window
    const first = labels(r.log);
    const resp1 = indexOf(first, "resp:session/prompt");
    expect(first.slice(0, resp1).filter((l) => l.startsWith("update:")).length).toBeGreaterThan(0);
    expect(first.slice(resp1).filter((l) => l.startsWith("update:"))).toEqual([]);
    const p = prompt(r.ctx, r.sessionId, "please wait");
    await until(() => labels(r.log).includes("update:tool_call_update(long:in_progress)"), "long task running");
    const sus = await suspend(r.ctx, { sessionId: r.sessionId, mode: "interrupt_immediate", reason: "review" });
    expect((await p).stopReason).toBe("cancelled");
    await until(() => indexOf(labels(r.log), "lifecycle:suspended") >= 0, "the suspended lifecycle update");
    await observe(200); // the response was received: a late update of that turn would follow within this window
    const ls = labels(r.log);
    const resp2 = ls.lastIndexOf("resp:session/prompt");
    expect(ls.slice(resp2).filter((l) => l.startsWith("update:"))).toEqual([]);
    expect(resp2).toBeLessThan(indexOf(ls, "lifecycle:suspended"));
    expect(indexOf(ls, "lifecycle:suspended")).toBeLessThan(indexOf(ls, "resp:_ahpHarness/session/suspend"));
    await resumeWith(r.ctx, r.sessionId, { handle: sus.handle, input: "looks good" });
    const after = labels(r.log);
    expect(indexOf(after, "lifecycle:resumed")).toBeLessThan(indexOf(after, "resp:session/resume"));
    expect((await prompt(r.ctx, r.sessionId, "go on")).stopReason).toBe("end_turn");
    await until(() => /^turn 3/.test(String(r.cd.received.at(-1)?.update.content?.text)), "the third turn's reply");
    expect(r.cd.received.at(-1)!.update.content.text).toMatch(/^turn 3, history 2: Resume input: looks good/);
    expect(assertStockSafe(r.log)).toEqual([]);
    expect(r.errors).toEqual([]);
  });

  it("a non-standard update from the agent reaches the bridge over stdio and is dropped and reported; the client gets only standard updates", async () => {
    const r = await stdioRig(STOCK);
    expect((await prompt(r.ctx, r.sessionId, "worker run")).stopReason).toBe("end_turn");
    await until(() => r.errors.length > 0, "the dropped update reported");
    expect(r.errors).toContain("dropped a non-standard session/update (worker_update) from the agent");
    expect(r.cd.received.map((u) => u.update.sessionUpdate)).toEqual(["agent_message_chunk"]);
    assertStockSafe(r.log);
  });

  it("the agent process dies while suspended: the suspension is kept and reported; a later resume restarts and re-attaches the agent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-agent-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const r = await stdioRig(STOCK, { AGENT_STORE: dir });
    await prompt(r.ctx, r.sessionId, "first");
    const sus = await suspend(r.ctx, { sessionId: r.sessionId });
    const firstChild = r.agent.child!;
    firstChild.kill("SIGKILL");
    await until(() => r.exits.length === 1, "agent exit reported");
    expect(r.exits[0]!.suspended).toEqual([r.sessionId]);
    expect(r.bridge.stateOf(r.sessionId)).toBe("suspended");
    const res = await resumeWith(r.ctx, r.sessionId, { handle: sus.handle });
    expect(res._meta[META.resume].handle).toBe(sus.handle);
    expect(r.agent.child!.pid).not.toBe(firstChild.pid);
    const next = await prompt(r.ctx, r.sessionId, "second");
    expect(next.stopReason).toBe("end_turn");
    await until(() => /^turn 2/.test(String(r.cd.received.at(-1)?.update.content?.text)), "the second turn's reply");
    expect(r.cd.received.at(-1)!.update.content.text).toMatch(/^turn 2, history 1: second/);
  });
});

describe("with the legacy @zed-industries/agent-client-protocol 0.4.5 (no session/resume)", () => {
  it("emulated suspend over a legacy agent: cancel at the turn boundary, re-attach with session/load after the agent died, replay discarded", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-legacy-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const r = await stdioRig(LEGACY, { AGENT_STORE: dir });
    expect(r.bridge.agent.caps).toMatchObject({ resume: false, loadSession: true });
    await prompt(r.ctx, r.sessionId, "one");
    const p = prompt(r.ctx, r.sessionId, "please wait");
    await until(() => r.bridge.stateOf(r.sessionId) === "active.running", "the turn running");
    const sus = await suspend(r.ctx, { sessionId: r.sessionId, mode: "finish_step" });
    expect((await p).stopReason).toBe("end_turn");
    expect(sus._meta[META.suspend]).toMatchObject({ emulated: true, emulatedBoundary: true });
    // The agent dies while suspended; the resume starts a new one and re-attaches with session/load.
    const first = r.agent.child!;
    first.kill("SIGKILL");
    await until(() => r.exits.length === 1, "agent exit");
    const mark = r.log.length;
    await resumeWith(r.ctx, r.sessionId, { handle: sus.handle });
    expect(r.agent.child!.pid).not.toBe(first.pid);
    await until(() => labels(r.log.slice(mark)).includes("lifecycle:resumed"), "the resumed lifecycle update");
    expect((await prompt(r.ctx, r.sessionId, "two")).stopReason).toBe("end_turn");
    // The load replay (the earlier transcript) is discarded: before the next prompt went out (a later
    // message on the same stream, so a replay would have come first), only the lifecycle carrier
    // reached the client.
    const sinceResume = labels(r.log.slice(mark));
    expect(
      sinceResume.slice(0, sinceResume.indexOf("session/prompt")).filter((l) => l.startsWith("update:") || l.startsWith("lifecycle:")),
    ).toEqual(["lifecycle:resumed"]);
    await until(() => r.log.slice(mark).some((e) => JSON.stringify(e.msg).includes("legacy reply to two")), "the reply to two");
  });

  it("a legacy 0.4.5 client (no suspend, no session/resume) keeps working; its next prompt is the implicit resume", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    cleanup.push(() => logged.mockRestore());
    const agent = spawnAgent(process.execPath, [STOCK], { stderr: "inherit" });
    const bridge: AcpBridge = await createAcpBridge({
      agent: agent.connector,
      clock: new ManualClock(),
      store: new MemorySuspensionStore(),
    });
    const pair = tappedPair();
    bridge.connect(pair.agentSide);
    const received: unknown[] = [];
    const conn = new legacy.ClientSideConnection(
      () => ({
        requestPermission: async () => ({ outcome: { outcome: "cancelled" } }),
        sessionUpdate: async (p: unknown) => void received.push(p),
        writeTextFile: async () => ({}),
        readTextFile: async () => ({ content: "" }),
      }),
      pair.clientSide as never,
    );
    cleanup.push(async () => {
      await bridge.close();
      agent.kill("SIGKILL");
    });
    await conn.initialize({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } });
    const { sessionId } = await conn.newSession({ cwd: "/work/project", mcpServers: [] });
    await conn.prompt({ sessionId, prompt: [{ type: "text", text: "hi" }] });
    // The bridge host parks the session (a harness or operator decision); the legacy client knows nothing of it.
    await (bridge as unknown as { suspendRequest(p: unknown): Promise<unknown> }).suspendRequest({ sessionId, reason: "operator pause" });
    const res = await conn.prompt({ sessionId, prompt: [{ type: "text", text: "are you there?" }] });
    expect(res.stopReason).toBe("end_turn");
    await until(() => received.length === 2, "both replies");
    expect(lifecycleEvents(pair.log).map((e) => e.event)).toEqual(["suspended", "resumed"]);
    expect(assertStockSafe(pair.log)).toEqual([]);
    // The 0.4.5 schema predates session_info_update: its client drops the carriers (closed union)
    // and keeps the connection; the agent's own updates still arrive.
    const kinds = received.map((p) => (p as { update: { sessionUpdate: string } }).update.sessionUpdate);
    expect(kinds).toEqual(["agent_message_chunk", "agent_message_chunk"]);
  });
});

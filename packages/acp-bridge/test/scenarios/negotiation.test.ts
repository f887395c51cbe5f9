/** §8 scenarios 1–8: negotiation and stock-peer interop. */
import { client, RequestError } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAcpBridge, createUpstreamApp, ManualClock, MemorySuspensionStore, META } from "../../src/index.js";
import { agentDouble } from "../helpers/agent.js";
import { AWARE_CAPS, observe, resumeWith, rig, suspend, until, untilLifecycle, type Rig } from "../helpers/setup.js";
import { assertStockSafe, labels, tappedPair, updates } from "../helpers/wire.js";

/** The initialize result as these assertions read it (capability `_meta` entries are objects). */
interface InitView {
  protocolVersion: number;
  agentCapabilities: { _meta: Record<string, Record<string, unknown>>; [key: string]: unknown };
}

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
  vi.restoreAllMocks();
});

describe("negotiation and stock-peer interop", () => {
  it("S1 capability advertisement: only under agentCapabilities._meta, no root RFC flags unless configured", async () => {
    r = await rig();
    const init = (await r.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} })) as unknown as InitView;
    expect(init.protocolVersion).toBe(1);
    const caps = init.agentCapabilities;
    expect(caps._meta[META.suspend]).toMatchObject({ version: 1, supportsSuspend: true, supportsAwaitResumption: true, firstClass: false });
    expect(caps._meta[META.suspend]?.resumeCauses).toEqual(["explicit_resume", "condition_fired", "timeout", "external_event"]);
    expect(caps.sessionCapabilities).toMatchObject({ resume: {}, close: {} });
    expect(caps.supportsSuspend).toBeUndefined();
    expect(caps.resumeCauses).toBeUndefined();
    await r.close();
    r = await rig({ bridge: { rootCapabilityFlags: true } });
    const rooted = (await r.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} })) as unknown as InitView;
    expect(rooted.agentCapabilities.supportsSuspend).toBe(true);
    expect(assertStockSafe(r.log)).toEqual([]);
  });

  it("S2 silent for stock clients: new → prompt → prompt is the plain agent's transcript", async () => {
    r = await rig();
    const id = await r.open();
    const a = await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "one" }] });
    const b = await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "two" }] });
    expect([a.stopReason, b.stopReason]).toEqual(["end_turn", "end_turn"]);
    // The same client and agent connected directly.
    const direct = tappedPair();
    const agent = agentDouble();
    agent.app.connect(direct.agentSide);
    const c = client({ name: "direct" })
      .onNotification("session/update", () => undefined)
      .connect(direct.clientSide);
    await c.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const s = await c.agent.request("session/new", { cwd: "/work/project", mcpServers: [] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "one" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "two" }] });
    const strip = (ls: string[]) => ls.filter((l) => l !== "initialize" && l !== "resp:initialize");
    await until(() => strip(labels(r!.log)).length >= strip(labels(direct.log)).length, "the bridged wire as long as the direct one");
    expect(strip(labels(r.log))).toEqual(strip(labels(direct.log)));
    expect(updates(r.log).some((u) => u.sessionUpdate === "session_info_update")).toBe(false);
    expect(assertStockSafe(r.log)).toEqual([]);
    c.close();
  });

  it("S3 suspend against a stock agent: -32601 for both methods, then emulation marked emulated", async () => {
    r = await rig({ bridge: { probeUnadvertised: true }, agent: { turn: async (t) => (await t.whenCancelled, "cancelled") } });
    const id = await r.open();
    // The stock agent knows neither method.
    for (const method of ["session/suspend", "_ahpHarness/session/suspend"]) {
      const error = await r.bridge.agent.request(method, { sessionId: id }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RequestError);
      expect((error as RequestError).code).toBe(-32601);
      expect((error as RequestError).data).toMatchObject({ method });
    }
    const prompt = r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "go" }] });
    await r.agent.nextTurn();
    const result = await suspend(r.ctx, { sessionId: id, mode: "interrupt_immediate" });
    expect((await prompt).stopReason).toBe("cancelled");
    expect(result._meta[META.suspend].emulated).toBe(true);
    expect(r.bridge.agent.lacks("session/suspend") && r.bridge.agent.lacks("_ahpHarness/session/suspend")).toBe(true);
    expect(r.agent.calls.filter((c) => c.method === "session/cancel")).toHaveLength(1);
  });

  it("S4 resume enrichment survives only in _meta; the bridge reads _meta only", async () => {
    r = await rig({ bridge: { emulateFreshTranscript: true } });
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id });
    // Top-level copies are stripped by the SDK before any handler; the bridge takes the _meta copy.
    const res = await r.ctx.request("session/resume", {
      sessionId: id,
      cwd: "/work/project",
      input: "top-level input",
      continueTranscript: true,
      _meta: { [META.resume]: { handle: sus.handle, input: "meta input", continueTranscript: false } },
    } as never);
    expect(res._meta?.[META.resume]).toMatchObject({ hadResumeInput: true, continueTranscript: false });
    // A stock agent sees only the _meta copy as well.
    const agent = agentDouble();
    const c = client({ name: "raw" }).connect(agent.app);
    await c.agent.request("initialize", { protocolVersion: 1 });
    await c.agent.request("session/resume", {
      sessionId: "x",
      cwd: "/w",
      input: "top",
      _meta: { [META.resume]: { input: "meta" } },
    } as never);
    const seen = agent.calls.find((x) => x.method === "session/resume")!.params;
    expect(seen.input).toBeUndefined();
    expect(seen._meta[META.resume].input).toBe("meta");
    c.close();
  });

  it("S5 cwd is mandatory: a stock agent refuses a resume without it; the bridge always sends the remembered cwd", async () => {
    const agent = agentDouble();
    const c = client({ name: "raw" }).connect(agent.app);
    await c.agent.request("initialize", { protocolVersion: 1 });
    const error = await c.agent.request("session/resume", { sessionId: "s1" } as never).catch((e: unknown) => e);
    expect((error as RequestError).code).toBe(-32602);
    c.close();
    // The bridge re-attaches after the agent lost the session, with the cwd of session/new.
    r = await rig();
    const id = await r.open("/home/user/project");
    await suspend(r.ctx, { sessionId: id });
    r.bridge.agent.close();
    await until(() => !r!.bridge.agent.alive, "agent closed");
    await resumeWith(r.ctx, id, undefined, "/home/user/project");
    const resumed = r.agent.calls.filter((x) => x.method === "session/resume");
    expect(resumed.at(-1)!.params.cwd).toBe("/home/user/project");
  });

  it("S6 unknown update is dropped by stock clients; the bridge never emits it without lifecycle first_class", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const pair = tappedPair();
    const received: unknown[] = [];
    const c = client({ name: "stock" })
      .onNotification("session/update", ({ params }) => {
        received.push(params);
      })
      .connect(pair.clientSide);
    const { agent: makeAgent } = await import("@agentclientprotocol/sdk");
    const a = makeAgent({ name: "raw" }).connect(pair.agentSide);
    await a.client.notify("session/update", { sessionId: "s1", update: { sessionUpdate: "suspended", handle: "h" } } as never);
    await a.client.notify("session/update", {
      sessionId: "s1",
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "alive" } },
    } as never);
    await until(() => received.length === 1, "the second update");
    expect((received[0] as { update: { sessionUpdate: string } }).update.sessionUpdate).toBe("agent_message_chunk");
    expect(errors.mock.calls.some((call) => String(call[0]).includes("Error handling notification") && call[1]?.code === -32602)).toBe(
      true,
    );
    c.close();
    // Through the bridge: a stock client gets only the carrier; a client asking for first_class gets both.
    r = await rig();
    const id = await r.open();
    await suspend(r.ctx, { sessionId: id });
    await untilLifecycle(r.log, "suspended");
    await observe(); // any further update would be on the wire by now
    expect(updates(r.log).map((u) => u.sessionUpdate)).toEqual(["session_info_update"]);
    await r.close();
    r = await rig({ client: { caps: AWARE_CAPS({ lifecycle: ["meta", "first_class"] }) } });
    const id2 = await r.open();
    await suspend(r.ctx, { sessionId: id2 });
    await until(() => updates(r!.log).some((u) => u.sessionUpdate === "suspended"), "the first-class suspended update");
    expect(updates(r.log).map((u) => u.sessionUpdate)).toContain("suspended");
  });

  it("S7 lifecycle carrier is delivered: session_info_update with _meta reaches a stock client's handler intact", async () => {
    r = await rig();
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id, reason: "review" });
    await until(() => r!.clientDouble.received.length > 0, "the carrier");
    const carrier = r.clientDouble.received[0]!.update;
    expect(carrier.sessionUpdate).toBe("session_info_update");
    expect(carrier._meta[META.lifecycle]).toMatchObject({ event: "suspended", handle: sus.handle, reason: "review", initiator: "client" });
    expect(assertStockSafe(r.log)).toEqual([]);
  });

  it("S8 notice when supported: Session paused / Session resumed only for clients with session.notices", async () => {
    r = await rig({ client: { caps: { session: { notices: {} } } } });
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id, reason: "lunch" });
    await resumeWith(r.ctx, id, { handle: sus.handle });
    await until(() => updates(r!.log).filter((u) => u.sessionUpdate === "notice").length >= 2, "both notices");
    const notices = updates(r.log).filter((u) => u.sessionUpdate === "notice");
    expect(notices.map((n) => n.title)).toEqual(["Session paused", "Session resumed"]);
    expect(notices[0]!.description).toBe("lunch");
    await r.close();
    r = await rig();
    const id2 = await r.open();
    const s2 = await suspend(r.ctx, { sessionId: id2 });
    await resumeWith(r.ctx, id2, { handle: s2.handle });
    await observe(); // the resume was answered: a notice would be on the wire by now
    expect(updates(r.log).filter((u) => u.sessionUpdate === "notice")).toEqual([]);
  });
});

describe("wiring", () => {
  it("createAcpBridge works with a stream target too", async () => {
    const agent = agentDouble();
    const pair = tappedPair();
    agent.app.connect(pair.agentSide);
    const bridge = await createAcpBridge({ agent: pair.clientSide, clock: new ManualClock(), store: new MemorySuspensionStore() });
    const c = client({ name: "c" })
      .onNotification("session/update", () => undefined)
      .connect(createUpstreamApp(bridge));
    await c.agent.request("initialize", { protocolVersion: 1 });
    const s = await c.agent.request("session/new", { cwd: "/w", mcpServers: [] });
    expect((await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "x" }] })).stopReason).toBe(
      "end_turn",
    );
    c.close();
    await bridge.close();
  });
});

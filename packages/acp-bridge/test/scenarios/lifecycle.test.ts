/** §8 scenarios 36–43: close, delete, reconnect, load, independent sessions, agent self-park. */
import { client, type StopReason } from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { META } from "../../src/index.js";
import {
  AWARE_CAPS,
  clientDouble,
  observe,
  resumeWith,
  rig,
  suspend,
  until,
  untilLifecycle,
  untilState,
  type Rig,
} from "../helpers/setup.js";
import { assertStockSafe, indexOf, labels, lifecycleEvents, tappedPair, updates } from "../helpers/wire.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** A turn that parks itself through the bridge's host API after one update. */
const selfParking =
  (rg: () => Rig, conditions?: Record<string, unknown>) =>
  async (t: { text(s: string): Promise<void>; whenCancelled: Promise<void>; sessionId: string }): Promise<StopReason> => {
    await t.text("waiting for the build");
    void rg().bridge.selfPark(t.sessionId, { reason: "waiting for CI", ...(conditions ? { conditions } : {}) });
    await t.whenCancelled;
    return "cancelled";
  };

describe("close, delete, reconnect, load", () => {
  it("S36 close while suspended: discarded, conditions disarmed, handle resume → suspension_discarded, second close idempotent", async () => {
    r = await rig();
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id, resumeWhen: { timeout: { durationMinutes: 5 } } });
    expect(await r.ctx.request("session/close", { sessionId: id })).toEqual({});
    await untilLifecycle(r.log, "discarded");
    expect(lifecycleEvents(r.log).find((e) => e.event === "discarded")).toMatchObject({ handle: sus.handle });
    r.clock.advance(10 * 60_000);
    await observe(); // the close was answered and its discarded update seen: a timer still armed fires within advance()
    expect(lifecycleEvents(r.log).filter((e) => e.event === "resumed")).toEqual([]);
    const error = await resumeWith(r.ctx, id, { handle: sus.handle }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32002, data: { reason: "suspension_discarded" } });
    expect(await r.ctx.request("session/close", { sessionId: id })).toEqual({});
    expect(lifecycleEvents(r.log).filter((e) => e.event === "discarded")).toHaveLength(1);
  });

  it("S37 delete while suspended: the session is gone; any resume → -32002", async () => {
    r = await rig({ agent: { delete: true } });
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id });
    await r.ctx.request("session/delete", { sessionId: id });
    expect(r.store.records.has(id)).toBe(false);
    for (const resume of [{ handle: sus.handle }, undefined, { input: "x" }]) {
      const error = await resumeWith(r.ctx, id, resume).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: -32002 });
    }
  });

  it("S38 reconnect: drop the transport while suspended, initialize on a new connection, resume with the handle", async () => {
    r = await rig();
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id, reason: "overnight" });
    r.conn.close();
    await observe(); // a closed transport leaves a suspended session as it is: nothing to wait for but a window
    expect(r.bridge.stateOf(id)).toBe("suspended");
    const pair = tappedPair();
    r.bridge.connect(pair.agentSide);
    const c2 = clientDouble();
    const conn2 = c2.app.connect(pair.clientSide);
    await conn2.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const res = await resumeWith(conn2.agent, id, { handle: sus.handle });
    expect(res._meta[META.resume]).toMatchObject({ handle: sus.handle, cause: "explicit_resume" });
    await untilLifecycle(pair.log, "resumed");
    expect(lifecycleEvents(pair.log).map((e) => e.event)).toEqual(["resumed"]);
    // The record the reconnect used is the stored one.
    expect(r.store.records.get(id)).toMatchObject({ state: "active", consumedHandles: [sus.handle] });
    conn2.close();
  });

  it("S39 load while suspended: the replay ends with the lifecycle suspended carrier; state stays suspended", async () => {
    r = await rig();
    const id = await r.open();
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "hi" }] });
    const sus = await suspend(r.ctx, { sessionId: id });
    await untilLifecycle(r.log, "suspended");
    const mark = r.log.length;
    await r.ctx.request("session/load", { sessionId: id, cwd: "/work/project", mcpServers: [] });
    await untilLifecycle(r.log, "suspended", 2);
    const ls = labels(r.log.slice(mark));
    expect(ls.filter((l) => l.startsWith("update:"))).toEqual(["update:user_message_chunk", "update:agent_message_chunk"]);
    expect(indexOf(ls, "lifecycle:suspended")).toBeGreaterThan(indexOf(ls, "update:agent_message_chunk"));
    expect(indexOf(ls, "lifecycle:suspended")).toBeLessThan(indexOf(ls, "resp:session/load"));
    expect(lifecycleEvents(r.log).at(-1)).toMatchObject({ event: "suspended", handle: sus.handle });
    expect(r.bridge.stateOf(id)).toBe("suspended");
  });

  it("S40 independent sessions: resuming one leaves the other suspended with its timers intact", async () => {
    r = await rig();
    const a = await r.open();
    const b = (await r.ctx.request("session/new", { cwd: "/w", mcpServers: [] })).sessionId;
    const sa = await suspend(r.ctx, { sessionId: a });
    await suspend(r.ctx, { sessionId: b, resumeWhen: { timeout: { durationMinutes: 3 } } });
    await resumeWith(r.ctx, a, { handle: sa.handle });
    expect(r.bridge.stateOf(b)).toBe("suspended");
    r.clock.advance(3 * 60_000);
    await untilState(r.bridge, b, "active.idle");
    expect(r.bridge.stateOf(b)).toBe("active.idle");
    expect(
      lifecycleEvents(r.log)
        .filter((e) => e.event === "resumed")
        .map((e) => e.cause),
    ).toEqual(["explicit_resume", "timeout"]);
  });
});

describe("agent self-park", () => {
  it("S41 aware client: await_resumption goes out before the prompt response; the client's handle is used; conditionsAccepted arms nothing", async () => {
    let rg!: Rig;
    r = rg = await rig({
      client: {
        caps: AWARE_CAPS(),
        awaitResumption: () => ({
          handle: "client-h1",
          suspendedAt: new Date(0).toISOString(),
          _meta: { [META.suspend]: { conditionsAccepted: true } },
        }),
      },
      agent: { turn: selfParking(() => rg, { timeout: { durationMinutes: 2 } }) },
    });
    const id = await r.open();
    const pr = await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "go" }] });
    expect(pr.stopReason).toBe("end_turn");
    expect((pr._meta?.[META.suspend] as Record<string, unknown> | undefined)?.handle).toBe("client-h1");
    await untilLifecycle(r.log, "suspended");
    const ls = labels(r.log);
    const order = [
      indexOf(ls, "update:agent_message_chunk"),
      indexOf(ls, "_ahpHarness/session/await_resumption"),
      indexOf(ls, "resp:_ahpHarness/session/await_resumption"),
      indexOf(ls, "resp:session/prompt"),
      indexOf(ls, "lifecycle:suspended"),
    ];
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    expect(r.bridge.handleOf(id)).toBe("client-h1");
    // The client owns the conditions: the bridge armed no timer.
    r.clock.advance(10 * 60_000);
    await observe(); // an armed timer would fire within advance(); the window lets its effects land
    expect(r.bridge.stateOf(id)).toBe("suspended");
    await resumeWith(r.ctx, id, { handle: "client-h1" });
    expect(r.bridge.stateOf(id)).toBe("active.idle");
  });

  it("S42 stock client: no await_resumption; end_turn + _meta; the next prompt resumes implicitly (hadResumeInput) and runs the turn", async () => {
    let rg!: Rig;
    let parks = 0;
    r = rg = await rig({
      agent: {
        turn: async (t) => {
          if (parks++ === 0) return selfParking(() => rg)(t);
          await t.text("continuing");
          return "end_turn";
        },
      },
    });
    const id = await r.open();
    const pr = await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "go" }] });
    expect(pr.stopReason).toBe("end_turn");
    expect((pr._meta?.[META.suspend] as Record<string, unknown> | undefined)?.state).toBe("suspended");
    expect(r.clientDouble.requests.filter((q) => q.method.includes("await_resumption"))).toEqual([]);
    await untilState(r.bridge, id, "suspended");
    const next = await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "the build passed" }] });
    expect(next.stopReason).toBe("end_turn");
    expect(lifecycleEvents(r.log).find((e) => e.event === "resumed")).toMatchObject({ cause: "explicit_resume", hadResumeInput: true });
    expect(updates(r.log).some((u) => u.content?.text === "continuing")).toBe(true);
    expect(assertStockSafe(r.log)).toEqual([]);
  });

  it("S43 aware client, prompt while suspended → -31001 prompt_while_suspended", async () => {
    r = await rig({ client: { caps: AWARE_CAPS() } });
    const id = await r.open();
    await suspend(r.ctx, { sessionId: id });
    const error = await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "x" }] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -31001, data: { reason: "prompt_while_suspended" } });
    void until;
    void client;
  });
});

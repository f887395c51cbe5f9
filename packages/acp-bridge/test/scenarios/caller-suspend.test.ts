/** §8 scenarios 9–18: caller suspend. */
import { deferred } from "@ahp/conformance";
import { afterEach, describe, expect, it } from "vitest";
import { META } from "../../src/index.js";
import { observe, rig, suspend, until, untilLifecycle, untilState, type Rig } from "../helpers/setup.js";
import { assertStockSafe, indexOf, labels, lifecycleEvents, updates } from "../helpers/wire.js";

/** An event payload as the assertions read it (the envelope types it `unknown`). */
type Payload = Record<string, unknown>;

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const prompt = (rg: Rig, sessionId: string, text = "go") =>
  rg.ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

describe("caller suspend", () => {
  it("S9 finish_step mid-turn: the dispatched tool completes, no new tool starts, end_turn + handle, then suspended, then the response", async () => {
    const t1 = deferred();
    r = await rig({
      agent: {
        turn: async (t) => {
          await t.tool("t1", t1.promise);
          await t.think(true); // finish_step: the bridge cancels before the next step
          if (t.cancelled()) return "cancelled";
          await t.tool("t2");
          return "end_turn";
        },
      },
    });
    const id = await r.open();
    const p = prompt(r, id);
    await r.agent.nextTurn();
    await until(() => updates(r!.log).some((u) => u.status === "in_progress"), "t1 dispatched");
    const s = suspend(r.ctx, { sessionId: id, reason: "review", resumeWhen: { timeout: { durationMinutes: 30 } } });
    await untilState(r.bridge, id, "suspending");
    t1.resolve();
    const [pr, sr] = await Promise.all([p, s]);
    expect(pr.stopReason).toBe("end_turn");
    expect(pr._meta?.[META.suspend]).toEqual({ handle: sr.handle, state: "suspended" });
    expect(sr._meta[META.suspend]).toMatchObject({
      state: "suspended",
      stopReason: "end_turn",
      initiatorDetail: "client",
      emulated: true,
      emulatedBoundary: true,
    });
    expect(sr.resumeWhen).toEqual({ timeout: { durationMinutes: 30, onTimeout: "resume_with_summary" } });
    await untilLifecycle(r.log, "suspended");
    const ls = labels(r.log);
    expect(ls).toContain("update:tool_call_update(t1:completed)");
    expect(ls.some((l) => l.includes("t2"))).toBe(false);
    const order = [
      indexOf(ls, "update:tool_call_update(t1:completed)"),
      indexOf(ls, "resp:session/prompt"),
      indexOf(ls, "lifecycle:suspended"),
      indexOf(ls, "resp:_ahpHarness/session/suspend"),
    ];
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(lifecycleEvents(r.log)[0]!.handle).toBe(sr.handle);
    expect(assertStockSafe(r.log)).toEqual([]);
  });

  it("S10 interrupt_immediate: the undispatched tool call is reported failed with skipped; prompt ends cancelled; suspension commits", async () => {
    r = await rig({
      agent: {
        turn: async (t) => {
          await t.update({ sessionUpdate: "tool_call", toolCallId: "t9", title: "queued tool", status: "pending" });
          await t.whenCancelled;
          return "cancelled";
        },
      },
    });
    const id = await r.open();
    const p = prompt(r, id);
    await until(() => updates(r!.log).some((u) => u.toolCallId === "t9"), "t9 announced");
    const sr = await suspend(r.ctx, { sessionId: id, mode: "interrupt_immediate" });
    expect((await p).stopReason).toBe("cancelled");
    const skipped = updates(r.log).find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "t9");
    expect(skipped).toMatchObject({ status: "failed", _meta: { [META.suspend]: { skipped: true } } });
    expect(r.bridge.stateOf(id)).toBe("suspended");
    expect(sr._meta[META.suspend].stopReason).toBe("cancelled");
    const ls = labels(r.log);
    expect(indexOf(ls, "update:tool_call_update(t9:failed)")).toBeLessThan(indexOf(ls, "resp:session/prompt"));
  });

  it("S11 wait_for_completion: the turn reaches its natural end before the suspend response", async () => {
    const done = deferred();
    r = await rig({ agent: { turn: async (t) => (await t.tool("t1", done.promise), await t.tool("t2"), "end_turn") } });
    const id = await r.open();
    const p = prompt(r, id);
    await r.agent.nextTurn();
    const s = suspend(r.ctx, { sessionId: id, mode: "wait_for_completion" });
    await untilState(r.bridge, id, "suspending");
    expect(r.agent.calls.some((c) => c.method === "session/cancel")).toBe(false);
    done.resolve();
    const [pr] = await Promise.all([p, s]);
    expect(pr.stopReason).toBe("end_turn");
    await until(() => labels(r!.log).includes("resp:_ahpHarness/session/suspend"), "the suspend response");
    const ls = labels(r.log);
    expect(ls).toContain("update:tool_call_update(t2:completed)");
    expect(indexOf(ls, "resp:session/prompt")).toBeLessThan(indexOf(ls, "resp:_ahpHarness/session/suspend"));
  });

  it("S12 idle suspend: immediate suspended, no prompt response involved", async () => {
    r = await rig();
    const id = await r.open();
    const sr = await suspend(r.ctx, { sessionId: id });
    expect(sr.handle).toMatch(/^sus_/);
    await untilLifecycle(r.log, "suspended");
    const ls = labels(r.log);
    expect(ls.filter((l) => l.includes("prompt"))).toEqual([]);
    expect(indexOf(ls, "lifecycle:suspended")).toBeLessThan(indexOf(ls, "resp:_ahpHarness/session/suspend"));
    expect(r.bridge.stateOf(id)).toBe("suspended");
  });

  it("S13 idempotent suspend: same handle and suspendedAt, no second lifecycle update, no second gate call", async () => {
    r = await rig({ harness: () => ({ decision: "allow" }) });
    const id = await r.open();
    const a = await suspend(r.ctx, { sessionId: id });
    r.clock.advance(60_000);
    const b = await suspend(r.ctx, { sessionId: id, reason: "again" });
    expect([b.handle, b.suspendedAt]).toEqual([a.handle, a.suspendedAt]);
    await observe(); // the second response was awaited: a second lifecycle update would be on the wire by now
    expect(lifecycleEvents(r.log).filter((e) => e.event === "suspended")).toHaveLength(1);
    const gates = r.harness!.events.filter((e) => (e.payload as Payload)?.action_type === "session_suspend");
    expect(gates).toHaveLength(1);
  });

  it("S14 coalesced suspend with mode upgrade: one suspension, both get the same handle, prompt ends cancelled", async () => {
    const t1 = deferred();
    r = await rig({
      agent: {
        turn: async (t) => (await t.tool("t1", Promise.race([t1.promise, t.whenCancelled])), t.cancelled() ? "cancelled" : "end_turn"),
      },
    });
    const id = await r.open();
    const p = prompt(r, id);
    await until(() => updates(r!.log).some((u) => u.status === "in_progress"), "t1 running");
    const a = suspend(r.ctx, { sessionId: id, mode: "finish_step", reason: "first" });
    await untilState(r.bridge, id, "suspending");
    const b = suspend(r.ctx, { sessionId: id, mode: "interrupt_immediate", reason: "second" });
    const [pr, ra, rb] = await Promise.all([p, a, b]);
    expect(pr.stopReason).toBe("cancelled");
    expect(ra.handle).toBe(rb.handle);
    expect(ra.reason).toBe("first");
    await observe(); // both responses were awaited: a second lifecycle update would be on the wire by now
    expect(lifecycleEvents(r.log).filter((e) => e.event === "suspended")).toHaveLength(1);
  });

  it("S15 cancel while quiescing escalates; the suspension still commits", async () => {
    r = await rig({ agent: { turn: async (t) => (await t.whenCancelled, "cancelled") } });
    const id = await r.open();
    const p = prompt(r, id);
    await r.agent.nextTurn();
    const s = suspend(r.ctx, { sessionId: id, mode: "wait_for_completion" });
    await untilState(r.bridge, id, "suspending.quiescing");
    expect(r.bridge.stateOf(id)).toBe("suspending.quiescing");
    await r.ctx.notify("session/cancel", { sessionId: id });
    const [pr, sr] = await Promise.all([p, s]);
    expect(pr.stopReason).toBe("cancelled");
    expect(r.bridge.stateOf(id)).toBe("suspended");
    expect(sr.handle).toBeTruthy();
  });

  it("S16 prompt during suspending → -31001 suspend_in_progress", async () => {
    r = await rig({ agent: { turn: async (t) => (await t.whenCancelled, "cancelled") } });
    const id = await r.open();
    const p = prompt(r, id);
    await r.agent.nextTurn();
    const s = suspend(r.ctx, { sessionId: id, mode: "wait_for_completion" });
    await untilState(r.bridge, id, "suspending");
    const error = await prompt(r, id).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -31001, data: { reason: "suspend_in_progress" } });
    await r.ctx.notify("session/cancel", { sessionId: id });
    await Promise.all([p, s]);
  });

  it("S17 unknown session: suspend → -32002 with data.sessionId", async () => {
    r = await rig();
    await r.open();
    const error = await suspend(r.ctx, { sessionId: "nope" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32002, data: { sessionId: "nope" } });
  });

  it("S18 quiesce deadline: a tool that never finishes is interrupted after maxQuiesceMs; lifecycle escalated", async () => {
    r = await rig({ bridge: { maxQuiesceMs: 5_000 }, agent: { turn: async (t) => (await t.tool("stuck", t.whenCancelled), "cancelled") } });
    const id = await r.open();
    const p = prompt(r, id);
    await until(() => updates(r!.log).some((u) => u.status === "in_progress"), "stuck running");
    const s = suspend(r.ctx, { sessionId: id, mode: "finish_step" });
    await untilState(r.bridge, id, "suspending");
    expect(r.agent.calls.some((c) => c.method === "session/cancel")).toBe(false);
    r.clock.advance(5_000);
    const [pr, sr] = await Promise.all([p, s]);
    expect(pr.stopReason).toBe("cancelled");
    expect(sr._meta[META.suspend].escalated).toBe(true);
    await untilLifecycle(r.log, "suspended");
    expect(lifecycleEvents(r.log).find((e) => e.event === "suspended")).toMatchObject({ escalated: true });
  });
});

/** §8 scenarios 30–35: timeouts and conditions. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { DeadlineTimer, MAX_TIMER_CHUNK_MS, META, systemClock } from "../../src/index.js";
import { observe, resumeWith, rig, suspend, until, untilLifecycle, type Rig } from "../helpers/setup.js";
import { lifecycleEvents } from "../helpers/wire.js";

/** An event payload as the assertions read it (the envelope types it `unknown`). */
type Payload = Record<string, unknown>;

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
  vi.useRealTimers();
});

describe("timeouts and conditions", () => {
  it("S30 resume_with_summary: past durationMinutes → resumed {cause timeout, hadResumeInput false, continueTranscript false}", async () => {
    r = await rig();
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id, resumeWhen: { timeout: { durationMinutes: 30 } } });
    r.clock.advance(30 * 60_000 - 1);
    await observe(); // not yet due: nothing fired, the timer is still armed
    expect(r.clock.pending).toBeGreaterThan(0);
    expect(r.bridge.stateOf(id)).toBe("suspended");
    r.clock.advance(1);
    await untilLifecycle(r.log, "resumed");
    expect(lifecycleEvents(r.log).find((e) => e.event === "resumed")).toMatchObject({
      handle: sus.handle,
      cause: "timeout",
      hadResumeInput: false,
      continueTranscript: false,
    });
    expect(r.bridge.stateOf(id)).toBe("active.idle");
  });

  it("S31 resume_with_input: continueTranscript true; input is timeoutInput, else the synthetic timeout object", async () => {
    r = await rig();
    const id = await r.open();
    await suspend(r.ctx, {
      sessionId: id,
      resumeWhen: { timeout: { durationMinutes: 5, onTimeout: "resume_with_input" } },
      _meta: { [META.suspend]: { timeoutInput: "go on" } },
    });
    const id2 = (await r.ctx.request("session/new", { cwd: "/w", mcpServers: [] })).sessionId;
    const s2 = await suspend(r.ctx, { sessionId: id2, resumeWhen: { timeout: { durationMinutes: 5, onTimeout: "resume_with_input" } } });
    r.clock.advance(5 * 60_000);
    await untilLifecycle(r.log, "resumed", 2);
    const resumed = lifecycleEvents(r.log).filter((e) => e.event === "resumed");
    expect(resumed).toHaveLength(2);
    for (const e of resumed) expect(e).toMatchObject({ cause: "timeout", hadResumeInput: true, continueTranscript: true });
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "a" }] });
    await r.ctx.request("session/prompt", { sessionId: id2, prompt: [{ type: "text", text: "b" }] });
    const prompts = r.agent.calls.filter((c) => c.method === "session/prompt").map((c) => c.params);
    expect(prompts[0]._meta[META.resume].input).toBe("go on");
    expect(prompts[1]._meta[META.resume].input).toMatchObject({ type: "timeout", handle: s2.handle, durationMinutes: 5 });
  });

  it("S32 fail: lifecycle failed; AHP run_lifecycle failed + error; later prompt and handle resume → session_failed", async () => {
    r = await rig({ harness: () => ({ decision: "allow" }) });
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id, resumeWhen: { timeout: { durationMinutes: 1, onTimeout: "fail" } } });
    r.clock.advance(60_000);
    await untilLifecycle(r.log, "failed");
    await until(() => r!.harness!.events.some((e) => e.event_type === "error"), "the error report at the harness");
    expect(r.bridge.stateOf(id)).toBe("failed");
    expect(lifecycleEvents(r.log).find((e) => e.event === "failed")).toMatchObject({ handle: sus.handle, reason: "resume_timeout" });
    const events = r.harness!.events;
    expect(events.find((e) => e.event_type === "run_lifecycle" && (e.payload as Payload).status === "failed")).toBeDefined();
    expect(events.find((e) => e.event_type === "error" && (e.payload as Payload).reason === "resume_timeout")).toBeDefined();
    const p = await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "x" }] }).catch((e: unknown) => e);
    expect(p).toMatchObject({ code: -31001, data: { reason: "session_failed" } });
    const q = await resumeWith(r.ctx, id, { handle: sus.handle }).catch((e: unknown) => e);
    expect(q).toMatchObject({ code: -31001, data: { reason: "session_failed" } });
    const plain = await resumeWith(r.ctx, id, { input: "x" }).catch((e: unknown) => e);
    expect(plain).toMatchObject({ code: -31001, data: { reason: "session_failed" } });
  });

  it("S33 long timers: durationMinutes 50000 (> 24.8 days) fires exactly once at the right instant (manual clock)", async () => {
    r = await rig();
    const id = await r.open();
    await suspend(r.ctx, { sessionId: id, resumeWhen: { timeout: { durationMinutes: 50_000 } } });
    // The manual clock refuses any delay above the setTimeout ceiling: the timer must be chunked.
    r.clock.advance(50_000 * 60_000 - 1);
    await observe(); // not yet due: nothing fired, the timer is still armed
    expect(r.clock.pending).toBeGreaterThan(0);
    expect(r.bridge.stateOf(id)).toBe("suspended");
    r.clock.advance(1);
    await untilLifecycle(r.log, "resumed");
    expect(lifecycleEvents(r.log).filter((e) => e.event === "resumed")).toHaveLength(1);
    r.clock.advance(100 * 24 * 3_600_000);
    await observe(); // the single firing was seen above; a second one would land within this window
    expect(lifecycleEvents(r.log).filter((e) => e.event === "resumed")).toHaveLength(1);
  });

  it("S33 long timers: the same with vitest fake timers and the system clock (Node's ceiling)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    let fired = 0;
    const start = Date.now();
    const t = new DeadlineTimer(systemClock, start + 50_000 * 60_000, () => fired++);
    expect(MAX_TIMER_CHUNK_MS).toBe(2_147_483_647);
    vi.advanceTimersByTime(50_000 * 60_000 - 1);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
    vi.advanceTimersByTime(MAX_TIMER_CHUNK_MS * 3);
    expect(fired).toBe(1);
    expect(t.armed).toBe(false);
  });

  it("S34 onEvent: fireEvent resumes with cause external_event and the payload as input; another name does nothing", async () => {
    r = await rig();
    const id = await r.open();
    await suspend(r.ctx, { sessionId: id, resumeWhen: { onEvent: "ci.passed" } });
    expect(await r.bridge.fireEvent("ci.failed", { run: 1 })).toBe(0);
    expect(r.bridge.stateOf(id)).toBe("suspended");
    expect(await r.bridge.fireEvent("ci.passed", { run: 7 })).toBe(1);
    await untilLifecycle(r.log, "resumed");
    expect(lifecycleEvents(r.log).find((e) => e.event === "resumed")).toMatchObject({ cause: "external_event", hadResumeInput: true });
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "x" }] });
    expect(r.agent.calls.filter((c) => c.method === "session/prompt").at(-1)!.params._meta[META.resume].input).toEqual({ run: 7 });
  });

  it("S35 trigger: a host matcher match resumes with cause condition_fired", async () => {
    r = await rig({ bridge: { triggerMatcher: (trigger, payload) => (payload as Payload)?.path === trigger.path } });
    const id = await r.open();
    await suspend(r.ctx, { sessionId: id, resumeWhen: { trigger: { path: "src/lib.rs" } } });
    expect(await r.bridge.fireTrigger({ path: "README.md" })).toBe(0);
    expect(await r.bridge.fireTrigger({ path: "src/lib.rs" })).toBe(1);
    await untilLifecycle(r.log, "resumed");
    expect(lifecycleEvents(r.log).find((e) => e.event === "resumed")).toMatchObject({ cause: "condition_fired" });
  });
});

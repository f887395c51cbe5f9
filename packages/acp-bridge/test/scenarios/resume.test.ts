/** §8 scenarios 23–29: resume. */
import { deferred } from "@ahp/conformance";
import { afterEach, describe, expect, it } from "vitest";
import { META } from "../../src/index.js";
import { observe, resumeWith, rig, suspend, until, untilLifecycle, type Rig } from "../helpers/setup.js";
import { indexOf, labels, lifecycleEvents } from "../helpers/wire.js";

/** An event payload as the assertions read it (the envelope types it `unknown`). */
type Payload = Record<string, unknown>;

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const runLifecycles = (rg: Rig) => rg.harness!.events.filter((e) => e.event_type === "run_lifecycle").map((e) => e.payload as Payload);

describe("resume", () => {
  it("S23 explicit resume with input: resumed precedes the response; the input leads the next prompt (P2 on_next_prompt)", async () => {
    r = await rig({ bridge: { emulateFreshTranscript: true } });
    const id = await r.open();
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "build it" }] });
    const sus = await suspend(r.ctx, { sessionId: id, reason: "ci" });
    const res = await resumeWith(r.ctx, id, { handle: sus.handle, input: "CI is green", continueTranscript: false });
    expect(res._meta[META.resume]).toMatchObject({
      handle: sus.handle,
      cause: "explicit_resume",
      hadResumeInput: true,
      continueTranscript: false,
      state: "active.idle",
    });
    await untilLifecycle(r.log, "resumed");
    const ls = labels(r.log);
    expect(indexOf(ls, "lifecycle:resumed")).toBeLessThan(indexOf(ls, "resp:session/resume"));
    expect(lifecycleEvents(r.log).find((e) => e.event === "resumed")).toMatchObject({
      cause: "explicit_resume",
      hadResumeInput: true,
      continueTranscript: false,
    });
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "next" }] });
    const prompts = r.agent.calls.filter((c) => c.method === "session/prompt");
    const last = prompts.at(-1)!.params;
    expect(last._meta[META.resume].input).toBe("CI is green");
    expect(last.prompt[0].text).toContain("Resume input: CI is green");
    expect(last.prompt[0].text).toContain(`Resumed from suspension ${sus.handle}`);
    expect(last.prompt.at(-1).text).toBe("next");
    // continueTranscript false: a fresh agent session seeded with the digest.
    expect(last.sessionId).not.toBe(prompts[0]!.params.sessionId);
    // The fresh agent session's updates reach the client under the client's session id.
    await until(
      () => r!.clientDouble.received.filter((u) => u.update.sessionUpdate === "agent_message_chunk").length >= 2,
      "both replies at the client",
    );
    const texts = r.clientDouble.received.filter((u) => u.update.sessionUpdate === "agent_message_chunk");
    expect(texts).toHaveLength(2);
    expect(texts.every((u) => u.sessionId === id)).toBe(true);
  });

  it("a fresh-transcript resume seeds the agent with the last 2,000 characters of the agent's text, however many chunks it came in", async () => {
    const chunks = Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(97 + i)}`.repeat(700 + i));
    r = await rig({
      bridge: { emulateFreshTranscript: true },
      agent: {
        turn: async (t) => {
          for (const c of chunks) await t.text(c);
          return "end_turn";
        },
      },
    });
    const id = await r.open();
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "write a lot" }] });
    const sus = await suspend(r.ctx, { sessionId: id });
    await resumeWith(r.ctx, id, { handle: sus.handle, continueTranscript: false });
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "next" }] });
    const lead = String(r.agent.calls.filter((c) => c.method === "session/prompt").at(-1)!.params.prompt[0].text);
    const expected = chunks.join("").slice(-2000).trim();
    expect(lead).toContain(`Before the pause: ${expected}`);
    expect(lead.endsWith(expected)).toBe(true);
  });

  it("S24 unknown handle → -32002 unknown_handle; the session stays suspended", async () => {
    r = await rig();
    const id = await r.open();
    await suspend(r.ctx, { sessionId: id });
    const error = await resumeWith(r.ctx, id, { handle: "sus_forged" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32002, data: { reason: "unknown_handle", handle: "sus_forged" } });
    expect(r.bridge.stateOf(id)).toBe("suspended");
  });

  it("S25 plain re-attach on an active session: success, no lifecycle output, no AHP gate call", async () => {
    r = await rig({ harness: () => ({ decision: "allow" }) });
    const id = await r.open();
    const res = await resumeWith(r.ctx, id);
    expect(res).toEqual({});
    await observe(); // the re-attach was answered: a lifecycle update or a gate call would have been made by now
    expect(lifecycleEvents(r.log)).toEqual([]);
    expect(r.harness!.events.filter((e) => e.event_type === "pre_action")).toEqual([]);
  });

  it("S26 double-resume race: exactly one success; the loser gets resume_conflict or handle_consumed; one resumed, one run_lifecycle executing", async () => {
    const gate = deferred();
    r = await rig({
      harness: async (e) => {
        if ((e.payload as Payload)?.action_type === "session_resume") await gate.promise;
        return { decision: "allow" };
      },
    });
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id });
    const before = runLifecycles(r).length;
    const a = resumeWith(r.ctx, id, { handle: sus.handle }).then(
      (v) => ({ ok: v }),
      (e: unknown) => ({ err: e }),
    );
    const b = resumeWith(r.ctx, id, { handle: sus.handle }).then(
      (v) => ({ ok: v }),
      (e: unknown) => ({ err: e }),
    );
    await until(() => r!.harness!.events.some((e) => (e.payload as Payload)?.action_type === "session_resume"), "the resume gate held");
    await observe(); // both resumes on the wire while the gate holds the first
    gate.resolve();
    const results = await Promise.all([a, b]);
    const wins = results.filter((x) => "ok" in x);
    const losses = results.filter((x) => "err" in x) as Array<{ err: any }>;
    expect(wins).toHaveLength(1);
    expect(losses).toHaveLength(1);
    expect(losses[0]!.err.code).toBe(-31001);
    expect(["resume_conflict", "handle_consumed"]).toContain(losses[0]!.err.data.reason);
    await untilLifecycle(r.log, "resumed");
    await observe(); // a second resumed update would land within this window
    expect(lifecycleEvents(r.log).filter((e) => e.event === "resumed")).toHaveLength(1);
    expect(
      runLifecycles(r)
        .slice(before)
        .filter((p) => p.status === "executing"),
    ).toHaveLength(1);
    expect(r.harness!.events.filter((e) => (e.payload as Payload)?.action_type === "session_resume")).toHaveLength(1);
  });

  it("S27 serialized second resume → -31001 handle_consumed", async () => {
    r = await rig();
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id });
    await resumeWith(r.ctx, id, { handle: sus.handle });
    const error = await resumeWith(r.ctx, id, { handle: sus.handle }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -31001, data: { reason: "handle_consumed", handle: sus.handle } });
  });

  it("S28 resume vs timer race: one winner, the timer is disarmed, the cause matches the winner", async () => {
    r = await rig();
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id, resumeWhen: { timeout: { durationMinutes: 10 } } });
    r.clock.advance(10 * 60_000 - 1);
    const explicit = resumeWith(r.ctx, id, { handle: sus.handle });
    r.clock.advance(1); // the timer falls due at the same instant
    await explicit.then(
      (v) => expect(v._meta[META.resume].cause).toBe("explicit_resume"),
      (e: unknown) => expect(e).toMatchObject({ code: -31001 }),
    );
    await untilLifecycle(r.log, "resumed");
    await observe(); // a second resumed update would land within this window
    const resumed = lifecycleEvents(r.log).filter((e) => e.event === "resumed");
    expect(resumed).toHaveLength(1);
    r.clock.advance(60 * 60_000);
    await observe(); // the timer was disarmed by the winner: advancing must not fire it
    expect(lifecycleEvents(r.log).filter((e) => e.event === "resumed")).toHaveLength(1);
    expect(r.clock.pending).toBe(0);
  });

  it("S29 gate block on resume: -31002, stays suspended, the same handle resumes later; a timer that fired during the gate is replayed (T18)", async () => {
    let blockNext = true;
    const gate = deferred();
    r = await rig({
      harness: async (e) => {
        if ((e.payload as Payload)?.action_type !== "session_resume") return { decision: "allow" };
        if (blockNext) {
          blockNext = false;
          await gate.promise;
          return { decision: "block", reason: "not now" };
        }
        return { decision: "allow" };
      },
    });
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id, resumeWhen: { timeout: { durationMinutes: 1 } } });
    const first = resumeWith(r.ctx, id, { handle: sus.handle }).catch((e: unknown) => e);
    await until(() => r!.bridge.stateOf(id) === "resuming", "resuming");
    r.clock.advance(60_000); // fires while resuming: held
    expect(r.bridge.stateOf(id)).toBe("resuming");
    gate.resolve();
    expect(await first).toMatchObject({ code: -31002, data: { reason: "blocked" } });
    // The held timer is replayed after the revert and wins with cause timeout.
    await until(() => lifecycleEvents(r!.log).some((e) => e.event === "resumed"), "replayed timer");
    expect(lifecycleEvents(r.log).find((e) => e.event === "resumed")).toMatchObject({ handle: sus.handle, cause: "timeout" });
  });

  it("S29 gate block on resume: the same handle resumes later by an explicit resume", async () => {
    let n = 0;
    r = await rig({
      harness: (e) =>
        (e.payload as Payload)?.action_type === "session_resume" && n++ === 0 ? { decision: "block", reason: "no" } : { decision: "allow" },
    });
    const id = await r.open();
    const sus = await suspend(r.ctx, { sessionId: id });
    expect(await resumeWith(r.ctx, id, { handle: sus.handle }).catch((e: unknown) => e)).toMatchObject({ code: -31002 });
    expect(r.bridge.stateOf(id)).toBe("suspended");
    const ok = await resumeWith(r.ctx, id, { handle: sus.handle });
    expect(ok._meta[META.resume].handle).toBe(sus.handle);
  });
});

/** §8 scenarios 19–22: validation (§4). */
import { afterEach, describe, expect, it } from "vitest";
import { validateResumeConditions } from "../../src/index.js";
import { agentDouble } from "../helpers/agent.js";
import { observe, rig, suspend, until, type Rig } from "../helpers/setup.js";
import { updates } from "../helpers/wire.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe("validation", () => {
  it("S19 normalization: onEvent trimmed, onTimeout defaulted, {} treated as absent — exact echo", async () => {
    r = await rig();
    const id = await r.open();
    const a = await suspend(r.ctx, { sessionId: id, resumeWhen: { timeout: { durationMinutes: 30 }, onEvent: "  ci.passed " } });
    expect(a.resumeWhen).toEqual({ onEvent: "ci.passed", timeout: { durationMinutes: 30, onTimeout: "resume_with_summary" } });
    const id2 = (await r.ctx.request("session/new", { cwd: "/w", mcpServers: [] })).sessionId;
    const b = await suspend(r.ctx, { sessionId: id2, resumeWhen: {} });
    expect("resumeWhen" in b).toBe(false);
    const id3 = (await r.ctx.request("session/new", { cwd: "/w", mcpServers: [] })).sessionId;
    const c = await suspend(r.ctx, { sessionId: id3, resumeWhen: { onEvent: null, trigger: null, timeout: null } });
    expect("resumeWhen" in c).toBe(false);
  });

  const cases: Array<[string, unknown, string]> = [
    ["unknown key", { later: true }, "resumeWhen.later"],
    ["onEvent empty", { onEvent: "" }, "resumeWhen.onEvent"],
    ["onEvent blank", { onEvent: "  " }, "resumeWhen.onEvent"],
    ["onEvent number", { onEvent: 5 }, "resumeWhen.onEvent"],
    ["onEvent with a space", { onEvent: "bad channel" }, "resumeWhen.onEvent"],
    ["trigger array", { trigger: [] }, "resumeWhen.trigger"],
    ["trigger string", { trigger: "x" }, "resumeWhen.trigger"],
    ["timeout without durationMinutes", { timeout: {} }, "resumeWhen.timeout.durationMinutes"],
    ["durationMinutes 0", { timeout: { durationMinutes: 0 } }, "resumeWhen.timeout.durationMinutes"],
    ["durationMinutes -1", { timeout: { durationMinutes: -1 } }, "resumeWhen.timeout.durationMinutes"],
    ["durationMinutes 1.5", { timeout: { durationMinutes: 1.5 } }, "resumeWhen.timeout.durationMinutes"],
    ['durationMinutes "5"', { timeout: { durationMinutes: "5" } }, "resumeWhen.timeout.durationMinutes"],
    ["durationMinutes 527041", { timeout: { durationMinutes: 527041 } }, "resumeWhen.timeout.durationMinutes"],
    ['onTimeout "later"', { timeout: { durationMinutes: 5, onTimeout: "later" } }, "resumeWhen.timeout.onTimeout"],
    ["extra key in timeout", { timeout: { durationMinutes: 5, unit: "h" } }, "resumeWhen.timeout.unit"],
    ["not an object", [1], "resumeWhen"],
  ];

  it("S20 rejections: each gets -32602 with the exact data.field; state unchanged; no AHP call made", async () => {
    r = await rig({ harness: () => ({ decision: "allow" }) });
    const id = await r.open();
    await until(() => r!.harness!.events.some((e) => e.event_type === "session_start"), "the session_start report");
    const before = r.harness!.events.length;
    const wireBefore = updates(r.log).length;
    for (const [what, resumeWhen, field] of cases) {
      const error = (await suspend(r.ctx, { sessionId: id, resumeWhen }).catch((e: unknown) => e)) as { code: number; data: any };
      expect(error.code, what).toBe(-32602);
      expect(error.data, what).toMatchObject({ reason: "invalid_resume_conditions", field });
      expect(typeof error.data.detail, what).toBe("string");
      expect(r.bridge.stateOf(id), what).toBe("active.idle");
    }
    // Other malformed suspend params name their field too.
    const params: Array<[Record<string, unknown>, string]> = [
      [{ sessionId: id, mode: "pause" }, "mode"],
      [{ sessionId: id, reason: 7 }, "reason"],
      [{ sessionId: id, reason: "x".repeat(2049) }, "reason"],
      [{ sessionId: id, extra: 1 }, "extra"],
      [{ mode: "finish_step" }, "sessionId"],
    ];
    for (const [p, field] of params) {
      const error = (await suspend(r.ctx, p).catch((e: unknown) => e)) as { code: number; data: any };
      expect(error.code).toBe(-32602);
      expect(error.data).toMatchObject({ reason: "invalid_suspend_params", field });
    }
    await observe(); // every refusal was answered: an AHP call or an update would have been made by now
    expect(r.harness!.events.filter((e) => e.event_type !== "session_start").length).toBe(before - 1);
    expect(updates(r.log).length).toBe(wireBefore);
  });

  it("S21 unsupported cause: an agent with resumeCauses [explicit_resume] refuses a timeout with unsupported_resume_condition", async () => {
    r = await rig({ bridge: { resumeCauses: ["explicit_resume"] } });
    const id = await r.open();
    const error = (await suspend(r.ctx, { sessionId: id, resumeWhen: { timeout: { durationMinutes: 5 } } }).catch((e: unknown) => e)) as {
      code: number;
      data: any;
    };
    expect(error.code).toBe(-32602);
    expect(error.data).toMatchObject({ reason: "unsupported_resume_condition", field: "resumeWhen.timeout" });
    const pure = validateResumeConditions({ onEvent: "x" }, "conditions", {});
    expect(pure).toMatchObject({ ok: false, error: { reason: "unsupported_resume_condition", field: "conditions.onEvent" } });
    expect(r.bridge.stateOf(id)).toBe("active.idle");
  });

  it("S22 await_resumption reason: an empty reason → -32602", async () => {
    let sent: unknown;
    r = await rig({
      agent: {
        turn: async (t) => {
          sent = await t.client
            .request("_ahpHarness/session/await_resumption", { sessionId: t.sessionId, reason: "   " })
            .catch((e: unknown) => e);
          return "end_turn";
        },
      },
    });
    const id = await r.open();
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "go" }] });
    expect(sent).toMatchObject({ code: -32602, data: { reason: "invalid_suspend_params", field: "reason" } });
    expect(r.bridge.stateOf(id)).toBe("active.idle");
    void agentDouble;
  });
});

import { describe, expect, it } from "vitest";
import { AhpEventSchema, DecisionSchema, fromV1Request, toV1Result } from "../src/index.js";

describe("fromV1Request (spec §15.1)", () => {
  it("maps pre_tool_use to a blocking pre_action event", () => {
    const before = Date.now();
    const mapped = fromV1Request({ event_type: "pre_tool_use", payload: { session_id: "legacy-7", tool: "bash" }, meta: { depth: 2 } });
    expect(mapped.ok).toBe(true);
    if (!mapped.ok) return;
    expect(mapped.blocking).toBe(true);
    expect(mapped.event).toEqual({
      event_type: "pre_action",
      session_id: "legacy-7",
      agent_id: "v1",
      timestamp: mapped.event.timestamp,
      depth: 2,
      payload: { session_id: "legacy-7", tool: "bash" },
      metadata: { ahp_v1_event_type: "pre_tool_use" },
    });
    expect(Date.parse(mapped.event.timestamp)).toBeGreaterThanOrEqual(before);
    expect(mapped.event.timestamp).toMatch(/Z$/);
    expect(AhpEventSchema.safeParse(mapped.event).success).toBe(true);
  });

  it.each([
    ["pre_tool_use", "pre_action", true],
    ["post_tool_use", "post_action", false],
    ["pre_prompt", "pre_prompt", true],
    ["session_start", "session_start", false],
    ["session_end", "session_end", false],
  ] as const)("%s -> %s (blocking: %s)", (v1, v2, blocking) => {
    const mapped = fromV1Request({ event_type: v1, payload: {} });
    expect(mapped).toMatchObject({ ok: true, blocking, event: { event_type: v2 } });
  });

  it("defaults: payload null, session and agent 'v1', depth 0", () => {
    const mapped = fromV1Request({ event_type: "session_start" });
    expect(mapped).toMatchObject({ ok: true, event: { payload: null, session_id: "v1", agent_id: "v1", depth: 0 } });
    expect(fromV1Request({ event_type: "session_start", payload: { session_id: 5 }, meta: null })).toMatchObject({
      ok: true,
      event: { session_id: "v1", depth: 0 },
    });
  });

  it("refuses what v1 did not have, with a readable detail", () => {
    const unknown = fromV1Request({ event_type: "pre_action" });
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.detail).toMatch(/^unknown variant `pre_action`, expected one of `pre_tool_use`/);
    const negative = fromV1Request({ event_type: "pre_tool_use", meta: { depth: -1 } });
    expect(negative.ok).toBe(false);
    const fractional = fromV1Request({ event_type: "pre_tool_use", meta: { depth: 1.5 } });
    expect(fractional.ok).toBe(false);
    const missing = fromV1Request({});
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.detail).toMatch(/^missing field `event_type`/);
    expect(fromV1Request(null).ok).toBe(false);
  });
});

describe("toV1Result", () => {
  it.each([
    [{ decision: "allow" }, "continue"],
    [{ decision: "modify", modified_payload: { command: "ls" } }, "continue"],
    [{ decision: "defer", retry_after_ms: 100 }, "retry"],
    [{ decision: "block", reason: "no" }, "block"],
    [{ decision: "escalate", reason: "ask a human" }, "block"],
  ] as const)("%j -> action %s, the 2.4 decision kept beside it", (decision, action) => {
    const result = toV1Result(decision);
    expect(result).toEqual({ ...decision, action });
    // Still a valid 2.4 Decision for a 2.x-aware reader (unknown members are ignored).
    expect(DecisionSchema.safeParse(result).success).toBe(true);
  });
});

/** The bridge's trace of applied transition rows stays bounded however long the bridge runs. */
import { describe, expect, it } from "vitest";
import { TRACE_KEPT } from "../src/index.js";
import { rig } from "./helpers/setup.js";

describe("trace", () => {
  it("keeps the latest rows, at least TRACE_KEPT and fewer than twice that, over many turns", async () => {
    const r = await rig();
    const sessionId = await r.open();
    const turns = TRACE_KEPT + 100; // at least two rows a turn: more than twice TRACE_KEPT in all
    for (let i = 0; i < turns; i++) await r.ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `turn ${i}` }] });
    const trace = r.bridge.trace;
    expect(trace.length).toBeGreaterThanOrEqual(TRACE_KEPT);
    expect(trace.length).toBeLessThan(2 * TRACE_KEPT);
    expect(trace.at(-1)).toMatchObject({ sessionId, to: "active.idle" });
    await r.close();
  });
});

/** Spec §6 B (validation) and C (version check and handshake). */
import { createLinkedPair } from "@ahp/core";
import { describe, expect, it } from "vitest";
import { AartsHost, AhpBridge, EngineFailure, validateEvent } from "@ahp/aarts";
import { E0, harness, hostWithHarness, preToolUse, RecordingTransport } from "../helpers.js";

/** A harness that answers the handshake with a fixed result. */
function rawHarness(answer: (method: string, params: unknown) => unknown) {
  const [agentSide, harnessSide] = createLinkedPair();
  harnessSide.onmessage = (message) => {
    const m = message as { id?: string; method: string; params: unknown };
    if (m.id === undefined) return;
    const result = answer(m.method, m.params);
    if (result !== undefined) void harnessSide.send({ jsonrpc: "2.0", id: m.id, result: result as never });
  };
  void harnessSide.start();
  return new RecordingTransport(agentSide);
}

describe("B. validation", () => {
  it('C16 host_id "Claude_Code" is a validation error naming host_id', () => {
    const result = validateEvent({ ...preToolUse(), host_id: "Claude_Code" });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues[0]!.path).toBe("host_id");
    expect(result.message).toContain("host_id");
  });

  it("C17 PreToolUse without artifacts: bridge failure, no AHP message; fail-open allow / fail-closed deny", async () => {
    for (const policy of ["fail-open", "fail-closed"] as const) {
      const h = await hostWithHarness(undefined, { host: { failurePolicy: policy } });
      const { artifacts: _a, ...bad } = preToolUse() as Record<string, unknown>;
      await expect(h.bridge.versionCheck({ aarts_version: "1" })).resolves.toMatchObject({ compatible: true });
      await expect(h.bridge.evaluate(bad as never)).rejects.toMatchObject({ failureCause: "invalid_event" });
      const d = await h.host.evaluate(bad as never);
      expect(h.agent.events).toHaveLength(0);
      if (policy === "fail-open") {
        expect(d.verdict).toMatchObject({ decision: "allow", category: "engine_failure", source: "failure_policy", severity: "warning" });
      } else {
        expect(d.verdict).toMatchObject({ decision: "deny", category: "engine_failure", source: "failure_policy" });
      }
      await h.close();
    }
  });
});

describe("C. version check and handshake", () => {
  it("C18 aarts_version 1 with h1: one handshake with the §5.2 capabilities; compatible; comprehensive", async () => {
    const h = harness();
    const answer = await h.bridge.versionCheck({ aarts_version: "1" });
    expect(answer).toEqual({ compatible: true, engine_id: "ahp:h1", engine_version: "1.0.0" });
    const handshakes = h.agent.sent.filter((m) => "method" in m && m.method === "ahp/handshake");
    expect(handshakes).toHaveLength(1);
    const params = (handshakes[0] as { params: Record<string, unknown> }).params;
    expect(params).toMatchObject({
      protocol_version: "2.4",
      agent_info: {
        framework: "aarts-ahp-bridge",
        version: "0.1.0",
        capabilities: ["pre_action", "pre_prompt", "post_action", "session_end", "aarts/0.1"],
      },
      agent_id: "aarts-ahp-bridge",
    });
    expect(typeof params.session_id).toBe("string");
    expect(h.bridge.level).toBe("comprehensive");
    await h.close();
  });

  it('C19 a harness answering protocol_version "3.0" is not compatible', async () => {
    const transport = rawHarness(() => ({
      protocol_version: "3.0",
      harness_info: { name: "h3", version: "1", capabilities: ["pre_action"] },
    }));
    const bridge = new AhpBridge({ transport });
    expect((await bridge.versionCheck({ aarts_version: "1" })).compatible).toBe(false);
    await bridge.close();
  });

  it('C20 aarts_version "2": incompatible, engine aarts-ahp-bridge, zero AHP messages', async () => {
    const h = harness();
    const answer = await h.bridge.versionCheck({ aarts_version: "2" });
    expect(answer).toMatchObject({ compatible: false, engine_id: "aarts-ahp-bridge" });
    expect(h.agent.sent).toHaveLength(0);
    await h.close();
  });

  it("C21 harness with only pre_action: basic; PreLLMRequest is uncovered (zero messages) ⇒ policy", async () => {
    for (const policy of ["fail-open", "fail-closed"] as const) {
      const h = await hostWithHarness(undefined, {
        server: { harnessInfo: { name: "h1", version: "1.0.0", capabilities: ["pre_action"] } },
        host: { failurePolicy: policy },
      });
      await h.host.activate();
      expect(h.bridge.level).toBe("basic");
      const event = { hook_point: "PreLLMRequest", ...E0, full_prompt: "hi" } as never;
      const failure = await h.bridge.evaluate(event).catch((e: unknown) => e);
      expect(EngineFailure.isInstance(failure) && failure.failureCause).toBe("uncovered_hook");
      const d = await h.host.evaluate(event);
      expect(h.agent.events).toHaveLength(0);
      expect(d.verdict.decision).toBe(policy === "fail-open" ? "allow" : "deny");
      expect(d.verdict.category).toBe("engine_failure");
      await h.close();
    }
  });

  it("handshake failure modes (§5.2 step 8) are incompatible, never a throw (no harness, JSON-RPC error, malformed result)", async () => {
    const cases = [
      rawHarness(() => ({ protocol_version: "2.4" })),
      rawHarness(() => "not an object"),
      rawHarness(() => ({ protocol_version: "2.4", harness_info: { name: "x", version: "1", capabilities: ["pre_prompt"] } })),
    ];
    for (const transport of cases) {
      const bridge = new AhpBridge({ transport });
      expect((await bridge.versionCheck({ aarts_version: "0" })).compatible).toBe(false);
      await bridge.close();
    }
    const [agentSide, harnessSide] = createLinkedPair();
    harnessSide.onmessage = (m) => {
      const msg = m as { id: string };
      void harnessSide.send({ jsonrpc: "2.0", id: msg.id, error: { code: -32000, message: "Unsupported protocol version: 2.4" } });
    };
    void harnessSide.start();
    const bridge = new AhpBridge({ transport: agentSide });
    expect((await bridge.versionCheck({ aarts_version: "0" })).compatible).toBe(false);
    const failing = new AhpBridge({ transport: () => Promise.reject(new Error("ECONNREFUSED")) });
    expect(await failing.versionCheck({ aarts_version: "0" })).toMatchObject({ compatible: false, engine_id: "aarts-ahp-bridge" });
    const host = new AartsHost({ hooks: [{ id: "x", engine: failing }], failurePolicy: "fail-closed" });
    expect((await host.evaluate(preToolUse())).verdict).toMatchObject({ decision: "deny", category: "engine_failure" });
    await bridge.close();
  });
});

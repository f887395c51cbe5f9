/** Spec §6 D: event mapping (forward). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AartsEvent } from "@ahp/aarts";
import { ask, E0, harness, hostWithHarness, preToolUse, UUID_RE } from "../helpers.js";

const golden = JSON.parse(readFileSync(new URL("../fixtures/golden/c22-ahp-message.json", import.meta.url), "utf8")) as {
  id: string;
  params: { payload: { aarts: AartsEvent } };
};

describe("D. event mapping", () => {
  it("C22 the §5.4 AARTS event becomes the §5.4 AHP message (golden)", async () => {
    const h = harness();
    await h.bridge.versionCheck({ aarts_version: "1" });
    await h.bridge.evaluate(golden.params.payload.aarts);
    const [message] = h.agent.events;
    expect(message).toBeDefined();
    const { id, ...rest } = message as unknown as { id: string };
    const { id: _goldenId, ...expected } = golden;
    expect(id).toMatch(UUID_RE);
    expect(rest).toEqual(expected);
    await h.close();
  });

  it("C23 PreLLMRequest: request, pre_prompt, llm_request, prompt = the array, model", async () => {
    const h = harness();
    await h.bridge.versionCheck({ aarts_version: "1" });
    const full = [{ role: "user", content: "hi" }];
    await h.bridge.evaluate({ hook_point: "PreLLMRequest", ...E0, full_prompt: full, model_id: "m1" });
    const [m] = h.agent.events;
    expect(typeof m!.id).toBe("string");
    expect(m!.params.event_type).toBe("pre_prompt");
    expect(m!.params.payload).toMatchObject({ prompt_stage: "llm_request", prompt: full, model: "m1" });
    await h.close();
  });

  it("C24 PostToolUse: request, pre_prompt, tool_result, prompt = tool_result", async () => {
    const h = harness();
    await h.bridge.versionCheck({ aarts_version: "1" });
    await h.bridge.evaluate({
      hook_point: "PostToolUse",
      ...E0,
      tool_name: "shell",
      tool_name_native: "Bash",
      tool_input: { command: "cat x" },
      artifacts: [],
      tool_result: { stdout: "secret" },
    });
    const [m] = h.agent.events;
    expect(typeof m!.id).toBe("string");
    expect(m!.params.event_type).toBe("pre_prompt");
    expect(m!.params.payload).toMatchObject({
      prompt_stage: "tool_result",
      prompt: { stdout: "secret" },
      tool_name: "shell",
      arguments: { command: "cat x" },
    });
    await h.close();
  });

  it("C25 SessionEnd: one session_end notification, no id, no verdict", async () => {
    const h = await hostWithHarness();
    const event = {
      hook_point: "SessionEnd",
      ...E0,
      summary: { tool_calls: 1, verdicts: { allow: 1, deny: 0, ask: 0 }, denied_actions: [] },
    } as AartsEvent;
    const result = await h.host.notify(event);
    expect(result).toBeUndefined();
    const notes = h.agent.events;
    expect(notes).toHaveLength(1);
    expect(notes[0]).not.toHaveProperty("id");
    expect(notes[0]!.params.event_type).toBe("session_end");
    expect(notes[0]!.params.payload).toMatchObject({ summary: event.summary as object });
    await h.close();
  });

  it("SessionStart is a session_start notification by default (ADR 0139), never a gate a rule on unnamed actions refuses", async () => {
    const h = harness();
    await h.bridge.versionCheck({ aarts_version: "1" });
    const verdict = await h.bridge.evaluate({ hook_point: "SessionStart", ...E0, environment: { working_directory: "/w" } } as never);
    expect(verdict.decision).toBe("allow");
    expect(h.agent.events.map((m) => [m.params.event_type, "id" in m ? "request" : "notification"])).toEqual([
      ["session_start", "notification"],
    ]);
    expect(h.agent.events[0]!.params.payload).toMatchObject({ working_directory: "/w" });
    await h.close();
  });

  it("C26 (lifecycleGates) SessionStart: one pre_action start_session request; with lifecycleNotifications a session_start notification first", async () => {
    for (const lifecycle of [false, true]) {
      const h = harness(undefined, { bridge: { lifecycleNotifications: lifecycle, lifecycleGates: true } });
      await h.bridge.versionCheck({ aarts_version: "1" });
      await h.bridge.evaluate({ hook_point: "SessionStart", ...E0 });
      const kinds = h.agent.events.map((m) => [m.params.event_type, "id" in m ? "request" : "notification"]);
      expect(kinds).toEqual(
        lifecycle
          ? [
              ["session_start", "notification"],
              ["pre_action", "request"],
            ]
          : [["pre_action", "request"]],
      );
      const request = h.agent.events.find((m) => "id" in m)!;
      expect(request.params.payload).toMatchObject({ action_type: "start_session" });
      await h.close();
    }
  });

  it("C27 PostAskResolution deny_similar: post_action notification ask_resolution with result.status", async () => {
    const h = harness();
    await h.bridge.versionCheck({ aarts_version: "1" });
    await h.bridge.notify({
      hook_point: "PostAskResolution",
      ...E0,
      original_hook_point: "PreToolUse",
      original_verdict: ask(),
      resolution: "deny_similar",
    } as AartsEvent);
    const [m] = h.agent.events;
    expect(m).not.toHaveProperty("id");
    expect(m!.params.event_type).toBe("post_action");
    expect(m!.params.payload).toMatchObject({
      action_type: "ask_resolution",
      result: { status: "deny_similar" },
      original_hook_point: "PreToolUse",
    });
    await h.close();
  });

  it("C28 sub-agent depth: 1 for the spawned session; over max_depth 0 a local deny under both policies", async () => {
    const spawn = {
      hook_point: "PreSubAgentSpawn",
      session_id: "s-1",
      timestamp: E0.timestamp,
      host_id: "claude-code",
      aarts_version: "0.1",
      sub_agent_id: "s-2",
      delegated_task: "t",
    } as AartsEvent;
    const h = harness();
    await h.bridge.versionCheck({ aarts_version: "1" });
    await h.bridge.evaluate(spawn);
    await h.bridge.evaluate(preToolUse({ session_id: "s-2" }));
    expect(h.agent.events.map((m) => m.params.depth)).toEqual([0, 1]);
    await h.close();

    for (const policy of ["fail-open", "fail-closed"] as const) {
      const d = await hostWithHarness(undefined, { server: { config: { max_depth: 0 } }, host: { failurePolicy: policy } });
      await d.host.evaluate(spawn);
      const before = d.agent.events.length;
      const decision = await d.host.evaluate(preToolUse({ session_id: "s-2" }));
      expect(d.agent.events.length).toBe(before);
      expect(decision.verdict).toMatchObject({
        decision: "deny",
        category: "depth_limit",
        source: "aarts-ahp-bridge",
        severity: "warning",
      });
      await d.close();
    }
  });
});

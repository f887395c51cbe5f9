/** The decisions on the spec's open questions Q1–Q11 (docs/adr/0010-aarts-open-questions.md), one test each. */
import { createLinkedPair } from "@ahp/core";
import { describe, expect, it } from "vitest";
import {
  AartsHost,
  AartsReverseBridge,
  computeLevel,
  canonicalize,
  extractArtifacts,
  EngineFailure,
  fromAhpDecision,
  HOST_IDS,
  HOST_LEVELS,
  HOST_PROFILES,
  MemoryStateStore,
  parseInstalls,
  renderClaudeCode,
  renderCursor,
  runCopilotCliHook,
  runCursorHook,
  syntheticSessionId,
  toAhpDecision,
  validateEvent,
  type AartsEngine,
  type Verdict,
} from "@ahp/aarts";
import { allow, ask, deny, engine, harness, hostWithHarness, out, preToolUse, runtime } from "./helpers.js";

const ctx = { hookPoint: "PreToolUse" as const, requestId: "r", eventType: "pre_action", harnessName: "h" };

describe("open questions", () => {
  it("Q1 the engine side accepts majors 0 and 1 (configurable); hosts send 0; the envelope version is only checked non-empty", async () => {
    for (const [version, compatible] of [
      ["0", true],
      ["0.1", true],
      ["1", true],
      ["1.0", true],
      ["2", false],
      ["", false],
      ["v1", false],
    ] as const) {
      const h = harness();
      expect((await h.bridge.versionCheck({ aarts_version: version })).compatible, version).toBe(compatible);
      await h.close();
    }
    const only1 = harness(undefined, { bridge: { supportedMajors: ["1"] } });
    expect((await only1.bridge.versionCheck({ aarts_version: "0" })).compatible).toBe(false);
    await only1.close();
    const seen: string[] = [];
    const e: AartsEngine = {
      ...engine(() => allow()),
      versionCheck: async (r) => (seen.push(r.aarts_version), { compatible: true, engine_id: "e" }),
    };
    await new AartsHost({ hooks: [{ id: "e", engine: e }] }).activate();
    await new AartsHost({ hooks: [{ id: "e", engine: e }], versionCheckMajor: "1" }).activate();
    expect(seen).toEqual(["0", "1"]);
    expect(validateEvent(preToolUse({ aarts_version: "7.3" })).ok).toBe(true);
    expect(validateEvent(preToolUse({ aarts_version: "" })).ok).toBe(false);
  });

  it("Q2 metadata travels on every decision variant: an ask verdict survives escalate on the wire", async () => {
    const V = ask({ reasons: ["check"], suggested_resolutions: ["allow_always"] }) as Verdict;
    const D = toAhpDecision(V);
    expect(D).toEqual({ decision: "escalate", reason: "check", metadata: { aarts: { verdict: V } } });
    // Through a real AhpServer that validates results (unknown members are accepted) and the bridge's raw RPC.
    const h = harness(() => D as never, { server: { validateResults: true } });
    await h.bridge.versionCheck({ aarts_version: "1" });
    expect(await h.bridge.evaluate(preToolUse())).toEqual(V);
    await h.close();
  });

  it("Q3 a block marked metadata.handler_error is a failure (host policy decides); the reverse bridge marks its batch failures", async () => {
    const marked = { decision: "block", reason: "Handler error: boom", metadata: { handler_error: true } };
    expect(() => fromAhpDecision(marked, ctx)).toThrow(EngineFailure);
    expect(fromAhpDecision({ decision: "block", reason: "policy" }, ctx).verdict.decision).toBe("deny");
    const open = await hostWithHarness(() => marked as never, { host: { failurePolicy: "fail-open" } });
    expect((await open.host.evaluate(preToolUse())).verdict).toMatchObject({ decision: "allow", category: "engine_failure" });
    await open.close();

    const bridge = new AartsReverseBridge({ engine: engine(() => Promise.reject(new Error("down"))) });
    const [agentSide, harnessSide] = createLinkedPair();
    await bridge.connect(harnessSide);
    const answer = new Promise<Record<string, unknown>>((resolve) => (agentSide.onmessage = (m) => resolve(m as Record<string, unknown>)));
    await agentSide.start();
    await agentSide.send({
      jsonrpc: "2.0",
      id: "h",
      method: "ahp/handshake",
      params: { protocol_version: "2.4", agent_info: { framework: "a", version: "1", capabilities: [] }, session_id: "s", agent_id: "a" },
    });
    await answer;
    const batch = new Promise<Record<string, unknown>>((resolve) => (agentSide.onmessage = (m) => resolve(m as Record<string, unknown>)));
    await agentSide.send({
      jsonrpc: "2.0",
      id: "b",
      method: "ahp/batch",
      params: {
        events: [
          {
            event_type: "pre_action",
            session_id: "s",
            agent_id: "a",
            timestamp: "t",
            depth: 0,
            payload: { tool_name: "bash", arguments: { command: "ls" } },
          },
        ],
      },
    });
    const decisions = ((await batch).result as { decisions: { metadata?: Record<string, unknown> }[] }).decisions;
    expect(decisions[0]).toMatchObject({ decision: "block", metadata: { handler_error: true } });
    await agentSide.close();
    await bridge.close();
  });

  it("Q4 deny salvage is on by default (host, bridge, reverse bridge) and can be switched off", async () => {
    const malformed = { decision: "deny", reasons: ["nope"] }; // no category/severity/source
    const salvaging = new AartsHost({ hooks: [{ id: "e", engine: engine(() => malformed) }], failurePolicy: "fail-open" });
    expect((await salvaging.evaluate(preToolUse())).verdict).toEqual({
      decision: "deny",
      category: "policy",
      severity: "warning",
      source: "e1",
      reasons: ["nope"],
    });
    const strict = new AartsHost({
      hooks: [{ id: "e", engine: engine(() => malformed) }],
      failurePolicy: "fail-open",
      salvageMalformedDeny: false,
    });
    expect((await strict.evaluate(preToolUse())).verdict).toMatchObject({ decision: "allow", category: "engine_failure" });
    const notADeny = new AartsHost({ hooks: [{ id: "e", engine: engine(() => ({ decision: "allow" })) }], failurePolicy: "fail-open" });
    expect((await notADeny.evaluate(preToolUse())).verdict.category).toBe("engine_failure");
  });

  it("Q5 a mixed command with an install segment is package_install; the whole command stays in the command artifact", () => {
    const command = "npm install x && rm -rf build";
    expect(parseInstalls(command).isInstall).toBe(true);
    expect(canonicalize("claude-code", "Bash", { command }).tool_name).toBe("package_install");
    expect(extractArtifacts("package_install", { command })[0]).toEqual({
      type: "command",
      value: command,
      source_field: "tool_input.command",
    });
  });

  it("Q6 allow is {} on Claude Code (host prompts still apply) and an explicit permission on Cursor", () => {
    const verdict = allow() as Verdict;
    expect(
      out(renderClaudeCode({ verdict, enforced: "allow", hookPoint: "PreToolUse" }, { nativeEvent: "PreToolUse", engineId: "e" })),
    ).toEqual({});
    expect(
      out(renderCursor({ verdict, enforced: "allow", hookPoint: "PreToolUse" }, { nativeEvent: "beforeShellExecution", engineId: "e" })),
    ).toEqual({ permission: "allow" });
  });

  it("Q7 Copilot CLI without a session id: a synthetic id from cwd + first sessionStart, kept until sessionEnd", async () => {
    const e = engine(() => allow());
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: e }] }));
    await runCopilotCliHook({ timestamp: 1714557600000, cwd: "/w", source: "new" }, rt, "sessionStart");
    await runCopilotCliHook({ timestamp: 1714557601000, cwd: "/w", toolName: "view", toolArgs: '{"path":"a.ts"}' }, rt, "preToolUse");
    const expected = syntheticSessionId("/w", 1714557600000);
    expect(expected).toMatch(/^copilot-cli:[0-9a-f]{64}$/);
    expect(e.events.map((ev) => ev.session_id)).toEqual([expected, expected]);
    await runCopilotCliHook(
      { timestamp: 1714557602000, cwd: "/w", sessionId: "real-1", toolName: "view", toolArgs: "{}" },
      rt,
      "preToolUse",
    );
    expect(e.events.at(-1)!.session_id).toBe("real-1");
    await runCopilotCliHook({ timestamp: 1714557603000, cwd: "/w", reason: "complete" }, rt, "sessionEnd");
    await runCopilotCliHook({ timestamp: 1714557609000, cwd: "/w", toolName: "view", toolArgs: "{}" }, rt, "preToolUse");
    expect(e.events.at(-1)!.session_id).toBe(syntheticSessionId("/w", 1714557609000));
    expect(rt.state).toBeInstanceOf(MemoryStateStore);
  });

  it("Q8 unverified host details are profiled conservatively: computed levels equal §4.9; Cursor sessionStart never blocks", async () => {
    for (const host of HOST_IDS) expect(computeLevel(HOST_PROFILES[host]), host).toBe(HOST_LEVELS[host]);
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: engine(() => deny()) }], failurePolicy: "fail-closed" }));
    const response = await runCursorHook({ hook_event_name: "sessionStart", conversation_id: "c", generation_id: "g" }, rt);
    expect(out(response)).toEqual({});
  });

  it("Q9 PostAskResolution carries the merged verdict that was shown, to every engine", async () => {
    const a = engine(() => ask({ reasons: ["a"] }), "ea");
    const b = engine(() => ask({ reasons: ["b"], severity: "critical" }), "eb");
    const host = new AartsHost({
      hooks: [
        { id: "ha", engine: a },
        { id: "hb", engine: b },
      ],
      mergePolicy: "strict",
      canPrompt: true,
    });
    const d = await host.evaluate(preToolUse());
    expect(d.verdict).toMatchObject({ decision: "ask", severity: "critical", reasons: ["[ha] a", "[hb] b"] });
    await host.resolveAsk(d, "deny_always");
    for (const e of [a, b])
      expect(e.notified).toEqual([
        expect.objectContaining({ hook_point: "PostAskResolution", original_verdict: d.verdict, resolution: "deny_always" }),
      ]);
  });

  it("Q10 the default merge is permissive (as AARTS says); strict lets one engine's deny win", async () => {
    const hooks = [
      { id: "logger", engine: engine(() => allow(), "logger") },
      { id: "security", engine: engine(() => deny({ reasons: ["malware"] }), "security") },
    ];
    expect((await new AartsHost({ hooks }).evaluate(preToolUse())).verdict.decision).toBe("allow");
    expect((await new AartsHost({ hooks, mergePolicy: "strict" }).evaluate(preToolUse())).verdict).toMatchObject({
      decision: "deny",
      reasons: ["[security] malware"],
    });
  });

  it("Q11 nothing depends on Appendix A: categories are open strings; bridge defaults are none / policy / rate_limit", () => {
    expect(fromAhpDecision({ decision: "allow" }, ctx).verdict.category).toBe("none");
    expect(fromAhpDecision({ decision: "block", reason: "x" }, ctx).verdict.category).toBe("policy");
    expect(fromAhpDecision({ decision: "defer", retry_after_ms: 1 }, ctx).verdict.category).toBe("rate_limit");
    const custom = fromAhpDecision({ decision: "block", reason: "x", metadata: { aarts: { category: "AARTS-T007" } } }, ctx).verdict;
    expect(custom.category).toBe("AARTS-T007");
  });
});

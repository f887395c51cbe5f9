/** Spec §6 E: decision mapping (forward). */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  AartsHost,
  copilotPreToolUse,
  EngineFailure,
  renderCopilotCli,
  runClaudeCompatibleHook,
  CLAUDE_CODE,
  type AartsEvent,
  type Verdict,
} from "@ahp/aarts";
import { AhpError } from "@ahp/core";
import { E0, harness, hostWithHarness, out, preToolUse, runtime } from "../helpers.js";

const golden = JSON.parse(readFileSync(new URL("../fixtures/golden/c30-verdict.json", import.meta.url), "utf8")) as Verdict;

/** One PreToolUse through the bridge against a harness answering `result`; returns the verdict and request id. */
async function mapped(result: unknown, options: Parameters<typeof harness>[1] = {}, event: AartsEvent = preToolUse()) {
  const h = harness(() => result as never, options);
  await h.bridge.versionCheck({ aarts_version: "1" });
  try {
    const verdict = await h.bridge.evaluate(event);
    return { verdict, id: h.agent.events[0]!.id as string };
  } finally {
    await h.close();
  }
}

async function failureOf(result: unknown) {
  const h = harness(() => result as never);
  await h.bridge.versionCheck({ aarts_version: "1" });
  const error = await h.bridge.evaluate(preToolUse()).catch((e: unknown) => e);
  await h.close();
  return error;
}

const spawn = { hook_point: "PreSubAgentSpawn", ...E0, sub_agent_id: "s-2", delegated_task: "t" } as unknown as AartsEvent;

describe("E. decision mapping", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("C29 allow ⇒ allow with defaults and the x-ahp directive", async () => {
    const { verdict, id } = await mapped({ decision: "allow" });
    expect(verdict).toEqual({
      decision: "allow",
      category: "none",
      severity: "info",
      source: "ahp:h1",
      reasons: [],
      directives: { "x-ahp": { request_id: id, event_type: "pre_action", decision: { decision: "allow" } } },
    });
  });

  it("C30 the §5.5 worked example (golden)", async () => {
    const h = harness(
      () => ({
        decision: "block",
        reason: "Package not allowed by supply-chain policy",
        metadata: { rules_applied: ["supply-chain-007"] },
      }),
      {
        server: { harnessInfo: { name: "compliance-harness", version: "1", capabilities: ["pre_action"] } },
        bridge: { generateId: () => "c0ffee00-0000-4000-8000-000000000001" },
      },
    );
    await h.bridge.versionCheck({ aarts_version: "1" });
    expect(await h.bridge.evaluate(preToolUse())).toEqual(golden);
    await h.close();
  });

  it("C31 escalate ⇒ ask, warning, reasons, category policy", async () => {
    const { verdict } = await mapped({ decision: "escalate", reason: "Needs review" });
    expect(verdict).toMatchObject({ decision: "ask", severity: "warning", reasons: ["Needs review"], category: "policy" });
  });

  it("C32 defer ⇒ deny rate_limit with the retry reason", async () => {
    const { verdict } = await mapped({ decision: "defer", retry_after_ms: 2000 });
    expect(verdict).toMatchObject({
      decision: "deny",
      category: "rate_limit",
      severity: "warning",
      reasons: ["Deferred by harness; retry after 2000 ms"],
    });
  });

  it("C33 modify on Claude Code PreToolUse ⇒ allow + x-ahp; stdout asks with updatedInput", async () => {
    const result = { decision: "modify", modified_payload: { arguments: { command: "ls" } } };
    const h = harness(() => result as never, { bridge: { hostModifiable: ["PreToolUse"] } });
    const host = new AartsHost({ hooks: [{ id: "h1", engine: h.bridge }], canPrompt: true });
    const rt = runtime(host);
    const response = await runClaudeCompatibleHook(
      CLAUDE_CODE,
      { hook_event_name: "PreToolUse", session_id: "s-1", tool_name: "Bash", tool_use_id: "toolu_2", tool_input: { command: "rm -rf /" } },
      rt,
    );
    expect(out(response)).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "ahp:h1 modified this tool call",
        updatedInput: { command: "ls" },
      },
    });
    const direct = await mapped(result, { bridge: { hostModifiable: ["PreToolUse"] } });
    expect(direct.verdict.decision).toBe("allow");
    expect(direct.verdict.directives?.["x-ahp"]?.decision).toEqual(result);
    await h.close();
  });

  it("C34 the same modify on Copilot CLI ⇒ deny with the unsupported-modification reason; modifyUnsupported allow ⇒ {}", async () => {
    const result = { decision: "modify", modified_payload: { arguments: { command: "ls" } } };
    const event = copilotPreToolUse(
      { timestamp: 1714557600000, cwd: "/w", toolName: "bash", toolArgs: '{"command":"rm -rf /"}' },
      "c",
      "c:0",
    );
    const denied = await mapped(result, {}, event);
    expect(denied.verdict.decision).toBe("deny");
    expect(denied.verdict.reasons?.[0]).toBe("Harness requires a modification this host cannot apply");
    expect(out(renderCopilotCli({ verdict: denied.verdict, enforced: "deny" }, "preToolUse", "ahp:h1"))).toMatchObject({
      permissionDecision: "deny",
    });
    const allowed = await mapped(result, { bridge: { modifyUnsupported: "allow" } }, event);
    expect(allowed.verdict.decision).toBe("allow");
    expect(out(renderCopilotCli({ verdict: allowed.verdict, enforced: "allow" }, "preToolUse", "ahp:h1"))).toEqual({});
  });

  it("C35 permitted_tools is kept on PreSubAgentSpawn and dropped on PreToolUse", async () => {
    const result = { decision: "allow", metadata: { aarts: { directives: { permitted_tools: ["file_read", "web_request"] } } } };
    expect((await mapped(result, {}, spawn)).verdict.directives?.permitted_tools).toEqual(["file_read", "web_request"]);
    expect((await mapped(result)).verdict.directives).not.toHaveProperty("permitted_tools");
  });

  it("C36 an embedded verdict with the same decision is returned verbatim; a contradicting one is ignored", async () => {
    const V = { decision: "allow", category: "none", severity: "info", source: "vendor-x", confidence: 0.9, reasons: ["clean"] };
    expect((await mapped({ decision: "allow", metadata: { aarts: { verdict: V } } })).verdict).toEqual(V);
    const contradicting = { ...V, decision: "deny" };
    const { verdict, id } = await mapped({ decision: "allow", metadata: { aarts: { verdict: contradicting } } });
    expect(verdict).toMatchObject({ decision: "allow", category: "none", severity: "info", source: "ahp:h1" });
    expect(verdict.directives?.["x-ahp"]?.request_id).toBe(id);
  });

  it('C37 {"decision":"maybe"} is a failure ⇒ allow/engine_failure (fail-open), deny (fail-closed)', async () => {
    const failure = await failureOf({ decision: "maybe" });
    expect(EngineFailure.isInstance(failure) && failure.failureCause).toBe("invalid_response");
    for (const policy of ["fail-open", "fail-closed"] as const) {
      const h = await hostWithHarness(() => ({ decision: "maybe" }) as never, {
        server: { validateResults: false },
        host: { failurePolicy: policy },
      });
      const d = await h.host.evaluate(preToolUse());
      expect(d.verdict).toMatchObject(
        policy === "fail-open" ? { decision: "allow", category: "engine_failure" } : { decision: "deny", category: "engine_failure" },
      );
      await h.close();
    }
  });

  it('C38 {"decision":"block"} without reason is salvaged as deny, also under fail-open', async () => {
    const h = await hostWithHarness(() => ({ decision: "block" }) as never, { host: { failurePolicy: "fail-open" } });
    const d = await h.host.evaluate(preToolUse());
    expect(d.verdict).toMatchObject({
      decision: "deny",
      reasons: ["Blocked by harness"],
      category: "policy",
      severity: "warning",
      source: "ahp:h1",
    });
    expect(d.enforced).toBe("deny");
    await h.close();
    const strict = harness(() => ({ decision: "block" }) as never, { bridge: { salvageMalformedDeny: false } });
    await strict.bridge.versionCheck({ aarts_version: "1" });
    await expect(strict.bridge.evaluate(preToolUse())).rejects.toMatchObject({ failureCause: "invalid_response" });
    await strict.close();
  });

  it("C39 a JSON-RPC error object is a failure ⇒ policy", async () => {
    for (const policy of ["fail-open", "fail-closed"] as const) {
      const h = await hostWithHarness(
        () => {
          throw new AhpError(-32000, "boom");
        },
        { host: { failurePolicy: policy } },
      );
      await h.host.activate();
      const failure = await h.bridge.evaluate(preToolUse()).catch((e: unknown) => e);
      expect(EngineFailure.isInstance(failure) && failure.failureCause).toBe("engine_error");
      const d = await h.host.evaluate(preToolUse());
      expect(d.verdict.decision).toBe(policy === "fail-open" ? "allow" : "deny");
      await h.close();
    }
  });

  it("C40 a harness that never answers: failure after 5 000 ms; with timeout_ms 2000 after 2 000 ms", async () => {
    for (const [config, expected] of [
      [{}, 5_000],
      [{ timeout_ms: 2_000 }, 2_000],
    ] as const) {
      const h = await hostWithHarness(() => new Promise(() => undefined), {
        server: { config, handlerTimeoutMs: 0 },
        host: { failurePolicy: "fail-closed" },
      });
      await h.host.activate();
      vi.useFakeTimers();
      let settled: unknown;
      const pending = h.host.evaluate(preToolUse()).then((d) => (settled = d));
      await vi.advanceTimersByTimeAsync(expected - 1);
      expect(settled).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await pending;
      expect(settled).toMatchObject({ verdict: { decision: "deny", category: "engine_timeout" } });
      vi.useRealTimers();
      await h.close();
    }
  });

  it("C41 Recommended PostToolUse timing out under fail-closed: proceeds ⇒ allow engine_timeout; otherwise deny", async () => {
    const post = {
      hook_point: "PostToolUse",
      ...E0,
      tool_name: "shell",
      tool_name_native: "Bash",
      tool_input: {},
      artifacts: [],
      tool_result: "x",
    } as unknown as AartsEvent;
    for (const proceeds of [true, false]) {
      const h = await hostWithHarness(() => new Promise(() => undefined), {
        server: { handlerTimeoutMs: 0 },
        host: { failurePolicy: "fail-closed", recommendedTimeoutProceeds: proceeds },
      });
      await h.host.activate();
      vi.useFakeTimers();
      const pending = h.host.evaluate(post);
      await vi.advanceTimersByTimeAsync(5_000);
      const d = await pending;
      expect(d.verdict).toMatchObject(
        proceeds ? { decision: "allow", category: "engine_timeout", severity: "warning" } : { decision: "deny" },
      );
      vi.useRealTimers();
      await h.close();
    }
  });

  it("C42 SessionEnd with the transport down under fail-closed: nothing blocked, exactly one failure log entry", async () => {
    const h = await hostWithHarness(undefined, { host: { failurePolicy: "fail-closed" } });
    await h.host.activate();
    await h.agent.close();
    const result = await h.host.notify({ hook_point: "SessionEnd", ...E0 });
    expect(result).toBeUndefined();
    expect(h.logs.filter((l) => l.level === "error")).toHaveLength(1);
    await h.close();
  });
});

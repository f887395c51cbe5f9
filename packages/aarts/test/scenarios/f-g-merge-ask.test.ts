/** Spec §6 F (multi-hook merge) and G (ask flow). */
import { describe, expect, it } from "vitest";
import {
  AartsHost,
  EngineFailure,
  mergeResults,
  resolutionProceeds,
  runClaudeCompatibleHook,
  runClineHook,
  CLAUDE_CODE,
  type HookResult,
  type MergePolicy,
  type FailurePolicy,
  type Verdict,
} from "@ahp/aarts";
import { allow, ask, deny, engine, hostWithHarness, out, preToolUse, runtime } from "../helpers.js";

const vote = (decision: "allow" | "deny" | "ask", i: number, extra: Record<string, unknown> = {}): HookResult => ({
  hookId: `h${i + 1}`,
  ok: true,
  verdict: { decision, category: "policy", severity: "info", source: `s${i + 1}`, reasons: [`r${i + 1}`], ...extra },
});
const failure = (i: number): HookResult => ({
  hookId: `h${i + 1}`,
  ok: false,
  failure: new EngineFailure("timeout", "slow", { engineId: `e${i + 1}` }),
});
const merged = (results: (HookResult | "allow" | "deny" | "ask")[], mergePolicy: MergePolicy, failurePolicy: FailurePolicy = "fail-open") =>
  mergeResults(
    results.map((r, i) => (typeof r === "string" ? vote(r, i) : r)),
    { mergePolicy, failurePolicy },
  ).verdict;

describe("F. multi-hook merge", () => {
  it("C43 permissive: [deny, allow] ⇒ allow, [deny, deny] ⇒ deny, [deny, ask] ⇒ ask", () => {
    expect(merged(["deny", "allow"], "permissive").decision).toBe("allow");
    expect(merged(["deny", "deny"], "permissive").decision).toBe("deny");
    expect(merged(["deny", "ask"], "permissive").decision).toBe("ask");
  });

  it("C44 strict: [allow, ask] ⇒ ask, [allow, deny, ask] ⇒ deny", () => {
    expect(merged(["allow", "ask"], "strict").decision).toBe("ask");
    expect(merged(["allow", "deny", "ask"], "strict").decision).toBe("deny");
  });

  it("C45 majority: [deny, deny, allow] ⇒ deny, [deny, allow] ⇒ deny (tie ⇒ stricter), [ask, allow, allow, deny] ⇒ allow", () => {
    expect(merged(["deny", "deny", "allow"], "majority").decision).toBe("deny");
    expect(merged(["deny", "allow"], "majority").decision).toBe("deny");
    expect(merged(["ask", "allow", "allow", "deny"], "majority").decision).toBe("allow");
  });

  it("C46 [allow, failure] fail-closed ⇒ sticky deny engine_failure; [deny, failure] fail-open ⇒ deny (failure abstains)", () => {
    const closed = merged([vote("allow", 0), failure(1)], "permissive", "fail-closed");
    expect(closed).toMatchObject({ decision: "deny", category: "engine_timeout", source: "failure_policy" });
    const open = merged([vote("deny", 0), failure(1)], "permissive", "fail-open");
    expect(open.decision).toBe("deny");
    const other = mergeResults([vote("allow", 0), { hookId: "h2", ok: false, failure: new EngineFailure("transport", "down") }], {
      mergePolicy: "permissive",
      failurePolicy: "fail-closed",
    }).verdict;
    expect(other).toMatchObject({ decision: "deny", category: "engine_failure" });
  });

  it("C47 strict: max severity, first contributor's category, prefixed reasons in order", () => {
    const v = mergeResults(
      [
        {
          hookId: "h1",
          ok: true,
          verdict: { decision: "deny", severity: "warning", reasons: ["a"], category: "network_egress", source: "x" },
        },
        {
          hookId: "h2",
          ok: true,
          verdict: { decision: "deny", severity: "critical", reasons: ["b"], category: "supply_chain", source: "y" },
        },
      ],
      { mergePolicy: "strict", failurePolicy: "fail-open" },
    ).verdict;
    expect(v).toMatchObject({ severity: "critical", category: "network_egress", reasons: ["[h1] a", "[h2] b"], source: "x" });
  });

  it("C48 strict: permitted_tools is the intersection over contributors", () => {
    const v = mergeResults(
      [
        { hookId: "h1", ok: true, verdict: { ...allow(), directives: { permitted_tools: ["file_read", "web_request"] } } as Verdict },
        { hookId: "h2", ok: true, verdict: { ...allow(), directives: { permitted_tools: ["file_read"] } } as Verdict },
      ],
      { mergePolicy: "strict", failurePolicy: "fail-open" },
    ).verdict;
    expect(v.directives?.permitted_tools).toEqual(["file_read"]);
  });
});

describe("G. ask flow", () => {
  it("C49 Cline PreToolUse with a merged ask renders cancel with a message; no PostAskResolution", async () => {
    const e = engine(() => ask({ reasons: ["suspicious download"] }));
    const host = new AartsHost({ hooks: [{ id: "e1", engine: e }] });
    const rt = runtime(host);
    const response = await runClineHook(
      {
        clineVersion: "3.20.0",
        hookName: "PreToolUse",
        timestamp: "1714557600000",
        taskId: "t-1",
        preToolUse: { toolName: "execute_command", parameters: { command: "curl x | sh" } },
      },
      rt,
    );
    expect(out(response)).toEqual({ cancel: true, errorMessage: "suspicious download" });
    expect(rt.notified).toHaveLength(0);
    expect(e.notified).toHaveLength(0);
  });

  it("C50 prompting host: escalate with request id R, user picks allow_always ⇒ proceeds; PostAskResolution; post_action with ask_request_id R", async () => {
    const h = await hostWithHarness(
      (event) =>
        (event.payload as { action_type?: string }).action_type === "tool_call"
          ? { decision: "escalate", reason: "review" }
          : { decision: "allow" },
      {
        host: { canPrompt: true },
      },
    );
    const decision = await h.host.evaluate(preToolUse());
    expect(decision.enforced).toBe("ask");
    const R = h.agent.events[0]!.id;
    expect(resolutionProceeds("allow_always")).toBe(true);
    const resolution = await h.host.resolveAsk(decision, "allow_always");
    expect(resolution).toMatchObject({
      hook_point: "PostAskResolution",
      original_hook_point: "PreToolUse",
      resolution: "allow_always",
      turn_id: "s-1:1",
    });
    expect(resolution.original_verdict).toEqual(decision.verdict);
    const note = h.agent.events.at(-1)!;
    expect(note).not.toHaveProperty("id");
    expect(note.params.payload).toMatchObject({ action_type: "ask_resolution", result: { status: "allow_always" }, ask_request_id: R });
    await h.close();
  });

  it("C51 Claude Code: ask rendered for toolu_9, then PostToolUse for toolu_9 ⇒ PostAskResolution approved", async () => {
    const e = engine((event) => (event.hook_point === "PreToolUse" ? ask({ reasons: ["confirm"] }) : allow()));
    const host = new AartsHost({ hooks: [{ id: "e1", engine: e }], canPrompt: (hook) => hook === "PreToolUse" });
    const rt = runtime(host);
    const common = { session_id: "s-9", cwd: "/w", tool_name: "Bash", tool_use_id: "toolu_9", tool_input: { command: "make deploy" } };
    const first = await runClaudeCompatibleHook(CLAUDE_CODE, { ...common, hook_event_name: "PreToolUse" }, rt);
    expect(out(first)).toMatchObject({ hookSpecificOutput: { permissionDecision: "ask", permissionDecisionReason: "confirm" } });
    await runClaudeCompatibleHook(CLAUDE_CODE, { ...common, hook_event_name: "PostToolUse", tool_response: { stdout: "ok" } }, rt);
    const resolutions = e.notified.filter((n) => n.hook_point === "PostAskResolution");
    expect(resolutions).toHaveLength(1);
    expect(resolutions[0]).toMatchObject({
      resolution: "approved",
      original_hook_point: "PreToolUse",
      turn_id: "s-9:0",
      session_id: "s-9",
    });
    // A second PostToolUse for the same id does not fire it again.
    await runClaudeCompatibleHook(CLAUDE_CODE, { ...common, hook_event_name: "PostToolUse", tool_response: { stdout: "ok" } }, rt);
    expect(e.notified.filter((n) => n.hook_point === "PostAskResolution")).toHaveLength(1);
    // PermissionDenied after an ask ⇒ denied.
    await runClaudeCompatibleHook(CLAUDE_CODE, { ...common, tool_use_id: "toolu_10", hook_event_name: "PreToolUse" }, rt);
    await runClaudeCompatibleHook(CLAUDE_CODE, { ...common, tool_use_id: "toolu_10", hook_event_name: "PermissionDenied" }, rt);
    expect(e.notified.filter((n) => n.hook_point === "PostAskResolution").map((n) => (n as { resolution: string }).resolution)).toEqual([
      "approved",
      "denied",
    ]);
  });

  it("a host that cannot prompt enforces ask as deny (audit records both)", async () => {
    const records: unknown[] = [];
    const host = new AartsHost({ hooks: [{ id: "e1", engine: engine(() => ask()) }], onaudit: (r) => records.push(r) });
    const d = await host.evaluate(preToolUse());
    expect(d).toMatchObject({ enforced: "deny", verdict: { decision: "ask" } });
    expect(records).toEqual([expect.objectContaining({ decision: "ask", enforced: "deny", hook_point: "PreToolUse", engine_id: "e1" })]);
    expect(deny().decision).toBe("deny");
  });
});

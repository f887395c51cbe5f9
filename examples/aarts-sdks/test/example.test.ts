import { describe, expect, it } from "vitest";
import { bashCall, installClaudeCodeHook } from "../src/claude-code.js";
import * as lc from "../src/langchain.js";
import * as oa from "../src/openai-agents.js";

describe("OpenAI Agents SDK agent", () => {
  it("runs the allowed tool call, refuses the blocked one and tells the model why", async () => {
    const result = await oa.runOpenAIAgentsExample([
      [oa.shellCall("call-1", "ls build")],
      [oa.shellCall("call-2", "rm -rf build")],
      [oa.say("done")],
    ]);
    expect(result.ran).toEqual(["ls build"]);
    expect(result.toolOutputs).toEqual(["ran: ls build", "recursive delete"]);
    expect(result.decisions).toContain("pre_action:block [no-recursive-delete]");
    expect(result.finalOutput).toBe("done");
  });

  it("interrupts an escalated call for approval and runs it only when approved", async () => {
    const asked: string[] = [];
    const script = [[oa.shellCall("call-1", "git push origin main")], [oa.say("done")]];
    const approved = await oa.runOpenAIAgentsExample(script, {
      approve: async (command) => {
        asked.push(command);
        return true;
      },
    });
    expect(asked).toEqual(["git push origin main"]);
    expect(approved.ran).toEqual(["git push origin main"]);
    expect(approved.decisions).toContain("pre_action:escalate [push-needs-review]");

    const rejected = await oa.runOpenAIAgentsExample(script, { approve: async () => false });
    expect(rejected.ran).toEqual([]);
  });

  it("without a way to ask, an escalation is enforced as deny", async () => {
    const result = await oa.runOpenAIAgentsExample([[oa.shellCall("call-1", "git push origin main")], [oa.say("done")]]);
    expect(result.ran).toEqual([]);
    expect(result.toolOutputs).toEqual(["pushing needs a human [rule: push-needs-review]"]);
  });
});

describe("LangChain agent", () => {
  it("runs the allowed tool call, refuses the blocked one with a tool message", async () => {
    const result = await lc.runLangChainExample([lc.shellCall("c1", "ls build"), lc.shellCall("c2", "rm -rf build"), lc.say("done")]);
    expect(result.ran).toEqual(["ls build"]);
    expect(result.toolOutputs).toEqual(["ran: ls build", "recursive delete"]);
    expect(result.decisions).toContain("pre_action:block [no-recursive-delete]");
    expect(result.finalOutput).toBe("done");
  });

  it("asks a human for an escalated call and runs it only when approved", async () => {
    const script = [lc.shellCall("c1", "git push origin main"), lc.say("done")];
    const approved = await lc.runLangChainExample(script, { approve: async () => true });
    expect(approved.ran).toEqual(["git push origin main"]);
    const rejected = await lc.runLangChainExample(script, { approve: async () => false });
    expect(rejected.ran).toEqual([]);
    expect(rejected.toolOutputs).toEqual(["Denied by the user"]);
  });
});

describe("Claude Code hook", () => {
  it("installs into the user settings and answers Claude Code's PreToolUse; fails closed when the harness is down", async () => {
    const hook = await installClaudeCodeHook();
    try {
      const pre = hook.settings.hooks.PreToolUse?.[0];
      expect(pre?.matcher).toBe("*");
      // The hook is told the host's own per-hook limit, written beside it as `timeout` (ADR 0140).
      expect(pre?.hooks[0]?.command).toBe(`ahp-aarts-hook claude-code --connect unix:${hook.socket} --fail-closed --host-timeout-ms 60000`);
      expect(pre?.hooks[0]).toMatchObject({ timeout: 60 });
      expect(Object.keys(hook.settings.hooks)).toEqual(expect.arrayContaining(["SessionStart", "UserPromptSubmit", "PostToolUse"]));

      const allowed = await hook.fire("PreToolUse", bashCall("ls build", hook.home));
      expect(allowed).toEqual({ stdout: "{}\n", exitCode: 0 }); // allow: Claude Code's own permission prompts still apply

      const denied = await hook.fire("PreToolUse", bashCall("rm -rf build", hook.home));
      expect(denied.exitCode).toBe(0);
      expect(JSON.parse(denied.stdout)).toEqual({
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "recursive delete" },
      });

      await hook.stopHarness();
      const down = await hook.fire("PreToolUse", bashCall("ls build", hook.home));
      expect(JSON.parse(down.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    } finally {
      await hook.close();
    }
  });
});

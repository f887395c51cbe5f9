/**
 * In-process adapters driven the way their frameworks call them: OpenAI Agents SDK guardrails,
 * `needsApproval` and `callModelInputFilter`; LangChain `createAgent` middleware hooks.
 */
import { describe, expect, it } from "vitest";
import {
  AartsBlockedError,
  AartsHost,
  createLangChainMiddleware,
  createOpenAIAgentsAdapter,
  type AartsEvent,
  type ToolMessageFields,
} from "@ahp/aarts";
import { allow, ask, deny, engine } from "./helpers.js";

const NOW = () => new Date("2026-05-01T10:00:00.000Z");

/** An engine deciding on the command / text of the event. */
function policyEngine() {
  return engine((event) => {
    const text = JSON.stringify(event);
    if (text.includes("rm -rf")) return deny({ reasons: ["destructive"] });
    if (text.includes("curl") && event.hook_point === "PreToolUse") return ask({ reasons: ["network"] });
    if (text.includes("SECRET")) return deny({ reasons: ["secret"] });
    if (text.includes("jailbreak")) return deny({ reasons: ["injection"] });
    if (event.hook_point === "PreToolUse" && text.includes("sed -i")) {
      return allow({
        directives: {
          "x-ahp": {
            request_id: "r",
            event_type: "pre_action",
            decision: { decision: "modify", modified_payload: { arguments: { command: "sed -n p f" } } },
          },
        },
      });
    }
    return allow();
  });
}

describe("OpenAI Agents SDK adapter", () => {
  it("tool input guardrail: allow, rejectContent with the reason, throwException with haltOnDeny", async () => {
    const e = policyEngine();
    const aarts = createOpenAIAgentsAdapter({ host: new AartsHost({ hooks: [{ id: "e", engine: e }] }), sessionId: "sess-1", now: NOW });
    const ok = await aarts.toolInputGuardrail.run({
      toolCall: { callId: "c1", name: "shell", arguments: JSON.stringify({ commands: ["npm i left-pad"] }) },
    });
    expect(ok.behavior).toEqual({ type: "allow" });
    expect(e.events[0]).toMatchObject({
      hook_point: "PreToolUse",
      host_id: "openai-agents",
      session_id: "sess-1",
      tool_name: "package_install",
      tool_name_native: "shell",
    });
    expect((e.events[0] as { artifacts: unknown[] }).artifacts).toContainEqual({
      type: "package",
      value: "left-pad",
      context: "npm",
      source_field: "tool_input.commands.0",
    });
    const no = await aarts.toolInputGuardrail.run({ toolCall: { callId: "c2", name: "shell", arguments: '{"commands":["rm -rf /"]}' } });
    expect(no.behavior).toEqual({ type: "rejectContent", message: "destructive" });
    const halting = createOpenAIAgentsAdapter({ host: new AartsHost({ hooks: [{ id: "e", engine: policyEngine() }] }), haltOnDeny: true });
    expect(
      (await halting.toolInputGuardrail.run({ toolCall: { callId: "c3", name: "shell", arguments: '{"commands":["rm -rf /"]}' } }))
        .behavior,
    ).toEqual({ type: "throwException" });
  });

  it("needsApproval and the guardrail share one evaluation per callId; approval is reported as PostAskResolution", async () => {
    const e = policyEngine();
    const aarts = createOpenAIAgentsAdapter({ host: new AartsHost({ hooks: [{ id: "e", engine: e }], canPrompt: true }), sessionId: "s" });
    const needs = aarts.needsApprovalFor("fetch_page");
    expect(await needs({}, { url: "https://x.test", command: "curl" }, "call-9")).toBe(true);
    expect(
      (
        await aarts.toolInputGuardrail.run({
          toolCall: { callId: "call-9", name: "fetch_page", arguments: '{"url":"https://x.test","command":"curl"}' },
        })
      ).behavior,
    ).toEqual({ type: "allow" });
    expect(e.events.filter((ev) => ev.hook_point === "PreToolUse")).toHaveLength(1);
    await aarts.resolveApproval("call-9", "allow_always");
    expect(e.notified).toEqual([
      expect.objectContaining({ hook_point: "PostAskResolution", resolution: "allow_always", original_hook_point: "PreToolUse" }),
    ]);
    // Without prompting the same ask is a reject.
    const strict = createOpenAIAgentsAdapter({ host: new AartsHost({ hooks: [{ id: "e", engine: policyEngine() }] }) });
    expect(
      (await strict.toolInputGuardrail.run({ toolCall: { callId: "x", name: "fetch_page", arguments: '{"command":"curl"}' } })).behavior
        .type,
    ).toBe("rejectContent");
  });

  it("tool output guardrail redacts; input/output guardrails trip; callModelInputFilter throws on deny", async () => {
    const aarts = createOpenAIAgentsAdapter({ host: new AartsHost({ hooks: [{ id: "e", engine: policyEngine() }] }), sessionId: "s" });
    expect(await aarts.toolOutputGuardrail.run({ toolCall: { name: "read", arguments: "{}" }, output: "TOKEN SECRET" })).toMatchObject({
      behavior: { type: "rejectContent", message: "[redacted by e1]" },
    });
    expect(await aarts.inputGuardrail.execute({ input: [{ role: "user", content: "please jailbreak" }] })).toMatchObject({
      tripwireTriggered: true,
    });
    expect(await aarts.inputGuardrail.execute({ input: "hello" })).toMatchObject({ tripwireTriggered: false });
    expect(await aarts.outputGuardrail.execute({ agentOutput: "here is the SECRET" })).toMatchObject({ tripwireTriggered: true });
    const data = { input: [{ role: "user", content: "hi" }], instructions: "be nice" };
    expect(await aarts.callModelInputFilter({ modelData: data })).toBe(data);
    await expect(aarts.callModelInputFilter({ modelData: { input: "jailbreak" } })).rejects.toBeInstanceOf(AartsBlockedError);
    await expect(aarts.startSession()).resolves.toMatchObject({ enforced: "allow" });
  });
});

describe("LangChain middleware adapter", () => {
  const toolMessage = (f: ToolMessageFields) => ({ kind: "ToolMessage", ...f });

  it("wrapToolCall: deny returns an error ToolMessage without calling the tool; modify calls it with new args", async () => {
    const e = policyEngine();
    const mw = createLangChainMiddleware({ host: new AartsHost({ hooks: [{ id: "e", engine: e }] }), toolMessage, now: NOW });
    await mw.beforeAgent({ messages: [{ type: "human", content: "clean up" }] }, { config: { configurable: { thread_id: "t-1" } } });
    const calls: unknown[] = [];
    const handler = async (req: never) => {
      calls.push(req);
      return { content: "done" };
    };
    const denied = await mw.wrapToolCall({ toolCall: { id: "tc1", name: "terminal", args: { commands: "rm -rf /" } } }, handler);
    expect(denied).toEqual({ kind: "ToolMessage", content: "destructive", tool_call_id: "tc1", name: "terminal", status: "error" });
    expect(calls).toHaveLength(0);
    const modified = await mw.wrapToolCall({ toolCall: { id: "tc2", name: "terminal", args: { commands: "sed -i s/a/b/ f" } } }, handler);
    expect(modified).toEqual({ content: "done" });
    expect((calls[0] as { toolCall: { args: unknown } }).toolCall.args).toEqual({ command: "sed -n p f" });
    const sessions = new Set(e.events.map((ev) => ev.session_id));
    expect(sessions).toEqual(new Set(["t-1"]));
    expect(e.events.map((ev) => ev.hook_point).slice(0, 3)).toEqual(["SessionStart", "PreUserInput", "PreToolUse"]);
  });

  it("ask goes through interrupt (edit counts as approved) and fires PostAskResolution; without interrupt it is denied", async () => {
    const e = policyEngine();
    const answers: string[] = ["edit", "reject"];
    const mw = createLangChainMiddleware({
      host: new AartsHost({ hooks: [{ id: "e", engine: e }], canPrompt: true }),
      toolMessage,
      interrupt: async () => answers.shift() as "edit",
    });
    const handler = async () => ({ content: "fetched" });
    expect(
      await mw.wrapToolCall({ toolCall: { id: "a", name: "requests_get", args: { url: "https://x.test", tool: "curl" } } }, handler),
    ).toEqual({ content: "fetched" });
    expect(
      await mw.wrapToolCall({ toolCall: { id: "b", name: "requests_get", args: { url: "https://x.test", tool: "curl" } } }, handler),
    ).toMatchObject({ status: "error", content: "Denied by the user" });
    expect(e.notified.map((n) => (n as { resolution: string }).resolution)).toEqual(["approved", "denied"]);
    const noHitl = createLangChainMiddleware({
      host: new AartsHost({ hooks: [{ id: "e", engine: policyEngine() }], canPrompt: true }),
      toolMessage,
    });
    expect(await noHitl.wrapToolCall({ toolCall: { id: "c", name: "requests_get", args: { tool: "curl" } } }, handler)).toMatchObject({
      status: "error",
    });
  });

  it("PostToolUse redaction, MCP by origin, model and output checks", async () => {
    const e = policyEngine();
    const mw = createLangChainMiddleware({
      host: new AartsHost({ hooks: [{ id: "e", engine: e }] }),
      toolMessage,
      isMcpTool: (t) => (t as { mcp?: boolean })?.mcp === true,
    });
    const redacted = await mw.wrapToolCall({ toolCall: { id: "r", name: "read_file", args: { file_path: ".env" } } }, async () => ({
      content: "KEY=SECRET",
    }));
    expect(redacted).toMatchObject({ content: "[redacted by e1]", status: "error" });
    await mw.wrapToolCall({ toolCall: { id: "m", name: "search_issues", args: { q: "x" } }, tool: { mcp: true } }, async () => ({
      content: "ok",
    }));
    expect(
      e.events.find((ev) => ev.hook_point === "PreToolUse" && (ev as { tool_name_native: string }).tool_name_native === "search_issues"),
    ).toMatchObject({ tool_name: "mcp_call" });
    const response = await mw.wrapModelCall({ messages: [{ type: "human", content: "hi" }], model: { model: "gpt-x" } }, async () => ({
      type: "ai",
      content: "hello",
      tool_calls: [{ name: "terminal", args: { commands: "ls" } }],
    }));
    expect(response.content).toBe("hello");
    const pre = e.events.find((ev) => ev.hook_point === "PreLLMRequest") as AartsEvent & { model_id: string };
    expect(pre.model_id).toBe("gpt-x");
    expect(e.events.find((ev) => ev.hook_point === "PostLLMResponse")).toMatchObject({
      planned_actions: [{ tool_name: "shell", tool_name_native: "terminal" }],
    });
    await expect(
      mw.wrapModelCall({ messages: [{ type: "human", content: "jailbreak" }] }, async () => ({ content: "x" })),
    ).rejects.toBeInstanceOf(AartsBlockedError);
    await expect(mw.afterAgent({ messages: [{ type: "ai", content: "the SECRET is" }] })).rejects.toBeInstanceOf(AartsBlockedError);
    await expect(mw.beforeAgent({ messages: [{ type: "human", content: "jailbreak now" }] })).rejects.toBeInstanceOf(AartsBlockedError);
  });
});

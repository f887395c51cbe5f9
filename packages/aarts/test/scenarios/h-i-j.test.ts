/** Spec §6 H (round trips), I (reverse bridge), J (conformance levels and directives). */
import { readdirSync, readFileSync } from "node:fs";
import { createLinkedPair } from "@ahp/core";
import { describe, expect, it } from "vitest";
import {
  AartsHost,
  AartsReverseBridge,
  applyInjectContext,
  computeLevel,
  EngineFailure,
  fromAhpDecision,
  fromAhpEvent,
  HOOK_POINTS,
  toAhpDecision,
  toAhpEvent,
  type AartsEvent,
  type HostProfile,
  type Verdict,
} from "@ahp/aarts";
import { allow, ask, deny, E0, engine, preToolUse } from "../helpers.js";

const corpus = new URL("../../../../schemas/examples/aarts/", import.meta.url);
const fixture = (type: string): AartsEvent => JSON.parse(readFileSync(new URL(`${type}/valid/full.json`, corpus), "utf8")) as AartsEvent;

const ctx = (hookPoint = "PreToolUse" as const) => ({
  hookPoint,
  requestId: "r-1",
  eventType: "pre_action",
  harnessName: "h1",
  hostModifiable: ["PreToolUse" as const],
});

/** A raw JSON-RPC client on an in-memory pair (sees exactly what the reverse bridge answers). */
async function rawClient(bridge: AartsReverseBridge) {
  const [agentSide, harnessSide] = createLinkedPair();
  await bridge.connect(harnessSide);
  const waiting = new Map<string, (m: Record<string, unknown>) => void>();
  const received: unknown[] = [];
  agentSide.onmessage = (m) => {
    received.push(m);
    const msg = m as Record<string, unknown>;
    waiting.get(String(msg.id))?.(msg);
  };
  await agentSide.start();
  let n = 0;
  const call = (method: string, params: unknown) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = `q${++n}`;
      waiting.set(id, resolve);
      void agentSide.send({ jsonrpc: "2.0", id, method, params });
    });
  await call("ahp/handshake", {
    protocol_version: "2.4",
    agent_info: { framework: "My Agent", version: "3.1.0", capabilities: [] },
    session_id: "x",
    agent_id: "agent-7",
  });
  return {
    call,
    received,
    notify: (params: unknown) => agentSide.send({ jsonrpc: "2.0", method: "ahp/event", params }),
    close: () => agentSide.close(),
  };
}

const ahpEvent = (event_type: string, payload: unknown, extra: Record<string, unknown> = {}) => ({
  event_type,
  session_id: "a-1",
  agent_id: "agent-7",
  timestamp: "2026-05-01T10:00:00Z",
  depth: 0,
  payload,
  ...extra,
});

describe("H. round trips", () => {
  it("C52 E → A → E is the identity for one fixture of each of the 20 hook points", () => {
    const types = readdirSync(corpus).filter((t) => t.endsWith("Event") && t !== "AartsEvent");
    expect(types).toHaveLength(20);
    const seen = new Set<string>();
    for (const type of types) {
      const event = fixture(type);
      seen.add(event.hook_point);
      const { params } = toAhpEvent(event);
      expect(fromAhpEvent(JSON.parse(JSON.stringify(params)))).toEqual(event);
    }
    expect([...seen].sort()).toEqual([...HOOK_POINTS].sort());
  });

  it("C53 V → D → V is the identity for each decision, with and without directives and optional fields", () => {
    const verdicts: Verdict[] = [
      allow() as Verdict,
      deny() as Verdict,
      ask({ suggested_resolutions: ["allow_always", "deny_similar"] }) as Verdict,
      { ...(deny() as Verdict), confidence: 0.4, artifacts: ["a"], matched_rule_id: "R1", reasons: [] },
      { ...(allow() as Verdict), directives: { permitted_tools: ["file_read"] } },
      { ...(ask() as Verdict), reasons: [] },
    ];
    for (const V of verdicts) {
      const D = JSON.parse(JSON.stringify(toAhpDecision(V)));
      const hookPoint = V.directives?.permitted_tools ? "PreSubAgentSpawn" : "PreToolUse";
      expect(fromAhpDecision(D, { ...ctx(), hookPoint }).verdict).toEqual(V);
    }
  });

  it("C54 D → V → D is the identity for allow, block, modify (host can apply), defer, escalate", () => {
    const decisions = [
      { decision: "allow" },
      { decision: "block", reason: "no", metadata: { policy: "p" } },
      { decision: "modify", modified_payload: { arguments: { command: "ls" } } },
      { decision: "defer", retry_after_ms: 1500, reason: "busy" },
      { decision: "escalate", reason: "human", escalation_target: "oncall" },
    ];
    for (const D of decisions) {
      const V = fromAhpDecision(D, ctx()).verdict;
      expect(toAhpDecision(JSON.parse(JSON.stringify(V)))).toEqual(D);
    }
  });
});

describe("I. reverse bridge", () => {
  it("C55 pre_action without payload.aarts: engine sees PreToolUse shell; deny ⇒ block with the verdict in metadata", async () => {
    const e = engine(() => deny({ reasons: ["destructive"] }));
    const bridge = new AartsReverseBridge({ engine: e });
    const client = await rawClient(bridge);
    const answer = await client.call("ahp/event", ahpEvent("pre_action", { tool_name: "bash", arguments: { command: "rm -rf /" } }));
    expect(e.events[0]).toMatchObject({
      hook_point: "PreToolUse",
      tool_name: "shell",
      tool_name_native: "bash",
      artifacts: [{ type: "command", value: "rm -rf /", source_field: "tool_input.command" }],
      host_id: "agent-7",
      host_version: "3.1.0",
      is_sub_agent: false,
    });
    expect(answer.result).toEqual({
      decision: "block",
      reason: "destructive",
      metadata: { aarts: { verdict: deny({ reasons: ["destructive"] }) } },
    });
    await client.close();
    await bridge.close();
  });

  it("C56 idle request ⇒ -32601; post_action notification ⇒ PostToolUse delivered, nothing sent back", async () => {
    let delivered!: (event: AartsEvent) => void;
    const arrived = new Promise<AartsEvent>((resolve) => (delivered = resolve));
    const e = engine((event) => {
      if (event.hook_point === "PostToolUse") delivered(event);
      return allow();
    });
    const bridge = new AartsReverseBridge({ engine: e });
    const client = await rawClient(bridge);
    const idle = await client.call("ahp/event", ahpEvent("idle", { idle_duration_ms: 5, idle_reason: "x" }));
    expect((idle.error as { code: number }).code).toBe(-32601);
    const query = await client.call("ahp/query", { session_id: "a-1", agent_id: "x", query_type: "q", payload: null });
    expect((query.error as { code: number }).code).toBe(-32601);
    const before = client.received.length;
    await client.notify(
      ahpEvent("post_action", { tool_name: "bash", arguments: { command: "ls" }, result: { exit_code: 0, duration_ms: 3, output: "a" } }),
    );
    const post = await arrived;
    expect(post).toMatchObject({
      tool_name: "shell",
      exit_code: 0,
      execution_duration_ms: 3,
      tool_result: { exit_code: 0, duration_ms: 3, output: "a" },
    });
    // One more round trip: every answer before it has arrived; the notification produced none.
    await client.call("ahp/event", ahpEvent("pre_prompt", { prompt: "x" }));
    expect(client.received.length).toBe(before + 1);
    await client.close();
    await bridge.close();
  });

  it("C57 batch: the engine fails on the second entry ⇒ block for it; the same event alone under fail-open ⇒ allow", async () => {
    const e = engine((event) => {
      const cmd = (event as { tool_input?: { command?: string } }).tool_input?.command;
      if (cmd === "two") throw new Error("engine crashed");
      return allow();
    });
    const bridge = new AartsReverseBridge({ engine: e, failurePolicy: "fail-open" });
    const client = await rawClient(bridge);
    const one = ahpEvent("pre_action", { tool_name: "bash", arguments: { command: "one" } });
    const two = ahpEvent("pre_action", { tool_name: "bash", arguments: { command: "two" } });
    const batch = await client.call("ahp/batch", { events: [one, two] });
    const decisions = (batch.result as { decisions: { decision: string }[] }).decisions;
    expect(decisions).toHaveLength(2);
    expect(decisions[0]).toEqual(toAhpDecision(allow() as Verdict));
    expect(decisions[1]).toMatchObject({ decision: "block" });
    const single = await client.call("ahp/event", two);
    expect(single.result).toMatchObject({ decision: "allow", metadata: { aarts: { failure: expect.stringContaining("engine crashed") } } });
    const closed = new AartsReverseBridge({ engine: e, failurePolicy: "fail-closed" });
    const c2 = await rawClient(closed);
    expect((await c2.call("ahp/event", two)).result).toMatchObject({ decision: "block" });
    await c2.close();
    await closed.close();
    await client.close();
    await bridge.close();
  });
});

describe("J. conformance levels and directives", () => {
  const basicCoverage = ["shell", "file_write", "file_edit", "web_request", "mcp_call", "package_install"];
  const on = { fired: true, canDeny: true, canAsk: true };

  it("C58 SessionStart + PreToolUse deniable with basic coverage ⇒ basic; without mcp_call ⇒ none", () => {
    const profile: HostProfile = { hooks: { SessionStart: on, PreToolUse: on }, toolCoverage: basicCoverage, provenance: true };
    expect(computeLevel(profile)).toBe("basic");
    expect(computeLevel({ ...profile, toolCoverage: basicCoverage.filter((t) => t !== "mcp_call") })).toBe("none");
  });

  it("C59 a profile meeting Standard except that PreToolUse lacks is_sub_agent stays basic", () => {
    const hooks = Object.fromEntries(
      [
        "SessionStart",
        "PreToolUse",
        "PrePluginLoad",
        "PreSkillLoad",
        "PostInputProcessing",
        "PreLLMRequest",
        "PostToolUse",
        "PostAskResolution",
      ].map((h) => [h, on]),
    );
    const all = [
      "shell",
      "file_write",
      "file_edit",
      "file_read",
      "file_delete",
      "web_request",
      "mcp_call",
      "code_exec",
      "package_install",
      "browser",
      "database",
      "delegate",
      "other",
    ];
    expect(computeLevel({ hooks, toolCoverage: all, provenance: true })).toBe("standard");
    expect(computeLevel({ hooks, toolCoverage: all, provenance: false })).toBe("basic");
  });

  it("C60 permitted_tools: PreToolUse shell in the sub-agent ⇒ local deny privilege_escalation, zero engine calls", async () => {
    const e = engine((event) =>
      event.hook_point === "PreSubAgentSpawn" ? allow({ directives: { permitted_tools: ["file_read"] } }) : allow(),
    );
    const host = new AartsHost({ hooks: [{ id: "e1", engine: e }] });
    await host.evaluate({
      hook_point: "PreSubAgentSpawn",
      ...E0,
      sub_agent_id: "s-2",
      delegated_task: "read docs",
    } as unknown as AartsEvent);
    const calls = e.events.length;
    const d = await host.evaluate(preToolUse({ session_id: "s-2" }));
    expect(e.events.length).toBe(calls);
    expect(d.verdict).toMatchObject({ decision: "deny", category: "privilege_escalation", source: "permitted_tools", severity: "warning" });
    const read = await host.evaluate(
      preToolUse({ session_id: "s-2", tool_name: "file_read", tool_name_native: "Read", tool_input: {}, artifacts: [] }),
    );
    expect(read.verdict.decision).toBe("allow");
    expect(e.events.length).toBe(calls + 1);
  });

  it("C61 PreSkillLoad allow with strip_hooks on a host that cannot strip hooks ⇒ deny", async () => {
    const host = new AartsHost({ hooks: [{ id: "e1", engine: engine(() => allow({ directives: { strip_hooks: true } })) }] });
    const d = await host.evaluate(JSON.parse(readFileSync(new URL("PreSkillLoadEvent/valid/full.json", corpus), "utf8")) as AartsEvent);
    expect(d.enforced).toBe("deny");
    expect(d.local).toBe("strip_hooks");
    const lenient = new AartsHost({
      hooks: [{ id: "e1", engine: engine(() => allow({ directives: { strip_hooks: true } })) }],
      stripHooksUnsupported: "allow",
    });
    expect((await lenient.evaluate(fixture("PreSkillLoadEvent"))).enforced).toBe("allow");
  });

  it('C62 inject_context append "X" is added at the end of the compacted context; on PreToolUse it is ignored', async () => {
    const directive = { inject_context: { position: "append", content: "X" } };
    const host = new AartsHost({ hooks: [{ id: "e1", engine: engine(() => allow({ directives: directive })) }] });
    const compact = await host.evaluate(fixture("PostCompactEvent"));
    expect(applyInjectContext(["a", "b"], compact.verdict.directives?.inject_context)).toEqual(["a", "b", "X"]);
    const tool = await host.evaluate(preToolUse());
    expect(tool.verdict.directives?.inject_context).toBeUndefined();
    expect(applyInjectContext(["a"], tool.verdict.directives?.inject_context)).toEqual(["a"]);
    expect(EngineFailure.isInstance(new EngineFailure("internal", "x"))).toBe(true);
  });
});

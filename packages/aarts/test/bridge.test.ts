/** The JSON-RPC requester, bridge details beyond §6, and the reverse bridge's envelope synthesis and AHP server rules. */
import { createLinkedPair } from "@ahp/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  AartsReverseBridge,
  AhpBridge,
  EngineFailure,
  fromAhpEvent,
  hookForAhp,
  parseHandshake,
  RpcChannel,
  toAhpEvent,
  type AartsEvent,
} from "@ahp/aarts";
import { allow, ask, E0, engine, harness, preToolUse } from "./helpers.js";

/** A peer that answers each request with `reply(message)` (undefined = no answer). */
function peer(reply: (m: { id: string; method: string; params: unknown }) => unknown) {
  const [a, b] = createLinkedPair();
  b.onmessage = (m) => {
    const msg = m as { id?: string; method: string; params: unknown };
    if (msg.id === undefined) return;
    const r = reply(msg as { id: string; method: string; params: unknown });
    if (r !== undefined) void b.send(r as never);
  };
  void b.start();
  return { a, b };
}

describe("RpcChannel", () => {
  afterEach(() => vi.useRealTimers());

  it("returns the raw result and its id", async () => {
    const { a } = peer((m) => ({ jsonrpc: "2.0", id: m.id, result: { decision: "escalate", reason: "x", metadata: { k: 1 } } }));
    const rpc = new RpcChannel(a, { generateId: () => "id-1" });
    expect(await rpc.request("ahp/event", {})).toEqual({ id: "id-1", result: { decision: "escalate", reason: "x", metadata: { k: 1 } } });
    await rpc.close();
  });

  it.each([
    [
      "JSON-RPC error",
      (m: { id: string }) => ({ jsonrpc: "2.0", id: m.id, error: { code: -32603, message: "Handler error: x" } }),
      "engine_error",
    ],
    ["wrong jsonrpc version", (m: { id: string }) => ({ jsonrpc: "1.0", id: m.id, result: {} }), "protocol"],
    ["missing result", (m: { id: string }) => ({ jsonrpc: "2.0", id: m.id, result: null }), "protocol"],
    ["id mismatch", () => ({ jsonrpc: "2.0", id: "someone-else", result: {} }), "protocol"],
  ])("%s is a failure", async (_name, reply, cause) => {
    const { a } = peer(reply);
    const rpc = new RpcChannel(a);
    const error = await rpc.request("ahp/event", {}).catch((e: unknown) => e);
    expect(EngineFailure.isInstance(error) && error.failureCause).toBe(cause);
    await rpc.close();
  });

  it("times out, and a closing connection fails pending requests promptly with the cause", async () => {
    const { a, b } = peer(() => undefined);
    const rpc = new RpcChannel(a);
    vi.useFakeTimers();
    const timed = rpc.request("ahp/event", {}, { timeoutMs: 100 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    expect(await timed).toMatchObject({ failureCause: "timeout" });
    vi.useRealTimers();
    const pending = rpc.request("ahp/event", {}, { timeoutMs: 60_000 }).catch((e: unknown) => e);
    b.fail(new Error("peer crashed"));
    expect(await pending).toMatchObject({ failureCause: "transport", message: expect.stringContaining("peer crashed") });
    await expect(rpc.notify("ahp/event", {})).rejects.toMatchObject({ failureCause: "transport" });
  });

  it("an AbortSignal cancels a request", async () => {
    const { a } = peer(() => undefined);
    const rpc = new RpcChannel(a);
    const controller = new AbortController();
    const pending = rpc.request("x", {}, { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new EngineFailure("timeout", "host gave up"));
    expect(await pending).toMatchObject({ failureCause: "timeout", message: "host gave up" });
    await rpc.close();
  });
});

describe("AhpBridge details", () => {
  it("handshake checks (§5.2 step 5): capabilities absent ⇒ every core type; config recorded; aarts/0.1 echo noted", () => {
    const h = parseHandshake({
      protocol_version: "2.0",
      harness_info: { name: "x", version: "1", capabilities: [] },
      config: { timeout_ms: 100, max_depth: 2, batch_size: 5 },
    });
    expect(typeof h).toBe("object");
    if (typeof h === "string") return;
    expect(h.capabilities.has("session_end")).toBe(true);
    expect(h).toMatchObject({ timeoutMs: 100, maxDepth: 2, batchSize: 5, aartsAware: false });
    const aware = parseHandshake({
      protocol_version: "2.4",
      harness_info: { name: "x", version: "1", capabilities: ["pre_action", "aarts/0.1"] },
    });
    expect(typeof aware !== "string" && aware.aartsAware).toBe(true);
    expect(parseHandshake({ protocol_version: "02.4", harness_info: { name: "x" } })).toMatch(/not 2\.x/);
  });

  it("a repeated version check closes the previous connection and handshakes on a new one", async () => {
    const { AhpServer } = await import("@ahp/core");
    const server = new AhpServer({
      harnessInfo: { name: "h", capabilities: ["pre_action"] },
      handlers: { onEvent: () => ({ decision: "allow" }) },
    });
    const opened: { closed: boolean }[] = [];
    const bridge = new AhpBridge({
      transport: () => {
        const [a, b] = createLinkedPair();
        void server.connect(b);
        const record = { closed: false };
        opened.push(record);
        const close = a.close.bind(a);
        a.close = async () => {
          record.closed = true;
          await close();
        };
        return a;
      },
    });
    expect((await bridge.versionCheck({ aarts_version: "0" })).compatible).toBe(true);
    expect((await bridge.versionCheck({ aarts_version: "0" })).compatible).toBe(true);
    expect(opened.map((o) => o.closed)).toEqual([true, false]);
    expect((await bridge.evaluate(preToolUse())).decision).toBe("allow");
    await bridge.close();
    await server.close();
  });

  it("remote harness without consent: incompatible and no traffic; with consent: compatible", async () => {
    const refused = harness(undefined, { bridge: { remote: true } });
    expect((await refused.bridge.versionCheck({ aarts_version: "0" })).compatible).toBe(false);
    expect(refused.agent.sent).toHaveLength(0);
    await refused.close();
    const ok = harness(undefined, { bridge: { remote: true, remoteTransmissionConsent: true } });
    expect((await ok.bridge.versionCheck({ aarts_version: "0" })).compatible).toBe(true);
    await ok.close();
  });

  it("depth from Provenance: parent + 1 when the parent is known, else 1 for a sub-agent", async () => {
    const h = harness();
    await h.bridge.versionCheck({ aarts_version: "1" });
    expect(h.bridge.depthOf(preToolUse({ is_sub_agent: true }))).toBe(1);
    await h.bridge.evaluate({ hook_point: "PreSubAgentSpawn", ...E0, sub_agent_id: "s-2", delegated_task: "x" } as unknown as AartsEvent);
    expect(h.bridge.depthOf(preToolUse({ session_id: "s-3", is_sub_agent: true, parent_session_id: "s-2" }))).toBe(2);
    await h.close();
  });

  it("deferRetries resends after retry_after_ms within the hook timeout", async () => {
    let calls = 0;
    const h = harness(() => (++calls === 1 ? { decision: "defer", retry_after_ms: 5 } : { decision: "allow" }), {
      bridge: { deferRetries: 1 },
    });
    await h.bridge.versionCheck({ aarts_version: "1" });
    expect((await h.bridge.evaluate(preToolUse())).decision).toBe("allow");
    expect(calls).toBe(2);
    await h.close();
  });

  it("companions after PostToolUse and PostLLMResponse carry the result / response", async () => {
    const h = harness(undefined, { bridge: { lifecycleNotifications: true } });
    await h.bridge.versionCheck({ aarts_version: "1" });
    await h.bridge.evaluate({
      hook_point: "PostToolUse",
      ...E0,
      tool_name: "shell",
      tool_name_native: "Bash",
      tool_input: { command: "false" },
      artifacts: [],
      tool_result: "boom",
      exit_code: 1,
      execution_duration_ms: 7,
    });
    await h.bridge.evaluate({ hook_point: "PostLLMResponse", ...E0, response_text: "hi" });
    const notes = h.agent.events.filter((m) => !("id" in m)).map((m) => [m.params.event_type, m.params.payload]);
    expect(notes).toEqual([
      [
        "post_action",
        {
          action_type: "tool_call",
          tool_name: "shell",
          arguments: { command: "false" },
          result: { status: "failure", output: "boom", exit_code: 1, duration_ms: 7 },
        },
      ],
      ["post_response", { response: "hi" }],
    ]);
    await h.close();
  });

  it("evaluate refuses Notification hooks and notify refuses blocking hooks; both need a version check first", async () => {
    const h = harness();
    await expect(h.bridge.evaluate(preToolUse())).rejects.toMatchObject({ failureCause: "incompatible" });
    await h.bridge.versionCheck({ aarts_version: "1" });
    await expect(h.bridge.evaluate({ hook_point: "SessionEnd", ...E0 })).rejects.toMatchObject({
      failureCause: "invalid_event",
    });
    await expect(h.bridge.notify(preToolUse())).rejects.toMatchObject({ failureCause: "invalid_event" });
    await h.close();
  });

  it("PostAskResolution without post_action capability is dropped (logged), not a failure", async () => {
    const logs: string[] = [];
    const h = harness(undefined, {
      server: { harnessInfo: { name: "h1", version: "1", capabilities: ["pre_action"] } },
      bridge: { onlog: (e) => logs.push(e.message) },
    });
    await h.bridge.versionCheck({ aarts_version: "1" });
    await h.bridge.notify({
      hook_point: "PostAskResolution",
      ...E0,
      original_hook_point: "PreToolUse",
      original_verdict: ask(),
      resolution: "approved",
    } as AartsEvent);
    expect(h.agent.events).toHaveLength(0);
    expect(logs.some((l) => l.includes("dropped"))).toBe(true);
    await h.close();
  });
});

describe("reverse bridge: fromAhpEvent synthesis (§5.7)", () => {
  const base = { session_id: "a-1", agent_id: "Agent 7", timestamp: "yesterday", depth: 2 };

  it("envelope: host_id from metadata, agent_id, framework (kebab-cased) or ahp-agent; timestamp fallback; turn ids", () => {
    const now = new Date("2026-05-01T10:00:00.000Z");
    const e = fromAhpEvent(
      { ...base, event_type: "pre_action", payload: { tool_name: "read_file", arguments: { path: "/etc/passwd" } } },
      { agentInfo: { framework: "My Agent SDK", version: "3" }, receivedAt: now },
    ) as Record<string, unknown>;
    expect(e).toMatchObject({
      hook_point: "PreToolUse",
      host_id: "my-agent-sdk",
      host_version: "3",
      timestamp: "2026-05-01T10:00:00.000Z",
      turn_id: "a-1:ahp",
      is_sub_agent: true,
      tool_name: "file_read",
    });
    expect(e.artifacts).toEqual([{ type: "file_path", value: "/etc/passwd", source_field: "tool_input.path" }]);
    const withMeta = fromAhpEvent({
      ...base,
      event_type: "pre_prompt",
      payload: { prompt: "hi" },
      metadata: { aarts: { host_id: "acme", turn_id: "T9", parent_session_id: "p" }, trace_id: "tr" },
    }) as Record<string, unknown>;
    expect(withMeta).toMatchObject({ hook_point: "PreLLMRequest", host_id: "acme", turn_id: "T9", full_prompt: "hi" });
    expect(fromAhpEvent({ ...base, agent_id: "x_y", event_type: "session_start", payload: null })).toMatchObject({
      host_id: "ahp-agent",
      hook_point: "SessionStart",
    });
    expect(fromAhpEvent({ ...base, event_type: "pre_action", payload: {}, metadata: { trace_id: "tr" } })).toMatchObject({
      turn_id: "tr",
      tool_name_native: "unknown",
      tool_name: "other",
    });
  });

  it("discriminated pre_action / pre_prompt hooks are synthesised from projected fields with neutral defaults", () => {
    const at = (event_type: string, payload: unknown) =>
      fromAhpEvent({ ...base, timestamp: E0.timestamp, event_type, payload }) as Record<string, unknown>;
    expect(at("pre_action", { action_type: "load_plugin", plugin_id: "p@1" })).toMatchObject({
      hook_point: "PrePluginLoad",
      plugin_id: "p@1",
      source: "project",
      file_paths: [],
      declared_hooks: [],
    });
    expect(at("pre_action", { action_type: "connect_mcp_server", server_id: "gh", transport: "sse" })).toMatchObject({
      hook_point: "PreMCPConnect",
      transport: "sse",
    });
    expect(at("pre_action", { action_type: "spawn_subagent", sub_agent_id: "c", delegated_task: "t" })).toMatchObject({
      hook_point: "PreSubAgentSpawn",
      sub_agent_id: "c",
    });
    expect(
      at("pre_action", {
        action_type: "modify_tool_input",
        tool_name: "bash",
        arguments: { command: "ls -la" },
        original_arguments: { command: "ls" },
      }),
    ).toMatchObject({ hook_point: "PreToolInputModification", tool_name: "shell", was_modified: true });
    expect(at("pre_prompt", { prompt_stage: "user_input", prompt: "hello" })).toMatchObject({
      hook_point: "PreUserInput",
      raw_input: "hello",
    });
    expect(at("pre_prompt", { prompt_stage: "memory_read", prompt: { facts: [] }, memory_store: "kb" })).toMatchObject({
      hook_point: "PreMemoryRead",
      retrieved_content: { facts: [] },
    });
    expect(at("pre_prompt", { messages: [{ role: "user", content: "x" }] })).toMatchObject({
      hook_point: "PreLLMRequest",
      full_prompt: [{ role: "user", content: "x" }],
    });
    expect(at("post_response", { text: "out" })).toMatchObject({ hook_point: "PostLLMResponse", response_text: "out" });
    expect(
      at("post_action", { action_type: "ask_resolution", result: { status: "allow_similar" }, original_hook_point: "PreMemoryWrite" }),
    ).toMatchObject({ hook_point: "PostAskResolution", resolution: "allow_similar", original_hook_point: "PreMemoryWrite" });
    expect(at("post_action", { action_type: "ask_resolution", result: { status: "maybe" } })).toBeUndefined();
    for (const t of ["error", "heartbeat", "success", "run_lifecycle", "idle"]) expect(at(t, {})).toBeUndefined();
    for (const hook of ["SessionStart", "PreToolUse", "PostCompact", "PreMemoryWrite"] as const) {
      const event = { hook_point: hook } as AartsEvent;
      const { params } = toAhpEvent({ ...event, ...E0 });
      expect(hookForAhp(params.event_type, params.payload)).toBe(hook);
    }
  });

  it("payload.aarts is used verbatim only when it maps to the same event type and discriminator", () => {
    const aarts = preToolUse();
    expect(fromAhpEvent({ ...base, event_type: "pre_action", payload: { action_type: "tool_call", aarts } })).toEqual(aarts);
    const mismatched = fromAhpEvent({ ...base, event_type: "pre_prompt", payload: { prompt: "p", aarts } }) as Record<string, unknown>;
    expect(mismatched.hook_point).toBe("PreLLMRequest");
  });
});

describe("reverse bridge: AHP server rules", () => {
  async function client(bridge: AartsReverseBridge) {
    const [a, b] = createLinkedPair();
    await bridge.connect(b);
    const replies = new Map<string, (m: Record<string, unknown>) => void>();
    a.onmessage = (m) => replies.get(String((m as { id?: unknown }).id))?.(m as Record<string, unknown>);
    await a.start();
    let n = 0;
    const call = (method: string, params: unknown) =>
      new Promise<Record<string, unknown>>((resolve) => {
        const id = `r${++n}`;
        replies.set(id, resolve);
        void a.send({ jsonrpc: "2.0", id, method, params });
      });
    return { call, a };
  }
  const ev = (event_type: string, payload: unknown, depth = 0) => ({
    event_type,
    session_id: "s",
    agent_id: "a",
    timestamp: E0.timestamp,
    depth,
    payload,
  });
  const hs = { protocol_version: "2.4", agent_info: { framework: "x", version: "1", capabilities: [] }, session_id: "s", agent_id: "a" };

  it("handshake advertises exactly the §5.7 list; events before it are refused (-32001); depth over the limit is a block", async () => {
    const bridge = new AartsReverseBridge({ engine: engine(() => allow()), maxDepth: 1 });
    const c = await client(bridge);
    const early = await c.call("ahp/event", ev("pre_action", {}));
    expect((early.error as { code: number }).code).toBe(-32001);
    const answer = await c.call("ahp/handshake", hs);
    expect((answer.result as { harness_info: { capabilities: string[] } }).harness_info.capabilities).toEqual([
      "pre_action",
      "pre_prompt",
      "post_action",
      "post_response",
      "session_start",
      "session_end",
      "error",
      "heartbeat",
      "success",
      "run_lifecycle",
      "task_list",
      "verification",
      "batch",
      "aarts/0.1",
    ]);
    expect((answer.result as { config: Record<string, unknown> }).config).not.toHaveProperty("max_depth");
    expect((await c.call("ahp/event", ev("pre_action", {}, 2))).result).toMatchObject({ decision: "block" });
    expect(((await c.call("ahp/event", ev("post_action", {}))).error as { code: number }).code).toBe(-32602);
    await c.a.close();
    await bridge.close();
  });

  it("an incompatible engine or an engine timeout is a failure under the configured policy", async () => {
    const incompatible = new AartsReverseBridge({
      engine: { ...engine(() => allow()), versionCheck: async () => ({ compatible: false, engine_id: "old" }) },
      failurePolicy: "fail-closed",
    });
    const c = await client(incompatible);
    await c.call("ahp/handshake", hs);
    expect((await c.call("ahp/event", ev("pre_action", { tool_name: "bash" }))).result).toMatchObject({ decision: "block" });
    await c.a.close();
    await incompatible.close();

    const slow = new AartsReverseBridge({ engine: engine(() => new Promise(() => undefined)), timeouts: { PreToolUse: 20 } });
    const d = await client(slow);
    await d.call("ahp/handshake", hs);
    expect((await d.call("ahp/event", ev("pre_action", { tool_name: "bash" }))).result).toMatchObject({
      decision: "allow",
      metadata: { aarts: { failure: expect.stringContaining("timeout") } },
    });
    await d.a.close();
    await slow.close();
  });

  it("an ask verdict is answered with escalate carrying the verdict", async () => {
    const bridge = new AartsReverseBridge({ engine: engine(() => ask({ reasons: ["human please"] })) });
    const c = await client(bridge);
    await c.call("ahp/handshake", hs);
    expect((await c.call("ahp/event", ev("pre_prompt", { prompt: "x" }))).result).toEqual({
      decision: "escalate",
      reason: "human please",
      metadata: { aarts: { verdict: ask({ reasons: ["human please"] }) } },
    });
    await c.a.close();
    await bridge.close();
  });

  it("AhpBridge → AartsReverseBridge → engine: the same AARTS event arrives, the verdict comes back", async () => {
    const e = engine(() => ask({ reasons: ["r"], suggested_resolutions: ["deny_always"] }));
    const reverse = new AartsReverseBridge({ engine: e });
    const [a, b] = createLinkedPair();
    await reverse.connect(b);
    const forward = new AhpBridge({ transport: a });
    expect(await forward.versionCheck({ aarts_version: "0" })).toMatchObject({ compatible: true, engine_id: "ahp:aarts-reverse-bridge" });
    const event = preToolUse();
    expect(await forward.evaluate(event)).toEqual(ask({ reasons: ["r"], suggested_resolutions: ["deny_always"] }));
    expect(e.events).toEqual([event]);
    await forward.close();
    await reverse.close();
  });
});

/**
 * §14.2 scenarios 1–12 against a running adapter on loopback: real `ws` server and sockets, a
 * real `AhpServer` with the adapter's middleware, fake agents that are real `AhpClient`s.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { ChatState, RootState, SessionState, SessionSummary, ToolCallState } from "../src/wire/types.js";
import { allProblems, framesChecked } from "./helpers/client.js";
import { startHost, type Running } from "./helpers/harness.js";
import { probe, runEvent, S1_CHAT, S1_URI, toolCalls } from "./helpers/scenario.js";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

let run: Running | undefined;
afterEach(async () => {
  await run?.stop();
  run = undefined;
});

describe("§14.2 scenarios 1–12", () => {
  it("S1 handshake: initialize returns 1.1.0, serverSeq and a root snapshot with the ahp-harness agent", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "c1");
    const result = await c.api.request<{
      protocolVersion: string;
      serverSeq: number;
      snapshots: Array<{ resource: string; fromSeq: number; state: RootState }>;
    }>("initialize", {
      channel: "ahp-root://",
      protocolVersions: ["1.1.0"],
      clientId: "c1",
      initialSubscriptions: ["ahp-root://"],
    });
    expect(result.protocolVersion).toBe("1.1.0");
    expect(Number.isInteger(result.serverSeq)).toBe(true);
    expect(result.snapshots).toHaveLength(1);
    expect(result.snapshots[0]!.resource).toBe("ahp-root://");
    expect(result.snapshots[0]!.fromSeq).toBe(result.serverSeq);
    expect(result.snapshots[0]!.state.agents.map((a) => a.provider)).toContain("ahp-harness");
  });

  it("S2 negotiation: highest 1.x wins; nothing acceptable is -32005 with supportedVersions, then the socket closes", async () => {
    run = await startHost();
    const a = await run.client("viewer-token", "n1");
    const ok = await a.raw("initialize", { channel: "ahp-root://", protocolVersions: ["1.0.0", "1.4.2"], clientId: "n1" }, 1);
    expect(ok.result.protocolVersion).toBe("1.4.2");
    const b = await run.client("viewer-token", "n2");
    const bad = await b.raw("initialize", { channel: "ahp-root://", protocolVersions: ["0.7.0", "2.0.0"], clientId: "n2" }, 1);
    expect(bad.error.code).toBe(-32005);
    expect(bad.error.data.supportedVersions).toEqual(expect.arrayContaining(["1.1.0", "1.0.0"]));
    await b.whenClosed();
    const c = await run.client("viewer-token", "n3");
    const zero = await c.raw("initialize", { channel: "ahp-root://", protocolVersions: ["01.0.0"], clientId: "n3" }, 1);
    expect(zero.error.code).toBe(-32005);
  });

  it("S3 gatekeeping: -32600 before initialize, ping always null, wrong channel -32602, unknown method -32601, bad token 401", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "g1");
    expect((await c.raw("listSessions", { channel: "ahp-root://" }, 1)).error.code).toBe(-32600);
    expect((await c.raw("ping", { channel: "ahp-root://" }, 2)).result).toBeNull();
    await c.api.initialize([]);
    expect((await c.raw("listSessions", { channel: S1_URI }, 3)).error.code).toBe(-32602);
    expect((await c.raw("frobnicate", { channel: "ahp-root://" }, 4)).error.code).toBe(-32601);
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(run!.url, { headers: { authorization: "Bearer wrong" } });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("error", () => undefined);
    });
    expect(status).toBe(401);
  });

  it("S4 session appears: sessionAdded with the UUIDv5 URI, status 1, ISO timestamps; listed; ready with one chat", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "w1");
    await c.api.initialize(["ahp-root://"]);
    const agent = await run.agent("s1");
    await agent.send("session_start", {});
    const added = await c.notification("root/sessionAdded");
    const summary = added.params.summary as SessionSummary;
    expect(summary.resource).toBe(S1_URI);
    expect(summary.status).toBe(1);
    expect(summary.createdAt).toMatch(ISO);
    expect(summary.modifiedAt).toMatch(ISO);
    const list = await c.api.request<{ items: SessionSummary[] }>("listSessions", { channel: "ahp-root://" });
    expect(list.items.map((i) => i.resource)).toContain(S1_URI);
    const snap = await c.api.subscribe(S1_URI);
    const state = snap!.state as SessionState;
    expect(state.lifecycle).toBe("ready");
    expect(state.chats).toHaveLength(1);
    expect(state.defaultChat).toBe(S1_CHAT);
  });

  it("S5 deterministic URIs: a restarted adapter serves the same session and chat URIs", async () => {
    for (let i = 0; i < 2; i++) {
      run = await startHost();
      const agent = await run.agent("s1");
      await agent.send("pre_action", { tool_name: "ls", arguments: {} });
      const session = run.host.state<SessionState>(S1_URI);
      expect(session?.defaultChat).toBe(S1_CHAT);
      expect(run.host.state<ChatState>(S1_CHAT)).toBeDefined();
      await run.stop();
      run = undefined;
    }
  });

  it("S6 run becomes a turn: started with the prompt, activity, complete; one complete turn, idle", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "t1");
    await c.api.initialize([]);
    const agent = await run.agent("s1");
    await c.api.subscribe(S1_CHAT);
    await agent.send("run_lifecycle", runEvent("run-1", "created", { prompt: "fix tests" }));
    const started = await c.action("chat/turnStarted", S1_CHAT);
    expect(started.action.turnId).toBe("run-1");
    expect((started.action.message as { text: string }).text).toBe("fix tests");
    await agent.send("run_lifecycle", runEvent("run-1", "executing"));
    expect((await c.action("chat/activityChanged", S1_CHAT)).action.activity).toBe("Executing");
    await agent.send("run_lifecycle", runEvent("run-1", "completed"));
    await c.action("chat/turnComplete", S1_CHAT);
    const state = c.api.state.confirmed<ChatState>(S1_CHAT)!;
    expect(state.turns).toHaveLength(1);
    expect(state.turns[0]!.state).toBe("complete");
    expect(state.activeTurn).toBeUndefined();
    expect(state.status & 31).toBe(1);
  });

  it("S7 allowed tool call: start and ready(not-needed) are committed before allow; post_action completes it", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "t7");
    const agent = await run.agent("s1");
    await c.api.initialize([S1_CHAT]);
    const host = run.host;
    const decision = await agent.send("pre_action", { tool_name: "bash", arguments: { command: "ls" }, tool_call_id: "tc-a" });
    // At the moment the agent holds its decision, the host state already has the running tool call.
    expect(toolCalls(host.state<ChatState>(S1_CHAT))[0]).toMatchObject({ toolCallId: "tc-a", status: "running", confirmed: "not-needed" });
    expect(decision.decision).toBe("allow");
    const start = await c.action("chat/toolCallStart", S1_CHAT);
    const ready = await c.action("chat/toolCallReady", S1_CHAT);
    expect(ready.action.confirmed).toBe("not-needed");
    expect(ready.serverSeq).toBe(start.serverSeq + 1);
    await agent.send("post_action", { tool_name: "bash", tool_call_id: "tc-a", result: { status: "ok", output: "a.txt\nb.txt" } });
    await c.action("chat/toolCallComplete", S1_CHAT);
    const tc = toolCalls(c.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    expect(tc.status).toBe("completed");
    expect(tc.success).toBe(true);
    expect(tc.content?.[0]?.text).toBe("a.txt\nb.txt");
  });

  it("S8 blocked tool call: cancelled/denied with the policy reason, agent gets block, no inputNeeded entry", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "t8");
    const agent = await run.agent("s1");
    await c.api.initialize([S1_URI, S1_CHAT]);
    const decision = await agent.send("pre_action", { tool_name: "rm", arguments: { path: "/" } });
    expect(decision).toMatchObject({ decision: "block", reason: "no rm" });
    await c.action("chat/toolCallConfirmed", S1_CHAT);
    const tc = toolCalls(c.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    expect(tc).toMatchObject({ status: "cancelled", reason: "denied", reasonMessage: "no rm" });
    expect(c.envelopes().some((e) => e.action.type === "session/inputNeededSet")).toBe(false);
    expect(run.host.state<SessionState>(S1_URI)?.inputNeeded).toBeUndefined();
  });

  it("S9 escalation becomes pending: options, title, InputNeeded bits, toolConfirmation entry, summary status; request held", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "t9");
    const agent = await run.agent("s1");
    await c.api.initialize(["ahp-root://", S1_URI, S1_CHAT]);
    const pending = probe(agent.send("pre_action", { tool_name: "npm_install", arguments: { command: "npm install left-pad" } }));
    await c.action("session/inputNeededSet", S1_URI);
    const tc = toolCalls(c.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    expect(tc.status).toBe("pending-confirmation");
    expect(tc.options?.map((o) => o.id)).toEqual(["allow-once", "allow-session", "deny"]);
    expect(tc.confirmationTitle).toBe("Approve Npm install?");
    expect(c.api.state.confirmed<ChatState>(S1_CHAT)!.status & 24).toBe(24);
    const entry = c.api.state.confirmed<SessionState>(S1_URI)!.inputNeeded![0]!;
    expect(entry).toMatchObject({ kind: "toolConfirmation", id: `${S1_CHAT}#${tc.toolCallId}`, chat: S1_CHAT, turnId: "turn-1" });
    expect((entry as { toolCall: ToolCallState }).toolCall.status).toBe("pending-confirmation");
    const changed = await c.next((f) => f.method === "root/sessionSummaryChanged" && (f.params.changes.status & 31) === 24);
    expect(changed.params.session).toBe(S1_URI);
    expect(pending.settled()).toBe(false);
  });

  it("S10 approve from a client: origin echoed to all, inputNeededRemoved, running/user-action, agent gets allow with approved_by", async () => {
    run = await startHost();
    const a = await run.client("viewer-token", "A");
    const b = await run.client("approver-token", "B");
    const agent = await run.agent("s1");
    await a.api.initialize([S1_URI, S1_CHAT]);
    await b.api.initialize([S1_URI, S1_CHAT]);
    const pending = agent.send("pre_action", { tool_name: "npm_install", arguments: { command: "npm i" } });
    await b.action("session/inputNeededSet", S1_URI);
    const tc = toolCalls(b.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    const seq = b.api.dispatch(S1_CHAT, {
      type: "chat/toolCallConfirmed",
      turnId: "turn-1",
      toolCallId: tc.toolCallId,
      approved: true,
      confirmed: "user-action",
    });
    expect(seq).toBe(1);
    const decision = await pending;
    expect(decision.decision).toBe("allow");
    expect((decision as { metadata?: Record<string, unknown> }).metadata?.approved_by).toBe("alice");
    for (const client of [a, b]) {
      const echo = await client.action("chat/toolCallConfirmed", S1_CHAT);
      expect(echo.origin).toEqual({ clientId: "B", clientSeq: 1 });
      expect(echo.rejectionReason).toBeUndefined();
      const removed = await client.action("session/inputNeededRemoved", S1_URI);
      expect(removed.serverSeq).toBeGreaterThan(echo.serverSeq);
    }
    const after = toolCalls(a.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    expect(after).toMatchObject({ status: "running", confirmed: "user-action" });
    expect(a.api.state.confirmed<ChatState>(S1_CHAT)!.status & 31).toBe(8);
    expect(b.api.state.pending).toHaveLength(0);
  });

  it("S11 deny from a client: the agent gets block with the reason; the tool call is cancelled", async () => {
    run = await startHost();
    const b = await run.client("approver-token", "B");
    const agent = await run.agent("s1");
    await b.api.initialize([S1_URI, S1_CHAT]);
    const pending = agent.send("pre_action", { tool_name: "git_push", arguments: { command: "git push" } });
    await b.action("session/inputNeededSet", S1_URI);
    const tc = toolCalls(b.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    b.api.dispatch(S1_CHAT, {
      type: "chat/toolCallConfirmed",
      turnId: "turn-1",
      toolCallId: tc.toolCallId,
      approved: false,
      reason: "denied",
      reasonMessage: "not now",
    });
    // The person's reason, followed by who gave it (ADR 0162).
    expect(await pending).toMatchObject({ decision: "block", reason: "not now (denied by alice)" });
    await b.action("chat/toolCallConfirmed", S1_CHAT);
    expect(toolCalls(b.api.state.confirmed<ChatState>(S1_CHAT))[0]!.status).toBe("cancelled");
  });

  it("S12 edit then approve: modify with the edited arguments; a non-JSON edit is rejected and stays pending", async () => {
    run = await startHost({ editable: true });
    const b = await run.client("approver-token", "B");
    const agent = await run.agent("s1");
    await b.api.initialize([S1_URI, S1_CHAT]);
    const pending = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "cargo test" } });
    await b.action("session/inputNeededSet", S1_URI);
    const tc = toolCalls(b.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    expect(tc.editable).toBe(true);
    const base = { type: "chat/toolCallConfirmed", turnId: "turn-1", toolCallId: tc.toolCallId, approved: true, confirmed: "user-action" };
    b.api.dispatch(S1_CHAT, { ...base, editedToolInput: "cargo test -p core" });
    const rejected = await b.next((f) => f.method === "action" && f.params.rejectionReason !== undefined);
    expect(rejected.params.origin).toEqual({ clientId: "B", clientSeq: 1 });
    expect(toolCalls(run.host.state<ChatState>(S1_CHAT))[0]!.status).toBe("pending-confirmation");
    b.api.dispatch(S1_CHAT, { ...base, editedToolInput: '{"command":"cargo test -p core"}' });
    const decision = (await pending) as { decision: string; modified_payload: { arguments: unknown; tool_name: string } };
    expect(decision.decision).toBe("modify");
    expect(decision.modified_payload.arguments).toEqual({ command: "cargo test -p core" });
    expect(decision.modified_payload.tool_name).toBe("deploy");
    expect(toolCalls(run.host.state<ChatState>(S1_CHAT))[0]!.toolInput).toBe('{"command":"cargo test -p core"}');
  });

  it("S27 wire validity: every frame the adapter sent in scenarios 1–12 validates against the vendored schemas", () => {
    expect(framesChecked).toBeGreaterThan(50);
    expect(allProblems).toEqual([]);
  });
});

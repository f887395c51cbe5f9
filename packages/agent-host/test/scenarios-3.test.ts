/** §14.2 scenarios 25 and 29–32 against a running adapter on loopback (26 and 28 run the vendored fixtures). */
import { afterEach, describe, expect, it } from "vitest";
import type { ChatState, RootState, SessionState, SessionSummary } from "../src/wire/types.js";
import { allProblems, framesChecked } from "./helpers/client.js";
import { startHost, type Running } from "./helpers/harness.js";
import { runEvent, S1_CHAT, S1_URI, toolCalls, withoutModifiedAt } from "./helpers/scenario.js";

let run: Running | undefined;
afterEach(async () => {
  await run?.stop();
  run = undefined;
});

describe("§14.2 scenarios 25, 29–32", () => {
  it("S25 convergence: three clients (one approver) reduce to the adapter's state and to a fresh snapshot", async () => {
    run = await startHost();
    const clients = [
      await run.client("viewer-token", "v1"),
      await run.client("viewer-token", "v2"),
      await run.client("approver-token", "ap"),
    ];
    for (const c of clients) await c.api.initialize(["ahp-root://"]);
    const agent = await run.agent("s1");
    for (const c of clients) {
      await c.notification("root/sessionAdded");
      await c.api.subscribe(S1_URI);
      await c.api.subscribe(S1_CHAT);
    }
    await agent.send("run_lifecycle", runEvent("run-1", "executing", { prompt: "three tools" }));
    await agent.send("pre_action", { tool_name: "bash", arguments: { command: "ls" }, tool_call_id: "a" });
    await agent.send("post_action", { tool_name: "bash", tool_call_id: "a", result: { status: "ok", output: "x" } });
    await agent.send("pre_action", { tool_name: "rm", arguments: { path: "/tmp" }, tool_call_id: "b" });
    const held = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "ship" }, tool_call_id: "c" });
    const approver = clients[2]!;
    await approver.action("session/inputNeededSet", S1_URI);
    approver.api.dispatch(S1_CHAT, {
      type: "chat/toolCallConfirmed",
      turnId: "run-1",
      toolCallId: "c",
      approved: true,
      confirmed: "user-action",
    });
    expect((await held).decision).toBe("allow");
    await agent.send("post_action", { tool_name: "deploy", tool_call_id: "c", result: { status: "ok", output: "shipped" } });
    await agent.send("run_lifecycle", runEvent("run-1", "completed"));
    const fresh = await run.client("viewer-token", "fresh");
    const init = await fresh.api.initialize([S1_URI, S1_CHAT]);
    for (const c of clients) {
      await c.next((f) => f.method === "action" && f.params.serverSeq === init.serverSeq);
      for (const uri of [S1_URI, S1_CHAT, "ahp-root://"]) {
        const mine = withoutModifiedAt(c.api.state.view(uri));
        expect(mine).toEqual(withoutModifiedAt(run.host.state(uri)));
      }
      for (const snap of init.snapshots) expect(withoutModifiedAt(c.api.state.view(snap.resource))).toEqual(withoutModifiedAt(snap.state));
    }
    expect(toolCalls(run.host.state<ChatState>(S1_CHAT)).map((t) => t.status)).toEqual(["completed", "cancelled", "completed"]);
  });

  it("S29 catalogue aggregation: a waiting sub-agent chat lifts the summary to InputNeeded with its activity; approval falls back", async () => {
    run = await startHost();
    const b = await run.client("approver-token", "B");
    await b.api.initialize(["ahp-root://"]);
    const main = await run.agent("s1", "main");
    await b.notification("root/sessionAdded");
    const sub = await run.agent("s1", "helper");
    await sub.send("run_lifecycle", runEvent("run-sub", "executing", { prompt: "sub task" }), { depth: 1 });
    const held = sub.send("pre_action", { tool_name: "deploy", arguments: {} }, { depth: 1 });
    const waiting = await b.next((f) => f.method === "root/sessionSummaryChanged" && (f.params.changes.status & 31) === 24);
    expect(waiting.params.session).toBe(S1_URI);
    const summary = run.host.listSessions()[0]!;
    expect(summary.status & 31).toBe(24);
    expect(summary.activity).toBe("Executing");
    const session = run.host.state<SessionState>(S1_URI)!;
    const subChat = session.chats!.find((c) => c.resource !== session.defaultChat)!;
    expect(run.host.state<ChatState>(session.defaultChat!)!.status & 31).toBe(1);
    const entry = session.inputNeeded![0]!;
    expect(entry.chat).toBe(subChat.resource);
    // The approver answers on the chat named in the roll-up without subscribing to it.
    b.api.dispatch(entry.chat, {
      type: "chat/toolCallConfirmed",
      turnId: "run-sub",
      toolCallId: (entry as { toolCall: { toolCallId: string } }).toolCall.toolCallId,
      approved: true,
      confirmed: "user-action",
    });
    expect((await held).decision).toBe("allow");
    const back = await b.next(
      (f) => f.method === "root/sessionSummaryChanged" && f.params.changes.status !== undefined && (f.params.changes.status & 31) !== 24,
      b.frames.indexOf(waiting) + 1,
    );
    expect(back.params.changes.status & 31).toBe(1);
    void main;
  });

  it("S30 telemetry: a warn-level logs subscription gets one record for block, none for allow, nothing after unsubscribe", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "T");
    const init = await c.api.initialize([]);
    expect(init.telemetry?.logs).toBe("ahp-otlp://harness/logs{?level}");
    const uri = "ahp-otlp://harness/logs?level=warn";
    expect(await c.api.request("subscribe", { channel: uri })).toEqual({});
    const agent = await run.agent("s1");
    await agent.send("pre_action", { tool_name: "ls", arguments: {} });
    await agent.send("pre_action", { tool_name: "rm", arguments: {} });
    const log = await c.notification("otlp/exportLogs");
    expect(log.params.channel).toBe(uri);
    const record = log.params.payload.resourceLogs[0].scopeLogs[0].logRecords[0];
    const attrs = Object.fromEntries(
      (record.attributes as Array<{ key: string; value: { stringValue: string } }>).map((a) => [a.key, a.value.stringValue]),
    );
    expect(attrs["harness.decision"]).toBe("block");
    expect(attrs["harness.event_type"]).toBe("pre_action");
    expect(record.severityText).toBe("WARN");
    expect(JSON.stringify(log.params)).not.toContain('"path"');
    c.api.notify("unsubscribe", { channel: uri });
    expect((await c.raw("ping", { channel: "ahp-root://" }, "p1")).result).toBeNull();
    await agent.send("pre_action", { tool_name: "rm", arguments: {} });
    expect((await c.raw("ping", { channel: "ahp-root://" }, "p2")).result).toBeNull();
    expect(c.frames.filter((f) => f.method === "otlp/exportLogs")).toHaveLength(1);
  });

  it("S31 session end: turn completed, activeSessions decremented, listed until retention expires, then sessionRemoved", async () => {
    run = await startHost({ retentionMs: 3_600_000 });
    const c = await run.client("viewer-token", "E");
    await c.api.initialize(["ahp-root://"]);
    const agent = await run.agent("s1");
    await c.notification("root/sessionAdded");
    await c.api.subscribe(S1_CHAT);
    await agent.send("run_lifecycle", runEvent("run-1", "executing", { prompt: "p" }));
    expect(run.host.state<RootState>("ahp-root://")!.activeSessions).toBe(1);
    await agent.send("session_end", {});
    await c.action("chat/turnComplete", S1_CHAT);
    await c.next(
      (f) => f.method === "action" && f.params.action.type === "root/activeSessionsChanged" && f.params.action.activeSessions === 0,
    );
    expect(run.host.state<ChatState>(S1_CHAT)!.turns.at(-1)!.state).toBe("complete");
    const listed = await c.api.request<{ items: SessionSummary[] }>("listSessions", { channel: "ahp-root://" });
    expect(listed.items.map((i) => i.resource)).toEqual([S1_URI]);
    run.time.advance(3_599_999);
    expect(c.frames.some((f) => f.method === "root/sessionRemoved")).toBe(false);
    run.time.advance(1);
    const removed = await c.notification("root/sessionRemoved");
    expect(removed.params.session).toBe(S1_URI);
    expect((await c.api.request<{ items: SessionSummary[] }>("listSessions", { channel: "ahp-root://" })).items).toEqual([]);
  });

  it("S32 limits: a 2 MiB frame closes the connection; a client that stops reading is cut at the buffer limit and recovers via reconnect", async () => {
    run = await startHost({ limits: { maxOutboundBytes: 256 * 1024 } });
    const big = await run.client("viewer-token", "big");
    await big.api.initialize([]);
    big.send(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { channel: "ahp-root://", pad: "x".repeat(2 * 1024 * 1024) } }),
    );
    expect((await big.whenClosed()).code).toBe(1009);

    const slow = await run.client("viewer-token", "slow");
    const agent = await run.agent("s1");
    await slow.api.initialize([S1_URI, S1_CHAT]);
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const closed = run.hostClosed(1008);
    let sent = 0;
    const text = "y".repeat(60 * 1024);
    while (run.closes.length === 0 && sent < 2000) {
      await agent.send("post_response", { response: text });
      sent++;
    }
    const info = await closed;
    expect(info).toMatchObject({ clientId: "slow", code: 1008 });
    socket.resume();
    await slow.whenClosed();
    await slow.connect();
    const result = await slow.api.reconnect([S1_URI, S1_CHAT]);
    expect(["replay", "snapshot"]).toContain(result.type);
    expect(withoutModifiedAt(slow.api.state.confirmed(S1_CHAT))).toEqual(withoutModifiedAt(run.host.state(S1_CHAT)));
  });

  it("S27 wire validity: every frame the adapter sent in scenarios 25 and 29–32 validates against the vendored schemas", () => {
    expect(framesChecked).toBeGreaterThan(50);
    expect(allProblems).toEqual([]);
  });
});

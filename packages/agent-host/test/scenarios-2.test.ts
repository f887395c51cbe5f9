/** §14.2 scenarios 13–24 against a running adapter on loopback. */
import { afterEach, describe, expect, it } from "vitest";
import type { ActionEnvelope, ChatState, ReconnectResult, RootState, SessionState, SessionSummary } from "../src/wire/types.js";
import { reduceChannel } from "../src/reducers/index.js";
import { allProblems, framesChecked } from "./helpers/client.js";
import { startHost, type Running } from "./helpers/harness.js";
import { probe, runEvent, S1_CHAT, S1_URI, toolCalls, withoutModifiedAt } from "./helpers/scenario.js";

let run: Running | undefined;
afterEach(async () => {
  await run?.stop();
  run = undefined;
});

describe("§14.2 scenarios 13–24", () => {
  it("S13 allow for session: a later escalation of the same tool is allowed by the rule (confirmed: setting)", async () => {
    run = await startHost();
    const b = await run.client("approver-token", "B");
    const agent = await run.agent("s1");
    await b.api.initialize([S1_URI, S1_CHAT]);
    const first = agent.send("pre_action", { tool_name: "npm_install", arguments: { command: "npm i a" } });
    await b.action("session/inputNeededSet", S1_URI);
    const tc = toolCalls(b.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    b.api.dispatch(S1_CHAT, {
      type: "chat/toolCallConfirmed",
      turnId: "turn-1",
      toolCallId: tc.toolCallId,
      approved: true,
      confirmed: "user-action",
      selectedOptionId: "allow-session",
    });
    expect((await first).decision).toBe("allow");
    const second = await agent.send("pre_action", { tool_name: "npm_install", arguments: { command: "npm i b" } });
    expect(second.decision).toBe("allow");
    const calls = toolCalls(run.host.state<ChatState>(S1_CHAT));
    expect(calls[1]).toMatchObject({ status: "running", confirmed: "setting" });
    const rules = run.host.state<SessionState>(S1_URI)!._meta!["ahpHarness/sessionRules"] as Array<{ tool: string; createdBy: string }>;
    expect(rules).toEqual([expect.objectContaining({ tool: "npm_install", createdBy: "alice" })]);
    expect(run.host.state<SessionState>(S1_URI)!.inputNeeded).toBeUndefined();
  });

  it("S14 race: exactly one answer wins, the other gets an 'already resolved' echo, every client sees which", async () => {
    run = await startHost();
    const b = await run.client("approver-token", "B");
    const c = await run.client("approver2-token", "C");
    const agent = await run.agent("s1");
    await b.api.initialize([S1_URI, S1_CHAT]);
    await c.api.initialize([S1_URI, S1_CHAT]);
    const pending = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "deploy prod" } });
    await b.action("session/inputNeededSet", S1_URI);
    await c.action("session/inputNeededSet", S1_URI);
    const tc = toolCalls(b.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    const answer = (approved: boolean) => ({
      type: "chat/toolCallConfirmed",
      turnId: "turn-1",
      toolCallId: tc.toolCallId,
      approved,
      ...(approved ? { confirmed: "user-action" } : { reason: "denied" }),
    });
    b.api.dispatch(S1_CHAT, answer(true));
    c.api.dispatch(S1_CHAT, answer(false));
    const decision = await pending;
    for (const client of [b, c]) {
      const echoes = [
        await client.next(
          (f) => f.method === "action" && f.params.action.type === "chat/toolCallConfirmed" && f.params.origin?.clientId === "B",
        ),
        await client.next(
          (f) => f.method === "action" && f.params.action.type === "chat/toolCallConfirmed" && f.params.origin?.clientId === "C",
        ),
      ].map((f) => f.params as ActionEnvelope);
      const winners = echoes.filter((e) => e.rejectionReason === undefined);
      expect(winners).toHaveLength(1);
      const loser = echoes.find((e) => e.rejectionReason !== undefined)!;
      expect(loser.rejectionReason).toBe("already resolved");
      expect(decision.decision).toBe(winners[0]!.origin!.clientId === "B" ? "allow" : "block");
    }
    expect(run.host.broker.size).toBe(0);
    expect(b.api.state.pending).toHaveLength(0);
    expect(c.api.state.pending).toHaveLength(0);
  });

  it("S15 authorization: a viewer's confirmation is echoed with rejectionReason; state and held request unchanged", async () => {
    run = await startHost();
    const v = await run.client("viewer-token", "V");
    const agent = await run.agent("s1");
    await v.api.initialize([S1_URI, S1_CHAT]);
    const pending = probe(agent.send("pre_action", { tool_name: "deploy", arguments: {} }));
    await v.action("session/inputNeededSet", S1_URI);
    const tc = toolCalls(v.api.state.confirmed<ChatState>(S1_CHAT))[0]!;
    const seqBefore = run.host.store.serverSeq;
    v.api.dispatch(S1_CHAT, {
      type: "chat/toolCallConfirmed",
      turnId: "turn-1",
      toolCallId: tc.toolCallId,
      approved: true,
      confirmed: "user-action",
    });
    const echo = await v.next((f) => f.method === "action" && f.params.rejectionReason !== undefined);
    expect(echo.params.rejectionReason).toMatch(/approver/);
    expect(run.host.store.serverSeq).toBe(seqBefore + 1);
    expect(toolCalls(run.host.state<ChatState>(S1_CHAT))[0]!.status).toBe("pending-confirmation");
    expect(run.host.broker.size).toBe(1);
    expect(pending.settled()).toBe(false);
    expect(v.api.state.view<ChatState>(S1_CHAT)).toEqual(v.api.state.confirmed<ChatState>(S1_CHAT));
  });

  it("S16 timeout fails closed: host-originated skipped confirmation, inputNeededRemoved, agent gets block", async () => {
    run = await startHost({ approvalTimeoutMs: 1000 });
    const v = await run.client("viewer-token", "V");
    const agent = await run.agent("s1");
    await v.api.initialize([S1_URI, S1_CHAT]);
    const pending = agent.send("pre_action", { tool_name: "deploy", arguments: {} });
    await v.action("session/inputNeededSet", S1_URI);
    run.time.advance(1000);
    const decision = await pending;
    expect(decision).toMatchObject({ decision: "block", reason: "No decision within 1 s" });
    const confirmed = await v.action("chat/toolCallConfirmed", S1_CHAT);
    expect("origin" in confirmed).toBe(false);
    expect(confirmed.action).toMatchObject({ approved: false, reason: "skipped", reasonMessage: "No decision within 1 s" });
    await v.action("session/inputNeededRemoved", S1_URI);
  });

  it("S16 agent disconnect fails closed: a held approval is skipped at once when the agent's connection closes", async () => {
    run = await startHost({ approvalTimeoutMs: 60_000 });
    const v = await run.client("viewer-token", "V");
    const agent = await run.agent("s1");
    await v.api.initialize([S1_URI, S1_CHAT]);
    const pending = agent.send("pre_action", { tool_name: "deploy", arguments: {} });
    await v.action("session/inputNeededSet", S1_URI);
    await agent.close();
    await expect(pending).rejects.toThrow();
    const confirmed = await v.action("chat/toolCallConfirmed", S1_CHAT);
    expect("origin" in confirmed).toBe(false);
    expect(confirmed.action).toMatchObject({ approved: false, reason: "skipped", reasonMessage: "The agent disconnected" });
    await v.action("session/inputNeededRemoved", S1_URI);
  });

  it("S17 confirmation event: chatInput entry; accept/approve → approve, decline → reject, cancel → escalate", async () => {
    run = await startHost();
    const b = await run.client("approver-token", "B");
    const agent = await run.agent("s1");
    await b.api.initialize([S1_URI, S1_CHAT]);
    const answers = [
      {
        response: "accept",
        answers: { decision: { state: "submitted", value: { kind: "selected", value: "approve" } } },
        expected: { decision: "approve" },
      },
      { response: "decline", expected: { decision: "reject", reason: "Declined by alice" } },
      { response: "cancel", expected: { decision: "escalate" } },
    ];
    for (const [i, a] of answers.entries()) {
      const from = b.mark;
      const pending = agent.send("confirmation", { session_id: "s1", confirmation_type: "user_confirm", message: `Proceed ${i}?` });
      const set = await b.action("session/inputNeededSet", S1_URI, from);
      const entry = (set.action as unknown as { request: { kind: string; id: string; request: { id: string } } }).request;
      expect(entry.kind).toBe("chatInput");
      const part = run.host
        .state<ChatState>(S1_CHAT)!
        .activeTurn!.responseParts.find(
          (p) => p.kind === "inputRequest" && (p as { request: { id: string } }).request.id === entry.request.id,
        );
      expect(part).toBeDefined();
      b.api.dispatch(S1_CHAT, {
        type: "chat/inputCompleted",
        requestId: entry.request.id,
        response: a.response,
        ...(a.answers === undefined ? {} : { answers: a.answers }),
      });
      expect(await pending).toEqual(a.expected);
      await b.action("session/inputNeededRemoved", S1_URI, from);
    }
  });

  it("S18 cancel: operator cancels the turn; tool calls cancelled/skipped, held request blocked, later pre_action blocked until a new run", async () => {
    run = await startHost();
    const o = await run.client("operator-token", "O");
    const agent = await run.agent("s1");
    await o.api.initialize([S1_URI, S1_CHAT]);
    await agent.send("run_lifecycle", runEvent("run-1", "executing", { prompt: "work" }));
    expect((await agent.send("pre_action", { tool_name: "bash", arguments: { command: "sleep 100" } })).decision).toBe("allow");
    const held = agent.send("pre_action", { tool_name: "deploy", arguments: {} });
    await o.action("session/inputNeededSet", S1_URI);
    o.api.dispatch(S1_CHAT, { type: "chat/turnCancelled", turnId: "run-1", duration: 5 });
    // The specification's reason, followed by who cancelled (ADR 0162).
    expect(await held).toMatchObject({ decision: "block", reason: "Run cancelled from an Agent Host client by olga" });
    const state = run.host.state<ChatState>(S1_CHAT)!;
    expect(state.activeTurn).toBeUndefined();
    expect(state.turns.at(-1)!.state).toBe("cancelled");
    expect(toolCalls(state).map((t) => [t.status, t.reason])).toEqual([
      ["cancelled", "skipped"],
      ["cancelled", "skipped"],
    ]);
    expect(run.host.state<SessionState>(S1_URI)!.inputNeeded).toBeUndefined();
    expect(await agent.send("pre_action", { tool_name: "ls", arguments: {} })).toMatchObject({ decision: "block" });
    await agent.send("run_lifecycle", runEvent("run-2", "created", { prompt: "again" }));
    expect((await agent.send("pre_action", { tool_name: "ls", arguments: {} })).decision).toBe("allow");
  });

  it("S19 unsupported client actions: turnStarted is echoed rejected without a state change; unknown channel gets no echo", async () => {
    run = await startHost();
    const o = await run.client("operator-token", "O");
    const agent = await run.agent("s1");
    await agent.send("pre_action", { tool_name: "ls", arguments: {} });
    await o.api.initialize([S1_CHAT]);
    const before = run.host.state<ChatState>(S1_CHAT);
    o.api.dispatch(S1_CHAT, {
      type: "chat/turnStarted",
      turnId: "x",
      startedAt: "2026-11-01T00:00:00Z",
      message: { text: "hi", origin: { kind: "user" } },
    });
    const echo = await o.next((f) => f.method === "action" && f.params.rejectionReason !== undefined);
    expect(echo.params.rejectionReason).toMatch(/cannot send them input/);
    expect(run.host.state<ChatState>(S1_CHAT)).toBe(before);
    const seq = run.host.store.serverSeq;
    o.api.dispatch("ahp-chat:/00000000-0000-5000-8000-000000000000", { type: "chat/draftChanged", draft: { text: "x" } });
    expect((await o.raw("ping", { channel: "ahp-root://" }, "after")).result).toBeNull();
    expect(run.host.store.serverSeq).toBe(seq);
  });

  it("S20 sequencing: consecutive serverSeq across root, session, chat; a mid-run subscriber converges from its snapshot", async () => {
    run = await startHost();
    const all = await run.client("viewer-token", "all");
    await all.api.initialize(["ahp-root://"]);
    const agent = await run.agent("s1");
    await all.notification("root/sessionAdded");
    await all.api.subscribe(S1_URI);
    await all.api.subscribe(S1_CHAT);
    await agent.send("run_lifecycle", runEvent("run-1", "executing", { prompt: "p" }));
    await agent.send("pre_action", { tool_name: "ls", arguments: {} });
    const late = await run.client("viewer-token", "late");
    await late.api.initialize([]);
    const snap = (await late.api.subscribe(S1_CHAT))!;
    await agent.send("pre_action", { tool_name: "rm", arguments: {} });
    await agent.send("post_response", { response: "done" });
    await agent.send("run_lifecycle", runEvent("run-1", "completed"));
    await agent.send("session_end", {});
    await all.action("root/activeSessionsChanged", "ahp-root://", all.frames.findIndex((f) => f.method === "root/sessionAdded") + 2);
    const seqs = all.envelopes().map((e) => e.serverSeq);
    const first = seqs[0]!;
    expect(seqs).toEqual(seqs.map((_, i) => first + i));
    expect(seqs.at(-1)).toBe(run.host.store.serverSeq);
    await late.action("chat/turnComplete", S1_CHAT);
    const lateEnvs = late.envelopes();
    expect(lateEnvs[0]!.serverSeq).toBeGreaterThan(snap.fromSeq);
    let state = snap.state;
    for (const e of lateEnvs) state = reduceChannel(S1_CHAT, state, e.action, run.time.clock);
    expect(state).toEqual(run.host.state(S1_CHAT));
  });

  it("S21 reconnect with replay: exactly the missed envelopes of its channels; replaying them equals a fresh snapshot", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "R");
    const agent = await run.agent("s1");
    await c.api.initialize([S1_URI, S1_CHAT]);
    await agent.send("pre_action", { tool_name: "ls", arguments: {} });
    await c.action("chat/toolCallReady", S1_CHAT);
    const n = c.api.state.lastSeenServerSeq;
    c.close();
    await c.whenClosed();
    await agent.send("pre_action", { tool_name: "rm", arguments: {} });
    await agent.send("post_response", { response: "after the drop" });
    const expected = run.host.store.replay(n, new Set([S1_URI, S1_CHAT]))!;
    await c.connect();
    const result = await c.api.reconnect([S1_URI, S1_CHAT]);
    expect(result.type).toBe("replay");
    const replay = result as Extract<ReconnectResult, { type: "replay" }>;
    expect(replay.actions.length).toBeGreaterThan(0);
    expect(replay.actions).toEqual(expected);
    expect(replay.actions.map((a) => a.serverSeq)).toEqual([...replay.actions.map((a) => a.serverSeq)].sort((x, y) => x - y));
    expect(replay.missing).toEqual([]);
    expect(withoutModifiedAt(c.api.state.confirmed(S1_CHAT))).toEqual(withoutModifiedAt(run.host.state(S1_CHAT)));
    expect(withoutModifiedAt(c.api.state.confirmed(S1_URI))).toEqual(withoutModifiedAt(run.host.state(S1_URI)));
  });

  it("S22 reconnect past the buffer: a gap of 200 with a 50-envelope log gets snapshots", async () => {
    run = await startHost({ replayLog: { maxEnvelopes: 50 } });
    const c = await run.client("viewer-token", "R2");
    const agent = await run.agent("s1");
    await c.api.initialize([S1_URI, S1_CHAT]);
    c.close();
    await c.whenClosed();
    const start = run.host.store.serverSeq;
    while (run.host.store.serverSeq < start + 200) await agent.send("post_response", { response: "x" });
    await c.connect();
    const result = await c.api.reconnect([S1_URI, S1_CHAT]);
    expect(result.type).toBe("snapshot");
    const snapshots = (result as Extract<ReconnectResult, { type: "snapshot" }>).snapshots;
    expect(snapshots.map((s) => s.resource)).toEqual([S1_URI, S1_CHAT]);
    expect(c.api.state.confirmed(S1_CHAT)).toEqual(run.host.state(S1_CHAT));
  });

  it("S23 reconnect after restart: an unknown clientId gets the snapshot variant", async () => {
    run = await startHost();
    await (await run.agent("s1")).send("pre_action", { tool_name: "ls", arguments: {} });
    const c = await run.client("viewer-token", "never-seen");
    c.api.state.lastSeenServerSeq = 3;
    const result = await c.api.reconnect([S1_URI, "ahp-root://"]);
    expect(result.type).toBe("snapshot");
    expect((result as Extract<ReconnectResult, { type: "snapshot" }>).snapshots.map((s) => s.resource)).toEqual([S1_URI, "ahp-root://"]);
  });

  it("S24 missing channels: a session removed after retention is reported missing and absent from listSessions", async () => {
    run = await startHost({ retentionMs: 60_000 });
    const c = await run.client("viewer-token", "M");
    const agent = await run.agent("s1");
    await c.api.initialize(["ahp-root://", S1_URI]);
    const watcher = await run.client("viewer-token", "watch");
    await watcher.api.initialize(["ahp-root://"]);
    c.close();
    await c.whenClosed();
    await agent.send("session_end", {});
    await watcher.action("root/activeSessionsChanged");
    run.time.advance(60_000);
    await watcher.notification("root/sessionRemoved");
    expect(run.host.state(S1_URI)).toBeUndefined();
    await c.connect();
    const result = await c.api.reconnect(["ahp-root://", S1_URI]);
    expect(result.type).toBe("replay");
    expect((result as Extract<ReconnectResult, { type: "replay" }>).missing).toEqual([S1_URI]);
    const list = await c.api.request<{ items: SessionSummary[] }>("listSessions", { channel: "ahp-root://" });
    expect(list.items).toEqual([]);
    expect(c.api.state.confirmed<RootState>("ahp-root://")!.activeSessions).toBe(0);
  });

  it("S27 wire validity: every frame the adapter sent in scenarios 13–24 validates against the vendored schemas", () => {
    expect(framesChecked).toBeGreaterThan(50);
    expect(allProblems).toEqual([]);
  });
});

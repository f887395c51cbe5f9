/**
 * Who decided a held request, as every client sees it in its reduced state (and in a fresh
 * snapshot after a reload): the committed answer carries the harness's decision record, and
 * the fail-closed paths record a timeout or the operator who cancelled. Also the human answers
 * to `confirmation` events: first answer wins, roles, text reasons, timeout, disconnect, cancel.
 * Real adapter on loopback, real WebSocket clients.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ActionEnvelope, ChatState, ResponsePart, SessionState, ToolCallState } from "../src/wire/types.js";
import { allProblems, framesChecked, type TestClient } from "./helpers/client.js";
import { startHost, type Running } from "./helpers/harness.js";
import { probe, runEvent, S1_CHAT, S1_URI, toolCalls } from "./helpers/scenario.js";

const DECISION = "ahpHarness/decision";
const CANCELLED = "Run cancelled from an Agent Host client by olga";

let run: Running | undefined;
afterEach(async () => {
  await run?.stop();
  run = undefined;
});

const recordOf = (tool: ToolCallState | undefined) => tool?._meta?.[DECISION];

/** The system notifications of the active (or last) turn that record a confirmation's outcome. */
function outcomes(state: ChatState | undefined): Array<{ content: unknown; record: Record<string, unknown> }> {
  const turn = state?.activeTurn ?? state?.turns.at(-1);
  return (turn?.responseParts ?? [])
    .filter((p): p is ResponsePart & { content: unknown; _meta?: Record<string, unknown> } => p.kind === "systemNotification")
    .filter((p) => p._meta?.[DECISION] !== undefined)
    .map((p) => ({ content: p.content, record: p._meta![DECISION] as Record<string, unknown> }));
}

/** The input-request id of the latest `chatInput` entry the client saw. */
async function heldInput(client: TestClient, from: number): Promise<string> {
  const set = await client.action("session/inputNeededSet", S1_URI, from);
  const entry = (set.action as unknown as { request: { kind: string; request: { id: string } } }).request;
  expect(entry.kind).toBe("chatInput");
  return entry.request.id;
}

const selected = (value: string) => ({ state: "submitted", value: { kind: "selected", value } });
const textAnswer = (value: string) => ({ state: "submitted", value: { kind: "text", value } });

describe("who decided a held request", () => {
  it("an approver's answer is committed with the decision record: every client and a fresh snapshot say approved by alice, denied by bob", async () => {
    run = await startHost();
    const alice = await run.client("approver-token", "A");
    const bob = await run.client("approver2-token", "B");
    const vera = await run.client("viewer-token", "V");
    const agent = await run.agent("s1");
    for (const c of [alice, bob, vera]) await c.api.initialize([S1_URI, S1_CHAT]);

    let from = vera.mark;
    let marks = [alice.mark, bob.mark];
    const first = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "deploy prod" } });
    await vera.action("session/inputNeededSet", S1_URI, from);
    await alice.action("session/inputNeededSet", S1_URI, marks[0]);
    const [pending] = toolCalls(alice.api.state.confirmed<ChatState>(S1_CHAT));
    // A client cannot forge the record: its own `_meta` keys stay, the decision record is the host's.
    alice.api.dispatch(S1_CHAT, {
      type: "chat/toolCallConfirmed",
      turnId: "turn-1",
      toolCallId: pending!.toolCallId,
      approved: true,
      confirmed: "user-action",
      selectedOptionId: "allow-once",
      _meta: { [DECISION]: { decision: "allow", decidedBy: "human", approver: "mallory" }, "example/note": "checked" },
    });
    expect(await first).toMatchObject({ decision: "allow", metadata: { approved_by: "alice" } });
    const echo = await vera.action("chat/toolCallConfirmed", S1_CHAT, from);
    expect(echo.origin).toEqual({ clientId: "A", clientSeq: 1 });
    expect(echo.action._meta).toEqual({
      [DECISION]: { decision: "allow", reason: "Approved by alice", outcome: "approved", decidedBy: "human", approver: "alice" },
      "example/note": "checked",
    });
    await vera.action("session/inputNeededRemoved", S1_URI, from);
    await alice.action("session/inputNeededRemoved", S1_URI, marks[0]);
    await bob.action("session/inputNeededRemoved", S1_URI, marks[1]);
    for (const c of [alice, bob, vera])
      expect(recordOf(toolCalls(c.api.state.confirmed<ChatState>(S1_CHAT))[0])).toEqual({
        decision: "allow",
        reason: "Approved by alice",
        outcome: "approved",
        decidedBy: "human",
        approver: "alice",
      });
    expect(alice.api.state.pending).toHaveLength(0);

    from = vera.mark;
    marks = [alice.mark, bob.mark];
    const second = agent.send("pre_action", { tool_name: "git_push", arguments: { command: "git push --force" } });
    await vera.action("session/inputNeededSet", S1_URI, from);
    await bob.action("session/inputNeededSet", S1_URI, marks[1]);
    const pushed = toolCalls(bob.api.state.confirmed<ChatState>(S1_CHAT))[1]!;
    bob.api.dispatch(S1_CHAT, {
      type: "chat/toolCallConfirmed",
      turnId: "turn-1",
      toolCallId: pushed.toolCallId,
      approved: false,
      reason: "denied",
      reasonMessage: "not on main",
    });
    expect(await second).toMatchObject({ decision: "block", reason: "not on main (denied by bob)" });
    await vera.action("session/inputNeededRemoved", S1_URI, from);
    const denied = { decision: "block", reason: "not on main (denied by bob)", outcome: "denied", decidedBy: "human", approver: "bob" };
    expect(recordOf(toolCalls(vera.api.state.confirmed<ChatState>(S1_CHAT))[1])).toEqual(denied);

    // A page reloaded after the decisions gets them from its snapshot.
    const late = await run.client("viewer-token", "V2");
    await late.api.initialize([S1_URI, S1_CHAT]);
    const calls = toolCalls(late.api.state.confirmed<ChatState>(S1_CHAT));
    expect(calls.map((t) => [t.status, recordOf(t)])).toEqual([
      ["running", { decision: "allow", reason: "Approved by alice", outcome: "approved", decidedBy: "human", approver: "alice" }],
      ["cancelled", denied],
    ]);
    expect(calls).toEqual(toolCalls(run.host.state<ChatState>(S1_CHAT)));
  });

  it("a held tool call that times out records decidedBy timeout; one cancelled by an operator records who cancelled", async () => {
    run = await startHost({ approvalTimeoutMs: 1000 });
    const olga = await run.client("operator-token", "O");
    const vera = await run.client("viewer-token", "V");
    const agent = await run.agent("s1");
    for (const c of [olga, vera]) await c.api.initialize([S1_URI, S1_CHAT]);

    let from = vera.mark;
    await agent.send("run_lifecycle", runEvent("run-1", "executing", { prompt: "ship it" }));
    const timedOut = agent.send("pre_action", { tool_name: "deploy", arguments: {} });
    await vera.action("session/inputNeededSet", S1_URI, from);
    run.time.advance(1000);
    expect(await timedOut).toMatchObject({ decision: "block", reason: "No decision within 1 s" });
    const skipped = await vera.action("chat/toolCallConfirmed", S1_CHAT, from);
    expect("origin" in skipped).toBe(false);
    expect(recordOf(toolCalls(vera.api.state.confirmed<ChatState>(S1_CHAT))[0])).toEqual({
      decision: "block",
      reason: "No decision within 1 s",
      outcome: "timed-out",
      decidedBy: "timeout",
    });

    from = vera.mark;
    const cancelled = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "again" } });
    await vera.action("session/inputNeededSet", S1_URI, from);
    olga.api.dispatch(S1_CHAT, { type: "chat/turnCancelled", turnId: "run-1", duration: 5 });
    expect(await cancelled).toMatchObject({ decision: "block", reason: CANCELLED });
    await vera.action("chat/turnCancelled", S1_CHAT, from);
    const state = vera.api.state.confirmed<ChatState>(S1_CHAT)!;
    expect(state.turns.at(-1)!.state).toBe("cancelled");
    const tool = toolCalls(state)[1]!;
    expect([tool.status, tool.reason]).toEqual(["cancelled", "skipped"]);
    expect(recordOf(tool)).toEqual({ decision: "block", reason: CANCELLED, outcome: "cancelled", decidedBy: "human", approver: "olga" });
    // The record precedes the turn's end; the operator's own turnCancelled is the committed echo.
    const types = vera
      .envelopes()
      .filter((e) => e.serverSeq > 0 && e.channel === S1_CHAT)
      .map((e) => e.action.type);
    expect(types.lastIndexOf("chat/toolCallConfirmed")).toBeLessThan(types.lastIndexOf("chat/turnCancelled"));
    expect(run.host.state<SessionState>(S1_URI)!.inputNeeded).toBeUndefined();
    expect(toolCalls(run.host.state<ChatState>(S1_CHAT))).toEqual(toolCalls(state));
  });
});

describe("confirmation events answered by a human", () => {
  it("alice approves, bob rejects with a typed reason; every client and a fresh snapshot say who", async () => {
    run = await startHost();
    const alice = await run.client("approver-token", "A");
    const bob = await run.client("approver2-token", "B");
    const vera = await run.client("viewer-token", "V");
    const agent = await run.agent("s1");
    for (const c of [alice, bob, vera]) await c.api.initialize([S1_URI, S1_CHAT]);

    let from = vera.mark;
    const first = agent.send("confirmation", { session_id: "s1", confirmation_type: "user_confirm", message: "Deploy to prod?" });
    const firstId = await heldInput(vera, from);
    alice.api.dispatch(S1_CHAT, {
      type: "chat/inputCompleted",
      requestId: firstId,
      response: "accept",
      answers: { decision: selected("approve") },
    });
    expect(await first).toEqual({ decision: "approve" });
    await vera.action("session/inputNeededRemoved", S1_URI, from);
    expect(outcomes(vera.api.state.confirmed<ChatState>(S1_CHAT))).toEqual([
      {
        content: "Confirmation approved by alice",
        record: {
          decision: "approve",
          reason: "Approved by alice",
          outcome: "approved",
          decidedBy: "human",
          approver: "alice",
          requestId: firstId,
        },
      },
    ]);

    from = vera.mark;
    const second = agent.send("confirmation", { session_id: "s1", confirmation_type: "cost_confirm", message: "Spend $40?" });
    const secondId = await heldInput(vera, from);
    // The reason is typed as a draft (synced to every client), then the answer is submitted.
    bob.api.dispatch(S1_CHAT, {
      type: "chat/inputAnswerChanged",
      requestId: secondId,
      questionId: "reason",
      answer: textAnswer("too much"),
    });
    await vera.action("chat/inputAnswerChanged", S1_CHAT, from);
    bob.api.dispatch(S1_CHAT, {
      type: "chat/inputCompleted",
      requestId: secondId,
      response: "accept",
      answers: { decision: selected("reject") },
    });
    expect(await second).toEqual({ decision: "reject", reason: "too much (rejected by bob)" });
    await vera.action("session/inputNeededRemoved", S1_URI, from);
    from = vera.mark;
    // Without a typed reason the agent is told who rejected; the notice does not say it twice.
    const third = agent.send("confirmation", { session_id: "s1", confirmation_type: "user_confirm", message: "Drop the table?" });
    const thirdId = await heldInput(vera, from);
    alice.api.dispatch(S1_CHAT, {
      type: "chat/inputCompleted",
      requestId: thirdId,
      response: "accept",
      answers: { decision: selected("reject") },
    });
    expect(await third).toEqual({ decision: "reject", reason: "Rejected by alice" });
    await vera.action("session/inputNeededRemoved", S1_URI, from);
    const expected = [
      {
        content: "Confirmation approved by alice",
        record: {
          decision: "approve",
          reason: "Approved by alice",
          outcome: "approved",
          decidedBy: "human",
          approver: "alice",
          requestId: firstId,
        },
      },
      {
        content: "Confirmation rejected by bob: too much",
        record: {
          decision: "reject",
          reason: "too much (rejected by bob)",
          outcome: "denied",
          decidedBy: "human",
          approver: "bob",
          requestId: secondId,
        },
      },
      {
        content: "Confirmation rejected by alice",
        record: {
          decision: "reject",
          reason: "Rejected by alice",
          outcome: "denied",
          decidedBy: "human",
          approver: "alice",
          requestId: thirdId,
        },
      },
    ];
    expect(outcomes(vera.api.state.confirmed<ChatState>(S1_CHAT))).toEqual(expected);

    const late = await run.client("viewer-token", "V2");
    await late.api.initialize([S1_URI, S1_CHAT]);
    const state = late.api.state.confirmed<ChatState>(S1_CHAT)!;
    expect(outcomes(state)).toEqual(expected);
    const parts = state.activeTurn!.responseParts.filter((p) => p.kind === "inputRequest") as Array<{ response?: string }>;
    expect(parts.map((p) => p.response)).toEqual(["accept", "accept", "accept"]);
  });

  it("a viewer cannot answer; two approvers racing: the first wins, the other is told 'already resolved', one record", async () => {
    run = await startHost();
    const alice = await run.client("approver-token", "A");
    const bob = await run.client("approver2-token", "B");
    const vera = await run.client("viewer-token", "V");
    const agent = await run.agent("s1");
    for (const c of [alice, bob, vera]) await c.api.initialize([S1_URI, S1_CHAT]);
    const from = vera.mark;
    const pending = probe(agent.send("confirmation", { session_id: "s1", confirmation_type: "safety_confirm", message: "Wipe cache?" }));
    const id = await heldInput(vera, from);

    vera.api.dispatch(S1_CHAT, {
      type: "chat/inputCompleted",
      requestId: id,
      response: "accept",
      answers: { decision: selected("approve") },
    });
    const refused = await vera.next((f) => f.method === "action" && f.params.rejectionReason !== undefined, from);
    expect(refused.params.rejectionReason).toMatch(/approver/);
    vera.api.dispatch(S1_CHAT, { type: "chat/inputAnswerChanged", requestId: id, questionId: "reason", answer: textAnswer("x") });
    const refusedDraft = await vera.next(
      (f) => f.method === "action" && f.params.rejectionReason !== undefined && f.params.action.type === "chat/inputAnswerChanged",
      from,
    );
    expect(refusedDraft.params.rejectionReason).toMatch(/approver/);
    expect(pending.settled()).toBe(false);
    expect(run.host.broker.size).toBe(1);

    bob.api.dispatch(S1_CHAT, { type: "chat/inputCompleted", requestId: id, response: "decline" });
    alice.api.dispatch(S1_CHAT, {
      type: "chat/inputCompleted",
      requestId: id,
      response: "accept",
      answers: { decision: selected("approve") },
    });
    expect(await pending.value).toEqual({ decision: "reject", reason: "Declined by bob" });
    const late = await alice.next(
      (f) => f.method === "action" && f.params.action.type === "chat/inputCompleted" && f.params.origin?.clientId === "A",
      from,
    );
    expect((late.params as ActionEnvelope).rejectionReason).toBe("already resolved");
    await vera.action("session/inputNeededRemoved", S1_URI, from);
    expect(outcomes(vera.api.state.confirmed<ChatState>(S1_CHAT))).toEqual([
      {
        content: "Confirmation declined by bob",
        record: { decision: "reject", reason: "Declined by bob", outcome: "denied", decidedBy: "human", approver: "bob", requestId: id },
      },
    ]);
    expect(alice.api.state.pending).toHaveLength(0);
  });

  it("fails closed: a timeout rejects and records 'timed out'; an operator's cancel rejects and records who; agent gone rejects", async () => {
    run = await startHost({ approvalTimeoutMs: 2000 });
    const olga = await run.client("operator-token", "O");
    const vera = await run.client("viewer-token", "V");
    const agent = await run.agent("s1");
    for (const c of [olga, vera]) await c.api.initialize([S1_URI, S1_CHAT]);
    await agent.send("run_lifecycle", runEvent("run-1", "executing", { prompt: "release" }));

    let from = vera.mark;
    const timedOut = agent.send("confirmation", { session_id: "s1", confirmation_type: "user_confirm", message: "Tag v2?" });
    const first = await heldInput(vera, from);
    run.time.advance(2000);
    expect(await timedOut).toEqual({ decision: "reject", reason: "No decision within 2 s" });
    await vera.action("session/inputNeededRemoved", S1_URI, from);
    expect(outcomes(vera.api.state.confirmed<ChatState>(S1_CHAT))).toEqual([
      {
        content: "Confirmation timed out: No decision within 2 s",
        record: { decision: "reject", reason: "No decision within 2 s", outcome: "timed-out", decidedBy: "timeout", requestId: first },
      },
    ]);

    from = vera.mark;
    const cancelled = agent.send("confirmation", { session_id: "s1", confirmation_type: "user_confirm", message: "Publish?" });
    const second = await heldInput(vera, from);
    olga.api.dispatch(S1_CHAT, { type: "chat/turnCancelled", turnId: "run-1", duration: 9 });
    expect(await cancelled).toEqual({ decision: "reject", reason: CANCELLED });
    await vera.action("chat/turnCancelled", S1_CHAT, from);
    const state = vera.api.state.confirmed<ChatState>(S1_CHAT)!;
    expect(state.turns.at(-1)!.state).toBe("cancelled");
    expect(outcomes(state)[1]).toEqual({
      content: "Confirmation cancelled by olga: Run cancelled from an Agent Host client",
      record: { decision: "reject", reason: CANCELLED, outcome: "cancelled", decidedBy: "human", approver: "olga", requestId: second },
    });

    await agent.send("run_lifecycle", runEvent("run-2", "executing", { prompt: "again" }));
    from = vera.mark;
    const gone = agent.send("confirmation", { session_id: "s1", confirmation_type: "user_confirm", message: "Retry?" });
    await heldInput(vera, from);
    await agent.close();
    await expect(gone).rejects.toThrow();
    await vera.action("session/inputNeededRemoved", S1_URI, from);
    expect(run.host.broker.size).toBe(0);
    expect(outcomes(run.host.state<ChatState>(S1_CHAT)).at(-1)!.record).toMatchObject({ decision: "reject", decidedBy: "timeout" });
  });

  it("every frame the adapter sent in these tests validates against the vendored schemas", () => {
    expect(framesChecked).toBeGreaterThan(50);
    expect(allProblems).toEqual([]);
  });
});

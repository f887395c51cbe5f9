/**
 * The audit record keeps a decision's `decision` and `reason`, not its metadata (ADR 0162): every
 * way a held request ends gives a decision whose reason says what happened and who did it —
 * approved, approved for the session (and the later calls that rule allowed), edited, denied (with
 * and without a typed reason), handed to the host's prompt, timed out and blocked, timed out,
 * agent gone, cancelled by an operator, and the same for confirmations. Seen here as a recorder
 * outside the adapter sees it (the audit middleware sits there), on a real adapter on loopback
 * with real WebSocket clients.
 */
import type { AhpEvent } from "@ahp/core";
import { describe, expect, it } from "vitest";
import type { ApprovalEvent } from "../src/host/approvals.js";
import type { ChatState } from "../src/wire/types.js";
import type { TestClient } from "./helpers/client.js";
import type { Running } from "./helpers/harness.js";
import { hostPerTest, until } from "./helpers/host-per-test.js";
import { runEvent, S1_CHAT, toolCalls } from "./helpers/scenario.js";

const host = hostPerTest();

interface Setup {
  run: Running;
  /** What a recorder outside the adapter saw as each final decision (`decision` and `reason`, as the audit record keeps). */
  recorded: Array<{ decision: unknown; reason: unknown }>;
  holds: ApprovalEvent[];
  alice: TestClient;
  bob: TestClient;
  olga: TestClient;
  agent: Awaited<ReturnType<Running["agent"]>>;
}

async function setup(options: Parameters<typeof host.start>[0] = {}): Promise<Setup> {
  const recorded: Setup["recorded"] = [];
  const holds: ApprovalEvent[] = [];
  const run = await host.start({
    editable: true,
    confirmation: "escalate",
    onapproval: (e) => {
      if (e.phase === "held") holds.push(e);
    },
    decided: (event: AhpEvent, d) => {
      if (event.event_type !== "pre_action" && event.event_type !== "confirmation") return;
      const o = d as { decision?: unknown; reason?: unknown };
      recorded.push({ decision: o.decision, reason: o.reason });
    },
    ...options,
  });
  const agent = await run.agent("s1");
  const alice = await run.client("approver-token", "A");
  const bob = await run.client("approver2-token", "B");
  const olga = await run.client("operator-token", "O");
  for (const c of [alice, bob, olga]) await c.api.initialize([S1_CHAT]);
  return { run, recorded, holds, alice, bob, olga, agent };
}

/** Sends an escalated tool call and waits until it is held and visible to `client`; returns its ids. */
async function holdTool(s: Setup, client: TestClient, metadata?: Record<string, unknown>) {
  const before = s.holds.length;
  const decision = s.agent.send(
    "pre_action",
    { tool_name: "deploy", arguments: { target: "prod" } },
    metadata === undefined ? {} : { metadata },
  );
  await until(() => s.holds.length > before, "the hold");
  const state = s.run.host.state<ChatState>(S1_CHAT)!;
  const toolCallId = toolCalls(state).at(-1)!.toolCallId;
  await until(
    () => toolCalls(client.api.state.confirmed<ChatState>(S1_CHAT)).some((t) => t.toolCallId === toolCallId),
    "the tool call on the client",
  );
  return { decision, turnId: state.activeTurn!.id, toolCallId };
}

/** Sends a confirmation the harness escalates, waits until it is held; returns its request id. */
async function holdInput(s: Setup, client: TestClient) {
  const before = s.holds.length;
  const decision = s.agent.send("confirmation", { session_id: "s1", confirmation_type: "user_confirm", message: "Drop the table?" });
  const hold = await until(() => s.holds.length > before && s.holds.at(-1), "the input hold");
  const requestId = hold.id.slice(hold.id.lastIndexOf("#") + 1);
  await until(
    () =>
      client.api.state
        .confirmed<ChatState>(S1_CHAT)
        ?.activeTurn?.responseParts.some((p) => p.kind === "inputRequest" && (p as { request: { id: string } }).request.id === requestId),
    "the input request on the client",
  );
  return { decision, requestId };
}

const selected = (value: string) => ({ state: "submitted", value: { kind: "selected", value } });
const textAnswer = (value: string) => ({ state: "submitted", value: { kind: "text", value } });

describe("every held tool call ends with a reason that says what happened and who did it", () => {
  it("approved, approved for the session (and the calls its rule allows), edited, denied, denied with a typed reason", async () => {
    const s = await setup();
    const approve = async (client: TestClient, extra: Record<string, unknown>) => {
      const held = await holdTool(s, client);
      client.api.dispatch(S1_CHAT, { type: "chat/toolCallConfirmed", turnId: held.turnId, toolCallId: held.toolCallId, ...extra });
      await held.decision;
    };
    await approve(s.alice, { approved: true, confirmed: "user-action", selectedOptionId: "allow-once" });
    await approve(s.alice, { approved: true, confirmed: "user-action", editedToolInput: '{"target":"staging"}' });
    await approve(s.bob, { approved: false, reason: "denied" });
    await approve(s.bob, { approved: false, reason: "denied", reasonMessage: "  not on a Friday " });
    await approve(s.alice, { approved: true, confirmed: "user-action", selectedOptionId: "allow-session" });
    // The session rule answers the next call without a person: the record still names whose rule it was.
    await s.agent.send("pre_action", { tool_name: "deploy", arguments: { target: "prod" } });
    expect(s.recorded).toEqual([
      { decision: "allow", reason: "Approved by alice" },
      { decision: "modify", reason: "Approved by alice with edited input" },
      { decision: "block", reason: "Denied by bob" },
      { decision: "block", reason: "not on a Friday (denied by bob)" },
      { decision: "allow", reason: "Approved by alice for the rest of the session" },
      { decision: "allow", reason: "Approved by alice's rule for this session" },
    ]);
  });

  it("handed to the host's prompt, timed out and blocked, timed out (the host's fallback), agent gone", async () => {
    const s = await setup({ approvalTimeoutMs: 5_000 });
    const ask = await holdTool(s, s.alice, { ahp_wait: { max_ms: 10_000, on_timeout: "ask" } });
    s.run.time.advance(5_000);
    await ask.decision;
    const block = await holdTool(s, s.alice, { ahp_wait: { max_ms: 60_000, on_timeout: "block" } });
    s.run.time.advance(5_000);
    await block.decision;
    const plain = await holdTool(s, s.alice);
    s.run.time.advance(5_000);
    await plain.decision;
    const gone = await holdTool(s, s.alice);
    void gone.decision.catch(() => undefined);
    await s.agent.close();
    await until(() => s.recorded.length === 4, "the agent-gone decision");
    expect(s.recorded).toEqual([
      { decision: "escalate", reason: "Nobody answered within 5 s; handed to the host's prompt" },
      { decision: "block", reason: "Nobody answered within 5 s; timed out and blocked" },
      { decision: "block", reason: "No decision within 5 s" },
      { decision: "block", reason: "The agent disconnected" },
    ]);
  });

  it("cancelled by an operator: the held call and the calls after it name who cancelled", async () => {
    const s = await setup();
    await s.agent.send("run_lifecycle", runEvent("run-1", "executing", { prompt: "ship it" }));
    const held = await holdTool(s, s.olga);
    s.olga.api.dispatch(S1_CHAT, { type: "chat/turnCancelled", turnId: held.turnId, duration: 5 });
    await held.decision;
    await s.agent.send("pre_action", { tool_name: "ls", arguments: {} });
    expect(s.recorded).toEqual([
      { decision: "block", reason: "Run cancelled from an Agent Host client by olga" },
      { decision: "block", reason: "Run cancelled from an Agent Host client by olga" },
    ]);
  });
});

describe("every held confirmation ends with a reason that says what happened and who did it", () => {
  it("approved, rejected, rejected with a typed reason, declined, handed back to the agent's prompt", async () => {
    const s = await setup();
    const answer = async (client: TestClient, response: string, answers?: Record<string, unknown>) => {
      const held = await holdInput(s, client);
      client.api.dispatch(S1_CHAT, {
        type: "chat/inputCompleted",
        requestId: held.requestId,
        response,
        ...(answers === undefined ? {} : { answers }),
      });
      await held.decision;
    };
    await answer(s.alice, "accept", { decision: selected("approve") });
    await answer(s.bob, "accept", { decision: selected("reject") });
    await answer(s.bob, "accept", { decision: selected("reject"), reason: textAnswer("too late") });
    await answer(s.alice, "decline");
    await answer(s.alice, "cancel");
    expect(s.recorded).toEqual([
      { decision: "approve", reason: "Approved by alice" },
      { decision: "reject", reason: "Rejected by bob" },
      { decision: "reject", reason: "too late (rejected by bob)" },
      { decision: "reject", reason: "Declined by alice" },
      { decision: "escalate", reason: "Handed back to the agent's own prompt by alice" },
    ]);
    // Each outcome notice says it once, in words, with the typed reason but not the repeated name.
    const notices = (s.run.host.state<ChatState>(S1_CHAT)!.activeTurn?.responseParts ?? [])
      .filter((p) => p.kind === "systemNotification")
      .map((p) => (p as { content: unknown }).content);
    expect(notices).toEqual([
      "Confirmation approved by alice",
      "Confirmation rejected by bob",
      "Confirmation rejected by bob: too late",
      "Confirmation declined by alice",
      "Confirmation handed back to the agent's own prompt by alice",
    ]);
  });
});

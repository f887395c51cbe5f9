/**
 * A client's own outer limit (`metadata.ahp_wait`, ADR 0145): the hold ends before it and answers
 * what the client asked for (`escalate` to hand the call to its host's prompt, or `block`), never
 * beyond the approval timeout; malformed values are ignored with a log line. Every way a hold ends
 * is recorded as what happened: approved by whom, denied by whom, handed to the host's prompt,
 * timed out and blocked, agent gone.
 */
import { describe, expect, it } from "vitest";
import type { ApprovalEvent } from "../src/host/approvals.js";
import { WAIT_MARGIN_MS } from "../src/host/hold-wait.js";
import type { ChatState } from "../src/wire/types.js";
import type { Running } from "./helpers/harness.js";
import { hostPerTest, until } from "./helpers/host-per-test.js";
import { probe, S1_CHAT, toolCalls } from "./helpers/scenario.js";

const DECISION = "ahpHarness/decision";
const host = hostPerTest();

interface Observed {
  approvals: ApprovalEvent[];
  logs: Array<{ level: string; message: string; fields: Record<string, unknown> }>;
}

async function start(approvalTimeoutMs = 300_000): Promise<{ run: Running; seen: Observed }> {
  const seen: Observed = { approvals: [], logs: [] };
  const run = await host.start({
    approvalTimeoutMs,
    onapproval: (e) => seen.approvals.push(e),
    onlog: (level, message, fields) => seen.logs.push({ level, message, fields }),
  });
  return { run, seen };
}

const held = (seen: Observed) => until(() => seen.approvals.find((e) => e.phase === "held"), "the hold");
const resolved = (seen: Observed) => until(() => seen.approvals.find((e) => e.phase === "resolved"), "the outcome");
const recordOf = (run: Running): Record<string, unknown> | undefined =>
  toolCalls(run.host.state<ChatState>(S1_CHAT)).at(-1)?._meta?.[DECISION] as Record<string, unknown> | undefined;

describe("a hold bounded by the client's ahp_wait", () => {
  it('on_timeout "ask": ends WAIT_MARGIN_MS before max_ms and hands the call to the host\'s prompt, recorded as such', async () => {
    const { run, seen } = await start();
    const agent = await run.agent("s1");
    const decision = probe(
      agent.send("pre_action", { tool_name: "deploy", arguments: {} }, { metadata: { ahp_wait: { max_ms: 10_000, on_timeout: "ask" } } }),
    );
    const hold = await held(seen);
    expect(Date.parse(hold.deadline) - run.time.now).toBe(10_000 - WAIT_MARGIN_MS);
    expect(recordOf(run)).toMatchObject({ waiting: true, deadline: hold.deadline });
    run.time.advance(10_000 - WAIT_MARGIN_MS - 1);
    expect(seen.approvals.some((e) => e.phase === "resolved")).toBe(false);
    run.time.advance(1);
    expect(await decision.value).toEqual({ decision: "escalate", reason: "Nobody answered within 9 s; handed to the host's prompt" });
    expect(await resolved(seen)).toMatchObject({ outcome: "handed-to-host", decision: "escalate" });
    expect(recordOf(run)).toMatchObject({ decision: "escalate", decidedBy: "timeout", outcome: "handed-to-host" });
    expect(seen.logs.map((l) => l.message)).toEqual(["approval held for a person", "approval timed out; handed to the host's prompt"]);
  });

  it('on_timeout "block": blocks with a reason that says so; the hold never outlives the approval timeout', async () => {
    const { run, seen } = await start(5_000);
    const agent = await run.agent("s1");
    const decision = agent.send(
      "pre_action",
      { tool_name: "deploy", arguments: {} },
      { metadata: { ahp_wait: { max_ms: 60_000, on_timeout: "block" } } },
    );
    const hold = await held(seen);
    expect(Date.parse(hold.deadline) - run.time.now).toBe(5_000);
    run.time.advance(5_000);
    expect(await decision).toEqual({
      decision: "block",
      reason: "Nobody answered within 5 s; timed out and blocked",
      metadata: { outcome: "timed-out" },
    });
    expect(recordOf(run)).toMatchObject({ decision: "block", decidedBy: "timeout", outcome: "timed-out" });
    expect(seen.logs.at(-1)?.message).toBe("approval timed out; blocked");
  });

  it.each([
    [{ max_ms: "soon" }, "ahp_wait.max_ms must be a positive integer (ms)"],
    [{ max_ms: -5 }, "ahp_wait.max_ms must be a positive integer (ms)"],
    [{ max_ms: 10_000, on_timeout: "allow" }, 'ahp_wait.on_timeout must be "ask" or "block"'],
    ["10s", "ahp_wait must be an object"],
  ])("ignores a malformed ahp_wait %j with a log line and holds for the approval timeout", async (value, problem) => {
    const { run, seen } = await start(7_000);
    const agent = await run.agent("s1");
    const decision = agent.send("pre_action", { tool_name: "deploy", arguments: {} }, { metadata: { ahp_wait: value } });
    const hold = await held(seen);
    expect(Date.parse(hold.deadline) - run.time.now).toBe(7_000);
    expect(seen.logs[0]).toMatchObject({ level: "warn", message: "ahp_wait metadata ignored", fields: { problem } });
    run.time.advance(7_000);
    expect(await decision).toMatchObject({ decision: "block", reason: "No decision within 7 s" });
    expect(recordOf(run)).toMatchObject({ outcome: "timed-out" });
  });
});

describe("the record says what happened", () => {
  for (const approved of [true, false]) {
    it(`${approved ? "approved" : "denied"} by a named approver: decision, record, outcome event and log line agree`, async () => {
      const { run, seen } = await start();
      const agent = await run.agent("s1");
      const alice = await run.client("approver-token", "A");
      await alice.api.initialize([S1_CHAT]);
      const decision = agent.send("pre_action", { tool_name: "deploy", arguments: {} });
      const hold = await held(seen);
      const toolCallId = hold.id.slice(hold.id.indexOf("#") + 1);
      await until(() => toolCalls(alice.api.state.confirmed<ChatState>(S1_CHAT)).length === 1, "the tool call on the client");
      alice.api.dispatch(S1_CHAT, {
        type: "chat/toolCallConfirmed",
        turnId: run.host.state<ChatState>(S1_CHAT)!.activeTurn!.id,
        toolCallId,
        ...(approved ? { approved: true, confirmed: "user-action" } : { approved: false, reason: "denied", reasonMessage: "not today" }),
      });
      const outcome = approved ? "approved" : "denied";
      expect(await decision).toMatchObject(
        approved
          ? { decision: "allow", metadata: { approved_by: "alice", outcome } }
          : { decision: "block", reason: "not today (denied by alice)", metadata: { approved_by: "alice", outcome } },
      );
      expect(await resolved(seen)).toMatchObject({ outcome, approver: "alice" });
      expect(recordOf(run)).toMatchObject({ decidedBy: "human", approver: "alice", outcome });
      expect(seen.logs.at(-1)).toMatchObject({ message: "approval answered", fields: { by: "alice", outcome } });
    });
  }

  it("agent gone before the answer: recorded as such, not as a decision anyone made", async () => {
    const { run, seen } = await start();
    const agent = await run.agent("s1");
    void agent.send("pre_action", { tool_name: "deploy", arguments: {} }).catch(() => undefined);
    await held(seen);
    await agent.close();
    expect(await resolved(seen)).toMatchObject({ outcome: "agent-gone", decision: "block" });
    expect(recordOf(run)).toMatchObject({ decision: "block", decidedBy: "timeout", outcome: "agent-gone" });
    expect(seen.logs.at(-1)?.message).toBe("approval ended: the agent is gone");
  });
});

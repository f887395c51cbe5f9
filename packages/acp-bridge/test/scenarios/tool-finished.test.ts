/**
 * A tool call the harness allowed, reported finished by the agent, reaches the harness as
 * `post_action` (with its result status), so the harness's view of the call (the Agent Host's
 * tool call, the record) shows it done, not cut short when the turn ends. Refused calls and calls
 * that never came to the harness send none.
 */
import type { AhpEvent } from "@ahp/core";
import { afterEach, describe, expect, it } from "vitest";
import type { TurnContext } from "../helpers/agent.js";
import { OPTIONS, rig, testHarness, until, type Rig } from "../helpers/setup.js";

type Payload = Record<string, unknown>;

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** Asks permission for `command` as tool call `id`, then reports it `status` (and one ungated call `free`). */
const turn = (id: string, command: string, status: "completed" | "failed") => async (t: TurnContext) => {
  await t.update({ sessionUpdate: "tool_call", toolCallId: id, title: command, kind: "execute", status: "pending", rawInput: { command } });
  await t.client.request("session/request_permission", {
    sessionId: t.sessionId,
    toolCall: { toolCallId: id, title: command, kind: "execute", rawInput: { command } },
    options: OPTIONS,
  } as never);
  await t.update({ sessionUpdate: "tool_call_update", toolCallId: id, status });
  await t.update({ sessionUpdate: "tool_call", toolCallId: "free", title: "read", kind: "read", status: "pending" });
  await t.update({ sessionUpdate: "tool_call_update", toolCallId: "free", status: "completed" });
  await t.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } });
  return "end_turn" as const;
};

const postActions = (events: AhpEvent[]) => events.filter((e) => e.event_type === "post_action");

describe("tool calls the harness allowed", () => {
  for (const status of ["completed", "failed"] as const) {
    it(`reported ${status} by the agent: the harness gets post_action with that status`, async () => {
      const harness = await testHarness(() => ({ decision: "allow" }));
      r = await rig({ harness, agent: { turn: turn("t1", "npm test", status) } });
      const id = await r.open();
      const answer = await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "go" }] });
      expect(answer.stopReason).toBe("end_turn");
      await until(() => postActions(harness.events).length > 0, "post_action at the harness");
      // The turn's end is reported after it: nothing else can still be on its way.
      await until(
        () => harness.events.some((e) => e.event_type === "run_lifecycle" && (e.payload as Payload).status === "completed"),
        "the run's end at the harness",
      );
      const posts = postActions(harness.events);
      expect(posts).toHaveLength(1);
      expect(posts[0]!.session_id).toBe(id);
      expect(posts[0]!.payload).toMatchObject({
        action_type: "tool_call",
        tool_call_id: "t1",
        arguments: { command: "npm test" },
        result: { status, success: status === "completed" },
      });
    });
  }

  it("a call the harness refused sends no post_action", async () => {
    const harness = await testHarness(() => ({ decision: "block", reason: "no tests today" }));
    r = await rig({ harness, agent: { turn: turn("t2", "npm test", "failed") } });
    const id = await r.open();
    await r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "go" }] });
    await until(
      () => harness.events.some((e) => e.event_type === "run_lifecycle" && (e.payload as Payload).status === "completed"),
      "the run's end at the harness",
    );
    expect(harness.events.some((e) => e.event_type === "pre_action")).toBe(true);
    expect(postActions(harness.events)).toEqual([]);
  });
});

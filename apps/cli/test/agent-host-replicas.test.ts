/**
 * `ahp serve --state redis://… --agent-host …` on three replicas (child processes) sharing one
 * real redis-server: the Agent Host state travels on a Redis Stream, so an approver connected to
 * one replica answers an escalation held open on another. Readiness is awaited by polling state
 * (listSessions, /metrics), never by fixed sleeps.
 */
// Frames from the wire are read as untyped JSON in assertions; a wrong shape fails the expectation.

import { sessionUri } from "@ahp/agent-host";
import { redisSkipReason, runRedis } from "@ahp/state-redis/testing";
import { afterEach, describe, expect, it } from "vitest";
import { agent, cleanupReplicas, escalate, inspector, replicas, until, useDeployment } from "./replicas-kit.js";

const PASSWORD = "agent-host-replicas-1";
if (!runRedis) console.warn(redisSkipReason);

afterEach(cleanupReplicas);

describe.runIf(runRedis)("ahp serve --state redis:// --agent-host (replicas share approvals)", { timeout: 180_000 }, () => {
  const deployment = useDeployment(PASSWORD, "ahp-agent-host-replicas-");

  it("an approver on B (and a viewer on C) see an escalation held on A; B approves and A's agent gets allow", async () => {
    const [a, b, c] = await replicas(3, deployment.redis.url, deployment.dir);
    const human = await inspector(b!.agentHost, "approver-secret", "human-b");
    const viewer = await inspector(c!.agentHost, "viewer-secret", "viewer-c");
    const agentA = await agent(a!.ws, "repl-allow");
    const decision = escalate(agentA, "git push origin main");
    const uri = sessionUri("repl-allow");
    const entry = await human.pending(uri);
    expect(entry.toolCall.status).toBe("pending-confirmation");
    expect((await viewer.pending(uri)).id).toBe(entry.id);
    const echo = await human.answer(entry, true);
    expect(echo.params.rejectionReason).toBeUndefined();
    const result = await decision;
    expect(result.decision).toBe("allow");
    expect(result.metadata?.approved_by).toBe("alice");
    // Every replica shows the tool call as confirmed and the request gone.
    for (const client of [human, viewer]) {
      await client.next(
        (f) =>
          f.method === "action" &&
          f.params.channel === uri &&
          f.params.action.type === "session/inputNeededRemoved" &&
          f.params.action.id === entry.id,
      );
    }
  });

  it("a denial on B gives block on A, with the approver's reason", async () => {
    const [a, b] = await replicas(2, deployment.redis.url, deployment.dir);
    const human = await inspector(b!.agentHost, "approver-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-deny");
    const decision = escalate(agentA, "git push origin main");
    const entry = await human.pending(sessionUri("repl-deny"));
    const echo = await human.answer(entry, false, { reasonMessage: "not on a Friday" });
    expect(echo.params.rejectionReason).toBeUndefined();
    expect(await decision).toMatchObject({ decision: "block", reason: "not on a Friday (denied by alice)" });
  });

  it("approvers on A and B answer at once: exactly one wins, the other gets 'already resolved'", async () => {
    const [a, b] = await replicas(2, deployment.redis.url, deployment.dir);
    const onA = await inspector(a!.agentHost, "approver-secret", "human-a");
    const onB = await inspector(b!.agentHost, "approver2-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-race");
    const decision = escalate(agentA, "git push origin main");
    const uri = sessionUri("repl-race");
    const [entryA, entryB] = await Promise.all([onA.pending(uri), onB.pending(uri)]);
    const [echoA, echoB] = await Promise.all([onA.answer(entryA, true), onB.answer(entryB, false)]);
    const reasons = [echoA.params.rejectionReason, echoB.params.rejectionReason];
    expect(reasons.filter((r) => r === undefined)).toHaveLength(1);
    expect(reasons.filter((r) => r === "already resolved")).toHaveLength(1);
    const result = await decision;
    if (reasons[0] === undefined) expect(result).toMatchObject({ decision: "allow", metadata: { approved_by: "alice" } });
    else expect(result).toMatchObject({ decision: "block", reason: "Denied by bob" });
  });

  it("a viewer on B cannot answer a request held on A; an approver on B still can", async () => {
    const [a, b] = await replicas(2, deployment.redis.url, deployment.dir);
    const viewer = await inspector(b!.agentHost, "viewer-secret", "viewer-b");
    const human = await inspector(b!.agentHost, "approver-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-viewer");
    const decision = escalate(agentA, "git push origin main");
    const entry = await viewer.pending(sessionUri("repl-viewer"));
    const refused = await viewer.answer(entry, true);
    expect(refused.params.rejectionReason).toBe("approving tool calls needs the approver role");
    await human.pending(sessionUri("repl-viewer"));
    const echo = await human.answer(entry, true);
    expect(echo.params.rejectionReason).toBeUndefined();
    expect((await decision).decision).toBe("allow");
  });

  it("a replica that dies (SIGKILL) is noticed by the others: its pending tool call is skipped there and its turn cancelled", async () => {
    const [a, b] = await replicas(2, deployment.redis.url, deployment.dir);
    const human = await inspector(b!.agentHost, "approver-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-dies");
    void escalate(agentA, "git push origin main");
    const uri = sessionUri("repl-dies");
    const entry = await human.pending(uri);
    a!.child.kill("SIGKILL");
    // No heartbeat for 10 s: B marks the tool call skipped and removes the request (no fixed sleep: wait for the actions).
    const skipped = await human.next(
      (f) =>
        f.method === "action" &&
        f.params.channel === entry.chat &&
        f.params.action.type === "chat/toolCallConfirmed" &&
        f.params.action.toolCallId === entry.toolCall.toolCallId,
    );
    expect(skipped.params.action).toMatchObject({ approved: false, reason: "skipped" });
    expect(skipped.params.action.reasonMessage).toMatch(/stopped \(no heartbeat\)/);
    await human.next((f) => f.method === "action" && f.params.channel === entry.chat && f.params.action.type === "chat/turnCancelled");
    // An answer now is refused on B at once: the replica holding the request is gone.
    const refused = await human.answer(entry, true);
    expect(refused.params.rejectionReason).toBeDefined();
  });
});

describe.runIf(runRedis)("ahp serve --agent-host replicas when Redis stops", { timeout: 180_000 }, () => {
  const deployment = useDeployment(PASSWORD, "ahp-agent-host-replicas-down-");

  it("local approvals on A keep working; an answer on B fails with a clear error, a log line and a metric; all heals when Redis is back", async () => {
    const [a, b] = await replicas(2, deployment.redis.url, deployment.dir);
    const onA = await inspector(a!.agentHost, "approver-secret", "human-a");
    const onB = await inspector(b!.agentHost, "approver2-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-down");
    const uri = sessionUri("repl-down");
    const first = escalate(agentA, "git push origin main");
    const [entryA, entryB] = await Promise.all([onA.pending(uri), onB.pending(uri)]);
    await deployment.redis.stop();
    for (const r of [a!, b!])
      await until(async () => ((await r.metrics()).includes("ahp_agent_host_replication_up 0") ? true : undefined), "replication down");
    const refused = await onB.answer(entryB, true);
    expect(refused.params.rejectionReason).toMatch(/shared action log is unavailable/);
    expect(await b!.metrics()).toMatch(/ahp_agent_host_replication_failures_total [1-9]/);
    expect(b!.logs().some((l) => l.level === "warn" && l.msg === "agent-host replication")).toBe(true);
    // A approves its own request locally: the agent gets allow, no Redis needed.
    const echo = await onA.answer(entryA, true);
    expect(echo.params.rejectionReason).toBeUndefined();
    expect(await first).toMatchObject({ decision: "allow", metadata: { approved_by: "alice" } });
    // Redis back: B catches up (A appends what it could not append meanwhile) and answers the next escalation held on A.
    await deployment.redis.start();
    for (const r of [a!, b!])
      await until(async () => {
        // The policy's state store too: while it is down, the policy fails closed (block) instead of escalating.
        const text = await r.metrics();
        return text.includes("ahp_agent_host_replication_up 1") && text.includes("ahp_state_store_up 1") ? true : undefined;
      }, "replication and policy state up again");
    const third = escalate(agentA, "git push origin main");
    const setB = await onB.next(
      (f) =>
        f.method === "action" &&
        f.params.channel === uri &&
        f.params.action.type === "session/inputNeededSet" &&
        f.params.action.request.id !== entryA.id,
    );
    expect((await onB.answer(setB.params.action.request, true)).params.rejectionReason).toBeUndefined();
    expect(await third).toMatchObject({ decision: "allow", metadata: { approved_by: "bob" } });
  });
});

/**
 * `ahp serve --state redis://… --agent-host …` replicas (child processes, one real redis-server)
 * across their lifetimes: `agent_host.replicate: false` keeps their Agent Hosts apart while the
 * policy state stays shared; a clean stop (SIGTERM) says goodbye so the others end its sessions at
 * once; after a replica dies the others show its sessions ended, in the catalogue and in a fresh
 * snapshot. Waits poll state (listSessions, /metrics, frames), never fixed sleeps.
 */
// Frames from the wire are read as untyped JSON in assertions; a wrong shape fails the expectation.

import type { ChildProcess } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sessionUri } from "@ahp/agent-host";
import { RedisActionStream } from "@ahp/state-redis";
import { redisSkipReason, runRedis } from "@ahp/state-redis/testing";
import { afterEach, describe, expect, it } from "vitest";
import { agent, cleanupReplicas, escalate, inspector, replica, replicas, until, useDeployment } from "./replicas-kit.js";

const ROOT = "ahp-root://";
const PASSWORD = "agent-host-replicas-2";
if (!runRedis) console.warn(redisSkipReason);

const streams: RedisActionStream[] = [];
afterEach(async () => {
  await Promise.allSettled(streams.splice(0).map((s) => s.close()));
  await cleanupReplicas();
});

/** Tails the shared action log (from its current end) as any replica does; `sync` waits until everything appended before it was read. */
async function tailLog(redisUrl: string) {
  const stream = new RedisActionStream({ url: redisUrl, password: PASSWORD, key: "ahp:agent-host:actions" });
  const seen: Array<Record<string, unknown>> = [];
  let tailing = false;
  stream.subscribe({
    entries: (list) => seen.push(...list.map((e) => JSON.parse(e) as Record<string, unknown>)),
    connected: () => (tailing = true),
  });
  streams.push(stream);
  await until(() => (tailing ? true : undefined), "the test's tail of the log");
  let marks = 0;
  return {
    seen,
    async sync(): Promise<void> {
      const mark = `test-mark-${++marks}`;
      await stream.publish([JSON.stringify({ r: mark, k: "test" })]);
      await until(() => (seen.some((e) => e.r === mark) ? true : undefined), "the log read up to now");
    },
    /** Entries of replicas (without the test's own marks). */
    replicas: () => seen.filter((e) => typeof e.r === "string" && !e.r.startsWith("test-mark-")),
  };
}

const exitOf = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });

const listed = async (client: Awaited<ReturnType<typeof inspector>>) =>
  ((await client.request("listSessions", { channel: "ahp-root://" })).result.items as Array<{ resource: string; status: number }>).map(
    (s) => s.resource,
  );

describe.runIf(runRedis)("ahp serve --agent-host replicas: lifecycle", { timeout: 180_000 }, () => {
  const deployment = useDeployment(PASSWORD, "ahp-agent-host-replicas-life-");

  it("a clean stop (SIGTERM) of A says goodbye: B ends A's session, skips its pending tool call, and A's agent is failed closed", async () => {
    const [a, b] = await replicas(2, deployment.redis.url, deployment.dir);
    const human = await inspector(b!.agentHost, "approver-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-bye");
    const decision = escalate(agentA, "git push origin main").then(
      (d) => d,
      (error: unknown) => ({ decision: "failed", reason: String(error) }),
    );
    const uri = sessionUri("repl-bye");
    const entry = await human.pending(uri);
    const root = await human.request("subscribe", { channel: "ahp-root://" });
    expect(root.result.snapshot.state.activeSessions).toBe(1);
    const log = await tailLog(deployment.redis.url);
    const mark = human.frames.length;
    const exited = exitOf(a!.child);
    a!.child.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    // A failed its agent's held request closed: never an allow.
    expect((await decision).decision).not.toBe("allow");
    // A's last entry in the shared log is its goodbye.
    const aId = a!.logs().find((l) => l.msg === "agent-host replication" && typeof l.replica_id === "string")?.replica_id;
    expect(aId).toBeDefined();
    await log.sync();
    const own = log.replicas().filter((e) => e.r === aId);
    expect(own.at(-1)).toMatchObject({ k: "bye" });
    // B: the tool call is skipped (not approved), the turn cancelled, the request gone, the session no longer active.
    const skipped = await human.next(
      (f) =>
        f.method === "action" &&
        f.params.channel === entry.chat &&
        f.params.action.type === "chat/toolCallConfirmed" &&
        f.params.action.toolCallId === entry.toolCall.toolCallId,
    );
    expect(skipped.params.action).toMatchObject({ approved: false });
    expect(skipped.params.action.reasonMessage ?? "").not.toMatch(/no heartbeat/);
    await human.next((f) => f.method === "action" && f.params.channel === entry.chat && f.params.action.type === "chat/turnCancelled");
    await human.next(
      (f) =>
        f.method === "action" &&
        f.params.channel === ROOT &&
        f.params.action.type === "root/activeSessionsChanged" &&
        f.params.action.activeSessions === 0,
    );
    // Ended by the goodbye, not by the dead-replica timeout: the log shows no heartbeat-based verdict.
    expect(human.frames.slice(mark).some((f) => JSON.stringify(f).includes("(no heartbeat)"))).toBe(false);
    const refused = await human.answer(entry, true);
    expect(refused.params.rejectionReason).toBeDefined();
  });

  it("after A dies, B's catalogue shows A's session ended and a fresh subscriber on B gets a consistent snapshot", async () => {
    const [a, b] = await replicas(2, deployment.redis.url, deployment.dir);
    const human = await inspector(b!.agentHost, "approver-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-gone");
    void escalate(agentA, "git push origin main");
    const uri = sessionUri("repl-gone");
    const entry = await human.pending(uri);
    expect((await human.request("subscribe", { channel: ROOT })).result.snapshot.state.activeSessions).toBe(1);
    const metrics = await b!.metrics();
    expect(metrics).toContain("ahp_agent_host_remote_sessions 1");
    expect(metrics).toMatch(/ahp_agent_host_replication_entries\{direction="applied"\} [1-9]/);
    a!.child.kill("SIGKILL");
    await human.next((f) => f.method === "action" && f.params.channel === entry.chat && f.params.action.type === "chat/turnCancelled");
    // A client that connects to B afresh.
    const fresh = await inspector(b!.agentHost, "viewer-secret", "fresh-b");
    const root = await fresh.request("subscribe", { channel: ROOT });
    expect(root.result.snapshot.state.activeSessions).toBe(0);
    const items = (await fresh.request("listSessions", { channel: ROOT })).result.items as Array<{ resource: string; status: number }>;
    const summary = items.find((s) => s.resource === uri);
    // Kept (ended) until the retention time, as the host's own ended sessions are; no longer waiting for input.
    expect(summary).toBeDefined();
    expect(summary!.status & 0b11111).not.toBe(24);
    const session = (await fresh.request("subscribe", { channel: uri })).result.snapshot.state;
    expect(session.inputNeeded ?? []).toEqual([]);
    const chat = (await fresh.request("subscribe", { channel: entry.chat })).result.snapshot.state;
    expect(chat.activeTurn).toBeUndefined();
    const parts = (chat.turns.at(-1)?.responseParts ?? []) as Array<Record<string, any>>;
    const call = parts.find((p) => p.kind === "toolCall" && p.toolCall.toolCallId === entry.toolCall.toolCallId);
    expect(call?.toolCall).toMatchObject({ status: "cancelled" });
    // The old subscriber's reduced view agrees with the fresh snapshot.
    await human.next(
      (f) =>
        f.method === "action" &&
        f.params.channel === ROOT &&
        f.params.action.type === "root/activeSessionsChanged" &&
        f.params.action.activeSessions === 0,
    );
    const oldRoot = human.frames.filter(
      (f) => f.method === "action" && f.params.channel === ROOT && f.params.action.type === "root/activeSessionsChanged",
    );
    expect(oldRoot.at(-1)?.params.action.activeSessions).toBe(0);
  });
});

describe.runIf(runRedis)("ahp serve --agent-host with agent_host.replicate: false", { timeout: 180_000 }, () => {
  const deployment = useDeployment(PASSWORD, "ahp-agent-host-replicas-apart-");

  it("keeps the replicas' sessions apart while the policy state (a global rate limit) is still shared", async () => {
    const config = join(deployment.dir, "ahp.config.yaml");
    await writeFile(
      config,
      [
        "agent_host:",
        "  listen: 127.0.0.1:0",
        `  token_file: ${JSON.stringify(join(deployment.dir, "tokens"))}`,
        "  replicate: false",
        "",
      ].join("\n"),
    );
    const policy = join(deployment.dir, "policy.yaml");
    await writeFile(
      policy,
      [
        "version: 1",
        "rules:",
        "  - id: global-rate",
        "    events: pre_action",
        "    rate_limit: { scope: global, rate: 1, interval_ms: 600000, burst: 2 }",
        "",
      ].join("\n"),
    );
    const extra = ["--config", config, "--policy", policy];
    const log = await tailLog(deployment.redis.url);
    const [a, b] = await Promise.all([
      replica(deployment.redis.url, deployment.dir, extra),
      replica(deployment.redis.url, deployment.dir, extra),
    ]);
    for (const r of [a, b]) await until(async () => ((await r.metrics()).includes("ahp_state_store_up 1") ? true : undefined), "state up");
    const agentA = await agent(a.ws, "apart-a");
    for (let i = 0; i < 2; i++) expect((await escalate(agentA, "ls")).decision).toBe("allow");
    // The tokens A spent are gone on B too: the policy state is shared.
    const agentB = await agent(b.ws, "apart-b");
    expect((await escalate(agentB, "ls")).decision).toBe("defer");
    const onA = await inspector(a.agentHost, "viewer-secret", "viewer-a");
    const onB = await inspector(b.agentHost, "viewer-secret", "viewer-b");
    await until(async () => ((await listed(onA)).includes(sessionUri("apart-a")) ? true : undefined), "A lists its session");
    await until(async () => ((await listed(onB)).includes(sessionUri("apart-b")) ? true : undefined), "B lists its session");
    // No shared action log at all: no replication metrics, nothing appended to the stream.
    for (const r of [a, b]) expect(await r.metrics()).not.toContain("ahp_agent_host_replication_up");
    await log.sync();
    expect(log.replicas()).toEqual([]);
    expect(await listed(onA)).not.toContain(sessionUri("apart-b"));
    expect(await listed(onB)).not.toContain(sessionUri("apart-a"));
    for (const r of [a, b]) expect(r.logs().some((l) => l.msg === "agent-host replication")).toBe(false);
  });
});

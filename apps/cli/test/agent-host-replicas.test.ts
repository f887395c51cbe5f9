/**
 * `ahp serve --state redis://… --agent-host …` on three replicas (child processes) sharing one
 * real redis-server: the Agent Host state travels on a Redis Stream, so an approver connected to
 * one replica answers an escalation held open on another. Readiness is awaited by polling state
 * (listSessions, /metrics), never by fixed sleeps.
 */
// Frames from the wire are read as untyped JSON in assertions; a wrong shape fails the expectation.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AhpClient } from "@ahp/core";
import { sessionUri } from "@ahp/agent-host";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { redisSkipReason, runRedis, startRedis, type RedisProcess } from "@ahp/state-redis/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";

const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const PASSWORD = "agent-host-replicas-1";
const TOKENS = "approver-secret alice approver\napprover2-secret bob approver\nviewer-secret vera viewer\n";
if (!runRedis) console.warn(redisSkipReason);

const running: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const agents: AhpClient[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.close();
  await Promise.allSettled(agents.splice(0).map((a) => a.close()));
  await Promise.all(
    running.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
});

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Replica {
  child: ChildProcess;
  ws: string;
  agentHost: string;
  metrics: () => Promise<string>;
  logs: () => Array<Record<string, unknown>>;
}

async function replica(redisUrl: string, dir: string): Promise<Replica> {
  const args = [
    "serve",
    "--ws",
    "127.0.0.1:0",
    "--agent-host",
    "127.0.0.1:0",
    "--agent-host-token-file",
    join(dir, "tokens"),
    "--approval-timeout-ms",
    "120000",
    "--state",
    redisUrl,
    "--state-password-file",
    join(dir, "redis.pass"),
    "--log-level",
    "debug",
  ];
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  running.push(child);
  let stderr = "";
  const logs = () =>
    stderr
      .split("\n")
      .filter((l) => l.trim().startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const urls = await new Promise<{ ws: string; agentHost: string }>((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      const listening = logs().filter((l) => l.msg === "listening");
      const ws = listening.find((l) => l.transport === "ws")?.url as string | undefined;
      const agentHost = listening.find((l) => l.transport === "agent-host")?.url as string | undefined;
      if (ws !== undefined && agentHost !== undefined) resolve({ ws, agentHost });
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  const metricsUrl = new URL("/metrics", urls.ws.replace(/^ws/, "http")).toString();
  const metrics = async () => (await fetch(metricsUrl)).text();
  return { child, ...urls, metrics, logs };
}

/** Starts `n` replicas on one Redis and waits until each one tails the shared log. */
async function replicas(n: number, redisUrl: string, dir: string): Promise<Replica[]> {
  const out = await Promise.all(Array.from({ length: n }, () => replica(redisUrl, dir)));
  for (const r of out)
    await until(async () => ((await r.metrics()).includes("ahp_agent_host_replication_up 1") ? true : undefined), "replication up");
  return out;
}

/** A minimal Agent Host client: JSON-RPC over one socket, frames collected. */
async function inspector(url: string, token: string, clientId: string) {
  const ws = new WebSocket(`${url}?token=${token}`);
  sockets.push(ws);
  const frames: Array<Record<string, any>> = [];
  const waiters: Array<{ test: (f: Record<string, any>) => boolean; resolve: (f: Record<string, any>) => void }> = [];
  ws.on("message", (data: Buffer) => {
    const f = JSON.parse(data.toString()) as Record<string, unknown>;
    frames.push(f);
    for (const w of [...waiters]) {
      if (!w.test(f)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(f);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  let id = 0;
  let seq = 0;
  const next = (test: (f: Record<string, any>) => boolean) => {
    const found = frames.find(test);
    return found !== undefined ? Promise.resolve(found) : new Promise<Record<string, any>>((resolve) => waiters.push({ test, resolve }));
  };
  const request = async (method: string, params: Record<string, unknown>) => {
    const rid = ++id;
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: rid, method, params }));
    return next((f) => f.id === rid);
  };
  const init = await request("initialize", { channel: "ahp-root://", protocolVersions: ["1.1.0"], clientId, initialSubscriptions: [] });
  expect(init.result.protocolVersion).toBe("1.1.0");
  /** Waits until this replica lists the session, subscribes, and resolves with its pending tool confirmation. */
  const pending = async (session: string) => {
    await until(async () => {
      const list = await request("listSessions", { channel: "ahp-root://" });
      return (list.result.items as Array<{ resource: string }>).some((s) => s.resource === session) ? true : undefined;
    }, `session ${session} listed`);
    const snap = await request("subscribe", { channel: session });
    let entry = (snap.result.snapshot.state.inputNeeded as Array<Record<string, any>> | undefined)?.find(
      (r) => r.kind === "toolConfirmation",
    );
    if (entry === undefined) {
      const set = await next(
        (f) => f.method === "action" && f.params.channel === session && f.params.action.type === "session/inputNeededSet",
      );
      entry = set.params.action.request as Record<string, any>;
    }
    // Answers and their echoes (or rejections) travel on the chat channel.
    await request("subscribe", { channel: entry.chat });
    return entry;
  };
  /** Answers a pending tool call; resolves with this client's own action echo (with `rejectionReason` when rejected). */
  const answer = (entry: Record<string, any>, approved: boolean, extra: Record<string, unknown> = {}) => {
    const clientSeq = ++seq;
    ws.send(
      JSON.stringify({
        jsonrpc: "2.0",
        method: "dispatchAction",
        params: {
          channel: entry.chat,
          clientSeq,
          action: {
            type: "chat/toolCallConfirmed",
            turnId: entry.turnId,
            toolCallId: entry.toolCall.toolCallId,
            approved,
            ...(approved ? { confirmed: "user-action" } : { reason: "denied" }),
            ...extra,
          },
        },
      }),
    );
    return next((f) => f.method === "action" && f.params.origin?.clientId === clientId && f.params.origin?.clientSeq === clientSeq);
  };
  return { ws, frames, next, request, pending, answer };
}

async function agent(url: string, sessionId: string): Promise<AhpClient> {
  const client = new AhpClient({ sessionId, agentId: "main", timeoutMs: 0 });
  await client.connect(new WebSocketClientTransport(url), { capabilities: ["pre_action"] });
  agents.push(client);
  return client;
}

type Decision = { decision: string; reason?: string; metadata?: Record<string, unknown> };

/** Sends an escalated `pre_action`; a failed test closes the agent, so the promise is marked handled. */
function escalate(client: AhpClient, command: string): Promise<Decision> {
  const p = client.send("pre_action", { tool_name: "bash", arguments: { command } }) as Promise<Decision>;
  p.catch(() => undefined);
  return p;
}

describe.runIf(runRedis)("ahp serve --state redis:// --agent-host (replicas share approvals)", { timeout: 180_000 }, () => {
  let redis: RedisProcess;
  let dir: string;
  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
    dir = await mkdtemp(join(tmpdir(), "ahp-agent-host-replicas-"));
    await writeFile(join(dir, "redis.pass"), `${PASSWORD}\n`, { mode: 0o600 });
    await writeFile(join(dir, "tokens"), TOKENS, { mode: 0o600 });
  });
  afterAll(async () => {
    await redis?.dispose();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("an approver on B (and a viewer on C) see an escalation held on A; B approves and A's agent gets allow", async () => {
    const [a, b, c] = await replicas(3, redis.url, dir);
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
    const [a, b] = await replicas(2, redis.url, dir);
    const human = await inspector(b!.agentHost, "approver-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-deny");
    const decision = escalate(agentA, "git push origin main");
    const entry = await human.pending(sessionUri("repl-deny"));
    const echo = await human.answer(entry, false, { reasonMessage: "not on a Friday" });
    expect(echo.params.rejectionReason).toBeUndefined();
    expect(await decision).toMatchObject({ decision: "block", reason: "not on a Friday" });
  });

  it("approvers on A and B answer at once: exactly one wins, the other gets 'already resolved'", async () => {
    const [a, b] = await replicas(2, redis.url, dir);
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
    const [a, b] = await replicas(2, redis.url, dir);
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
    const [a, b] = await replicas(2, redis.url, dir);
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
  let redis: RedisProcess;
  let dir: string;
  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
    dir = await mkdtemp(join(tmpdir(), "ahp-agent-host-replicas-down-"));
    await writeFile(join(dir, "redis.pass"), `${PASSWORD}\n`, { mode: 0o600 });
    await writeFile(join(dir, "tokens"), TOKENS, { mode: 0o600 });
  });
  afterAll(async () => {
    await redis?.dispose();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("local approvals on A keep working; an answer on B fails with a clear error, a log line and a metric; all heals when Redis is back", async () => {
    const [a, b] = await replicas(2, redis.url, dir);
    const onA = await inspector(a!.agentHost, "approver-secret", "human-a");
    const onB = await inspector(b!.agentHost, "approver2-secret", "human-b");
    const agentA = await agent(a!.ws, "repl-down");
    const uri = sessionUri("repl-down");
    const first = escalate(agentA, "git push origin main");
    const [entryA, entryB] = await Promise.all([onA.pending(uri), onB.pending(uri)]);
    await redis.stop();
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
    await redis.start();
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

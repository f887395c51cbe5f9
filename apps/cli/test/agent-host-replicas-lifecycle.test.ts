/**
 * `ahp serve --state redis://… --agent-host …` replicas (child processes, one real redis-server)
 * across their lifetimes: `agent_host.replicate: false` keeps their Agent Hosts apart while the
 * policy state stays shared; a clean stop (SIGTERM) says goodbye so the others end its sessions at
 * once; after a replica dies the others show its sessions ended, in the catalogue and in a fresh
 * snapshot. Waits poll state (listSessions, /metrics, frames), never fixed sleeps.
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
import { RedisActionStream } from "@ahp/state-redis";
import { redisSkipReason, runRedis, startRedis, type RedisProcess } from "@ahp/state-redis/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";

const ROOT = "ahp-root://";
const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const PASSWORD = "agent-host-replicas-2";
const TOKENS = "approver-secret alice approver\napprover2-secret bob approver\nviewer-secret vera viewer\n";
if (!runRedis) console.warn(redisSkipReason);

const running: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const agents: AhpClient[] = [];
const streams: RedisActionStream[] = [];
afterEach(async () => {
  await Promise.allSettled(streams.splice(0).map((s) => s.close()));
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

async function replica(redisUrl: string, dir: string, extra: string[] = []): Promise<Replica> {
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
    ...extra,
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
  let redis: RedisProcess;
  let dir: string;
  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
    dir = await mkdtemp(join(tmpdir(), "ahp-agent-host-replicas-life-"));
    await writeFile(join(dir, "redis.pass"), `${PASSWORD}\n`, { mode: 0o600 });
    await writeFile(join(dir, "tokens"), TOKENS, { mode: 0o600 });
  });
  afterAll(async () => {
    await redis?.dispose();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("a clean stop (SIGTERM) of A says goodbye: B ends A's session, skips its pending tool call, and A's agent is failed closed", async () => {
    const [a, b] = await replicas(2, redis.url, dir);
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
    const log = await tailLog(redis.url);
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
    const [a, b] = await replicas(2, redis.url, dir);
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
  let redis: RedisProcess;
  let dir: string;
  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
    dir = await mkdtemp(join(tmpdir(), "ahp-agent-host-replicas-apart-"));
    await writeFile(join(dir, "redis.pass"), `${PASSWORD}\n`, { mode: 0o600 });
    await writeFile(join(dir, "tokens"), TOKENS, { mode: 0o600 });
  });
  afterAll(async () => {
    await redis?.dispose();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("keeps the replicas' sessions apart while the policy state (a global rate limit) is still shared", async () => {
    const config = join(dir, "ahp.config.yaml");
    await writeFile(
      config,
      ["agent_host:", "  listen: 127.0.0.1:0", `  token_file: ${JSON.stringify(join(dir, "tokens"))}`, "  replicate: false", ""].join("\n"),
    );
    const policy = join(dir, "policy.yaml");
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
    const log = await tailLog(redis.url);
    const [a, b] = await Promise.all([replica(redis.url, dir, extra), replica(redis.url, dir, extra)]);
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

/**
 * Confirmations answered across replicas (ADR 0085): two in-process Agent Hosts share one real
 * redis-server through `RedisActionStream`, each behind a real `AhpServer` and its own loopback
 * Agent Host listener. A `confirmation` event held for a human on A (the adapter escalates it) is
 * answered by an approver connected to B: the `chat/inputCompleted` is forwarded to A, A's agent
 * gets the decision. A viewer on B is refused. Waits poll frames and state, never fixed sleeps.
 */
// Frames from the wire are read as untyped JSON in assertions; a wrong shape fails the expectation.

import { AhpClient, AhpServer, createLinkedPair } from "@ahp/core";
import { AgentHost, chatUri, listenAgentHost, sessionUri, type AgentHostListener, type TokenEntry } from "@ahp/agent-host";
import { RedisActionStream } from "@ahp/state-redis";
import { redisSkipReason, runRedis, startRedis, type RedisProcess } from "@ahp/state-redis/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";

const PASSWORD = "agent-host-replicas-3";
const TOKENS: TokenEntry[] = [
  { token: "approver-secret", principal: "alice", role: "approver" },
  { token: "viewer-secret", principal: "vera", role: "viewer" },
];
if (!runRedis) console.warn(redisSkipReason);

async function until<T>(probe: () => T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Replica {
  host: AgentHost;
  server: AhpServer;
  listener: AgentHostListener;
  stream: RedisActionStream;
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function replica(redisUrl: string, id: string): Promise<Replica> {
  const stream = new RedisActionStream({ url: redisUrl, password: PASSWORD, key: "confirm:agent-host:actions" });
  const host = new AgentHost({ replication: { relay: stream, replicaId: id } });
  // The adapter holds every confirmation for a human; everything else is allowed.
  const handlers = host.wrap({
    onEvent: () => ({ decision: "allow" as const }),
    typed: { confirmation: () => ({ decision: "escalate" as const }) },
  });
  const server = new AhpServer({ handlers, handlerFailure: "decision", handlerTimeoutMs: 0 });
  const listener = await listenAgentHost(host, { tokens: TOKENS });
  cleanup.push(async () => {
    host.dispose();
    await server.close({ graceMs: 0 });
    await listener.close();
    await stream.close();
  });
  await until(() => (host.replicationStats()?.connected ? true : undefined), `replica ${id} connected`);
  return { host, server, listener, stream };
}

async function agentOn(r: Replica, sessionId: string): Promise<AhpClient> {
  const [agentSide, harnessSide] = createLinkedPair();
  await r.server.connect(harnessSide);
  const client = new AhpClient({ sessionId, agentId: "main", timeoutMs: 0 });
  await client.connect(agentSide, { capabilities: ["pre_action"] });
  cleanup.push(() => client.close().catch(() => undefined));
  return client;
}

/** A minimal Agent Host client: JSON-RPC over one socket, frames collected. */
async function inspector(url: string, token: string, clientId: string) {
  const ws = new WebSocket(`${url}?token=${token}`);
  cleanup.push(() => ws.close());
  const frames: Array<Record<string, any>> = [];
  ws.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString()) as Record<string, any>));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  let id = 0;
  let seq = 0;
  const next = (test: (f: Record<string, any>) => boolean) => until(() => frames.find(test), "a frame");
  const request = (method: string, params: Record<string, unknown>) => {
    const rid = ++id;
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: rid, method, params }));
    return next((f) => f.id === rid);
  };
  const init = await request("initialize", { channel: "ahp-root://", protocolVersions: ["1.1.0"], clientId, initialSubscriptions: [] });
  expect(init.result.protocolVersion).toBe("1.1.0");
  /** Dispatches `action` on `channel`; resolves with this client's own echo (with `rejectionReason` when rejected). */
  const dispatch = (channel: string, action: Record<string, unknown>) => {
    const clientSeq = ++seq;
    ws.send(JSON.stringify({ jsonrpc: "2.0", method: "dispatchAction", params: { channel, clientSeq, action } }));
    return next((f) => f.method === "action" && f.params.origin?.clientId === clientId && f.params.origin?.clientSeq === clientSeq);
  };
  return { frames, next, request, dispatch };
}

const approveAnswer = (requestId: string) => ({
  type: "chat/inputCompleted",
  requestId,
  response: "accept",
  answers: { decision: { state: "submitted", value: { kind: "selected", value: "approve" } } },
});

describe.runIf(runRedis)("confirmations held on one replica, answered on another (real redis-server)", { timeout: 180_000 }, () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis({ password: PASSWORD });
  });
  afterAll(async () => {
    await redis?.dispose();
  });

  it("an approver on B answers a confirmation held on A and A's agent gets the decision; a viewer on B cannot answer", async () => {
    const a = await replica(redis.url, "replica-a");
    const b = await replica(redis.url, "replica-b");
    const agent = await agentOn(a, "confirm-1");
    const uri = sessionUri("confirm-1");
    const chat = chatUri("confirm-1", "main");
    await until(() => (b.host.store.has(chat) ? true : undefined), "A's chat mirrored on B");
    const alice = await inspector(b.listener.url, "approver-secret", "alice-b");
    const vera = await inspector(b.listener.url, "viewer-secret", "vera-b");
    for (const c of [alice, vera]) {
      await c.request("subscribe", { channel: uri });
      await c.request("subscribe", { channel: chat });
    }

    let settled = false;
    const decision = agent.send("confirmation", { session_id: "confirm-1", confirmation_type: "user_confirm", message: "Deploy to prod?" });
    void decision.then(
      () => (settled = true),
      () => (settled = true),
    );
    const set = await alice.next(
      (f) => f.method === "action" && f.params.channel === uri && f.params.action.type === "session/inputNeededSet",
    );
    const entry = set.params.action.request as Record<string, any>;
    expect(entry.kind).toBe("chatInput");
    const requestId = entry.request.id as string;

    // The viewer is refused on B, before anything is forwarded; the request stays held on A.
    const refused = await vera.dispatch(chat, approveAnswer(requestId));
    expect(refused.params.rejectionReason).toBe("answering input requests needs the approver role");
    expect(b.host.replicationStats()?.forwarded).toBe(0);
    expect(settled).toBe(false);

    // The approver's answer goes to A: A's agent gets the decision, B's client its own action confirmed.
    const echo = await alice.dispatch(chat, approveAnswer(requestId));
    expect(echo.params.rejectionReason).toBeUndefined();
    expect(await decision).toEqual({ decision: "approve" });
    expect(b.host.replicationStats()).toMatchObject({ forwarded: 1, forwardFailures: 0 });
    for (const c of [alice, vera])
      await c.next(
        (f) =>
          f.method === "action" &&
          f.params.channel === uri &&
          f.params.action.type === "session/inputNeededRemoved" &&
          f.params.action.id === entry.id,
      );
    // A records B's approver as the one who decided.
    const onA = JSON.stringify(a.host.store.get(chat));
    expect(onA).toContain("Confirmation approved by alice");
    // A second answer to the same request is refused by A (already answered), and B shows the refusal.
    const late = await alice.dispatch(chat, approveAnswer(requestId));
    expect(late.params.rejectionReason).toBeDefined();
  });
});

/**
 * Helpers of the `ahp serve` replica tests (child processes sharing one real redis-server):
 * starting replicas and waiting until they tail the shared log, a minimal Agent Host client,
 * agents that send escalated `pre_action` events, and the cleanup after each test.
 */
// Frames from the wire are read as untyped JSON in assertions; a wrong shape fails the expectation.

import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AhpClient } from "@ahp/core";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { startRedis, type RedisProcess } from "@ahp/state-redis/testing";
import { afterAll, beforeAll, expect } from "vitest";
import type { WebSocket } from "ws";
import { agentHostSocket, serveWithAgentHost, type ServedHarness } from "./agent-host-socket.js";

export const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
export const TOKENS = "approver-secret alice approver\napprover2-secret bob approver\nviewer-secret vera viewer\n";

const running: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const agents: AhpClient[] = [];
/** Stops what the tests started: sockets, agents, then the replicas (SIGTERM). Registered with afterEach by each file. */
export async function cleanupReplicas(): Promise<void> {
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
}

export async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface Replica extends ServedHarness {
  metrics: () => Promise<string>;
}

export async function replica(redisUrl: string, dir: string, extra: string[] = []): Promise<Replica> {
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
  const served = await serveWithAgentHost(BIN, args, running);
  const metricsUrl = new URL("/metrics", served.ws.replace(/^ws/, "http")).toString();
  const metrics = async () => (await fetch(metricsUrl)).text();
  return { ...served, metrics };
}

/** Starts `n` replicas on one Redis and waits until each one tails the shared log. */
export async function replicas(n: number, redisUrl: string, dir: string): Promise<Replica[]> {
  const out = await Promise.all(Array.from({ length: n }, () => replica(redisUrl, dir)));
  for (const r of out)
    await until(async () => ((await r.metrics()).includes("ahp_agent_host_replication_up 1") ? true : undefined), "replication up");
  return out;
}

/** A minimal Agent Host client: JSON-RPC over one socket, frames collected. */
export async function inspector(url: string, token: string, clientId: string) {
  const { ws, frames, next, request } = await agentHostSocket(url, token);
  sockets.push(ws);
  let seq = 0;
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

export async function agent(url: string, sessionId: string): Promise<AhpClient> {
  const client = new AhpClient({ sessionId, agentId: "main", timeoutMs: 0 });
  await client.connect(new WebSocketClientTransport(url), { capabilities: ["pre_action"] });
  agents.push(client);
  return client;
}

export type Decision = { decision: string; reason?: string; metadata?: Record<string, unknown> };

/** Sends an escalated `pre_action`; a failed test closes the agent, so the promise is marked handled. */
export function escalate(client: AhpClient, command: string): Promise<Decision> {
  const p = client.send("pre_action", { tool_name: "bash", arguments: { command } }) as Promise<Decision>;
  p.catch(() => undefined);
  return p;
}

/**
 * Registers, in the calling `describe`, a real redis-server (with `password`) and a folder holding
 * its password file and the tokens file; both exist from `beforeAll` to `afterAll`.
 */
export function useDeployment(password: string, prefix: string): { readonly redis: RedisProcess; readonly dir: string } {
  const state = {} as { redis: RedisProcess; dir: string };
  beforeAll(async () => {
    state.redis = await startRedis({ password });
    state.dir = await mkdtemp(join(tmpdir(), prefix));
    await writeFile(join(state.dir, "redis.pass"), `${password}\n`, { mode: 0o600 });
    await writeFile(join(state.dir, "tokens"), TOKENS, { mode: 0o600 });
  });
  afterAll(async () => {
    await state.redis?.dispose();
    if (state.dir !== undefined) await rm(state.dir, { recursive: true, force: true });
  });
  return state;
}

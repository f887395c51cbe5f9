/**
 * The Agent Host adapter (`@ahp/agent-host`), three figures, each against a floor measured in the
 * same run:
 *
 * 1. Forward path: harness decisions per second (one agent, in-memory transport, a `pre_action`
 *    decision plus its `post_action`, a run every 50 tool calls) with the adapter on and 10
 *    subscribed WebSocket clients, against the same harness with the adapter off. Target >= 0.8x.
 *    Every client must receive every envelope of every run, in order (checked after each run; a
 *    gap, a missing envelope or a closed client fails the suite). Measured twice: with the
 *    in-memory agent (all operations of a run in one event-loop turn, so the adapter's per-turn
 *    batching applies across operations) and with one operation per event-loop turn (as an agent
 *    on a real transport: no batching across operations). Beside both, a lower bound: the
 *    adapter-off harness sending only the adapter's frames to the same clients (`bareSender`).
 * 2. Fan-out: from a harness event (`post_response`) to its action frame at the last of 100
 *    subscribed clients, p50/p99; floor: the same frame sent by a bare `ws` server to 100 clients.
 * 3. Reconnect with replay of 1,000 envelopes until the client's state has converged; floor: a
 *    fresh client receiving the same channels as snapshots (`initialize`).
 *
 * In 1 the clients run in a child process (`peers/agent-host-clients.mjs`) and parse every
 * frame there, so the figure is the harness's own cost (projecting, encoding, sending). In 2 and 3
 * they run in the same process as the host (they only count frames, except in 3), so their
 * receive cost is part of those figures.
 */
import { AhpClient, AhpServer, createLinkedPair, type AhpServerHandlers } from "@ahp/core";
import { AgentHost, AgentHostClient, listenAgentHost, type AgentHostListener, type ChatState, type SocketLike } from "@ahp/agent-host";
import { fork } from "node:child_process";
import http from "node:http";
import type { Duplex } from "node:stream";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { WebSocket, WebSocketServer } from "ws";
import { interleaved, medianMeasurement, percentile, throughputRatio, type Measurement, type Row, type Suite } from "../harness.js";

const TOKENS = [{ token: "bench-token", principal: "bench", role: "viewer" as const }];
const SESSION = "bench-session";

async function harness(withHost: boolean) {
  const host = withHost ? new AgentHost({ retentionMs: 60_000 }) : undefined;
  const handlers: AhpServerHandlers = { onEvent: () => ({ decision: "allow" }) };
  const server = new AhpServer({ handlers: host === undefined ? handlers : host.wrap(handlers) });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const agent = new AhpClient({ sessionId: SESSION, agentId: "main", timeoutMs: 0 });
  await agent.connect(agentSide, { capabilities: ["pre_action"] });
  const listener = host === undefined ? undefined : await listenAgentHost(host, { tokens: TOKENS });
  return { host, server, agent, listener };
}

/** Opens `n` sockets that initialize and subscribe to `channels`; each counts the frames it receives. */
async function counters(listener: AgentHostListener, n: number, channels: string[]) {
  const sockets: WebSocket[] = [];
  const counts: number[] = new Array<number>(n).fill(0);
  const waiters: Array<{ index: number; at: number; resolve: () => void }> = [];
  for (let i = 0; i < n; i++) {
    const ws = new WebSocket(`${listener.url}?token=bench-token`);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const initialized = new Promise<void>((resolve) => ws.once("message", () => resolve()));
    ws.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { channel: "ahp-root://", protocolVersions: ["1.1.0"], clientId: `bench-${i}`, initialSubscriptions: channels },
      }),
    );
    await initialized;
    ws.on("message", () => {
      counts[i]!++;
      for (const w of [...waiters]) {
        if (w.index === i && counts[i]! >= w.at) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
    sockets.push(ws);
  }
  const reach = (index: number, at: number) =>
    counts[index]! >= at ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ index, at, resolve }));
  return { sockets, counts, reach, close: () => sockets.forEach((s) => s.terminate()) };
}

/** One harness operation: a pre_action decision and its post_action; a new run every 50 calls. */
function forwardOp(agent: AhpClient) {
  let n = 0;
  let run = 0;
  return async () => {
    if (n % 50 === 0) {
      if (run > 0)
        await agent.send("run_lifecycle", {
          run_id: `r${run}`,
          session_id: SESSION,
          status: "completed",
          updated_at: "2026-11-01T00:00:00Z",
        });
      run++;
      await agent.send("run_lifecycle", {
        run_id: `r${run}`,
        session_id: SESSION,
        status: "executing",
        prompt: "bench",
        updated_at: "2026-11-01T00:00:00Z",
      });
    }
    const id = `tc-${n++}`;
    await agent.send("pre_action", { tool_name: "bash", tool_call_id: id, arguments: { command: "npm test" } });
    await agent.send("post_action", { tool_name: "bash", tool_call_id: id, result: { status: "ok", output: "ok" } });
  };
}

const PEER = fileURLToPath(new URL("../peers/agent-host-clients.mjs", import.meta.url));

type PeerMessage = { type: "ready" } | { type: "count"; counts: number[]; closed: number; gaps: number; lastSeq: number[] };

/**
 * `n` subscribed clients in a child process (`peers/agent-host-clients.mjs`): they decode every
 * frame there, so the harness process pays only for producing and sending the frames.
 */
async function peerClients(url: string, n: number, channels: string[]) {
  const child = fork(PEER, [url, String(n), ...channels], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = () =>
    new Promise<PeerMessage>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`agent-host clients peer exited (${code})`));
      child.once("exit", onExit);
      child.once("message", (m: PeerMessage) => {
        child.off("exit", onExit);
        resolve(m);
      });
    });
  const ready = await next();
  if (ready.type !== "ready") throw new Error("agent-host clients peer did not start");
  const count = async () => {
    child.send({ type: "count" });
    const m = await next();
    if (m.type !== "count") throw new Error("agent-host clients peer: unexpected answer");
    return m;
  };
  /** Resolves once every client has received the action envelope `seq` (all envelopes before it, in order); fails when one was closed or missed one. */
  const delivered = async (seq: number): Promise<void> => {
    child.send({ type: "await", seq });
    const m = await next();
    if (m.type !== "count") throw new Error("agent-host clients peer: unexpected answer");
    if (m.closed > 0) throw new Error(`${m.closed} subscribed clients were closed by the host`);
    if (m.gaps > 0) throw new Error(`subscribed clients saw ${m.gaps} envelopes out of order or missing`);
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.send({ type: "stop" });
    });
  return { count, delivered, stop };
}

/**
 * Like `measureSequential`, with the same procedure for both sides: the timed part of a run is
 * the operations plus one event-loop turn (so frames the adapter queued for the end of the turn
 * are written inside it); then, untimed, `delivered()` checks that every subscribed client has
 * received every envelope of the run, in order. `cpuUsPerOp` covers everything, including the
 * writes that drain while the clients read, so no work can hide outside the figure.
 */
async function measureDelivered(
  op: () => Promise<void>,
  delivered: () => Promise<void>,
  { iterations, runs, warmup }: { iterations: number; runs: number; warmup: number },
): Promise<Measurement> {
  for (let i = 0; i < warmup; i++) await op();
  await delivered();
  const rates: number[] = [];
  const cpuStart = process.cpuUsage();
  for (let r = 0; r < runs; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) await op();
    await new Promise<void>((resolve) => setImmediate(resolve));
    rates.push(iterations / (Number(process.hrtime.bigint() - start) / 1e9));
    await delivered();
  }
  const cpu = process.cpuUsage(cpuStart);
  rates.sort((a, b) => a - b);
  return { opsPerSec: rates[Math.floor(rates.length / 2)]!, cpuUsPerOp: (cpu.user + cpu.system) / (iterations * runs) };
}

/** Harness CPU per operation, floor / ours (what the harness could sustain if CPU-bound), as text. */
const cpuRatio = (ours: Measurement, floor: Measurement) =>
  `${((floor.cpuUsPerOp ?? Number.NaN) / (ours.cpuUsPerOp ?? Number.NaN)).toFixed(2)}x`;

/** The operation of an agent on a real transport: each one arrives in its own event-loop turn. */
const yielding = (op: () => Promise<void>) => async () => {
  await op();
  await new Promise<void>((resolve) => setImmediate(resolve));
};

interface ForwardFigures {
  off: Measurement;
  on: Measurement;
  bare: Measurement;
  offYielding: Measurement;
  onYielding: Measurement;
  bareYielding: Measurement;
  frames: number;
}

/**
 * The frames the adapter sends for one tool call, as action JSON (`chat/toolCallStart`,
 * `chat/toolCallReady`, `chat/toolCallComplete`) and the chat channel they go to, taken from a
 * real adapter.
 */
async function toolCallFrames(): Promise<{ channel: string; actions: string[] }> {
  const h = await harness(true);
  const actions: string[] = [];
  let channel = "";
  await h.agent.send("pre_action", { tool_name: "bash", tool_call_id: "tc-0", arguments: { command: "npm test" } });
  const stop = h.host!.store.onCommit((env) => {
    if (!env.action.type.startsWith("chat/toolCall")) return;
    channel = env.channel;
    actions.push(JSON.stringify(env.action));
  });
  await h.agent.send("pre_action", { tool_name: "bash", tool_call_id: "tc-1", arguments: { command: "npm test" } });
  await h.agent.send("post_action", { tool_name: "bash", tool_call_id: "tc-1", result: { status: "ok", output: "ok" } });
  stop();
  await h.agent.close();
  await h.server.close({ graceMs: 0 });
  await h.listener!.close();
  if (actions.length !== 3) throw new Error(`expected 3 tool-call actions, got ${actions.length}`);
  return { channel, actions };
}

/** An unmasked final WebSocket text frame (RFC 6455 §5.2), payload under 64 KiB. */
function bareTextFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const header = length < 126 ? 2 : 4;
  const out = Buffer.allocUnsafe(header + length);
  out[0] = 0x81;
  if (header === 2) out[1] = length;
  else {
    out[1] = 126;
    out.writeUInt16BE(length, 2);
  }
  out.write(text, header);
  return out;
}

/**
 * Lower bound of the forward path: the adapter-off harness plus only the sending. For every
 * `pre_action` the two frames the adapter sends and for every `post_action` or `run_lifecycle`
 * one, taken from a real adapter and complete but for their `serverSeq`, go to the clients of a
 * bare `ws` server — WebSocket-framed once, joined once per event-loop turn and written to each
 * socket in one write, as the adapter does. No projection, no reducers, no replay log, no limits.
 */
async function bareSender(frames: { channel: string; actions: string[] }) {
  const sockets: Duplex[] = [];
  let queue: Buffer[] = [];
  let seq = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const joined = Buffer.concat(queue);
    queue = [];
    for (const socket of sockets) socket.write(joined);
  };
  const prefix = `{"jsonrpc":"2.0","method":"action","params":{"channel":${JSON.stringify(frames.channel)},"serverSeq":`;
  const emit = (action: string) => {
    queue.push(bareTextFrame(`${prefix}${++seq},"action":${action}}}`));
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const [start, ready, complete] = frames.actions as [string, string, string];
  const handlers: AhpServerHandlers = {
    onEvent: (event) => {
      if (event.event_type === "pre_action") {
        emit(start);
        emit(ready);
      }
      return { decision: "allow" };
    },
    onNotification: (event) => {
      if (event.event_type === "post_action") emit(complete);
      else if (event.event_type === "run_lifecycle") emit(ready);
    },
  };
  const server = new AhpServer({ handlers });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const agent = new AhpClient({ sessionId: SESSION, agentId: "main", timeoutMs: 0 });
  await agent.connect(agentSide, { capabilities: ["pre_action"] });
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const httpServer = http.createServer((_req, res) => res.writeHead(404).end());
  httpServer.on("upgrade", (req, socket: Duplex, head: Buffer) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.once("message", (data) => {
        const { id } = JSON.parse(String(data)) as { id: number };
        ws.send(JSON.stringify({ jsonrpc: "2.0", id, result: { protocolVersion: "1.1.0", serverSeq: seq, snapshots: [] } }));
        sockets.push(socket);
      });
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", () => resolve()));
  const url = `ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}/`;
  const close = async () => {
    await agent.close();
    await server.close({ graceMs: 0 });
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => httpServer.close(() => resolve()));
  };
  return { agent, url, serverSeq: () => seq, close };
}

async function forwardPath(quick: boolean): Promise<ForwardFigures> {
  const opts = { iterations: quick ? 100 : 2000, runs: quick ? 1 : 3, warmup: quick ? 20 : 300 };
  const off = await harness(false);
  const on = await harness(true);
  await on.agent.send("session_start", {});
  const uris = AgentHost.uris(SESSION, "main");
  const clients = await peerClients(`${on.listener!.url}?token=bench-token`, 10, ["ahp-root://", uris.session, uris.chat!]);
  const bare = await bareSender(await toolCallFrames());
  const bareClients = await peerClients(bare.url, 10, ["ahp-root://", uris.session, uris.chat!]);
  const opOff = forwardOp(off.agent);
  const opOn = forwardOp(on.agent);
  const opBare = forwardOp(bare.agent);
  const none = () => Promise.resolve();
  // Every client must have received every envelope, in order (none dropped, none closed as too slow).
  const all = () => clients.delivered(on.host!.store.serverSeq);
  const bareAll = () => bareClients.delivered(bare.serverSeq());
  const results = await interleaved(
    {
      off: () => measureDelivered(opOff, none, opts),
      on: () => measureDelivered(opOn, all, opts),
      bare: () => measureDelivered(opBare, bareAll, opts),
      offYielding: () => measureDelivered(yielding(opOff), none, opts),
      onYielding: () => measureDelivered(yielding(opOn), all, opts),
      bareYielding: () => measureDelivered(yielding(opBare), bareAll, opts),
    },
    quick ? 1 : 3,
    medianMeasurement,
  );
  const { counts } = await clients.count();
  await clients.stop();
  await bareClients.stop();
  await bare.close();
  for (const h of [off, on]) {
    await h.agent.close();
    await h.server.close({ graceMs: 0 });
    await h.listener?.close();
  }
  return { ...results, frames: Math.min(...counts) };
}

async function fanOut(quick: boolean): Promise<{ ours: Measurement; floor: Measurement }> {
  const samples = quick ? 20 : 300;
  const n = 100;
  const h = await harness(true);
  const uris = AgentHost.uris(SESSION, "main");
  const clients = await counters(h.listener!, n, [uris.chat!]);
  const text = "x".repeat(200);
  const lat: number[] = [];
  for (let i = 0; i < samples + 20; i++) {
    const target = clients.counts[n - 1]! + 1;
    const t0 = process.hrtime.bigint();
    await h.agent.send("post_response", { response: text });
    // Every client must have the frame: wait for all of them, time the last.
    await Promise.all(clients.counts.map((c, index) => clients.reach(index, index === n - 1 ? target : c + 1)));
    if (i >= 20) lat.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  clients.close();
  await h.agent.close();
  await h.server.close({ graceMs: 0 });
  await h.listener!.close();

  // Floor: a bare ws server sends one frame of the same size to 100 clients.
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  const port = (wss.address() as AddressInfo).port;
  const received: number[] = new Array<number>(n).fill(0);
  let pending: { count: number; resolve: () => void } | undefined;
  const raw: WebSocket[] = [];
  for (let i = 0; i < n; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}`);
    await new Promise<void>((resolve) => ws.once("open", () => resolve()));
    ws.on("message", () => {
      received[i]!++;
      if (pending !== undefined && --pending.count === 0) pending.resolve();
    });
    raw.push(ws);
  }
  while (wss.clients.size < n) await new Promise((r) => setImmediate(r));
  const frame = JSON.stringify({
    jsonrpc: "2.0",
    method: "action",
    params: {
      channel: uris.chat,
      serverSeq: 1,
      action: { type: "chat/responsePart", turnId: "turn-1", part: { kind: "markdown", id: "p", content: text } },
    },
  });
  const floorLat: number[] = [];
  for (let i = 0; i < samples + 20; i++) {
    const done = new Promise<void>((resolve) => (pending = { count: n, resolve }));
    const t0 = process.hrtime.bigint();
    for (const client of wss.clients) client.send(frame);
    await done;
    if (i >= 20) floorLat.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  for (const ws of raw) ws.terminate();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
  lat.sort((a, b) => a - b);
  floorLat.sort((a, b) => a - b);
  const m = (s: number[]): Measurement => ({ opsPerSec: 1e6 / percentile(s, 0.5), p50Us: percentile(s, 0.5), p99Us: percentile(s, 0.99) });
  return { ours: m(lat), floor: m(floorLat) };
}

function socketOf(ws: WebSocket): SocketLike {
  return ws as unknown as SocketLike;
}

const socketsOf = new WeakMap<AgentHostClient, WebSocket>();

/** Closes the client's socket and waits until the close handshake is done, so the host has stopped sending to it. */
async function closed(client: AgentHostClient): Promise<void> {
  const ws = socketsOf.get(client);
  const done =
    ws === undefined || ws.readyState === WebSocket.CLOSED
      ? Promise.resolve()
      : new Promise<void>((resolve) => ws.once("close", () => resolve()));
  client.close();
  await done;
}

async function openClient(url: string, clientId: string, existing?: AgentHostClient): Promise<AgentHostClient> {
  const ws = new WebSocket(`${url}?token=bench-token`);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  if (existing !== undefined) {
    existing.replaceSocket(socketOf(ws));
    socketsOf.set(existing, ws);
    return existing;
  }
  const client = new AgentHostClient(socketOf(ws), { clientId });
  socketsOf.set(client, ws);
  return client;
}

async function reconnectReplay(quick: boolean): Promise<{ replay: Measurement; snapshot: Measurement; envelopes: number }> {
  const rounds = quick ? 2 : 15;
  const h = await harness(true);
  const uris = AgentHost.uris(SESSION, "main");
  const channels = [uris.session, uris.chat!];
  await h.agent.send("pre_action", { tool_name: "ls", arguments: {} });
  const replayTimes: number[] = [];
  const snapshotTimes: number[] = [];
  let envelopes = 0;
  for (let r = 0; r < rounds; r++) {
    const client = await openClient(h.listener!.url, `replay-${r}`);
    await client.initialize(channels);
    // Wait for the close handshake: otherwise the envelopes below still reach the old socket live.
    await closed(client);
    const start = h.host!.store.serverSeq;
    while (h.host!.store.serverSeq < start + 1000) await h.agent.send("post_response", { response: `line ${h.host!.store.serverSeq}` });
    const t0 = process.hrtime.bigint();
    await openClient(h.listener!.url, `replay-${r}`, client);
    const result = await client.reconnect(channels);
    replayTimes.push(Number(process.hrtime.bigint() - t0) / 1000);
    if (result.type !== "replay") throw new Error("expected a replay");
    envelopes = result.actions.length;
    if (envelopes < 1000) throw new Error(`expected a replay of at least 1000 envelopes, got ${envelopes}`);
    const mine = client.state.confirmed<ChatState>(uris.chat!);
    const theirs = h.host!.state<ChatState>(uris.chat!);
    if (mine?.activeTurn?.responseParts.length !== theirs?.activeTurn?.responseParts.length) {
      throw new Error("the replayed client did not converge");
    }
    await closed(client);
    const t1 = process.hrtime.bigint();
    const fresh = await openClient(h.listener!.url, `fresh-${r}`);
    await fresh.initialize(channels);
    snapshotTimes.push(Number(process.hrtime.bigint() - t1) / 1000);
    fresh.close();
  }
  await h.agent.close();
  await h.server.close({ graceMs: 0 });
  await h.listener!.close();
  replayTimes.sort((a, b) => a - b);
  snapshotTimes.sort((a, b) => a - b);
  const m = (s: number[]): Measurement => ({ opsPerSec: 1e6 / percentile(s, 0.5), p50Us: percentile(s, 0.5), p99Us: percentile(s, 0.99) });
  return { replay: m(replayTimes), snapshot: m(snapshotTimes), envelopes };
}

export const suite: Suite = {
  name: "agent-host",
  async run({ quick }) {
    const forward = await forwardPath(quick);
    const fan = await fanOut(quick);
    const rc = await reconnectReplay(quick);
    const rows: Row[] = [
      {
        suite: "agent-host",
        case: "floor: harness decisions, adapter off",
        measurement: forward.off,
        note: "pre_action + post_action per op, in-memory agent",
      },
      {
        suite: "agent-host",
        case: "harness decisions, adapter on, 10 subscribed clients",
        measurement: forward.on,
        floor: forward.off,
        ratio: throughputRatio(forward.on, forward.off),
        target: ">= 0.8x floor",
        note: `CPU ratio ${cpuRatio(forward.on, forward.off)}; every client got every envelope in order (${forward.frames} frames each, child process)`,
      },
      {
        suite: "agent-host",
        case: "lower bound: adapter off + the adapter's frames sent bare to 10 clients",
        measurement: forward.bare,
        floor: forward.off,
        ratio: throughputRatio(forward.bare, forward.off),
        note: `CPU ratio ${cpuRatio(forward.bare, forward.off)}; same clients; no projection: the best any adapter could do here`,
      },
      {
        suite: "agent-host",
        case: "floor: harness decisions, adapter off, one op per event-loop turn",
        measurement: forward.offYielding,
        note: "as an agent on a real transport",
      },
      {
        suite: "agent-host",
        case: "harness decisions, adapter on, 10 clients, one op per event-loop turn",
        measurement: forward.onYielding,
        floor: forward.offYielding,
        ratio: throughputRatio(forward.onYielding, forward.offYielding),
        note: `CPU ratio ${cpuRatio(forward.onYielding, forward.offYielding)}; no batching across operations`,
      },
      {
        suite: "agent-host",
        case: "lower bound, one op per event-loop turn",
        measurement: forward.bareYielding,
        floor: forward.offYielding,
        ratio: throughputRatio(forward.bareYielding, forward.offYielding),
        note: `CPU ratio ${cpuRatio(forward.bareYielding, forward.offYielding)}`,
      },
      { suite: "agent-host", case: "floor: bare ws frame to 100 clients", measurement: fan.floor, note: "time to the last client" },
      {
        suite: "agent-host",
        case: "fan-out: harness event to the 100th of 100 clients",
        measurement: fan.ours,
        floor: fan.floor,
        ratio: (fan.ours.p50Us ?? Number.NaN) / (fan.floor.p50Us ?? Number.NaN),
        note: "ratio = p50 / floor p50",
      },
      { suite: "agent-host", case: "floor: fresh client, initialize with snapshots", measurement: rc.snapshot, note: "same channels" },
      {
        suite: "agent-host",
        case: `reconnect with replay of ${rc.envelopes} envelopes to a converged client`,
        measurement: rc.replay,
        floor: rc.snapshot,
        ratio: (rc.replay.p50Us ?? Number.NaN) / (rc.snapshot.p50Us ?? Number.NaN),
        note: "ratio = p50 / floor p50",
      },
    ];
    return rows;
  },
};

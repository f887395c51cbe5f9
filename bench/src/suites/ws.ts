/**
 * AHP over WebSocket on 127.0.0.1, client and server in this process (one thread: CPU figures
 * cover both sides).
 *
 * Floor: a bare `ws` server that parses each text frame, decides and answers, driven by a bare
 * `ws` client that matches answers by id. The ratio isolates what AhpClient /
 * WebSocketClientTransport and listenWebSocket / AhpServer add on the same sockets.
 */
import { AhpClient, AhpServer } from "@ahp/core";
import { WebSocketClientTransport, listenWebSocket } from "@ahp/transport-ws";
import { WebSocket, WebSocketServer } from "ws";
import {
  interleaved,
  splitTransportRows,
  measurePairedSequential,
  measurePipelined,
  medianMeasurement,
  type Measurement,
  type Row,
  type Suite,
} from "../harness.js";

const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };

const event = (type: string, p: unknown) => ({
  event_type: type,
  session_id: "s",
  agent_id: "a",
  timestamp: new Date().toISOString(),
  depth: 0,
  payload: p,
});

/** What the bare server answers a handshake with (so that AhpClient can talk to it). */
const HANDSHAKE_RESULT = { protocol_version: "2.4", harness_info: { name: "bare", version: "0", capabilities: [] }, config: {} };

/** The floor harness: parse, decide, answer requests; count notifications. */
async function bareServer(): Promise<{ url: string; notifications: () => number; close(): Promise<void> }> {
  let notifications = 0;
  const wss: WebSocketServer = await new Promise((resolve) => {
    const server: WebSocketServer = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false }, () => resolve(server));
  });
  wss.on("connection", (ws) => {
    ws.on("message", (data) => {
      const m = JSON.parse(data.toString()) as { id?: string; method: string; params: { payload?: { arguments?: { command?: string } } } };
      if (m.id === undefined) {
        notifications++;
        return;
      }
      const result =
        m.method === "ahp/handshake"
          ? HANDSHAKE_RESULT
          : String(m.params.payload?.arguments?.command).includes("rm -rf")
            ? { decision: "block", reason: "no" }
            : { decision: "allow" };
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }));
    });
  });
  const port = (wss.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}/ahp`,
    notifications: () => notifications,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}

/** A bare client: one text frame per request, answers matched by id. */
async function bareClient(url: string) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const pending = new Map<string, (result: unknown) => void>();
  ws.on("message", (data) => {
    const m = JSON.parse(data.toString()) as { id: string; result: unknown };
    const resolve = pending.get(m.id);
    if (resolve === undefined) return;
    pending.delete(m.id);
    resolve(m.result);
  });
  let id = 0;
  return {
    call: () =>
      new Promise<unknown>((resolve) => {
        const key = String(++id);
        pending.set(key, resolve);
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: key, method: "ahp/event", params: event("pre_action", payload) }));
      }),
    notify: () => ws.send(JSON.stringify({ jsonrpc: "2.0", method: "ahp/event", params: event("post_action", {}) })),
    close: async () => ws.close(),
  };
}

/** Sends `total` notifications and waits until the harness has handled all of them. */
async function measureNotifications(send: () => unknown, handled: () => number, total: number): Promise<Measurement> {
  const start = handled();
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < total; i++) {
    await send();
    // Yield now and then so the harness side gets to run, as a real agent would.
    if (i % 64 === 63) await new Promise<void>((r) => setImmediate(r));
  }
  while (handled() - start < total) await new Promise<void>((r) => setImmediate(r));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const used = process.cpuUsage(cpu);
  return { opsPerSec: total / seconds, cpuUsPerOp: (used.user + used.system) / total };
}

export const suite: Suite = {
  name: "ws",
  async run({ quick }) {
    const rounds = quick ? 1 : 7;
    const paired = { blocks: quick ? 4 : 40, blockSize: quick ? 50 : 500, warmup: quick ? 50 : 300 };
    const pip = { total: quick ? 500 : 10000, concurrency: 64, runs: 1, warmup: quick ? 100 : 1000 };
    const notes = quick ? 1000 : 20000;

    const bare = await bareServer();
    const floorClient = await bareClient(bare.url);
    let handledNotifications = 0;
    const server = new AhpServer({
      handlers: {
        onEvent: (e) =>
          String((e.payload as typeof payload).arguments.command).includes("rm -rf")
            ? { decision: "block", reason: "no" }
            : { decision: "allow" },
        onNotification: () => void handledNotifications++,
      },
    });
    const listener = await listenWebSocket(server);
    const ours = new AhpClient();
    await ours.connect(new WebSocketClientTransport(listener.url));
    const oursCall = () => ours.send("pre_action", payload);
    // The split: our client against the bare server, the bare client against our server.
    const clientOnly = new AhpClient();
    await clientOnly.connect(new WebSocketClientTransport(bare.url));
    const clientOnlyCall = () => clientOnly.send("pre_action", payload);
    const serverOnly = await bareClient(listener.url);

    for (const op of [floorClient.call, oursCall, clientOnlyCall, serverOnly.call])
      for (let i = 0; i < (quick ? 50 : 2000); i++) await op();

    // Sequential: the floor, ours and the two split pairs in the same paired blocks.
    const sequential = await measurePairedSequential(
      { floor: floorClient.call, ours: oursCall, serverOnly: serverOnly.call, clientOnly: clientOnlyCall },
      paired,
    );
    const pipelined = await interleaved(
      {
        floor: () => measurePipelined(floorClient.call, pip),
        ours: () => measurePipelined(oursCall, pip),
        floorNote: () => measureNotifications(floorClient.notify, bare.notifications, notes),
        oursNote: () =>
          measureNotifications(
            () => ours.send("post_action", {}),
            () => handledNotifications,
            notes,
          ),
      },
      rounds,
      medianMeasurement,
    );

    await ours.close();
    await clientOnly.close();
    await serverOnly.close();
    await listener.close();
    await server.close();
    await floorClient.close();
    await bare.close();

    const name = "ws";
    const s = sequential;
    const p = pipelined;
    const rows: Row[] = splitTransportRows(
      name,
      {
        floor: "bare ws server + bare ws client",
        floorNotifications: "notifications until handled",
        ours: "AhpClient+WebSocketClientTransport -> listenWebSocket+AhpServer",
        harnessSide: "bare ws client -> listenWebSocket+AhpServer",
        agentSide: "AhpClient+WebSocketClientTransport -> bare ws server",
        notifications: "notifications (post_action) until handled",
        notificationsNote: "validated and dispatched in order",
      },
      s,
      p,
    );
    return rows;
  },
};

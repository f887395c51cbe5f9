/**
 * The WebSocket transports write the frames sent in one job in two writes at most (the first at
 * once, the rest together): a burst of requests from the client, the answers to the frames of one
 * received chunk from the server. Counted at the socket under the WebSocket (`_write` /
 * `_writev`: one call per system write).
 */
import net from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { AhpServer, type JsonRpcMessage } from "@ahp/core";
import { WebSocketClientTransport, listenWebSocket } from "@ahp/transport-ws";
import { rawWsServer, until } from "./helpers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
});

/** Counts the writes made on sockets whose local port is `port`. */
function countWrites(port: () => number | undefined): { count: number } {
  const counter = { count: 0 };
  const proto = net.Socket.prototype as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
  for (const method of ["_write", "_writev"] as const) {
    const original = proto[method];
    vi.spyOn(proto, method).mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      if (this.localPort !== undefined && this.localPort === port()) counter.count++;
      return original.apply(this, args);
    });
  }
  return counter;
}

/** A client-to-server text frame (RFC 6455 §5.2; masked, with an all-zero key, so the payload reads as is). */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([header, Buffer.alloc(4), payload]);
}

const note = (n: number): JsonRpcMessage => ({ jsonrpc: "2.0", method: "ahp/event", params: { n } });

const event = (n: number) => ({
  jsonrpc: "2.0",
  id: `r${n}`,
  method: "ahp/event",
  params: {
    event_type: "pre_action",
    session_id: "s",
    agent_id: "a",
    timestamp: new Date().toISOString(),
    depth: 0,
    payload: { tool_name: "bash", arguments: { command: `echo ${n}` } },
  },
});

describe("WebSocket transports: the frames of one job in two writes", () => {
  it("the client writes twenty messages sent in one job in two writes (the first at once), in order", async () => {
    const texts: string[] = [];
    const r = await rawWsServer({ onMessage: (_ws, text) => texts.push(text) });
    cleanups.push(() => r.close());
    const transport = new WebSocketClientTransport(r.url);
    cleanups.push(() => transport.close());
    await transport.start();
    // The client's socket: the local port of the server's peer.
    let local: number | undefined;
    for (const socket of r.wss.clients) local = (socket as unknown as { _socket: net.Socket })._socket.remotePort;
    const writes = countWrites(() => local);
    for (let i = 0; i < 20; i++) transport.post(note(i), () => undefined, undefined);
    await until(() => texts.length === 20);
    expect(writes.count).toBe(2);
    expect(texts.map((t) => (JSON.parse(t) as { params: { n: number } }).params.n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it("the server answers the twenty requests of one received chunk in two writes (the first at once)", async () => {
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const listener = await listenWebSocket(server);
    cleanups.push(async () => {
      await listener.close();
      await server.close();
    });
    const port = Number(new URL(listener.url).port);
    const ws = new WebSocket(listener.url);
    cleanups.push(async () => ws.terminate());
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const answers: Array<{ id: string; result: unknown }> = [];
    ws.on("message", (data) => answers.push(JSON.parse(String(data)) as { id: string; result: unknown }));
    const writes = countWrites(() => port);
    // Twenty frames in one socket write, so that they reach the server in one chunk.
    const socket = (ws as unknown as { _socket: net.Socket })._socket;
    socket.write(Buffer.concat(Array.from({ length: 20 }, (_, i) => maskedTextFrame(JSON.stringify(event(i))))));
    await until(() => answers.length === 20);
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`));
    expect(answers.every((a) => (a.result as { decision: string }).decision === "allow")).toBe(true);
    expect(writes.count).toBe(2);
  });
});

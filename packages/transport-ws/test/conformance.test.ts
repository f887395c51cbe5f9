/**
 * The cross-transport conformance suite over real WebSockets on 127.0.0.1: the scripted harness
 * is served by `listenWebSocket`, our agent side is `WebSocketClientTransport`, and the raw
 * channel is a bare `ws` client (one text frame per send, every text frame received is a frame).
 */
import { WebSocket } from "ws";
import { describe, expect, it } from "vitest";
import { RawFrameQueue, createConformanceServer, describeConformance, type ConformanceFactory, type RawChannel } from "@ahp/conformance";
import { WebSocketClientTransport, listenWebSocket } from "@ahp/transport-ws";

async function rawWsChannel(url: string): Promise<RawChannel> {
  const frames = new RawFrameQueue();
  const ws = new WebSocket(url);
  ws.on("message", (data, isBinary) => {
    if (!isBinary) frames.push({ text: data.toString("utf8") });
  });
  ws.on("close", () => frames.close());
  ws.on("error", () => frames.close());
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return {
    framing: "message",
    send: (text) => new Promise<void>((resolve, reject) => ws.send(text, (error) => (error ? reject(error) : resolve()))),
    next: (timeoutMs) => frames.next(timeoutMs),
    close: async () => {
      frames.close();
      ws.terminate();
    },
  };
}

const wsFactory: ConformanceFactory = async (config) => {
  const server = createConformanceServer(config);
  const listener = await listenWebSocket(server);
  return {
    connect: async () => new WebSocketClientTransport(listener.url),
    connectRaw: () => rawWsChannel(listener.url),
    async close() {
      // Stop like a crashed harness: cut every agent socket, then release the port. (A graceful
      // 1001 close would also do; it only takes a round trip longer.)
      for (const ws of listener.wss.clients) ws.terminate();
      await listener.close();
      await server.close();
    },
  };
};

const coverage = describeConformance("WebSocket (listenWebSocket + WebSocketClientTransport)", wsFactory, { kind: "stream" });

describe("conformance coverage over WebSocket", () => {
  it("skips only the HTTP status-code items", () => {
    expect([...coverage.skipped.keys()].sort()).toEqual([86, 87, 88]);
  });
});

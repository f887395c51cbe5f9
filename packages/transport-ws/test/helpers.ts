import { vi } from "vitest";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import type { AhpServerOptions } from "@ahp/core";
import { listenWebSocket, type ListenWebSocketOptions, type WebSocketListener } from "@ahp/transport-ws";

import { listeningHarness, type ListeningHarness } from "@ahp/conformance";

/** How long a wait lasts before it fails: generous, because the machine may be busy. */
export const WAIT_MS = 60_000;

// A test that waits must outlive its waits, so that a failed wait reports what it awaited.
vi.setConfig({ testTimeout: WAIT_MS + 30_000, hookTimeout: WAIT_MS + 30_000 });

export { deferred, event, preAction } from "@ahp/conformance";

export const HANDSHAKE_RESULT = {
  protocol_version: "2.4",
  harness_info: { name: "raw", version: "0", capabilities: [] },
  config: {},
};

export type Harness = ListeningHarness<WebSocketListener>;

export function startHarness(options: AhpServerOptions = {}, listen: ListenWebSocketOptions = {}): Promise<Harness> {
  return listeningHarness((server) => listenWebSocket(server, listen), options);
}

export interface RawWsServer {
  url: string;
  wss: WebSocketServer;
  httpServer: http.Server;
  /** Every upgrade request seen (url and headers). */
  upgrades: Array<{ url: string; headers: http.IncomingHttpHeaders }>;
  sockets: WebSocket[];
  close(): Promise<void>;
}

/**
 * A bare `ws` server. `onMessage` decides what to do with each text frame; by default it answers
 * the handshake and allows every request.
 */
export async function rawWsServer(
  options: { autoPong?: boolean; onMessage?: (ws: WebSocket, text: string, isBinary: boolean) => void; path?: string } = {},
): Promise<RawWsServer> {
  const httpServer = http.createServer();
  const wss = new WebSocketServer({ server: httpServer, autoPong: options.autoPong ?? true });
  const raw: RawWsServer = {
    url: "",
    wss,
    httpServer,
    upgrades: [],
    sockets: [],
    close: async () => {
      for (const ws of raw.sockets) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      httpServer.closeAllConnections();
      await new Promise<void>((r) => httpServer.close(() => r()));
    },
  };
  const onMessage =
    options.onMessage ??
    ((ws: WebSocket, text: string) => {
      const m = JSON.parse(text) as { id?: unknown; method?: string };
      if (m.id === undefined) return;
      const result = m.method === "ahp/handshake" ? HANDSHAKE_RESULT : { decision: "allow" };
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }));
    });
  wss.on("connection", (ws, req) => {
    raw.upgrades.push({ url: req.url ?? "", headers: req.headers });
    raw.sockets.push(ws);
    ws.on("message", (data, isBinary) => onMessage(ws, data.toString(), isBinary));
    ws.on("error", () => undefined);
  });
  await new Promise<void>((r) => httpServer.listen(0, "127.0.0.1", r));
  raw.url = `ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}${options.path ?? "/ahp"}`;
  return raw;
}

/** Settles with the rejection reason; fails the test when the promise resolves. */
export async function rejection(p: Promise<unknown>): Promise<Error & { code?: unknown; details?: Record<string, unknown> }> {
  const result = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(result instanceof Error)) throw new Error("the call was expected to fail");
  return result;
}

/**
 * Waits until `check()` holds, polling every few ms, for at most `timeoutMs` (generous: the machine
 * may be busy); the error names `what` was awaited.
 */
export async function until(check: () => boolean, timeoutMs = WAIT_MS, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

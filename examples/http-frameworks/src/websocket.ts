/**
 * The WebSocket server on an existing `http.Server`: the app keeps its own routes (and its own
 * `upgrade` listeners for other paths); upgrades on `/ahp` are checked for credentials (401
 * before the upgrade) and served.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import type { AhpServer } from "@ahp/core";
import { attachWebSocketServer } from "@ahp/transport-ws";
import { API_KEY, type Mounted } from "./harness.js";

export async function mountWebSocket(server: AhpServer): Promise<Mounted> {
  const httpServer = http.createServer((req, res) => {
    if (req.url === "/status") res.setHeader("content-type", "application/json").end(JSON.stringify({ framework: "node:http" }));
    else res.writeHead(404).end();
  });
  const ahp = attachWebSocketServer(server, { httpServer, path: "/ahp", auth: { apiKeys: [API_KEY] } });
  await new Promise<void>((resolve, reject) => httpServer.once("error", reject).listen(0, "127.0.0.1", resolve));
  const port = (httpServer.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/ahp`,
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      await ahp.close();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

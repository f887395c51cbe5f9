import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { AhpClient, AhpLocalError, AhpServer } from "@ahp/core";
import {
  WebSocketClientTransport,
  attachWebSocketServer,
  createVerifyClient,
  listenWebSocket,
  type WebSocketListener,
} from "@ahp/transport-ws";
import { preAction, rejection } from "./helpers.js";

const API_KEY = "key with space&amp=";
const TOKEN = "tok+en";

/** The raw answer to an upgrade request (status, headers, body) as a plain HTTP client sees it. */
function upgradeAnswer(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url.replace(/^ws/, "http"), {
      headers: {
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        ...headers,
      },
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "" });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("WebSocket server credential verification at upgrade", () => {
  let server: AhpServer;
  let listener: WebSocketListener;
  const principals: Array<string | undefined> = [];
  beforeAll(async () => {
    server = new AhpServer({
      handlers: {
        onEvent: (_e, ctx) => {
          principals.push(ctx.connection.info.principal);
          return { decision: "allow" };
        },
      },
    });
    listener = await listenWebSocket(server, { auth: { apiKeys: [API_KEY], bearerTokens: ["other", TOKEN] } });
  });
  afterAll(async () => {
    await listener.close();
    await server.close();
  });

  it("accepts the right key and token in the query (as the reference client sends them) and in headers", async () => {
    const cases = [
      [{ type: "api_key", key: API_KEY }, "query", "api_key#1"],
      [{ type: "bearer", token: TOKEN }, "query", "bearer#2"],
      [{ type: "api_key", key: API_KEY }, "header", "api_key#1"],
      [{ type: "bearer", token: TOKEN }, "header", "bearer#2"],
    ] as const;
    for (const [auth, authMode, principal] of cases) {
      const client = new AhpClient();
      await client.connect(new WebSocketClientTransport(listener.url, { auth, authMode }));
      await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
      expect(principals.at(-1)).toBe(principal);
      await client.close();
    }
  });

  it("refuses missing and wrong credentials with 401 before the upgrade; nothing is echoed", async () => {
    const cases: Array<[string, Record<string, string>]> = [
      [listener.url, {}],
      [`${listener.url}?api_key=wrong`, {}],
      [`${listener.url}?api_key=${encodeURIComponent(API_KEY)}x`, {}],
      [`${listener.url}?token=${encodeURIComponent(API_KEY)}`, {}],
      [listener.url, { "x-api-key": "wrong" }],
      [listener.url, { authorization: "Bearer nope" }],
      [listener.url, { authorization: `Basic ${TOKEN}` }],
    ];
    for (const [url, headers] of cases) {
      const answer = await upgradeAnswer(url, headers);
      expect(answer.status, `${url} ${JSON.stringify(headers)}`).toBe(401);
      expect(answer.headers["www-authenticate"]).toBe('Bearer realm="ahp"');
      expect(answer.body).toBe('{"error":"unauthorized"}');
    }
    expect(listener.connectionCount).toBe(0);
  });

  it("our client reports a refused upgrade as TRANSPORT_ERROR with the status", async () => {
    const client = new AhpClient();
    const error = await rejection(client.connect(new WebSocketClientTransport(listener.url, { auth: { type: "bearer", token: "nope" } })));
    expect(AhpLocalError.isInstance(error)).toBe(true);
    expect(error.code).toBe("TRANSPORT_ERROR");
    expect(error.message).toBe("WebSocket upgrade refused: HTTP 401");
    expect(error.details).toEqual({ status: 401 });
    expect(error.message).not.toContain("nope");
    await client.close();
  });
});

describe("auth with your own WebSocketServer", () => {
  it("createVerifyClient answers 401 before the upgrade and passes the principal on", async () => {
    const httpServer = http.createServer();
    const auth = { apiKeys: ["k1"] };
    const wss = new WebSocketServer({ server: httpServer, verifyClient: createVerifyClient(auth) });
    const principals: Array<string | undefined> = [];
    const server = new AhpServer({
      handlers: {
        onEvent: (_e, ctx) => {
          principals.push(ctx.connection.info.principal);
          return { decision: "allow" };
        },
      },
    });
    const attached = attachWebSocketServer(server, { wss, auth });
    await new Promise<void>((r) => httpServer.listen(0, "127.0.0.1", r));
    const url = `ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}/any/path`;
    try {
      const refused = await upgradeAnswer(`${url}?api_key=k2`);
      expect(refused.status).toBe(401);
      expect(refused.headers["www-authenticate"]).toBeUndefined();
      const client = new AhpClient();
      await client.connect(new WebSocketClientTransport(url, { auth: { type: "api_key", key: "k1" } }));
      await client.send("pre_action", preAction());
      expect(principals).toEqual(["api_key#1"]);
      await client.close();
    } finally {
      await attached.close();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => httpServer.close(() => r()));
      await server.close();
    }
  });

  it("without verifyClient, a refused peer is closed with 1008 right after the upgrade", async () => {
    const httpServer = http.createServer();
    const wss = new WebSocketServer({ server: httpServer });
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const errors: Error[] = [];
    const attached = attachWebSocketServer(server, {
      wss,
      auth: async (req) => req.headers["x-tenant"] === "acme",
      onerror: (e) => errors.push(e),
    });
    await new Promise<void>((r) => httpServer.listen(0, "127.0.0.1", r));
    const url = `ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}/ahp`;
    try {
      const ws = new WebSocket(url);
      const code = await new Promise<number>((resolve) => ws.on("close", (c) => resolve(c)));
      expect(code).toBe(1008);
      expect(errors.map((e) => e.message)).toEqual(["WebSocket connection refused: unauthorized"]);
      const client = new AhpClient();
      await client.connect(new WebSocketClientTransport(url, { headers: { "x-tenant": "acme" } }));
      await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
      await client.close();
    } finally {
      await attached.close();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => httpServer.close(() => r()));
      await server.close();
    }
  });
});

import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AhpServer } from "@ahp/core";
import { createHttpHandler, listenHttp } from "@ahp/transport-http";
import { event, notification, preAction, rawRequest, request, startHarness, until, WAIT_MS, type Harness } from "./helpers.js";

describe("HTTP server status codes (spec §13.2, checklist 86–88)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, { maxBodyBytes: 64 * 1024 });
  });
  afterAll(() => h.close());
  const origin = () => h.url.replace(/\/ahp$/, "");

  it("request → 200 with a JSON body", async () => {
    const r = await rawRequest(h.url, { body: request("r-1", "ahp/event", event("pre_action", preAction())) });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(r.text)).toEqual({ jsonrpc: "2.0", id: "r-1", result: { decision: "allow" } });
  });

  it("JSON-RPC errors travel inside a 200", async () => {
    const r = await rawRequest(h.url, { body: request("r-2", "ahp/nope", {}) });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ jsonrpc: "2.0", id: "r-2", error: { code: -32601, message: "Method not found" } });
  });

  it("handled notification → 204 with an empty body", async () => {
    const r = await rawRequest(h.url, { body: notification("ahp/event", event("post_action", {})) });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
  });

  it("notification of another method is ignored with 204", async () => {
    const r = await rawRequest(h.url, { body: notification("ahp/handshake", {}) });
    expect(r.status).toBe(204);
  });

  it('rejected notification → 200 with id "" and -32603 (reference default)', async () => {
    const r = await rawRequest(h.url, { body: notification("ahp/event", event("pre_action", preAction())) });
    expect(r.status).toBe(200);
    const body = JSON.parse(r.text) as { id: string; error: { code: number; message: string } };
    expect(body.id).toBe("");
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toMatch(/^Handler error: Protocol error: Blocking event pre_action must be sent as a request/);
  });

  it('valid JSON that is neither request nor notification → 200 -32600 with id ""', async () => {
    for (const body of [
      "[]",
      "42",
      JSON.stringify({ jsonrpc: "2.0", method: "ahp/event" }),
      JSON.stringify({ jsonrpc: "2.0", id: "x", result: {} }),
    ]) {
      const r = await rawRequest(h.url, { body });
      expect(r.status, body).toBe(200);
      expect(JSON.parse(r.text), body).toEqual({ jsonrpc: "2.0", id: "", error: { code: -32600, message: "Invalid JSON-RPC message" } });
    }
  });

  it("malformed JSON → 400 with a -32700 body, id null", async () => {
    const r = await rawRequest(h.url, { body: '{"jsonrpc":"2.0",' });
    expect(r.status).toBe(400);
    const body = JSON.parse(r.text) as { id: unknown; error: { code: number; message: string } };
    expect(body.id).toBeNull();
    expect(body.error.code).toBe(-32700);
    expect(body.error.message).toMatch(/^Parse error/);
  });

  it("JSON nested past the depth limit → 400 with -32002", async () => {
    const deep = `${"[".repeat(500)}${"]".repeat(500)}`;
    const r = await rawRequest(h.url, { body: deep });
    expect(r.status).toBe(400);
    expect((JSON.parse(r.text) as { error: { code: number } }).error.code).toBe(-32002);
  });

  it("other path → 404", async () => {
    const r = await rawRequest(`${origin()}/other`, { body: "{}" });
    expect(r.status).toBe(404);
    expect((await rawRequest(`${origin()}/ahp/`, { body: "{}" })).status).toBe(404);
  });

  it("the query string does not change the route", async () => {
    const r = await rawRequest(`${h.url}?x=1`, { body: request("q", "ahp/event", event("pre_action", preAction())) });
    expect(r.status).toBe(200);
  });

  it("other method on the path → 405 with Allow: POST", async () => {
    for (const method of ["GET", "PUT", "DELETE", "OPTIONS"]) {
      const r = await rawRequest(h.url, { method });
      expect(r.status, method).toBe(405);
      expect(r.headers.allow).toBe("POST");
    }
  });

  it("missing or non-JSON content type → 415", async () => {
    const body = request("c", "ahp/event", event("pre_action", preAction()));
    expect((await rawRequest(h.url, { body, headers: { "content-type": "text/plain" } })).status).toBe(415);
    expect((await rawRequest(h.url, { body, headers: {} })).status).toBe(415);
    // Parameters and case do not matter; +json types are JSON too.
    expect((await rawRequest(h.url, { body, headers: { "content-type": "Application/JSON; charset=utf-8" } })).status).toBe(200);
    expect((await rawRequest(h.url, { body, headers: { "content-type": "application/vnd.ahp+json" } })).status).toBe(200);
  });

  it("body over the limit → 413 (declared length), and the server stays usable", async () => {
    const big = JSON.stringify({ pad: "x".repeat(70 * 1024) });
    const r = await rawRequest(h.url, { body: big });
    expect(r.status).toBe(413);
    expect((JSON.parse(r.text) as { error: { code: number } }).error.code).toBe(-32002);
    expect(r.headers.connection).toBe("close");
    const ok = await rawRequest(h.url, { body: request("after", "ahp/event", event("pre_action", preAction())) });
    expect(ok.status).toBe(200);
  });

  it("chunked body over the limit → 413 without reading it all", async () => {
    const { port } = new URL(h.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port, path: "/ahp", method: "POST", headers: { "content-type": "application/json" }, agent: false },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      // 10 chunks of 16 KiB, more than the 64 KiB limit; the server answers before the end.
      let sent = 0;
      const pump = () => {
        while (sent < 10) {
          sent++;
          if (!req.write("x".repeat(16 * 1024))) {
            req.once("drain", pump);
            return;
          }
        }
        req.end();
      };
      pump();
    });
    expect(status).toBe(413);
  });

  it("a client that goes away in the middle of its body leaves nothing pending; the next request is served", async () => {
    const { port } = new URL(h.url);
    const net = await import("node:net");
    const socket = net.connect(Number(port), "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const body = request("gone", "ahp/event", event("pre_action", preAction()));
    // The cut comes once the server holds the request and the first bytes of its body, whatever the machine's speed.
    let bodyBytes = 0;
    h.listener.httpServer.once("request", (req: http.IncomingMessage) => req.on("data", (c: Buffer) => (bodyBytes += c.length)));
    socket.write(
      `POST /ahp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`,
    );
    await until(() => bodyBytes === 20, WAIT_MS, "the first 20 bytes of the body at the server");
    socket.destroy();
    await until(() => h.server.pendingWork === 0);
    const ok = await rawRequest(h.url, { body: request("after-gone", "ahp/event", event("pre_action", preAction())) });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text)).toEqual({ jsonrpc: "2.0", id: "after-gone", result: { decision: "allow" } });
    expect(h.server.pendingWork).toBe(0);
  });

  it("a body exactly at the limit is accepted", async () => {
    const base = request("edge", "ahp/event", event("pre_action", preAction()));
    const padded = base + " ".repeat(64 * 1024 - Buffer.byteLength(base));
    expect(Buffer.byteLength(padded)).toBe(64 * 1024);
    const r = await rawRequest(h.url, { body: padded });
    expect(r.status).toBe(200);
  });

  it('GET /healthz → 200 {"status":"ok"}; other methods → 405', async () => {
    const r = await rawRequest(`${origin()}/healthz`, { method: "GET" });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ status: "ok" });
    expect((await rawRequest(`${origin()}/healthz`, { method: "POST", body: "{}" })).status).toBe(405);
  });

  it("listenHttp binds the loopback interface by default", () => {
    expect(h.listener.httpServer.address()).toMatchObject({ address: "127.0.0.1" });
    expect(h.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ahp$/);
  });

  it("integer ids are answered with the id echoed", async () => {
    const r = await rawRequest(h.url, { body: request(7, "ahp/event", event("pre_action", preAction())) });
    expect(JSON.parse(r.text)).toEqual({ jsonrpc: "2.0", id: 7, result: { decision: "allow" } });
  });
});

describe("rejectedNotifications option", () => {
  it('"204" answers a rejected notification with 204 and no body', async () => {
    const h = await startHarness({}, { rejectedNotifications: "204" });
    try {
      const r = await rawRequest(h.url, { body: notification("ahp/event", event("pre_action", preAction())) });
      expect(r.status).toBe(204);
      expect(r.text).toBe("");
      // A failing notification handler is a rejection too.
    } finally {
      await h.close();
    }
  });

  it("a failing notification handler → 200 Handler error (reference) after the handler ran", async () => {
    const seen: string[] = [];
    const h = await startHarness({
      handlers: {
        onNotification: (e) => {
          seen.push(e.event_type);
          throw new Error("disk full");
        },
      },
    });
    try {
      const r = await rawRequest(h.url, { body: notification("ahp/event", event("post_action", {})) });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text)).toEqual({ jsonrpc: "2.0", id: "", error: { code: -32603, message: "Handler error: disk full" } });
      expect(seen).toEqual(["post_action"]);
    } finally {
      await h.close();
    }
  });
});

describe("handler context", () => {
  it("a notification is answered only once its handler finished", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let called = false;
    const h = await startHarness({
      handlers: {
        onNotification: () => {
          called = true;
          return gate;
        },
      },
    });
    try {
      let answered = false;
      const pending = rawRequest(h.url, { body: notification("ahp/event", event("post_action", {})) }).then((r) => {
        answered = true;
        return r;
      });
      // The handler has it and cannot finish before release().
      await until(() => called);
      expect(answered).toBe(false);
      release();
      expect((await pending).status).toBe(204);
    } finally {
      await h.close();
    }
  });

  it("a client that disconnects aborts the handler's signal; info carries transport and remote", async () => {
    let aborted!: () => void;
    const abortedPromise = new Promise<void>((r) => (aborted = r));
    let info: unknown;
    const server = new AhpServer({
      handlers: {
        onEvent: (_e, ctx) =>
          new Promise((_resolve, reject) => {
            info = ctx.connection.info;
            ctx.signal.addEventListener("abort", () => {
              aborted();
              reject(new Error("aborted"));
            });
          }),
      },
    });
    const listener = await listenHttp(server);
    try {
      const { port } = new URL(listener.url);
      const req = http.request({
        host: "127.0.0.1",
        port,
        path: "/ahp",
        method: "POST",
        headers: { "content-type": "application/json" },
        agent: false,
      });
      req.on("error", () => undefined);
      req.end(request("slow", "ahp/event", event("pre_action", preAction())));
      await until(() => info !== undefined);
      expect(info).toMatchObject({ transport: "http", remote: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
      req.destroy();
      await abortedPromise;
      expect(server.connectionCount).toBe(0);
    } finally {
      await listener.close();
      await server.close();
    }
  });

  it("one server connection per kept-alive socket (and principal); it ends with the socket", async () => {
    const ids: number[] = [];
    const principals: Array<string | undefined> = [];
    const h = await startHarness(
      {
        handlers: {
          onEvent: (_e, ctx) => {
            ids.push(ctx.connection.id);
            principals.push(ctx.connection.info.principal);
            return { decision: "allow" };
          },
        },
      },
      { auth: { apiKeys: ["k1", "k2"] } },
    );
    try {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const post = (key: string) =>
        rawRequest(h.url, {
          body: request("k", "ahp/event", event("pre_action", preAction())),
          headers: { "content-type": "application/json", "x-api-key": key },
          agent,
        });
      for (const key of ["k1", "k1", "k2", "k1"]) expect((await post(key)).status).toBe(200);
      expect(principals).toEqual(["api_key#1", "api_key#1", "api_key#2", "api_key#1"]);
      expect(ids[0]).toBe(ids[1]);
      expect(ids[3]).toBe(ids[0]);
      expect(ids[2]).not.toBe(ids[0]);
      expect(h.server.connectionCount).toBe(2);
      agent.destroy();
      await until(() => h.server.connectionCount === 0);
      // Without keep-alive every request has its own socket, hence its own connection.
      await Promise.all(
        Array.from({ length: 5 }, () =>
          rawRequest(h.url, {
            body: request("n", "ahp/event", event("pre_action", preAction())),
            headers: { "content-type": "application/json", "x-api-key": "k1" },
          }),
        ),
      );
      expect(new Set(ids.slice(4)).size).toBe(5);
      await until(() => h.server.connectionCount === 0);
    } finally {
      await h.close();
    }
  });
});

describe("createHttpHandler with a custom path and no health route", () => {
  it("serves only the configured path", async () => {
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const httpServer = http.createServer(createHttpHandler(server, { path: "/v1/harness", healthPath: false }));
    await new Promise<void>((r) => httpServer.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
    try {
      expect((await rawRequest(`${base}/v1/harness`, { body: request("p", "ahp/event", event("pre_action", preAction())) })).status).toBe(
        200,
      );
      expect((await rawRequest(`${base}/ahp`, { body: "{}" })).status).toBe(404);
      expect((await rawRequest(`${base}/healthz`, { method: "GET" })).status).toBe(404);
    } finally {
      await new Promise<void>((r) => httpServer.close(() => r()));
      await server.close();
    }
  });
});

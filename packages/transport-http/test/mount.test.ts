import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AhpClient, AhpServer } from "@ahp/core";
import { HttpClientTransport, createHttpHandler, listenHttp, type HttpHandler } from "@ahp/transport-http";
import { event, preAction, rawRequest, request } from "./helpers.js";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function serve(listener: http.RequestListener): Promise<string> {
  const s = http.createServer(listener);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const harness = () => new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });

type Middleware = (req: http.IncomingMessage, res: http.ServerResponse, next: (error?: unknown) => void) => void;

/** The Connect/Express calling convention: each middleware calls next() to pass the request on. */
function chain(...middlewares: Middleware[]): http.RequestListener {
  return (req, res) => {
    let index = 0;
    const next = (error?: unknown) => {
      if (error !== undefined) {
        res.writeHead(500).end(String(error));
        return;
      }
      const mw = middlewares[index++];
      if (mw === undefined) res.writeHead(404).end("fell through");
      else mw(req, res, next);
    };
    next();
  };
}

describe("mounting the handler", () => {
  it("in a plain node:http server next to another route", async () => {
    const ahp = createHttpHandler(harness());
    const base = await serve((req, res) => {
      if (req.url === "/status") res.writeHead(200, { "content-type": "text/plain" }).end("app ok");
      else ahp(req, res);
    });
    expect((await rawRequest(`${base}/status`, { method: "GET" })).text).toBe("app ok");
    const client = new AhpClient();
    await client.connect(new HttpClientTransport(`${base}/ahp`));
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    await client.close();
    expect((await rawRequest(`${base}/nowhere`, { body: "{}" })).status).toBe(404);
  });

  it("as Express-style middleware: foreign paths go to next()", async () => {
    const seen: string[] = [];
    const logger: Middleware = (req, _res, next) => {
      seen.push(`${req.method} ${req.url}`);
      next();
    };
    const ahp: HttpHandler = createHttpHandler(harness(), { healthPath: "/ahp-health" });
    const app: Middleware = (req, res, next) => {
      if (req.url === "/app") res.writeHead(200).end("app");
      else next();
    };
    const base = await serve(chain(logger, ahp, app));
    expect((await rawRequest(`${base}/ahp`, { body: request("m", "ahp/event", event("pre_action", preAction())) })).status).toBe(200);
    expect((await rawRequest(`${base}/app`, { method: "GET" })).text).toBe("app");
    expect((await rawRequest(`${base}/ahp-health`, { method: "GET" })).status).toBe(200);
    const missing = await rawRequest(`${base}/missing`, { method: "GET" });
    expect(missing.status).toBe(404);
    expect(missing.text).toBe("fell through");
    expect(seen).toEqual(["POST /ahp", "GET /app", "GET /ahp-health", "GET /missing"]);
  });

  it("after a body parser that already consumed the stream (req.body object or text)", async () => {
    const ahp = createHttpHandler(harness(), { maxBodyBytes: 1024 });
    const jsonParser: Middleware = (req, _res, next) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        (req as { body?: unknown }).body = req.headers["x-parse"] === "text" ? text : JSON.parse(text);
        next();
      });
    };
    const base = await serve(chain(jsonParser, ahp));
    const body = request("pre", "ahp/event", event("pre_action", preAction()));
    const asObject = await rawRequest(`${base}/ahp`, { body });
    expect(JSON.parse(asObject.text)).toEqual({ jsonrpc: "2.0", id: "pre", result: { decision: "allow" } });
    const asText = await rawRequest(`${base}/ahp`, { body, headers: { "content-type": "application/json", "x-parse": "text" } });
    expect(JSON.parse(asText.text)).toEqual({ jsonrpc: "2.0", id: "pre", result: { decision: "allow" } });
    // The size limit still applies to a pre-read text body.
    const big = JSON.stringify({ pad: "x".repeat(2000) });
    expect(
      (await rawRequest(`${base}/ahp`, { body: big, headers: { "content-type": "application/json", "x-parse": "text" } })).status,
    ).toBe(413);
  });

  it("two harnesses on one server under different paths", async () => {
    const a = createHttpHandler(new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } }), { path: "/a" });
    const b = createHttpHandler(new AhpServer({ handlers: { onEvent: () => ({ decision: "block", reason: "b" }) } }), { path: "/b" });
    const base = await serve(chain(a, b));
    const body = request("x", "ahp/event", event("pre_action", preAction()));
    expect(JSON.parse((await rawRequest(`${base}/a`, { body })).text).result).toEqual({ decision: "allow" });
    expect(JSON.parse((await rawRequest(`${base}/b`, { body })).text).result).toEqual({ decision: "block", reason: "b" });
  });

  it("listenHttp hands requests outside /ahp and /healthz to `fallback`", async () => {
    const listener = await listenHttp(harness(), {
      fallback: (req, res) => {
        res.writeHead(req.url === "/metrics" ? 200 : 418).end("fallback");
      },
    });
    try {
      const base = listener.url.replace(/\/ahp$/, "");
      const metrics = await rawRequest(`${base}/metrics`, { method: "GET" });
      expect(metrics.status).toBe(200);
      expect((await rawRequest(`${base}/nope`, { method: "GET" })).status).toBe(418);
      expect((await rawRequest(`${base}/healthz`, { method: "GET" })).status).toBe(200);
      const client = new AhpClient();
      await client.connect(new HttpClientTransport(listener.url));
      expect(await client.send("pre_action", preAction())).toEqual({ decision: "allow" });
      await client.close();
    } finally {
      await listener.close();
    }
  });
});

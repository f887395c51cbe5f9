import { spawn } from "node:child_process";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { AhpClient, AhpServer } from "@ahp/core";
import { WebSocketClientTransport, attachWebSocketServer, listenWebSocket } from "@ahp/transport-ws";
import { deferred, event, preAction, startHarness, until } from "./helpers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
});

/** A bare `ws` client (not our transport) for bytes our client would not send. */
async function rawClient(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}) {
  const ws = new WebSocket(url, options);
  ws.on("error", () => undefined);
  const frames: string[] = [];
  ws.on("message", (data, isBinary) => {
    if (!isBinary) frames.push(data.toString());
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  cleanups.push(async () => ws.terminate());
  return { ws, frames };
}

const request = (id: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method: "ahp/event", params });

describe("harness over WebSocket", () => {
  it("answers requests, stays silent on notifications, answers ping with pong (checklist 92)", async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const { ws, frames } = await rawClient(h.url);
    ws.send(JSON.stringify({ jsonrpc: "2.0", method: "ahp/event", params: event("post_action", {}) }));
    ws.send(request("r1", event("pre_action", preAction())));
    await until(() => frames.length === 1);
    expect(JSON.parse(frames[0]!)).toEqual({ jsonrpc: "2.0", id: "r1", result: { decision: "allow" } });
    const pong = new Promise<string>((resolve) => ws.once("pong", (d) => resolve(d.toString())));
    ws.ping("hello");
    expect(await pong).toBe("hello");
    expect(frames).toHaveLength(1);
  });

  it("ignores binary frames (with a notice) and answers malformed JSON with -32700, id null", async () => {
    const errors: Error[] = [];
    const h = await startHarness({}, { onerror: (e) => errors.push(e) });
    cleanups.push(() => h.close());
    const { ws, frames } = await rawClient(h.url);
    ws.send(Buffer.from(request("bin", event("pre_action", preAction()))));
    ws.send("{oops");
    ws.send(request("after", event("pre_action", preAction())));
    await until(() => frames.length === 2);
    const [parseError, answer] = frames.map((f) => JSON.parse(f) as { id: unknown; error?: { code: number } });
    expect(parseError!.id).toBeNull();
    expect(parseError!.error?.code).toBe(-32700);
    expect(answer!.id).toBe("after");
    expect(errors.map((e) => e.message)).toContain("binary WebSocket frame ignored (AHP messages are text frames)");
  });

  it("delivers each connection's messages into the server in arrival order", async () => {
    const seen: number[] = [];
    const notes: number[] = [];
    const h = await startHarness({
      handlers: {
        onEvent: (e) => {
          seen.push((e.payload as { n: number }).n);
          return { decision: "allow" };
        },
        onNotification: (e) => void notes.push((e.payload as { n: number }).n),
      },
    });
    cleanups.push(() => h.close());
    const { ws, frames } = await rawClient(h.url);
    for (let n = 0; n < 500; n++) {
      ws.send(request(`r${n}`, event("pre_action", { n })));
      ws.send(JSON.stringify({ jsonrpc: "2.0", method: "ahp/event", params: event("post_action", { n }) }));
    }
    await until(() => frames.length === 500 && notes.length === 500);
    expect(seen).toEqual(Array.from({ length: 500 }, (_, n) => n));
    expect(notes).toEqual(Array.from({ length: 500 }, (_, n) => n));
  });

  it("serves many concurrent connections", async () => {
    const h = await startHarness({ handlers: { onEvent: async (_e, ctx) => ({ decision: "allow", metadata: { c: ctx.connection.id } }) } });
    cleanups.push(() => h.close());
    const clients = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const client = new AhpClient();
        await client.connect(new WebSocketClientTransport(h.url));
        return client;
      }),
    );
    expect(h.listener.connectionCount).toBe(50);
    const answers = await Promise.all(clients.map((c) => Promise.all(Array.from({ length: 20 }, () => c.send("pre_action", preAction())))));
    for (const perClient of answers) {
      const ids = new Set(perClient.map((d) => (d as unknown as { metadata: { c: number } }).metadata.c));
      expect(ids.size).toBe(1);
    }
    expect(new Set(answers.map((a) => (a[0] as unknown as { metadata: { c: number } }).metadata.c)).size).toBe(50);
    await Promise.all(clients.map((c) => c.close()));
    await until(() => h.listener.connectionCount === 0);
  });

  it("dead-peer detection on the server: a client that never answers pings is dropped", async () => {
    const errors: Error[] = [];
    const h = await startHarness({}, { pingIntervalMs: 30, pongTimeoutMs: 50, onerror: (e) => errors.push(e) });
    cleanups.push(() => h.close());
    const { ws } = await rawClient(h.url, { autoPong: false });
    const code = await new Promise<number>((resolve) => ws.once("close", (c) => resolve(c)));
    expect(code).toBe(1006);
    expect(errors.map((e) => e.message)).toContain("WebSocket peer did not answer a ping within 50ms");
    await until(() => h.listener.connectionCount === 0);
  });

  it("a handler's signal aborts when its agent disconnects", async () => {
    const aborted = deferred();
    const started = deferred();
    const h = await startHarness({
      handlers: {
        onEvent: (_e, ctx) =>
          new Promise((_resolve, reject) => {
            started.resolve();
            ctx.signal.addEventListener("abort", () => {
              aborted.resolve();
              reject(new Error("gone"));
            });
          }),
      },
    });
    cleanups.push(() => h.close());
    const { ws } = await rawClient(h.url);
    ws.send(request("slow", event("pre_action", preAction())));
    await started.promise;
    ws.terminate();
    await aborted.promise;
  });
});

describe("backpressure", () => {
  const big = "r".repeat(64 * 1024);
  const pad = "p".repeat(32 * 1024);

  it("a slow reader: the server stops reading while answers wait, then catches up", async () => {
    let calls = 0;
    const h = await startHarness(
      {
        handlers: {
          onEvent: () => {
            calls++;
            return { decision: "block", reason: big };
          },
        },
      },
      { maxBufferedBytes: 256 * 1024, drainTimeoutMs: 0, pingIntervalMs: 0 },
    );
    cleanups.push(() => h.close());
    const { ws, frames } = await rawClient(h.url);
    ws.pause();
    const total = 600; // 600 × 64 KiB answers (~38 MiB), 600 × 32 KiB requests (~19 MiB): more than socket buffers hold
    for (let n = 0; n < total; n++) ws.send(request(`r${n}`, event("pre_action", { pad, n })));
    // The count of handled requests stops growing well below the total: reading paused.
    // Waits until the count held still for a quarter of a second (it may grow slowly on a busy machine).
    let last = -1;
    let stillSince = performance.now();
    await until(
      () => {
        if (calls !== last) {
          last = calls;
          stillSince = performance.now();
        }
        return calls > 0 && performance.now() - stillSince >= 250;
      },
      undefined,
      "the count of handled requests holding still",
    );
    expect(calls).toBeLessThan(total);
    ws.resume();
    await until(() => frames.length === total, undefined, "every answer received");
    expect(calls).toBe(total);
    expect(new Set(frames.map((f) => (JSON.parse(f) as { id: string }).id)).size).toBe(total);
  });

  it("a peer that never reads is dropped after drainTimeoutMs with a clear cause", async () => {
    const errors: Error[] = [];
    const h = await startHarness(
      { handlers: { onEvent: () => ({ decision: "block", reason: big }) } },
      { maxBufferedBytes: 128 * 1024, drainTimeoutMs: 200, pingIntervalMs: 0, onerror: (e) => errors.push(e) },
    );
    cleanups.push(() => h.close());
    const { ws } = await rawClient(h.url);
    ws.pause();
    for (let n = 0; n < 400; n++) ws.send(request(`r${n}`, event("pre_action", { pad, n })));
    await until(() => h.listener.connectionCount === 0, undefined, "the peer dropped");
    const stall = errors.find((e) => /not reading/.test(e.message));
    expect(stall?.message).toMatch(/^WebSocket peer is not reading: \d+ bytes buffered and \d+ frames waiting for 200ms$/);
  });
});

describe("mounting", () => {
  it("on your own http.Server next to an HTTP route and another WebSocket endpoint", async () => {
    const httpServer = http.createServer((req, res) => res.writeHead(200).end(`app ${req.url}`));
    const other = new WebSocketServer({ noServer: true });
    other.on("connection", (ws) => ws.send("other endpoint"));
    httpServer.on("upgrade", (req, socket, head) => {
      if (req.url === "/other") other.handleUpgrade(req, socket, head, (ws) => other.emit("connection", ws, req));
    });
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const attached = attachWebSocketServer(server, { httpServer, path: "/ahp" });
    await new Promise<void>((r) => httpServer.listen(0, "127.0.0.1", r));
    const base = `127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
    cleanups.push(async () => {
      await attached.close();
      other.close();
      httpServer.closeAllConnections();
      await new Promise<void>((r) => httpServer.close(() => r()));
      await server.close();
    });
    const page = await fetch(`http://${base}/page`);
    expect(await page.text()).toBe("app /page");
    const { frames } = await rawClient(`ws://${base}/other`);
    await until(() => frames.length === 1);
    expect(frames[0]).toBe("other endpoint");
    const client = new AhpClient();
    await client.connect(new WebSocketClientTransport(`ws://${base}/ahp?x=1`));
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    await client.close();
    expect(attached.connectionCount).toBe(0);
  });

  it("upgrades outside `path` get 404 when no other endpoint claims them", async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const error = await new Promise<Error>((resolve) => {
      const ws = new WebSocket(h.url.replace(/\/ahp$/, "/elsewhere"));
      ws.on("error", resolve);
    });
    expect(error.message).toBe("Unexpected server response: 404");
  });

  it("attach with no path accepts any path, as the reference", async () => {
    const httpServer = http.createServer();
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const attached = attachWebSocketServer(server, { httpServer });
    await new Promise<void>((r) => httpServer.listen(0, "127.0.0.1", r));
    cleanups.push(async () => {
      await attached.close();
      await new Promise<void>((r) => httpServer.close(() => r()));
      await server.close();
    });
    const client = new AhpClient();
    await client.connect(new WebSocketClientTransport(`ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}`));
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    await client.close();
  });

  it("needs exactly one of wss or httpServer", () => {
    const server = new AhpServer();
    expect(() => attachWebSocketServer(server, {})).toThrow(/exactly one/);
  });

  it("listenWebSocket answers plain HTTP: /healthz 200, the AHP path 426, others 404", async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    expect(h.listener.httpServer.address()).toMatchObject({ address: "127.0.0.1" });
    expect(h.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ahp$/);
    const base = h.url.replace(/^ws/, "http").replace(/\/ahp$/, "");
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    expect((await fetch(`${base}/ahp`)).status).toBe(426);
    expect((await fetch(`${base}/x`)).status).toBe(404);
  });

  it("listenWebSocket hands other plain HTTP requests to `fallback` (e.g. /metrics)", async () => {
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const listener = await listenWebSocket(server, {
      fallback: (req, res) => {
        res.writeHead(req.url === "/metrics" ? 200 : 418).end("metrics here");
      },
    });
    cleanups.push(() => listener.close());
    const base = listener.url.replace(/^ws/, "http").replace(/\/ahp$/, "");
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toBe("metrics here");
    expect((await fetch(`${base}/other`)).status).toBe(418);
    // The listener's own routes still win.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/ahp`)).status).toBe(426);
  });

  it("close() closes agents with 1001 and leaves the AhpServer usable", async () => {
    const h = await startHarness();
    cleanups.push(() => h.server.close());
    const { ws } = await rawClient(h.url);
    const code = new Promise<number>((resolve) => ws.once("close", (c) => resolve(c)));
    await h.listener.close();
    expect(await code).toBe(1001);
    const again = await listenWebSocket(h.server);
    cleanups.push(() => again.close());
    const client = new AhpClient();
    await client.connect(new WebSocketClientTransport(again.url));
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    await client.close();
  });
});

describe("no leaked handles", () => {
  for (const mode of ["client-first", "server-first", "reconnect"]) {
    it(`a process that opens and closes server and client (${mode}) exits by itself`, async () => {
      const script = fileURLToPath(new URL("./fixtures/open-close.mjs", import.meta.url));
      const child = spawn(process.execPath, [script, mode], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
      child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
      let killed = false;
      // A leaked handle keeps the process alive for good; the generous deadline is for a busy machine.
      const timer = setTimeout(() => {
        killed = true;
        child.kill("SIGKILL");
      }, 60_000);
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      clearTimeout(timer);
      expect(stderr).toBe("");
      expect(killed).toBe(false);
      expect(code).toBe(0);
      expect(stdout).toBe("done allow\n");
    }, 90_000);
  }
});

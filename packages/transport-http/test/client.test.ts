import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AhpClient, AhpError, AhpLocalError, AhpServer } from "@ahp/core";
import { HttpClientTransport, listenHttp, type HttpClientTransportOptions } from "@ahp/transport-http";
import { HANDSHAKE_RESULT, captureServer, deferred, event, preAction, startHarness, type Capture } from "./helpers.js";

const stacks = ["undici", "node"] as const;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
});

async function capture(): Promise<Capture> {
  const c = await captureServer();
  cleanups.push(() => c.close());
  return c;
}

async function connect(url: string, options: HttpClientTransportOptions = {}, handshake = true) {
  const transport = new HttpClientTransport(url, options);
  const client = new AhpClient({ timeoutMs: 5000 });
  cleanups.push(() => client.close());
  await client.connect(transport, { handshake: false });
  if (handshake) await client.handshake();
  return { client, transport };
}

/** Answers the handshake normally and every other request with `answer`. */
function scripted(c: Capture, answer: (id: unknown, res: http.ServerResponse) => void) {
  c.reply = (_req, body, res) => {
    const { id, method } = JSON.parse(body) as { id?: unknown; method?: string };
    if (method === "ahp/handshake") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result: HANDSHAKE_RESULT }));
      return;
    }
    answer(id, res);
  };
}

const rejection = async (p: Promise<unknown>) => {
  const result = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(result, "the call was expected to fail").toBeInstanceOf(Error);
  return result as Error & { code?: unknown; details?: Record<string, unknown> };
};

describe.each(stacks)("HttpClientTransport over %s", (stack) => {
  it("round-trips requests and notifications with a real harness", async () => {
    const seen: string[] = [];
    const h = await startHarness({
      handlers: { onEvent: () => ({ decision: "allow" }), onNotification: (e) => void seen.push(e.event_type) },
    });
    cleanups.push(() => h.close());
    const { client } = await connect(h.url, { client: stack });
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    await expect(client.send("post_action", {})).resolves.toEqual({ decision: "allow" });
    expect(seen).toEqual(["post_action"]);
    await expect(client.batch([event("pre_action", preAction()) as never, event("post_action", {}) as never])).resolves.toHaveLength(2);
    expect(client.handshakeResponse?.protocol_version).toBe("2.4");
  });

  it("non-2xx on a request → TRANSPORT_ERROR with the status and a body excerpt (checklist 90)", async () => {
    const c = await capture();
    scripted(c, (_id, res) => res.writeHead(503, { "content-type": "text/plain" }).end(`overloaded ${"z".repeat(2000)}`));
    const { client } = await connect(c.url, { client: stack });
    const e = await rejection(client.send("pre_action", preAction()));
    expect(e.code).toBe("TRANSPORT_ERROR");
    expect(e.message).toMatch(/^HTTP error: 503 - overloaded z+…$/);
    expect(e.message.length).toBeLessThan(600);
    expect(e.details).toEqual({ status: 503 });
  });

  it("a response with another id → PROTOCOL_ERROR `response id mismatch` (checklist 70)", async () => {
    const c = await capture();
    scripted(c, (_id, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":"other","result":{"decision":"allow"}}'),
    );
    const { client } = await connect(c.url, { client: stack });
    const e = await rejection(client.send("pre_action", preAction()));
    expect(e.code).toBe("PROTOCOL_ERROR");
    expect(e.message).toMatch(/^Protocol error: Event failed: response id mismatch, expected [0-9a-f-]{36}, got other$/);
  });

  it("an unparseable or non-response body → PROTOCOL_ERROR `Failed to parse response`", async () => {
    const c = await capture();
    const bodies = ["<html>oops</html>", "", "[1,2]", '{"id":"x","result":{}}', '{"jsonrpc":"2.0","id":null,"result":{}}'];
    let next = 0;
    scripted(c, (_id, res) => res.writeHead(200, { "content-type": "application/json" }).end(bodies[next++]));
    const { client } = await connect(c.url, { client: stack });
    for (const body of bodies) {
      const e = await rejection(client.send("pre_action", preAction()));
      expect(e.code, body).toBe("PROTOCOL_ERROR");
      expect(e.message, body).toMatch(/^Protocol error: Event failed: Failed to parse response: /);
    }
  });

  it("response validation of the client still applies (jsonrpc version, error, missing result)", async () => {
    const c = await capture();
    const answers = [
      (id: unknown) => ({ jsonrpc: "1.0", id, result: { decision: "allow" } }),
      (id: unknown) => ({ jsonrpc: "2.0", id, error: { code: -32602, message: "Invalid params: nope" } }),
      (id: unknown) => ({ jsonrpc: "2.0", id, result: null }),
    ];
    let next = 0;
    scripted(c, (id, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answers[next++]!(id))));
    const { client } = await connect(c.url, { client: stack });
    expect((await rejection(client.send("pre_action", preAction()))).message).toContain("invalid JSON-RPC version 1.0");
    const wire = await rejection(client.send("pre_action", preAction()));
    expect(AhpError.isInstance(wire)).toBe(true);
    expect(wire.message).toBe("Event failed: Invalid params: nope");
    expect((await rejection(client.send("pre_action", preAction()))).message).toContain("missing result");
  });

  it("a notification ignores status and body of the answer", async () => {
    const c = await capture();
    scripted(c, (_id, res) => res.writeHead(500).end("not json at all"));
    const { client } = await connect(c.url, { client: stack });
    await expect(client.send("post_action", {})).resolves.toEqual({ decision: "allow" });
    const sent = JSON.parse(c.requests.at(-1)!.body) as Record<string, unknown>;
    expect(sent).not.toHaveProperty("id");
  });

  it("a long non-2xx body is read only up to the excerpt's limit; the connection is dropped and the next call works", async () => {
    const c = await capture();
    let status = 500;
    scripted(c, (id, res) => {
      if (status === 200) {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id, result: { decision: "allow" } }));
        return;
      }
      // 4 MiB in chunks, no content-length: the client must stop reading, not buffer it all.
      res.writeHead(status, { "content-type": "text/plain" });
      const chunk = "y".repeat(64 * 1024);
      for (let i = 0; i < 64; i++) res.write(chunk);
      res.end();
    });
    const { client } = await connect(c.url, { client: stack });
    const e = await rejection(client.send("pre_action", preAction()));
    expect(e.code).toBe("TRANSPORT_ERROR");
    expect(e.message).toMatch(/^HTTP error: 500 - y{512}…$/);
    status = 200;
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
  });

  it("a notification resolves when its answer's body is huge or breaks off after the status; the next call works", async () => {
    const c = await capture();
    let mode: "huge" | "broken" | "ok" = "huge";
    scripted(c, (id, res) => {
      if (mode === "ok") {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id, result: { decision: "allow" } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/plain", "content-length": String(8 * 1024 * 1024) });
      if (mode === "broken") {
        res.write("partial", () => res.socket?.destroy());
        return;
      }
      const chunk = "n".repeat(64 * 1024);
      for (let i = 0; i < 128; i++) res.write(chunk);
      res.end();
    });
    const { client } = await connect(c.url, { client: stack });
    await expect(client.send("post_action", {})).resolves.toEqual({ decision: "allow" });
    mode = "broken";
    await expect(client.send("post_action", {})).resolves.toEqual({ decision: "allow" });
    mode = "ok";
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
  });

  it("a request whose answer breaks off in its body → TRANSPORT_ERROR, not a hang", async () => {
    const c = await capture();
    scripted(c, (_id, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
      res.write('{"jsonrpc":"2.0",', () => res.socket?.destroy());
    });
    const { client } = await connect(c.url, { client: stack, timeoutMs: 30_000 });
    const e = await rejection(client.send("pre_action", preAction(), { timeoutMs: 30_000 }));
    expect(e.code).toBe("TRANSPORT_ERROR");
    expect(e.message).toMatch(/^HTTP request failed: /);
  });

  it("connection refused → TRANSPORT_ERROR naming ECONNREFUSED, for requests and notifications", async () => {
    const spare = http.createServer();
    await new Promise<void>((r) => spare.listen(0, "127.0.0.1", r));
    const port = (spare.address() as AddressInfo).port;
    await new Promise<void>((r) => spare.close(() => r()));
    const transport = new HttpClientTransport(`http://127.0.0.1:${port}/ahp`, { client: stack });
    cleanups.push(() => transport.close());
    const request = await rejection(transport.send({ jsonrpc: "2.0", id: "1", method: "ahp/handshake", params: {} }));
    expect(request.code).toBe("TRANSPORT_ERROR");
    expect(request.message).toMatch(/^HTTP request failed: .*ECONNREFUSED/);
    expect(JSON.stringify(request.details)).toContain("ECONNREFUSED");
    const note = await rejection(transport.send({ jsonrpc: "2.0", method: "ahp/event", params: {} }));
    expect(note.code).toBe("TRANSPORT_ERROR");
    expect(note.message).toMatch(/^HTTP notification failed: .*ECONNREFUSED/);
  });

  it("a harness that dies mid-request fails the call promptly with the cause, not the timeout", async () => {
    const c = await capture();
    const arrived = deferred();
    scripted(c, () => arrived.resolve()); // never answers
    const { client } = await connect(c.url, { client: stack, timeoutMs: 30_000 });
    const call = rejection(client.send("pre_action", preAction(), { timeoutMs: 30_000 }));
    await arrived.promise;
    await c.close();
    const e = await call;
    // TRANSPORT_ERROR, not the 30 s TIMEOUT (past the test's own limit): failed with the cause.
    expect(e.code).toBe("TRANSPORT_ERROR");
    expect(e.message).toMatch(/^HTTP request failed: /);
  });

  it("the transport timeout covers the whole exchange → TIMEOUT", async () => {
    const c = await capture();
    scripted(c, () => undefined);
    const { client } = await connect(c.url, { client: stack, timeoutMs: 150 });
    const e = await rejection(client.send("pre_action", preAction()));
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toBe("Timeout after 150ms");
    const n = await rejection(client.send("post_action", {}));
    expect(n.code).toBe("TIMEOUT");
  });

  it("each exchange times out at its own deadline; answered ones are unaffected", async () => {
    const c = await capture();
    let n = 0;
    scripted(c, (id, res) => {
      // The second request is answered at once, the others never.
      if (++n === 2)
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id, result: { decision: "allow" } }));
    });
    // Limits long enough that the answered exchange is answered in time on a busy machine.
    const transport = new HttpClientTransport(c.url, { client: stack, timeoutMs: 3000 });
    cleanups.push(() => transport.close());
    transport.onmessage = () => undefined;
    const started = performance.now();
    const at = (p: Promise<unknown>) =>
      p.then(
        () => ({ ok: true, ms: performance.now() - started }),
        (e: AhpLocalError) => ({ ok: false, code: e.code, ms: performance.now() - started }),
      );
    const first = at(transport.send({ jsonrpc: "2.0", id: "a", method: "ahp/event", params: {} }));
    const second = at(transport.send({ jsonrpc: "2.0", id: "b", method: "ahp/event", params: {} }));
    // The third starts a second later than the first two (a traffic pattern).
    while (performance.now() - started < 1000) await new Promise((r) => setTimeout(r, 10));
    const third = at(transport.send({ jsonrpc: "2.0", id: "c", method: "ahp/event", params: {} }));
    const [a, b, d] = await Promise.all([first, second, third]);
    expect(b.ok).toBe(true);
    expect(a).toMatchObject({ ok: false, code: "TIMEOUT" });
    expect(d).toMatchObject({ ok: false, code: "TIMEOUT" });
    expect(a.ms).toBeGreaterThanOrEqual(2995);
    expect(a.ms).toBeLessThan(d.ms);
    expect(d.ms).toBeGreaterThanOrEqual(3995);
  });

  it("an AbortSignal aborts the exchange → ABORTED", async () => {
    const c = await capture();
    const arrived = deferred();
    scripted(c, () => arrived.resolve());
    const { client } = await connect(c.url, { client: stack });
    const controller = new AbortController();
    const call = rejection(client.send("pre_action", preAction(), { signal: controller.signal }));
    await arrived.promise;
    controller.abort(new Error("user gave up"));
    expect((await call).code).toBe("ABORTED");
  });

  it("close() fails pending exchanges with CONNECTION_CLOSED and fires onclose once", async () => {
    const c = await capture();
    const arrived = deferred();
    scripted(c, () => arrived.resolve());
    const transport = new HttpClientTransport(c.url, { client: stack });
    let closes = 0;
    transport.onclose = () => void closes++;
    await transport.start();
    const pending = rejection(transport.send({ jsonrpc: "2.0", id: "p", method: "ahp/event", params: {} }));
    await arrived.promise;
    await Promise.all([transport.close(), transport.close()]);
    expect((await pending).code).toBe("CONNECTION_CLOSED");
    expect(closes).toBe(1);
    expect((await rejection(transport.send({ jsonrpc: "2.0", method: "ahp/event", params: {} }))).code).toBe("CONNECTION_CLOSED");
  });

  it("a response over maxMessageBytes → MESSAGE_TOO_LARGE (declared and chunked)", async () => {
    const c = await capture();
    let chunked = false;
    scripted(c, (id, res) => {
      const text = JSON.stringify({ jsonrpc: "2.0", id, result: { decision: "allow", reason: "r".repeat(4096) } });
      if (chunked) {
        res.writeHead(200, { "content-type": "application/json" });
        res.write(text.slice(0, 2000));
        res.end(text.slice(2000));
      } else res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
    });
    const { client } = await connect(c.url, { client: stack, maxMessageBytes: 1024 });
    const declared = await rejection(client.send("pre_action", preAction()));
    expect(declared.code).toBe("MESSAGE_TOO_LARGE");
    expect(declared.message).toMatch(/^HTTP response too large: \d+ bytes exceeds limit 1024$/);
    chunked = true;
    expect((await rejection(client.send("pre_action", preAction()))).code).toBe("MESSAGE_TOO_LARGE");
  });

  it("an outgoing message over maxMessageBytes is refused before sending", async () => {
    const c = await capture();
    const { client } = await connect(c.url, { client: stack, maxMessageBytes: 2048 });
    const before = c.requests.length;
    const e = await rejection(client.send("pre_action", preAction("x".repeat(4096))));
    expect(e.code).toBe("MESSAGE_TOO_LARGE");
    expect(c.requests.length).toBe(before);
  });

  it("a message over the harness's body limit → TRANSPORT_ERROR with status 413", async () => {
    const h = await startHarness({}, { maxBodyBytes: 64 * 1024 });
    cleanups.push(() => h.close());
    const { client } = await connect(h.url, { client: stack });
    const e = await rejection(client.send("pre_action", preAction("x".repeat(3 * 1024 * 1024))));
    expect(e.code).toBe("TRANSPORT_ERROR");
    expect(e.message).toMatch(/^HTTP error: 413 - .*Message too large/);
    expect(e.details).toEqual({ status: 413 });
    // The next call works (a fresh connection).
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
  });

  it("keeps connections alive and reuses them", async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const sockets = new Set<unknown>();
    h.listener.httpServer.on("connection", (s) => sockets.add(s));
    const { client } = await connect(h.url, { client: stack });
    for (let i = 0; i < 50; i++) await client.send("pre_action", preAction());
    // undici may open a second socket when the next request starts before it marked the first idle.
    expect(sockets.size).toBeGreaterThanOrEqual(1);
    expect(sockets.size).toBeLessThanOrEqual(2);
  });

  it("1000 concurrent in-flight requests all arrive at once and are answered in any order", async () => {
    const total = 1000;
    let arrived = 0;
    const all = deferred();
    const server = new AhpServer({
      handlers: {
        onEvent: async (e) => {
          if (++arrived === total) all.resolve();
          await all.promise; // every request is in flight at the same time
          // Answer in a scrambled order.
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 5)));
          return { decision: "allow", metadata: { n: (e.payload as { n: number }).n } };
        },
      },
    });
    const listener = await listenHttp(server);
    cleanups.push(async () => {
      await listener.close();
      await server.close();
    });
    // Deadlines far above the few seconds this takes on a loaded machine: the test is about order, not speed.
    const { client } = await connect(listener.url, { client: stack, maxConnections: total, timeoutMs: 50_000 });
    const results = await Promise.all(Array.from({ length: total }, (_, n) => client.send("pre_action", { n }, { timeoutMs: 50_000 })));
    expect(results.map((d) => (d as unknown as { metadata: { n: number } }).metadata.n)).toEqual(
      Array.from({ length: total }, (_, n) => n),
    );
  }, 120_000);

  it("1000 requests through the default connection limit queue and complete", async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const sockets = new Set<unknown>();
    h.listener.httpServer.on("connection", (s) => sockets.add(s));
    const { client } = await connect(h.url, { client: stack });
    const results = await Promise.all(Array.from({ length: 1000 }, () => client.send("pre_action", preAction(), { timeoutMs: 50_000 })));
    expect(results.every((d) => d.decision === "allow")).toBe(true);
    expect(sockets.size).toBeLessThanOrEqual(128);
  }, 120_000);
});

describe("HttpClientTransport options", () => {
  it("rejects non-HTTP URLs and mismatched stack options", () => {
    expect(() => new HttpClientTransport("ws://127.0.0.1/ahp")).toThrow(/http: or https:/);
    expect(() => new HttpClientTransport("http://127.0.0.1/ahp", { client: "node", dispatcher: {} as never })).toThrow(/dispatcher/);
    expect(() => new HttpClientTransport("http://127.0.0.1/ahp", { client: "undici", agent: new http.Agent() })).toThrow(/agent/);
  });

  it("info never carries credentials from the URL", () => {
    const t = new HttpClientTransport("http://user:secret@127.0.0.1:9/ahp?api_key=secret");
    expect(t.info).toEqual({ transport: "http", remote: "http://127.0.0.1:9/ahp" });
  });

  it("uses a caller's own agent (node stack) and leaves it open on close", async () => {
    const h = await startHarness();
    cleanups.push(() => h.close());
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    cleanups.push(async () => agent.destroy());
    const { client } = await connect(h.url, { agent });
    await client.send("pre_action", preAction());
    await client.close();
    // Still usable: the kept-alive socket waits in the caller's agent.
    expect(Object.keys(agent.freeSockets).length).toBe(1);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { AhpClient, AhpLocalError, AhpServer } from "@ahp/core";
import { WebSocketClientTransport, listenWebSocket, type WebSocketClientTransportOptions } from "@ahp/transport-ws";
import { HANDSHAKE_RESULT, deferred, preAction, rawWsServer, rejection, startHarness, until, type RawWsServer } from "./helpers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
});

async function raw(options: Parameters<typeof rawWsServer>[0] = {}): Promise<RawWsServer> {
  const r = await rawWsServer(options);
  cleanups.push(() => r.close());
  return r;
}

async function connect(url: string, options: WebSocketClientTransportOptions = {}) {
  const transport = new WebSocketClientTransport(url, options);
  const errors: Error[] = [];
  const client = new AhpClient({ timeoutMs: 5000, onerror: (e) => errors.push(e) });
  cleanups.push(() => client.close());
  await client.connect(transport);
  return { client, transport, errors };
}

/** Answers the handshake; hands every other request to `onRequest`. */
const answering =
  (onRequest: (ws: WebSocket, m: { id?: string; method: string; params: unknown }) => void) => (ws: WebSocket, text: string) => {
    const m = JSON.parse(text) as { id?: string; method: string; params: unknown };
    if (m.method === "ahp/handshake") ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: HANDSHAKE_RESULT }));
    else onRequest(ws, m);
  };

describe("framing (checklist 92)", () => {
  it("every message is one text frame; the harness's frames are matched by id", async () => {
    const frames: Array<{ text: string; isBinary: boolean }> = [];
    const r = await raw({
      onMessage: (ws, text, isBinary) => {
        frames.push({ text, isBinary });
        const m = JSON.parse(text) as { id?: string; method: string };
        if (m.id === undefined) return;
        ws.send(
          JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.method === "ahp/handshake" ? HANDSHAKE_RESULT : { decision: "allow" } }),
        );
      },
    });
    const { client } = await connect(r.url);
    await client.send("pre_action", preAction("line1\nline2 é"));
    await client.send("post_action", {});
    await until(() => frames.length === 3);
    expect(frames.every((f) => !f.isBinary)).toBe(true);
    expect(frames.map((f) => (JSON.parse(f.text) as { method: string }).method)).toEqual(["ahp/handshake", "ahp/event", "ahp/event"]);
    expect(JSON.parse(frames[2]!.text)).not.toHaveProperty("id");
  });

  it("binary frames are ignored with an onerror notice; the text answer still arrives", async () => {
    const r = await raw({
      onMessage: answering((ws, m) => {
        ws.send(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { decision: "block", reason: "binary" } })));
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { decision: "allow" } }));
      }),
    });
    const { client, errors } = await connect(r.url);
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    expect(errors.map((e) => e.message)).toContain("binary WebSocket frame ignored (AHP messages are text frames)");
  });

  it("an undecodable text frame is reported and skipped", async () => {
    const r = await raw({
      onMessage: answering((ws, m) => {
        ws.send("{not json");
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { decision: "allow" } }));
      }),
    });
    const { client, errors } = await connect(r.url);
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
    expect(errors.some((e) => /^Parse error/.test(e.message))).toBe(true);
  });

  it("the client answers the harness's pings with pongs", async () => {
    const r = await raw();
    await connect(r.url);
    const pong = new Promise<string>((resolve) => r.sockets[0]!.once("pong", (data) => resolve(data.toString())));
    r.sockets[0]!.ping("are-you-there");
    expect(await pong).toBe("are-you-there");
  });
});

describe("oversized messages", () => {
  it("an outgoing message over maxPayload is refused before sending", async () => {
    const r = await raw();
    const { client } = await connect(r.url, { maxPayload: 4096 });
    const e = await rejection(client.send("pre_action", preAction("x".repeat(8000))));
    expect(e.code).toBe("MESSAGE_TOO_LARGE");
  });

  it("a message over the harness's maxPayload: the harness closes with 1009 and the call fails with that cause", async () => {
    const h = await startHarness({}, { maxPayload: 4096 });
    cleanups.push(() => h.close());
    const { client, transport } = await connect(h.url);
    const closed = new Promise<Error | undefined>((resolve) => {
      const previous = transport.onclose;
      transport.onclose = (error) => {
        previous?.(error);
        resolve(error);
      };
    });
    const e = await rejection(client.send("pre_action", preAction("x".repeat(8000))));
    expect(e.code).toBe("CONNECTION_CLOSED");
    expect(e.message).toMatch(/1009 \(message too big\).*size limit/);
    const cause = await closed;
    expect(AhpLocalError.isInstance(cause) && cause.code).toBe("MESSAGE_TOO_LARGE");
    expect((cause as AhpLocalError).details).toMatchObject({ closeCode: 1009 });
  });

  it("an incoming frame over the client's maxPayload closes the connection with a MESSAGE_TOO_LARGE cause", async () => {
    const r = await raw({
      onMessage: answering((ws, m) =>
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { decision: "block", reason: "r".repeat(10_000) } })),
      ),
    });
    const { client } = await connect(r.url, { maxPayload: 4096 });
    const e = await rejection(client.send("pre_action", preAction()));
    expect(e.code).toBe("CONNECTION_CLOSED");
    expect(e.message).toMatch(/^Connection closed: WebSocket message too large/);
    expect(AhpLocalError.isInstance(e.cause) && e.cause.code).toBe("MESSAGE_TOO_LARGE");
  });
});

describe("a peer that goes away", () => {
  it("harness closed while a request is pending → the call fails promptly with the cause", async () => {
    const arrived = deferred();
    const server = new AhpServer({ handlers: { onEvent: () => (arrived.resolve(), new Promise(() => undefined)) } });
    const listener = await listenWebSocket(server);
    cleanups.push(() => server.close());
    cleanups.push(() => listener.close());
    const { client } = await connect(listener.url);
    const call = rejection(client.send("pre_action", preAction(), { timeoutMs: 30_000 }));
    await arrived.promise;
    await listener.close();
    const e = await call;
    expect(e.code).toBe("CONNECTION_CLOSED");
    expect(e.message).toBe("WebSocket closed by the server with code 1001 (going away): server closing");
    expect(e.details).toEqual({ closeCode: 1001, closeReason: "server closing" });
  });

  it("a socket cut without a Close frame fails the call with a 1006 cause", async () => {
    const r = await raw({ onMessage: answering((ws) => ws.terminate()) });
    const { client } = await connect(r.url);
    const e = await rejection(client.send("pre_action", preAction(), { timeoutMs: 30_000 }));
    expect(e.code).toBe("CONNECTION_CLOSED");
    expect(e.message).toMatch(/1006 \(abnormal closure\)/);
  });

  it("dead-peer detection: unanswered pings terminate the connection with a TIMEOUT cause", async () => {
    const r = await raw({ autoPong: false, onMessage: answering(() => undefined) });
    const { client, transport } = await connect(r.url, { pingIntervalMs: 40, pongTimeoutMs: 60 });
    const closed = new Promise<Error | undefined>((resolve) => {
      const previous = transport.onclose;
      transport.onclose = (error) => {
        previous?.(error);
        resolve(error);
      };
    });
    const e = await rejection(client.send("pre_action", preAction(), { timeoutMs: 30_000 }));
    expect(e.code).toBe("CONNECTION_CLOSED");
    expect(e.message).toBe("Connection closed: WebSocket peer did not answer a ping within 60ms");
    const cause = await closed;
    expect(AhpLocalError.isInstance(cause) && cause.code).toBe("TIMEOUT");
  });

  it("a live peer answers pings: no false alarms", async () => {
    const r = await raw();
    // Many pings in the wait below; a pong timeout a loaded machine cannot miss by scheduling alone.
    const { client } = await connect(r.url, { pingIntervalMs: 20, pongTimeoutMs: 2000 });
    let pings = 0;
    r.sockets[0]!.on("ping", () => pings++);
    await until(() => pings >= 10, undefined, "ten pings answered");
    await expect(client.send("pre_action", preAction())).resolves.toEqual({ decision: "allow" });
  });

  it("connecting to nothing fails with TRANSPORT_ERROR and the network code", async () => {
    const r = await raw();
    const url = r.url;
    await r.close();
    const client = new AhpClient();
    const e = await rejection(client.connect(new WebSocketClientTransport(url)));
    expect(e.code).toBe("TRANSPORT_ERROR");
    expect(e.message).toMatch(/^WebSocket connection to ws:\/\/127\.0\.0\.1:\d+\/ahp failed: .*ECONNREFUSED/);
    expect(e.details).toEqual({ code: "ECONNREFUSED" });
    await client.close();
  });

  it("close() sends a Close frame (1000), fires onclose once, and later sends fail", async () => {
    const r = await raw();
    const { client, transport } = await connect(r.url);
    let closes = 0;
    const previous = transport.onclose;
    transport.onclose = (error) => {
      closes++;
      previous?.(error);
    };
    const code = new Promise<number>((resolve) => r.sockets[0]!.once("close", (c) => resolve(c)));
    await Promise.all([client.close(), transport.close()]);
    expect(await code).toBe(1000);
    expect(closes).toBe(1);
    expect(transport.state).toBe("closed");
    expect((await rejection(transport.send({ jsonrpc: "2.0", method: "ahp/event", params: {} }))).code).toBe("CONNECTION_CLOSED");
  });
});

describe("reconnect", () => {
  it("fails the requests of the dead connection with its cause, reconnects, and never replays them", async () => {
    const seen: string[] = [];
    let dropNext = true;
    const r = await raw({
      onMessage: answering((ws, m) => {
        const command = (m.params as { payload: { arguments: { command: string } } }).payload.arguments.command;
        seen.push(command);
        if (dropNext) {
          dropNext = false;
          ws.terminate();
          return;
        }
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { decision: "allow" } }));
      }),
    });
    const reconnects: number[] = [];
    const { client, transport } = await connect(r.url, {
      reconnect: { retries: 5, minDelayMs: 10, maxDelayMs: 50 },
      onreconnect: (n) => reconnects.push(n),
    });
    const e = await rejection(client.send("pre_action", preAction("first"), { timeoutMs: 30_000 }));
    expect(e.code).toBe("CONNECTION_CLOSED");
    expect(e.message).toMatch(/1006 \(abnormal closure\)/);
    // Sent while reconnecting: waits for the new connection, then goes out once.
    await expect(client.send("pre_action", preAction("second"))).resolves.toEqual({ decision: "allow" });
    expect(transport.state).toBe("open");
    expect(reconnects).toEqual([1]);
    expect(seen).toEqual(["first", "second"]);
    expect(r.upgrades).toHaveLength(2);
  });

  it("sends again, once reconnected, a request that crossed the harness's close of an idle connection", async () => {
    const seen: Array<[string, number]> = [];
    const r = await raw({
      onMessage: answering((ws, m) => {
        const connection = r.sockets.indexOf(ws) + 1;
        const command = (m.params as { payload: { arguments: { command: string } } }).payload.arguments.command;
        seen.push([command, connection]);
        // The first connection closes as idle instead of answering: the request crossed the close.
        if (connection === 1) {
          ws.close(1001, "idle timeout");
          return;
        }
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { decision: "allow" } }));
      }),
    });
    const reconnects: number[] = [];
    const { client } = await connect(r.url, {
      reconnect: { retries: 5, minDelayMs: 10, maxDelayMs: 50 },
      onreconnect: (n) => reconnects.push(n),
    });
    await expect(client.send("pre_action", preAction("crossed"), { timeoutMs: 30_000 })).resolves.toEqual({ decision: "allow" });
    expect(seen).toEqual([
      ["crossed", 1],
      ["crossed", 2],
    ]);
    expect(reconnects).toEqual([1]);
  });

  it("does not send again what crossed a close that was not an idle close (1001, shutting down)", async () => {
    const seen: string[] = [];
    const r = await raw({
      onMessage: answering((ws, m) => {
        const connection = r.sockets.indexOf(ws) + 1;
        seen.push((m.params as { payload: { arguments: { command: string } } }).payload.arguments.command);
        if (connection === 1) ws.close(1001, "server closing");
        else ws.send(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { decision: "allow" } }));
      }),
    });
    const { client } = await connect(r.url, { reconnect: { retries: 5, minDelayMs: 10, maxDelayMs: 50 } });
    const e = await rejection(client.send("pre_action", preAction("first"), { timeoutMs: 30_000 }));
    expect(e.code).toBe("CONNECTION_CLOSED");
    await expect(client.send("pre_action", preAction("second"))).resolves.toEqual({ decision: "allow" });
    expect(seen).toEqual(["first", "second"]);
  });

  it("gives up after `retries` attempts and closes with the last cause", async () => {
    const r = await raw();
    const { client, transport } = await connect(r.url, { reconnect: { retries: 3, minDelayMs: 5, maxDelayMs: 20 } });
    const closed = new Promise<Error | undefined>((resolve) => {
      const previous = transport.onclose;
      transport.onclose = (error) => {
        previous?.(error);
        resolve(error);
      };
    });
    await r.close();
    const cause = await closed;
    expect(cause?.message).toMatch(/^WebSocket reconnect failed after 3 attempts: .*ECONNREFUSED/);
    expect(transport.state).toBe("closed");
    expect((await rejection(client.send("pre_action", preAction()))).code).toBe("CONNECTION_CLOSED");
  });

  it("stops at once when the harness refuses the new connection (401)", async () => {
    let refuse = false;
    const h = await startHarness({}, { auth: async () => !refuse });
    cleanups.push(() => h.close());
    const { transport } = await connect(h.url, { reconnect: { retries: 10, minDelayMs: 5, maxDelayMs: 10 } });
    const closed = new Promise<Error | undefined>((resolve) => {
      const previous = transport.onclose;
      transport.onclose = (error) => {
        previous?.(error);
        resolve(error);
      };
    });
    refuse = true;
    for (const ws of h.listener.wss.clients) ws.terminate();
    const cause = (await closed) as AhpLocalError;
    expect(cause.message).toBe("WebSocket reconnect failed after 1 attempts: WebSocket upgrade refused: HTTP 401");
    expect(cause.details).toMatchObject({ status: 401, attempts: 1 });
  });

  it("close() during the backoff ends the transport without another attempt", async () => {
    const r = await raw();
    const { client, transport } = await connect(r.url, { reconnect: { retries: 5, minDelayMs: 5_000, maxDelayMs: 5_000 } });
    r.sockets[0]!.terminate();
    await new Promise<void>((resolve) => {
      const check = () => (transport.state === "reconnecting" ? resolve() : setTimeout(check, 2));
      check();
    });
    const waiting = rejection(client.send("pre_action", preAction(), { timeoutMs: 30_000 }));
    await client.close();
    expect((await waiting).code).toBe("CONNECTION_CLOSED");
    expect(r.upgrades).toHaveLength(1);
  });
});

describe("load", () => {
  it("1000 concurrent in-flight requests on one connection, answered out of order", async () => {
    const total = 1000;
    const held: Array<{ ws: WebSocket; id: string; n: number }> = [];
    const r = await raw({
      onMessage: answering((ws, m) => {
        held.push({ ws, id: m.id!, n: (m.params as { payload: { n: number } }).payload.n });
        if (held.length === total) {
          // Everything is in flight; answer in reverse order.
          for (const h of held.reverse())
            ws.send(JSON.stringify({ jsonrpc: "2.0", id: h.id, result: { decision: "allow", metadata: { n: h.n } } }));
        }
      }),
    });
    const { client } = await connect(r.url);
    const results = await Promise.all(Array.from({ length: total }, (_, n) => client.send("pre_action", { n })));
    expect(results.map((d) => (d as unknown as { metadata: { n: number } }).metadata.n)).toEqual(
      Array.from({ length: total }, (_, n) => n),
    );
  });

  it("1000 concurrent requests against the real harness", async () => {
    const h = await startHarness({
      handlers: { onEvent: async (e) => ({ decision: "allow", metadata: { n: (e.payload as { n: number }).n } }) },
    });
    cleanups.push(() => h.close());
    const { client } = await connect(h.url);
    const results = await Promise.all(Array.from({ length: 1000 }, (_, n) => client.send("pre_action", { n })));
    expect(results.map((d) => (d as unknown as { metadata: { n: number } }).metadata.n)).toEqual(Array.from({ length: 1000 }, (_, n) => n));
  });
});

describe("transport details", () => {
  it("a send made while the first connection opens waits for it", async () => {
    const r = await raw();
    const transport = new WebSocketClientTransport(r.url);
    cleanups.push(() => transport.close());
    const received: unknown[] = [];
    transport.onmessage = (m) => received.push(m);
    const starting = transport.start();
    const sending = transport.send({ jsonrpc: "2.0", id: "early", method: "ahp/handshake", params: {} });
    await starting;
    await sending;
    await until(() => received.length === 1);
    expect(received[0]).toMatchObject({ id: "early" });
  });

  it("refuses header values that cannot be sent, without echoing them", () => {
    const attempt = () =>
      new WebSocketClientTransport("ws://127.0.0.1:1/ahp", { auth: { type: "api_key", key: "secret\r\nx: y" }, authMode: "header" });
    expect(attempt).toThrow(/header x-api-key has a value that cannot be sent/);
    expect(attempt).not.toThrow(/secret/);
  });

  it("query credentials never appear in connection errors", async () => {
    const r = await raw();
    const url = r.url;
    await r.close();
    const client = new AhpClient();
    const e = await rejection(client.connect(new WebSocketClientTransport(url, { auth: { type: "api_key", key: "sekrit-key" } })));
    expect(e.message).not.toContain("sekrit");
    expect(String(e.cause)).not.toContain("sekrit");
    await client.close();
  });

  it("send before start() is NOT_CONNECTED; start() twice is refused", async () => {
    const r = await raw();
    const transport = new WebSocketClientTransport(r.url);
    cleanups.push(() => transport.close());
    expect((await rejection(transport.send({ jsonrpc: "2.0", method: "ahp/event", params: {} }))).code).toBe("NOT_CONNECTED");
    await transport.start();
    expect((await rejection(transport.start())).code).toBe("INVALID_ARGUMENT");
  });
});

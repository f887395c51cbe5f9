/**
 * A kept-alive connection the harness closes as the next request goes out (its keep-alive or
 * idle timeout, room made at its cap): the request is sent once more on a new connection when
 * that is safe (`ahp/handshake`, `ahp/query`), and otherwise fails with a TRANSPORT_ERROR, never
 * silently; with a harness whose keep-alive timeout is short, no decision is lost.
 */
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { AhpClient, AhpLocalError, AhpServer } from "@ahp/core";
import { HttpClientTransport, listenHttp } from "@ahp/transport-http";
import { Dispatcher } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { HANDSHAKE_RESULT } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Seen {
  connection: number;
  method: string;
  id: unknown;
}

/**
 * A minimal HTTP/1.1 harness that keeps connections alive without a `Keep-Alive` hint and, on the
 * second request of a connection, closes it without reading further or answering: as a harness
 * that closed an idle connection just as the client reused it.
 */
async function closingHarness(): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    const connection = ++connections;
    let requests = 0;
    let buffer = Buffer.alloc(0);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end === -1) return;
        const head = buffer.subarray(0, end).toString("latin1");
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        const body = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString("utf8")) as { id?: unknown; method: string };
        buffer = buffer.subarray(end + 4 + length);
        seen.push({ connection, method: body.method, id: body.id });
        if (++requests === 2) {
          socket.destroy();
          return;
        }
        const result =
          body.method === "ahp/handshake" ? HANDSHAKE_RESULT : body.method === "ahp/query" ? { answer: "ok" } : { decision: "allow" };
        const text = body.id === undefined ? "" : JSON.stringify({ jsonrpc: "2.0", id: body.id, result });
        socket.write(
          `HTTP/1.1 ${body.id === undefined ? 204 : 200} OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ahp`, seen };
}

function transportFor(url: string, client: "undici" | "node"): { transport: HttpClientTransport; answers: unknown[] } {
  // One connection: the second request goes out on the first one's kept-alive connection.
  const transport = new HttpClientTransport(url, { client, timeoutMs: 30_000, maxConnections: 1 });
  const answers: unknown[] = [];
  transport.onmessage = (message) => answers.push(message);
  cleanups.push(() => transport.close());
  return { transport, answers };
}

const handshake = { jsonrpc: "2.0", id: "h", method: "ahp/handshake", params: {} } as const;

describe.each(["undici", "node"] as const)("HttpClientTransport (%s): a kept-alive connection closed by the harness", (client) => {
  it("sends an idempotent request (ahp/query) once more on a new connection and gets its answer", async () => {
    const h = await closingHarness();
    const { transport, answers } = transportFor(h.url, client);
    await transport.send(handshake);
    await transport.send({ jsonrpc: "2.0", id: "q", method: "ahp/query", params: {} } as never);
    expect(answers.map((a) => (a as { id: unknown }).id)).toEqual(["h", "q"]);
    // The query reached the harness twice: on the reused connection it closed, then on a new one.
    expect(h.seen.filter((s) => s.id === "q").map((s) => s.connection)).toEqual([1, 2]);
  });

  it("never repeats an event whose request went out: it fails with TRANSPORT_ERROR, and the next one is answered", async () => {
    const h = await closingHarness();
    const { transport, answers } = transportFor(h.url, client);
    await transport.send(handshake);
    const error = await transport.send({ jsonrpc: "2.0", id: "e1", method: "ahp/event", params: {} } as never).catch((e: unknown) => e);
    expect(AhpLocalError.isInstance(error) && error.code).toBe("TRANSPORT_ERROR");
    expect(h.seen.filter((s) => s.id === "e1")).toHaveLength(1);
    await transport.send({ jsonrpc: "2.0", id: "e2", method: "ahp/event", params: {} } as never);
    expect(answers.map((a) => (a as { id: unknown }).id)).toEqual(["h", "e2"]);
  });
});

describe.each(["undici", "node"] as const)("HttpClientTransport (%s) and a harness with a short keep-alive timeout", (client) => {
  it("loses no decision when calls come around the keep-alive timeout", async () => {
    let handled = 0;
    const server = new AhpServer({
      handlers: {
        onEvent: () => {
          handled++;
          return { decision: "allow" };
        },
      },
    });
    const listener = await listenHttp(server, { host: "127.0.0.1", port: 0, keepAliveTimeoutMs: 1000 });
    cleanups.push(async () => {
      await listener.close();
      await server.close();
    });
    const agent = new AhpClient({ timeoutMs: 30_000 });
    await agent.connect(new HttpClientTransport(listener.url, { client, timeoutMs: 30_000 }));
    cleanups.push(() => agent.close());
    const decisions: string[] = [];
    // Gaps just under, at and just over the harness's keep-alive timeout (a traffic pattern).
    for (const gap of [900, 980, 1000, 1020, 1100, 950, 1050, 1000]) {
      await new Promise((resolve) => setTimeout(resolve, gap));
      decisions.push((await agent.send("pre_action", {})).decision);
    }
    expect(decisions).toEqual(Array(8).fill("allow"));
    expect(handled).toBe(8);
  }, 60_000);
});

/**
 * A dispatcher whose first connection is found closed before the request was written (undici
 * reports that without starting the request); later requests are answered.
 */
class ClosedFirstDispatcher extends Dispatcher {
  dispatched = 0;
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const attempt = ++this.dispatched;
    const controller = {
      abort: () => undefined,
      pause: () => undefined,
      resume: () => undefined,
      paused: false,
      aborted: false,
      reason: null,
    };
    queueMicrotask(() => {
      if (attempt === 1) {
        handler.onResponseError?.(controller, Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }));
        return;
      }
      const { id } = JSON.parse(String(options.body)) as { id: string };
      const text = JSON.stringify({ jsonrpc: "2.0", id, result: { decision: "allow" } });
      handler.onRequestStart?.(controller, {});
      handler.onResponseStart?.(controller, 200, { "content-length": String(Buffer.byteLength(text)) }, "OK");
      handler.onResponseData?.(controller, Buffer.from(text));
      handler.onResponseEnd?.(controller, {});
    });
    return true;
  }
  override async close(): Promise<void> {}
  override async destroy(): Promise<void> {}
}

it("sends an event once more when its connection was found closed before any of it went out", async () => {
  const dispatcher = new ClosedFirstDispatcher();
  const transport = new HttpClientTransport("http://127.0.0.1:9/ahp", { dispatcher, timeoutMs: 30_000 });
  const answers: unknown[] = [];
  transport.onmessage = (message) => answers.push(message);
  await transport.send({ jsonrpc: "2.0", id: "e", method: "ahp/event", params: {} } as never);
  expect(dispatcher.dispatched).toBe(2);
  expect(answers).toEqual([{ jsonrpc: "2.0", id: "e", result: { decision: "allow" } }]);
  await transport.close();
});

/**
 * A request that crosses the harness's idle close is sent again on the new connection: the
 * harness reads nothing after deciding to close an idle connection, so the agent loses nothing.
 * A close without that notice is not an idle close: its unanswered request fails, never repeated.
 *
 * The peer is a scripted socket server that plays the harness's side of the race at a fixed
 * point (it closes as idle on receiving the request), which the real harness only hits by chance.
 */
import { createServer, type Server, type Socket } from "node:net";
import { UnixSocketClientTransport } from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir, until } from "./helpers.js";

const IDLE_NOTICE = {
  jsonrpc: "2.0",
  id: null,
  error: { code: -32003, message: "Idle connection closed by the harness (idle timeout or connection limit); reconnect to continue" },
};

interface Seen {
  connection: number;
  message: Record<string, unknown>;
}

/**
 * A scripted harness: answers every handshake; on the first connection, an `ahp/event` request
 * is not answered and the connection is closed (with the idle notice when `idleNotice`); on later
 * connections every request is answered.
 */
async function scriptedHarness(path: string, idleNotice: boolean): Promise<{ server: Server; seen: Seen[]; connections: () => number }> {
  const seen: Seen[] = [];
  let connections = 0;
  const server = createServer((socket: Socket) => {
    const connection = ++connections;
    let rest = "";
    socket.setEncoding("utf8");
    socket.on("error", () => undefined);
    socket.on("data", (chunk: string) => {
      const text = rest + chunk;
      const lines = text.split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        if (line === "") continue;
        const message = JSON.parse(line) as Record<string, unknown>;
        seen.push({ connection, message });
        if (message.method === "ahp/event" && connection === 1) {
          if (idleNotice) socket.write(`${JSON.stringify(IDLE_NOTICE)}\n`);
          socket.end();
          return;
        }
        socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { answered_on: connection } })}\n`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { server, seen, connections: () => connections };
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(idleNotice: boolean) {
  const dir = tempDir();
  cleanups.push(dir.remove);
  const harness = await scriptedHarness(dir.path(), idleNotice);
  cleanups.push(() => new Promise<void>((resolve) => harness.server.close(() => resolve())));
  const transport = new UnixSocketClientTransport({ path: dir.path() });
  cleanups.push(() => transport.close());
  const received: unknown[] = [];
  transport.onmessage = (message) => received.push(message);
  await transport.start();
  await transport.send({ jsonrpc: "2.0", id: "h1", method: "ahp/handshake", params: { protocol_version: "2.4" } });
  await until(() => received.some((m) => (m as { id?: unknown }).id === "h1"), undefined, "the handshake's answer");
  return { harness, transport, received };
}

const answerTo = (received: unknown[], id: string) =>
  received.find((m) => (m as { id?: unknown }).id === id) as Record<string, unknown> | undefined;

describe("a request crossing the harness's close of an idle connection", () => {
  it("is sent again after the repeated handshake on a new connection, and answered there", async () => {
    const { harness, transport, received } = await setUp(true);
    await transport.send({ jsonrpc: "2.0", id: "e1", method: "ahp/event", params: { n: 1 } });
    await until(() => answerTo(received, "e1") !== undefined, undefined, "the answer to the request that crossed the close");

    expect(answerTo(received, "e1")).toMatchObject({ result: { answered_on: 2 } });
    // The new connection: the handshake first (under its own id), then the request, once.
    const second = harness.seen.filter((s) => s.connection === 2).map((s) => [s.message.method, s.message.id]);
    expect(second).toEqual([
      ["ahp/handshake", "h1#reopen-1"],
      ["ahp/event", "e1"],
    ]);
    // The transport stays usable for later calls.
    await transport.send({ jsonrpc: "2.0", id: "e2", method: "ahp/event", params: { n: 2 } });
    await until(() => answerTo(received, "e2") !== undefined, undefined, "a later call's answer");
    expect(harness.connections()).toBe(2);
  });

  it("fails, and is not sent again, when the harness closed without saying it was idle", async () => {
    const { harness, transport, received } = await setUp(false);
    const closed = transport.closed;
    await transport.send({ jsonrpc: "2.0", id: "e1", method: "ahp/event", params: { n: 1 } });
    const cause = await closed;
    expect(cause?.message).toMatch(/closed|harness/i);
    expect(answerTo(received, "e1")).toBeUndefined();
    expect(harness.connections()).toBe(1);
    expect(harness.seen.filter((s) => s.message.method === "ahp/event")).toHaveLength(1);
  });
});

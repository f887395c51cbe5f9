/**
 * `Transport.post` on the WebSocket transports: a send without a promise per message whose
 * failure reaches a callback after the call returned, and the engines using it (a request whose
 * frame cannot be written, a harness answer too large for the socket).
 */
import { afterEach, describe, expect, it } from "vitest";
import { AhpClient, AhpErrorCode, AhpServer, type JsonRpcMessage } from "@ahp/core";
import { WebSocketClientTransport, listenWebSocket } from "@ahp/transport-ws";
import { preAction, rawWsServer, rejection, until, type RawWsServer } from "./helpers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined);
});

const note = (n: number): JsonRpcMessage => ({ jsonrpc: "2.0", method: "ahp/event", params: { n } });

function failures() {
  const calls: Array<{ error: Error & { code?: unknown }; context: string }> = [];
  return { calls, onFailure: (error: Error, context: string) => calls.push({ error, context }) };
}

async function raw(): Promise<{ r: RawWsServer; texts: string[] }> {
  const texts: string[] = [];
  const r = await rawWsServer({ onMessage: (_ws, text) => texts.push(text) });
  cleanups.push(() => r.close());
  return { r, texts };
}

describe("WebSocketClientTransport.post", () => {
  it("writes each message as one frame, in order with send(); nothing is called on success", async () => {
    const { r, texts } = await raw();
    const transport = new WebSocketClientTransport(r.url);
    cleanups.push(() => transport.close());
    await transport.start();
    const f = failures();
    transport.post(note(1), f.onFailure, "1");
    await transport.send(note(2));
    transport.post(note(3), f.onFailure, "3");
    await until(() => texts.length === 3);
    expect(texts.map((t) => (JSON.parse(t) as { params: { n: number } }).params.n)).toEqual([1, 2, 3]);
    expect(f.calls).toEqual([]);
  });

  it("a message over maxPayload is not written; onFailure gets the too-large error after post returned", async () => {
    const { r, texts } = await raw();
    const transport = new WebSocketClientTransport(r.url, { maxPayload: 1024 });
    cleanups.push(() => transport.close());
    await transport.start();
    const f = failures();
    transport.post({ jsonrpc: "2.0", method: "ahp/event", params: { pad: "x".repeat(4096) } }, f.onFailure, "big");
    expect(f.calls).toEqual([]); // never from inside post()
    transport.post(note(2), f.onFailure, "small");
    await until(() => f.calls.length === 1 && texts.length === 1);
    expect(f.calls[0]!.context).toBe("big");
    expect(f.calls[0]!.error.code).toBe(AhpErrorCode.MessageTooLarge);
    expect((JSON.parse(texts[0]!) as { params: { n: number } }).params.n).toBe(2);
  });

  it("after close, onFailure gets CONNECTION_CLOSED after post returned", async () => {
    const { r } = await raw();
    const transport = new WebSocketClientTransport(r.url);
    await transport.start();
    await transport.close();
    const f = failures();
    transport.post(note(1), f.onFailure, "late");
    expect(f.calls).toEqual([]);
    await until(() => f.calls.length === 1);
    expect(f.calls[0]!.error.code).toBe("CONNECTION_CLOSED");
  });

  it("AhpClient: a request whose frame cannot be written fails at once with the cause, not by timing out", async () => {
    const r = await rawWsServer(); // answers the handshake
    cleanups.push(() => r.close());
    const transport = new WebSocketClientTransport(r.url, { maxPayload: 2048 });
    const client = new AhpClient({ timeoutMs: 30_000 });
    cleanups.push(() => client.close());
    await client.connect(transport);
    const e = await rejection(client.send("pre_action", preAction("x".repeat(8192))));
    expect(e.code).toBe("MESSAGE_TOO_LARGE"); // not TIMEOUT: the write failed the call, not its 30 s limit
  });
});

describe("WebSocketServerTransport.post (through AhpServer)", () => {
  it("an answer too large for the socket is replaced by a -32603 error answer; the connection goes on", async () => {
    const server = new AhpServer({
      handlers: {
        onEvent: (e) =>
          (e.payload as { arguments?: { command?: string } }).arguments?.command === "big"
            ? { decision: "block", reason: "r".repeat(8192) }
            : { decision: "allow" },
      },
    });
    const listener = await listenWebSocket(server, { maxPayload: 4096 });
    cleanups.push(() => server.close({ graceMs: 0 }));
    cleanups.push(() => listener.close());
    const client = new AhpClient({ timeoutMs: 5000 });
    cleanups.push(() => client.close());
    await client.connect(new WebSocketClientTransport(listener.url));
    const e = await rejection(client.send("pre_action", preAction("big")));
    expect(e.message).toMatch(/Internal error: .*too large/i);
    await expect(client.send("pre_action", preAction("small"))).resolves.toEqual({ decision: "allow" });
  });
});

/** Server-side limits: connections per listener, requests in flight per connection, header timeout, and reported frame errors. */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { deferred, event, preAction, startHarness, until, type Harness } from "./helpers.js";

const harnesses: Harness[] = [];
const clients: WebSocket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.terminate();
  for (const h of harnesses.splice(0)) await h.close();
});

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    clients.push(ws);
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

const request = (id: string) => JSON.stringify({ jsonrpc: "2.0", id, method: "ahp/event", params: event("pre_action", preAction("ls")) });

describe("listenWebSocket limits", () => {
  it("maxConnections: at the cap the longest-idle connection is closed (1001) to serve the newcomer, and reported", async () => {
    const errors: Error[] = [];
    const h = await startHarness({}, { maxConnections: 2, onerror: (e) => errors.push(e) });
    harnesses.push(h);
    const first = await open(h.url);
    const code = new Promise<number>((resolve) => first.once("close", (c) => resolve(c)));
    await open(h.url);
    const third = await open(h.url);
    expect(await code).toBe(1001);
    third.send(request("t1"));
    const answer = await new Promise<string>((resolve) => third.once("message", (d: Buffer) => resolve(d.toString())));
    expect(JSON.parse(answer)).toMatchObject({ id: "t1", result: { decision: "allow" } });
    expect(errors.map((e) => e.message)).toContainEqual(expect.stringMatching(/closed the connection idle longest .*closed_longest_idle/));
  });

  it("maxInFlight: handlers see at most maxInFlight requests of a connection; the rest wait in order and are all answered", async () => {
    const gates: Array<{ resolve: () => void }> = [];
    const seen: string[] = [];
    const errors: Error[] = [];
    const h = await startHarness(
      {
        handlers: {
          onEvent: async (_e, ctx) => {
            seen.push(String(ctx.requestId));
            const gate = deferred<void>();
            gates.push(gate);
            await gate.promise;
            return { decision: "allow" };
          },
        },
      },
      { maxInFlight: 2, onerror: (e) => errors.push(e) },
    );
    harnesses.push(h);
    const ws = await open(h.url);
    const answers: string[] = [];
    ws.on("message", (d: Buffer) => answers.push((JSON.parse(d.toString()) as { id: string }).id));
    for (let i = 0; i < 6; i++) ws.send(request(`w${i}`));
    await until(() => errors.length > 0);
    expect(errors[0]!.message).toMatch(/2 requests in flight on one WebSocket connection/);
    expect(seen).toEqual(["w0", "w1"]);
    for (let i = 0; i < 6; i++) {
      await until(() => gates.length > i);
      expect(seen.length).toBeLessThanOrEqual(i + 2);
      gates[i]!.resolve();
    }
    while (answers.length < 6) await new Promise<void>((r) => ws.once("message", () => r()));
    expect(seen).toEqual(["w0", "w1", "w2", "w3", "w4", "w5"]);
    expect(errors).toHaveLength(1);
  });

  it("headersTimeoutMs: an upgrade request whose headers do not arrive in time gets 408 and is reported", async () => {
    const errors: Error[] = [];
    const h = await startHarness({}, { headersTimeoutMs: 200, onerror: (e) => errors.push(e) });
    harnesses.push(h);
    const { port, hostname } = new URL(h.url);
    const socket = connect(Number(port), hostname);
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.on("error", () => undefined);
    socket.write("GET /ahp HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n");
    await new Promise<void>((r) => socket.once("close", () => r()));
    expect(text).toMatch(/^HTTP\/1\.1 408/);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/not received in time/)]);
  });

  it("a text frame that is not UTF-8 closes the connection with 1007 and is reported", async () => {
    const errors: Error[] = [];
    const h = await startHarness({}, { onerror: (e) => errors.push(e) });
    harnesses.push(h);
    const ws = await open(h.url);
    const code = new Promise<number>((resolve) => ws.once("close", (c) => resolve(c)));
    ws.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: false });
    expect(await code).toBe(1007);
    await until(() => errors.length > 0);
    expect(errors[0]!.message).toMatch(/WebSocket protocol error: .*UTF-8/i);
  });
});

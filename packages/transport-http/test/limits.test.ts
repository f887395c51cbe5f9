/** Server-side limits of listenHttp: header/request timeouts, connections per listener, requests in flight per connection, body size. */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { deferred, rawRequest, request, startHarness, until, type Harness } from "./helpers.js";
import { event, preAction } from "@ahp/conformance";

const harnesses: Harness[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const h of harnesses.splice(0)) await h.close();
});

function open(url: string): Promise<{ socket: Socket; text: () => string; closed: Promise<void> }> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve({ socket, text: () => received, closed }));
    sockets.push(socket);
    let received = "";
    socket.on("data", (d: Buffer) => (received += d.toString("latin1")));
    socket.on("error", () => undefined);
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.once("error", reject);
  });
}

const body = (id: string) => request(id, "ahp/event", event("pre_action", preAction("ls")));
const post = (text: string) =>
  `POST /ahp HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;

describe("listenHttp limits", () => {
  it("headersTimeoutMs: a client that does not finish its headers in time gets 408, is closed and is reported", async () => {
    const errors: Error[] = [];
    const h = await startHarness({}, { headersTimeoutMs: 200, onerror: (e) => errors.push(e) });
    harnesses.push(h);
    const c = await open(h.url);
    c.socket.write("POST /ahp HTTP/1.1\r\nHost: h\r\n");
    await c.closed;
    expect(c.text()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/not received in time \(headers within 200 ms.*answered 408 and closed/),
    ]);
  });

  it("maxConnections: at the cap the longest-idle connection makes room; a newcomer is refused only when all are busy", async () => {
    const errors: Error[] = [];
    const gate = deferred<void>();
    let started = 0;
    const h = await startHarness(
      {
        handlers: {
          onEvent: async () => {
            started++;
            await gate.promise;
            return { decision: "allow" };
          },
        },
      },
      { maxConnections: 2, onerror: (e) => errors.push(e) },
    );
    harnesses.push(h);
    const a = await open(h.url);
    const b = await open(h.url);
    // Both idle: the third is served and the first (idle the longest) is closed.
    const c = await open(h.url);
    await a.closed;
    expect(errors.map((e) => (e as { rejection?: { action?: string } }).rejection?.action)).toEqual(["closed_longest_idle"]);
    // b and c have a request in progress: a fourth is closed at once.
    b.socket.write(post(body("b1")));
    c.socket.write(post(body("c1")));
    await until(() => started === 2, 30_000);
    const d = await open(h.url);
    await d.closed;
    expect(d.text()).toBe("");
    expect((errors.at(-1) as { rejection?: { action?: string } }).rejection?.action).toBe("refused");
    gate.resolve();
    await until(() => b.text().startsWith("HTTP/1.1 200") && c.text().startsWith("HTTP/1.1 200"), 30_000);
  });

  it("serves new agents within seconds while one process holds three times the cap in idle keep-alive connections", async () => {
    const h = await startHarness({}, { maxConnections: 20, keepAliveTimeoutMs: 600_000 });
    harnesses.push(h);
    const held = [];
    for (let i = 0; i < 60; i++) {
      const idle = await open(h.url);
      idle.socket.write(post(body(`k${i}`)));
      held.push(idle);
    }
    const start = Date.now();
    for (let i = 0; i < 10; i++) {
      const r = await rawRequest(h.url, { body: body(`new${i}`) });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text)).toMatchObject({ id: `new${i}`, result: { decision: "allow" } });
    }
    expect(Date.now() - start).toBeLessThan(20_000);
  });

  it("maxInFlight: pipelined requests past the limit on one connection get 503 with -32003 and are reported", async () => {
    const gate = deferred<void>();
    const errors: Error[] = [];
    const h = await startHarness(
      {
        handlers: {
          onEvent: async () => {
            await gate.promise;
            return { decision: "allow" };
          },
        },
      },
      { maxInFlight: 2, onerror: (e) => errors.push(e) },
    );
    harnesses.push(h);
    const c = await open(h.url);
    c.socket.write(post(body("p1")) + post(body("p2")) + post(body("p3")));
    await until(() => errors.length > 0, 30_000);
    expect(errors[0]!.message).toMatch(/2 requests in flight on one HTTP connection .*answered 503/);
    gate.resolve();
    while ((c.text().match(/HTTP\/1\.1/g) ?? []).length < 3) await new Promise<void>((r) => c.socket.once("data", () => r()));
    const statuses = [...c.text().matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([200, 200, 503]);
    expect(c.text()).toMatch(/"code":-32003/);
  });

  it("an oversized body is answered 413 and reported", async () => {
    const errors: Error[] = [];
    const h = await startHarness({}, { maxBodyBytes: 1000, onerror: (e) => errors.push(e) });
    harnesses.push(h);
    const c = await open(h.url);
    c.socket.write(post(" ".repeat(5000)));
    await c.closed;
    expect(c.text()).toMatch(/^HTTP\/1\.1 413/);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/of 5000\+ bytes exceeds maxBodyBytes 1000: answered 413/)]);
  });
});

/** No lock-out on the WebSocket listener: upgrade deadline, idle timeout, and room made at the cap for a new agent. */
import { connect, type Socket } from "node:net";
import { AhpClient, limitRejectionOf } from "@ahp/core";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startHarness, until, type Harness } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(listen: Parameters<typeof startHarness>[1]): Promise<{ h: Harness; errors: Error[] }> {
  const errors: Error[] = [];
  const h = await startHarness({}, { ...listen, onerror: (e) => errors.push(e) });
  cleanups.push(() => h.close());
  return { h, errors };
}

function tcp(url: string): Promise<{ socket: Socket; closed: () => boolean }> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket = connect(Number(port), hostname, () => resolve({ socket, closed: () => closed }));
    socket.on("close", () => (closed = true));
    socket.on("error", () => undefined);
    socket.once("error", reject);
    cleanups.push(() => socket.destroy());
  });
}

function silentAgent(url: string): Promise<{ ws: WebSocket; closeCode: () => number | undefined }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    let code: number | undefined;
    ws.on("close", (c) => (code = c));
    ws.on("error", () => undefined);
    ws.once("open", () => resolve({ ws, closeCode: () => code }));
    ws.once("error", reject);
    cleanups.push(() => ws.terminate());
  });
}

async function served(url: string): Promise<number> {
  const start = Date.now();
  const agent = new AhpClient();
  await agent.connect(new WebSocketClientTransport(url));
  cleanups.push(() => agent.close());
  expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
  return Date.now() - start;
}

describe("listenWebSocket: no lock-out", () => {
  it("serves a new agent while one process holds three times the cap in connections that never upgrade", async () => {
    const { h, errors } = await harness({ maxConnections: 20 });
    const held: Array<{ closed: () => boolean }> = [];
    for (let i = 0; i < 60; i++) held.push(await tcp(h.url.replace(/^ws/, "http")));
    expect(await served(h.url)).toBeLessThan(10_000);
    await until(() => held.filter((c) => c.closed()).length >= 40);
    expect(errors.map((e) => limitRejectionOf(e)?.action)).toContain("closed_longest_idle");
  });

  it("serves a new agent while one process holds three times the cap in upgraded, silent connections", async () => {
    const { h } = await harness({ maxConnections: 20 });
    const held: Array<{ closeCode: () => number | undefined }> = [];
    for (let i = 0; i < 60; i++) held.push(await silentAgent(h.url));
    expect(await served(h.url)).toBeLessThan(10_000);
    await until(() => held.filter((c) => c.closeCode() !== undefined).length >= 40);
    expect(held.map((c) => c.closeCode()).filter((c) => c !== undefined)).toContain(1001);
  });

  it("closes a connection that does not upgrade within upgradeTimeoutMs, and reports it", async () => {
    const { h, errors } = await harness({ upgradeTimeoutMs: 300 });
    const idle = await tcp(h.url.replace(/^ws/, "http"));
    await until(() => idle.closed());
    expect(errors.map(limitRejectionOf).find((r) => r?.limit === "idle_timeout")).toMatchObject({
      transport: "ws",
      value: 300,
      action: "closed_idle",
    });
  });

  it("closes an upgraded connection silent for idleTimeoutMs with 1001; an active one stays", async () => {
    // 1 s: the active agent speaks every 50 ms, so only a stall of the whole process for most of
    // a second could make it look idle.
    const { h } = await harness({ idleTimeoutMs: 1000 });
    const silent = await silentAgent(h.url);
    const agent = new AhpClient();
    await agent.connect(new WebSocketClientTransport(h.url));
    cleanups.push(() => agent.close());
    const deadline = Date.now() + 30_000;
    while (silent.closeCode() === undefined && Date.now() < deadline) {
      expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(silent.closeCode()).toBe(1001);
    expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
  });

  it("an agent thinking past the idle timeout loses nothing with reconnect: its next call is answered", async () => {
    const { h } = await harness({ idleTimeoutMs: 300 });
    let reconnects = 0;
    const transport = new WebSocketClientTransport(h.url, { reconnect: true, onreconnect: () => reconnects++ });
    const agent = new AhpClient();
    await agent.connect(transport);
    cleanups.push(() => agent.close());
    expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
    // The harness closes the silent connection; the transport reconnects by itself.
    await until(() => reconnects >= 1);
    expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
  });
});

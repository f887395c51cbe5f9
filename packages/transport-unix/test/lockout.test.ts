/** No lock-out by silent connections: idle timeout, room made at the cap, and a new agent served while the cap is flooded. */
import { connect, type Socket } from "node:net";
import { AhpClient, AhpServer, limitRejectionOf } from "@ahp/core";
import { UnixSocketClientTransport, listenUnix } from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir, until } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function silentSocket(path: string): Promise<{ socket: Socket; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path });
    let closed = false;
    socket.on("close", () => (closed = true));
    socket.on("data", () => undefined);
    socket.once("error", reject);
    socket.once("connect", () => resolve({ socket, closed: () => closed }));
    cleanups.push(() => socket.destroy());
  });
}

async function harness(options: { maxConnections?: number; idleTimeoutMs?: number; handler?: () => Promise<unknown> }) {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const errors: Error[] = [];
  const server = new AhpServer({ handlers: { onEvent: (options.handler ?? (async () => ({ decision: "allow" }))) as never } });
  const listener = await listenUnix(server, {
    path: tmp.path(),
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
    onerror: (e) => errors.push(e),
  });
  cleanups.push(async () => {
    await listener.close();
    await server.close({ graceMs: 0 });
  });
  return { path: tmp.path(), listener, errors };
}

describe("Unix socket listener: no lock-out", () => {
  it("serves a new agent within seconds while one process holds three times the cap in silent connections", async () => {
    const { path, listener, errors } = await harness({ maxConnections: 20 });
    const held = [];
    for (let i = 0; i < 60; i++) held.push(await silentSocket(path));
    await until(() => listener.connectionCount === 20);
    const start = Date.now();
    const agent = new AhpClient();
    await agent.connect(new UnixSocketClientTransport({ path }));
    cleanups.push(() => agent.close());
    expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
    expect(Date.now() - start).toBeLessThan(10_000);
    expect(listener.connectionCount).toBeLessThanOrEqual(20);
    // Silent connections made the room (the longest-idle first), each reported.
    expect(held.filter((h) => h.closed()).length).toBeGreaterThanOrEqual(41);
    expect(errors.map((e) => limitRejectionOf(e)?.action)).toContain("closed_longest_idle");
  });

  it("closes a connection silent for idleTimeoutMs, but not one with a request in flight", async () => {
    let release: (() => void) | undefined;
    const { path, errors } = await harness({
      idleTimeoutMs: 200,
      handler: () => new Promise((resolve) => (release = () => resolve({ decision: "allow" }))),
    });
    const silent = await silentSocket(path);
    const agent = new AhpClient();
    await agent.connect(new UnixSocketClientTransport({ path }));
    cleanups.push(() => agent.close());
    const answer = agent.send("pre_action", {});
    await until(() => release !== undefined);
    await until(() => silent.closed());
    const rejection = errors.map(limitRejectionOf).find((r) => r?.limit === "idle_timeout");
    expect(rejection).toMatchObject({ transport: "unix", value: 200, action: "closed_idle" });
    // Well past the idle timeout, the busy connection is still open; its answer arrives.
    const busySince = Date.now();
    await until(() => Date.now() - busySince > 600);
    release!();
    expect(await answer).toEqual({ decision: "allow" });
  });

  it("an agent thinking past the idle timeout loses nothing: the client reconnects and repeats its handshake", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const handshakes: string[] = [];
    const server = new AhpServer({
      requireHandshake: true,
      handlers: { onHandshake: (request) => void handshakes.push(request.session_id ?? ""), onEvent: () => ({ decision: "allow" }) },
    });
    const listener = await listenUnix(server, { path: tmp.path(), idleTimeoutMs: 200 });
    cleanups.push(async () => {
      await listener.close();
      await server.close({ graceMs: 0 });
    });
    const agent = new AhpClient({ sessionId: "thinking" });
    await agent.connect(new UnixSocketClientTransport({ path: tmp.path() }));
    cleanups.push(() => agent.close());
    expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
    // The harness closes the silent connection...
    await until(() => listener.connectionCount === 0);
    // ...and the next call is answered on a new connection, handshaken again, without an error.
    expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
    expect(handshakes).toEqual(["thinking", "thinking"]);
    expect(listener.connectionCount).toBe(1);
  });

  it("refuses an idleTimeoutMs that is not an integer >= 0", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    await expect(listenUnix(new AhpServer(), { path: tmp.path(), idleTimeoutMs: -1 })).rejects.toThrow(/idleTimeoutMs/);
  });
});

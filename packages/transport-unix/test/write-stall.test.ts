/**
 * A peer that stops reading cannot hold a slot: peers that pause their socket and flood requests
 * (answers pile up, requests stay in flight, the connections cannot be evicted as idle) fill the
 * cap; after the write-stall deadline each is dropped and reported, and a new agent is served.
 */
import { connect, type Socket } from "node:net";
import { AhpClient, AhpServer, limitRejectionOf } from "@ahp/core";
import { UnixSocketClientTransport, listenUnix } from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir, until } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Requests with 4 KiB ids (each answer echoes its id), written until the harness stops reading. */
function flooder(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path });
    socket.on("error", () => undefined);
    socket.once("connect", () => {
      socket.pause(); // never reads an answer
      const pad = "x".repeat(4096);
      const lines: string[] = [];
      for (let i = 0; i < 1_000; i++)
        lines.push(`${JSON.stringify({ jsonrpc: "2.0", id: `${i}-${pad}`, method: "ahp/no_such_method" })}\n`);
      socket.write(lines.join(""));
      resolve(socket);
    });
    socket.once("error", reject);
    cleanups.push(() => socket.destroy());
  });
}

async function agentDecision(path: string): Promise<unknown> {
  const agent = new AhpClient({ timeoutMs: 5_000 });
  try {
    await agent.connect(new UnixSocketClientTransport({ path, reconnect: false }));
    return await agent.send("pre_action", {});
  } finally {
    await agent.close().catch(() => undefined);
  }
}

describe("Unix socket listener: write-stall deadline", () => {
  it("drops peers that stopped reading with requests in flight, reports each, and then serves a new agent at the cap", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const errors: Error[] = [];
    let firstStallAt: number | undefined;
    const server = new AhpServer({ handlers: { onEvent: (async () => ({ decision: "allow" })) as never } });
    const stallTimeoutMs = 1_000;
    const listener = await listenUnix(server, {
      path: tmp.path(),
      maxConnections: 3,
      maxInFlight: 8,
      stallTimeoutMs,
      onerror: (e) => {
        if (limitRejectionOf(e)?.action === "closed_write_stall") firstStallAt ??= Date.now();
        errors.push(e);
      },
    });
    cleanups.push(async () => {
      await listener.close();
      await server.close({ graceMs: 0 });
    });
    const path = tmp.path();
    const connectedAt = Date.now();
    const flooders = [await flooder(path), await flooder(path), await flooder(path)];
    // The harness stopped reading each of them: their requests wait in their own buffers.
    await until(() => flooders.every((s) => s.writableLength > 0));
    const stalled = () => errors.map(limitRejectionOf).filter((r) => r?.action === "closed_write_stall");
    let decision: unknown;
    await until(() => stalled().length >= 1, 60_000);
    await (async () => {
      const deadline = Date.now() + 60_000;
      while (decision === undefined) {
        try {
          decision = await agentDecision(path);
        } catch (error) {
          if (Date.now() > deadline) throw error;
        }
      }
    })();
    expect(decision).toEqual({ decision: "allow" });
    // Not dropped before the deadline; each reported with its cause.
    expect(firstStallAt! - connectedAt).toBeGreaterThanOrEqual(stallTimeoutMs);
    const report = stalled()[0]!;
    expect(report).toMatchObject({ transport: "unix", limit: "outbound_stall", value: stallTimeoutMs });
    const message = errors.find((e) => limitRejectionOf(e)?.action === "closed_write_stall")!.message;
    expect(message).toMatch(/took none of the \d+ bytes waiting for it for \d+ s; \d+ request\(s\) in flight fail/);
    await until(() => stalled().length === 3, 60_000);
    expect(listener.connectionCount).toBeLessThanOrEqual(1);
  }, 180_000);

  it("keeps a slow reader that takes its answers, and a connection with nothing to write", async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const errors: Error[] = [];
    const server = new AhpServer({ handlers: { onEvent: (async () => ({ decision: "allow" })) as never } });
    const listener = await listenUnix(server, { path: tmp.path(), stallTimeoutMs: 300, onerror: (e) => errors.push(e) });
    cleanups.push(async () => {
      await listener.close();
      await server.close({ graceMs: 0 });
    });
    const agent = new AhpClient();
    await agent.connect(new UnixSocketClientTransport({ path: tmp.path() }));
    cleanups.push(() => agent.close());
    const since = Date.now();
    // Several deadlines pass while the agent is quiet and nothing waits to be written.
    await until(() => Date.now() - since > 1_200);
    expect(await agent.send("pre_action", {})).toEqual({ decision: "allow" });
    expect(errors.map(limitRejectionOf).filter((r) => r?.limit === "outbound_stall")).toEqual([]);
  }, 180_000);
});

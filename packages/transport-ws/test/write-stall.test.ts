/**
 * A WebSocket peer that stops reading cannot hold a slot: peers that pause their socket and flood
 * requests fill the cap with connections whose answers cannot be written; after the write-stall
 * deadline each is dropped and reported (`outbound_stall`), and a new agent is served.
 */
import { AhpClient, limitRejectionOf } from "@ahp/core";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startHarness, until } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Upgrades, stops reading, and sends requests with 16 KiB ids (each answer echoes its id). */
function flooder(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on("error", () => undefined);
    ws.once("open", () => {
      ws.pause();
      const pad = "x".repeat(16 * 1024);
      for (let i = 0; i < 1_000; i++) ws.send(JSON.stringify({ jsonrpc: "2.0", id: `${i}-${pad}`, method: "ahp/no_such_method" }));
      resolve(ws);
    });
    ws.once("error", reject);
    cleanups.push(() => ws.terminate());
  });
}

async function agentDecision(url: string): Promise<unknown> {
  const agent = new AhpClient({ timeoutMs: 5_000 });
  try {
    await agent.connect(new WebSocketClientTransport(url));
    return await agent.send("pre_action", {});
  } finally {
    await agent.close().catch(() => undefined);
  }
}

describe("listenWebSocket: write-stall deadline", () => {
  it("drops peers that stopped reading, reports each, and then serves a new agent at the cap", async () => {
    const errors: Error[] = [];
    let firstStallAt: number | undefined;
    const stallMs = 1_000;
    const h = await startHarness(
      {},
      {
        maxConnections: 3,
        maxInFlight: 8,
        maxBufferedBytes: 64 * 1024,
        drainTimeoutMs: stallMs,
        onerror: (e) => {
          if (limitRejectionOf(e)?.limit === "outbound_stall") firstStallAt ??= Date.now();
          errors.push(e);
        },
      },
    );
    cleanups.push(() => h.close());
    const connectedAt = Date.now();
    const flooders = [await flooder(h.url), await flooder(h.url), await flooder(h.url)];
    // The harness stopped reading each of them: their frames wait in their own buffers.
    await until(() => flooders.every((ws) => ws.bufferedAmount > 0 || ws.readyState !== WebSocket.OPEN), 60_000);
    // Nobody else arrives, so nothing is evicted to make room: each flooder is dropped by the
    // write-stall deadline alone, no sooner than the deadline.
    const stalls = () => errors.map(limitRejectionOf).filter((r) => r?.limit === "outbound_stall");
    await until(() => stalls().length >= 3, 60_000, "three write-stall reports");
    expect(stalls()[0]).toMatchObject({ transport: "ws", value: stallMs });
    expect(firstStallAt! - connectedAt).toBeGreaterThanOrEqual(stallMs);
    // The slots they held serve a new agent.
    let decision: unknown;
    const deadline = Date.now() + 60_000;
    while (decision === undefined) {
      try {
        decision = await agentDecision(h.url);
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
    }
    expect(decision).toEqual({ decision: "allow" });
  }, 180_000);
});

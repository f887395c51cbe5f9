/**
 * An HTTP client that stops reading cannot hold a slot: clients that pipeline requests on a
 * paused socket fill the cap with requests whose answers cannot be written; after the write-stall
 * deadline each connection is dropped and reported (`outbound_stall`), and a new agent is served.
 */
import { connect, type Socket } from "node:net";
import { limitRejectionOf } from "@ahp/core";
import { afterEach, describe, expect, it } from "vitest";
import { rawRequest, request, startHarness, until } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Pipelines POSTs with 16 KiB ids (each answer echoes its id) and never reads. */
function flooder(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.on("error", () => undefined);
    socket.once("connect", () => {
      socket.pause();
      const pad = "x".repeat(16 * 1024);
      const parts: string[] = [];
      for (let i = 0; i < 1_000; i++) {
        const body = request(`${i}-${pad}`, "ahp/no_such_method", {});
        parts.push(
          `POST /ahp HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
      }
      socket.write(parts.join(""));
      resolve(socket);
    });
    socket.once("error", reject);
    cleanups.push(() => socket.destroy());
  });
}

describe("listenHttp: write-stall deadline", () => {
  it("drops clients that stopped reading with requests in progress, reports each, and then serves a new agent at the cap", async () => {
    const errors: Error[] = [];
    let firstStallAt: number | undefined;
    const stallTimeoutMs = 1_000;
    const h = await startHarness(
      {},
      {
        maxConnections: 3,
        stallTimeoutMs,
        onerror: (e) => {
          if (limitRejectionOf(e)?.limit === "outbound_stall") firstStallAt ??= Date.now();
          errors.push(e);
        },
      },
    );
    cleanups.push(() => h.close());
    const connectedAt = Date.now();
    const flooders = [await flooder(h.url), await flooder(h.url), await flooder(h.url)];
    // The harness stopped reading each of them: their requests wait in their own buffers.
    await until(() => flooders.every((s) => s.writableLength > 0 || s.destroyed), 60_000);
    let status: number | undefined;
    let text = "";
    const deadline = Date.now() + 60_000;
    while (status === undefined) {
      try {
        ({ status, text } = await rawRequest(h.url, {
          body: request(1, "ahp/handshake", {
            protocol_version: "2.4",
            agent_info: { name: "a", version: "1", framework: "t" },
            capabilities: [],
          }),
        }));
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
    }
    expect(status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ jsonrpc: "2.0", id: 1 });
    const stalls = () => errors.map(limitRejectionOf).filter((r) => r?.limit === "outbound_stall");
    await until(() => stalls().length >= 1, 60_000);
    expect(stalls()[0]).toMatchObject({ transport: "http", value: stallTimeoutMs, action: "closed_write_stall" });
    expect(firstStallAt! - connectedAt).toBeGreaterThanOrEqual(stallTimeoutMs);
    const message = errors.find((e) => limitRejectionOf(e)?.limit === "outbound_stall")!.message;
    expect(message).toMatch(/took none of the \d+ bytes waiting for it for \d+ s; \d+ request\(s\) in flight fail/);
    // Each one was dropped for the deadline, or closed to make room while nothing of it was in progress.
    const evicted = () => errors.filter((e) => limitRejectionOf(e)?.action === "closed_longest_idle").length;
    await until(() => stalls().length + evicted() >= 3, 60_000);
  }, 180_000);
});

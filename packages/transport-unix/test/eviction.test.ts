/**
 * Room made at the cap really frees the evicted connection: the harness process closes its
 * descriptor (counted in /proc) and a client that reads sees the notice and the close, whether the
 * evicted peer was silent, had stopped reading, or had an answer waiting in its socket buffer.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { AhpClient } from "@ahp/core";
import { UnixSocketClientTransport } from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness, tempDir, until } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Sockets the process `pid` holds open (its listening socket included). */
function socketsOf(pid: number): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) count++;
    } catch {
      // closed while listing
    }
  }
  return count;
}

interface Peer {
  socket: Socket;
  text: () => string;
  closed: () => boolean;
}

/** A raw connection; `reading: false` leaves it paused (it takes nothing from its socket buffer). */
function peer(path: string, reading: boolean): Promise<Peer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path });
    let text = "";
    let closed = false;
    socket.on("close", () => (closed = true));
    socket.on("error", () => undefined);
    if (reading) socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    socket.once("connect", () => resolve({ socket, text: () => text, closed: () => closed }));
    socket.once("error", reject);
    cleanups.push(() => socket.destroy());
  });
}

const event = (id: string, payload: Record<string, unknown>) =>
  `${JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "ahp/event",
    params: {
      event_type: "pre_action",
      session_id: "s",
      agent_id: "a",
      depth: 0,
      event_id: id,
      timestamp: new Date().toISOString(),
      payload,
    },
  })}\n`;

async function harness(maxConnections: number) {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const path = tmp.path();
  const h = await startHarness(path, { maxConnections, closeGraceMs: 500 });
  cleanups.push(() => h.kill());
  return { path, pid: h.child.pid!, baseline: socketsOf(h.child.pid!) };
}

async function served(path: string): Promise<void> {
  const agent = new AhpClient();
  await agent.connect(new UnixSocketClientTransport({ path }));
  cleanups.push(() => agent.close());
  expect(await agent.send("pre_action", {})).toMatchObject({ decision: "allow" });
}

describe("Unix socket listener: an evicted connection is really closed", () => {
  it("frees the descriptor of a silent peer that reads, and of one that never reads", async () => {
    const { path, pid, baseline } = await harness(2);
    const reader = await peer(path, true);
    const deaf = await peer(path, false);
    await until(() => socketsOf(pid) === baseline + 2, 60_000);
    // Two newcomers make room: the reader goes first (idle longest), then the deaf peer.
    await served(path);
    await until(() => reader.closed(), 60_000);
    expect(reader.text()).toContain('"code":-32003');
    await served(path);
    // The harness holds the two agents' connections and nothing else: the deaf peer's descriptor is back.
    await until(() => socketsOf(pid) === baseline + 2, 60_000);
    expect(deaf.closed()).toBe(false); // it reads nothing, so it cannot see the end yet...
    deaf.socket.setEncoding("utf8").on("data", () => undefined);
    await until(() => deaf.closed(), 60_000); // ...and sees it once it reads.
  }, 120_000);

  it("frees the descriptor of a peer that stopped reading with answers filling its socket buffer", async () => {
    const { path, pid, baseline } = await harness(1);
    const deaf = await peer(path, false);
    // Two answers of 180 KB together: the peer takes the first chunk and then stops reading, so
    // the rest fills the socket buffers.
    let text = "";
    const firstChunk = new Promise<void>((resolve) =>
      deaf.socket.setEncoding("utf8").once("data", (chunk: string) => {
        text += chunk;
        deaf.socket.pause();
        resolve();
      }),
    );
    deaf.socket.write(event("big-1", { do: "big", bytes: 120_000 }) + event("big-2", { do: "big", bytes: 60_000 }));
    await firstChunk;
    await served(path);
    await until(() => socketsOf(pid) === baseline + 1, 60_000);
    // It reads at last: what was buffered, then the end.
    deaf.socket.on("data", (chunk: string) => (text += chunk));
    deaf.socket.resume();
    await until(() => deaf.closed(), 60_000);
    expect(text.startsWith('{"jsonrpc":"2.0","id":"big-1"')).toBe(true);
  }, 120_000);
});

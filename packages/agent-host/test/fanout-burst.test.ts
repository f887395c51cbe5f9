/**
 * The outbound fan-out (host/fanout.ts) under bursts: frames are framed once, queued per
 * connection and written once per event-loop turn. Every client must still receive every envelope
 * of its channels exactly once, in `serverSeq` order, replies in their place, and a client that
 * stops reading must still be closed with 1008 at the outbound limit.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import type { ChatState } from "../src/wire/types.js";
import { startHost, type Running } from "./helpers/harness.js";
import { until } from "./helpers/host-per-test.js";
import { runEvent, S1_CHAT, S1_URI, withoutModifiedAt } from "./helpers/scenario.js";

let run: Running | undefined;
afterEach(async () => {
  await run?.stop();
  run = undefined;
});

const CHANNELS = ["ahp-root://", S1_URI, S1_CHAT];

/** A bare wire client subscribed to `channels`: records the serverSeq of every action envelope it receives. */
async function seqClient(url: string, clientId: string, channels: string[]) {
  const ws = new WebSocket(`${url}?token=viewer-token`);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const seqs: number[] = [];
  const waiters: Array<{ seq: number; resolve: () => void }> = [];
  let fromSeq = -1;
  const initialized = new Promise<void>((resolve) => {
    ws.on("message", (data: Buffer) => {
      const m = JSON.parse(data.toString()) as {
        id?: number;
        result?: { serverSeq: number };
        method?: string;
        params?: { serverSeq: number };
      };
      if (m.id === 1) {
        fromSeq = m.result!.serverSeq;
        resolve();
      } else if (m.method === "action") {
        seqs.push(m.params!.serverSeq);
        for (const w of [...waiters]) {
          if (m.params!.serverSeq >= w.seq) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        }
      }
    });
  });
  ws.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { channel: "ahp-root://", protocolVersions: ["1.1.0"], clientId, initialSubscriptions: channels },
    }),
  );
  await initialized;
  return {
    ws,
    seqs,
    get fromSeq() {
      return fromSeq;
    },
    /** The serverSeq this client is up to: of the last action envelope received, else of its snapshot. */
    last: () => (seqs.length > 0 ? seqs[seqs.length - 1]! : fromSeq),
    reached: (seq: number) =>
      seqs.length > 0 && seqs[seqs.length - 1]! >= seq ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ seq, resolve })),
  };
}

/** `from + 1, from + 2, …, to`. */
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + 1 + i);

describe("fan-out", () => {
  it("a burst reaches every client: every envelope once, in serverSeq order, in far fewer socket writes than frames", async () => {
    run = await startHost();
    const agent = await run.agent("s1");
    await agent.send("session_start", {});
    const clients = await Promise.all([0, 1, 2, 3, 4].map((i) => seqClient(run!.url, `burst-${i}`, CHANNELS)));
    const reducer = await run.client("viewer-token", "reducer");
    await reducer.api.initialize(CHANNELS);
    let writes = 0;
    for (const connection of run.host.connections) {
      const raw = connection.raw!;
      const write = raw.write.bind(raw) as (chunk: Buffer) => boolean;
      (raw as unknown as { write: (chunk: Buffer) => boolean }).write = (chunk: Buffer) => {
        writes++;
        return write(chunk);
      };
    }
    const start = run.host.store.serverSeq;
    let late: Awaited<ReturnType<typeof seqClient>> | undefined;
    // Bursts of 100 tool calls, each produced within one event-loop turn (the in-memory agent never yields).
    for (let burst = 0; burst < 4; burst++) {
      await agent.send("run_lifecycle", runEvent(`run-${burst}`, "executing", { prompt: "burst" }));
      for (let i = 0; i < 100; i++) {
        const id = `tc-${burst}-${i}`;
        await agent.send("pre_action", { tool_name: "bash", tool_call_id: id, arguments: { command: `echo ${i}` } });
        await agent.send("post_action", { tool_name: "bash", tool_call_id: id, result: { status: "ok", output: `${i}` } });
      }
      await agent.send("run_lifecycle", runEvent(`run-${burst}`, "completed"));
      // A client that joins between bursts: its snapshot and the envelopes after it fit together.
      if (burst === 1) late = await seqClient(run.url, "late", CHANNELS);
      // The next burst starts once every client holds this one.
      const now = run.host.store.serverSeq;
      await until(
        () => [...clients, ...(late === undefined ? [] : [late])].every((c) => c.last() >= now),
        `burst ${burst} at every client`,
        60_000,
      );
    }
    const end = run.host.store.serverSeq;
    expect(end - start).toBeGreaterThan(1000);
    for (const c of [...clients, late!]) await c.reached(end);
    for (const c of clients) {
      expect(c.fromSeq).toBe(start);
      expect(c.seqs).toEqual(range(start, end));
    }
    expect(late!.seqs).toEqual(range(late!.fromSeq, end));
    // The reducing client converges on the host's state.
    await reducer.next((f) => f.method === "action" && (f.params as { serverSeq: number }).serverSeq === end);
    expect(withoutModifiedAt(reducer.api.state.confirmed<ChatState>(S1_CHAT))).toEqual(withoutModifiedAt(run.host.state(S1_CHAT)));
    // 6 connections, > 1000 frames each: the frames of one turn leave together (up to 64 KiB a write).
    expect(writes).toBeLessThan(((end - start) * 6) / 10);
  });

  it("a client that stops reading during a burst is closed with 1008 at the outbound limit; the others get every envelope in order", async () => {
    run = await startHost({ limits: { maxOutboundBytes: 256 * 1024 } });
    const agent = await run.agent("s1");
    await agent.send("session_start", {});
    const fast = await seqClient(run.url, "fast", CHANNELS);
    const slow = await seqClient(run.url, "slow", CHANNELS);
    const socket = (slow.ws as unknown as { _socket: { pause(): void } })._socket;
    socket.pause();
    const closed = run.hostClosed(1008);
    const text = "z".repeat(16 * 1024);
    let sent = 0;
    while (run.closes.length === 0 && sent < 20_000) {
      await agent.send("post_response", { response: text });
      // Every 8 frames (128 KiB, half the limit), the client that reads catches up before more are sent,
      // so that only the one that stopped reading can reach the limit, however slow the machine.
      if (++sent % 8 === 0) {
        const now = run.host.store.serverSeq;
        await until(() => fast.last() >= now || run!.closes.length > 0, "the reading client caught up", 60_000);
      }
    }
    expect(await closed).toMatchObject({ clientId: "slow", code: 1008, reason: "outbound buffer limit exceeded" });
    expect(run.closes).toHaveLength(1);
    for (let i = 0; i < 8; i++) await agent.send("post_response", { response: "after" });
    const end = run.host.store.serverSeq;
    await fast.reached(end);
    expect(fast.seqs).toEqual(range(fast.fromSeq, end));
    // The slow client never got more than the limit plus what was in flight; it got a prefix, in order.
    expect(slow.seqs).toEqual(range(slow.fromSeq, slow.fromSeq + slow.seqs.length));
  });

  it("frames queued in the turn of a close leave before the close frame", async () => {
    run = await startHost();
    const agent = await run.agent("s1");
    await agent.send("session_start", {});
    const c = await seqClient(run.url, "closing", CHANNELS);
    const closedAt = new Promise<number>((resolve) => c.ws.once("close", () => resolve(c.seqs.length)));
    await agent.send("run_lifecycle", runEvent("run-c", "executing", { prompt: "x" }));
    const connection = [...run.host.connections].find((x) => x.clientId === "closing")!;
    expect(connection.queuedBytes).toBeGreaterThan(0);
    const end = run.host.store.serverSeq;
    connection.close(1000, "bye");
    expect(await closedAt).toBe(end - c.fromSeq);
  });
});

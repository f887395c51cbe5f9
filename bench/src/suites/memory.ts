/**
 * Memory, in process (client and server sides both counted), against a raw floor measured the
 * same way in the same run:
 *
 * - heap retained per in-flight request: N `pre_action` requests sent and held by the harness's
 *   handler (an async decision waiting on a gate), heap measured after a full GC, divided by N;
 * - heap left behind by 100k completed requests (pipelined, 64 in flight): after a full GC, it
 *   should be about nothing for both — a leak shows here.
 *
 * The floor is the cheapest code that does the same: JSON.stringify / JSON.parse both ways, a Map
 * of resolvers on the client side, the parsed request held on the harness side.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { AhpClient, AhpServer, createLinkedPair } from "@ahp/core";
import { measurePipelined, type Measurement, type Row, type Suite } from "../harness.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };

interface Contender {
  send(): Promise<unknown>;
  /** Lets the harness answer everything held so far (and answer at once from then on). */
  open(): void;
  /** Holds the harness's answers again. */
  hold(): void;
  close(): Promise<void>;
}

function gate() {
  let open!: () => void;
  let promise = new Promise<void>((r) => (open = r));
  let isOpen = false;
  return {
    wait: () => (isOpen ? undefined : promise),
    open: () => {
      isOpen = true;
      open();
    },
    hold: () => {
      isOpen = false;
      promise = new Promise<void>((r) => (open = r));
    },
  };
}

function floor(): Contender {
  const g = gate();
  const pending = new Map<string, (result: unknown) => void>();
  let id = 0;
  const serve = async (text: string) => {
    const request = JSON.parse(text) as { id: string };
    await g.wait();
    const response = JSON.stringify({ jsonrpc: "2.0", id: request.id, result: { decision: "allow" } });
    queueMicrotask(() => {
      const message = JSON.parse(response) as { id: string; result: unknown };
      const resolve = pending.get(message.id)!;
      pending.delete(message.id);
      resolve(message.result);
    });
  };
  return {
    send: () =>
      new Promise((resolve) => {
        const key = String(++id);
        pending.set(key, resolve);
        const text = JSON.stringify({
          jsonrpc: "2.0",
          id: key,
          method: "ahp/event",
          params: { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: new Date().toISOString(), depth: 0, payload },
        });
        queueMicrotask(() => void serve(text));
      }),
    open: g.open,
    hold: g.hold,
    close: async () => undefined,
  };
}

async function ours(): Promise<Contender> {
  const g = gate();
  const server = new AhpServer({
    handlers: {
      onEvent: async () => {
        await g.wait();
        return { decision: "allow" };
      },
    },
  });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient();
  await client.connect(agentSide);
  return {
    send: () => client.send("pre_action", payload),
    open: g.open,
    hold: g.hold,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Heap bytes retained per in-flight request (median of `rounds`). */
async function inFlightBytes(c: Contender, n: number, rounds: number): Promise<number> {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    c.hold();
    await settle();
    const before = heapAfterGc();
    const calls = Array.from({ length: n }, () => c.send());
    await settle();
    const during = heapAfterGc();
    c.open();
    await Promise.all(calls);
    samples.push((during - before) / n);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

/** Heap growth after `total` completed requests (pipelined), per request. */
async function leftBehind(c: Contender, total: number): Promise<{ bytesPerOp: number; run: Measurement }> {
  c.open();
  await measurePipelined(() => c.send(), { total: 2000, concurrency: 64, runs: 1, warmup: 0 });
  await settle();
  const before = heapAfterGc();
  const run = await measurePipelined(() => c.send(), { total, concurrency: 64, runs: 1, warmup: 0 });
  await settle();
  const after = heapAfterGc();
  return { bytesPerOp: (after - before) / total, run };
}

export const suite: Suite = {
  name: "memory",
  async run({ quick }) {
    const n = quick ? 1000 : 20_000;
    const rounds = quick ? 1 : 3;
    const total = quick ? 5000 : 100_000;
    const f = floor();
    const o = await ours();
    try {
      const floorInFlight = await inFlightBytes(f, n, rounds);
      const oursInFlight = await inFlightBytes(o, n, rounds);
      const floorLeft = await leftBehind(f, total);
      const oursLeft = await leftBehind(o, total);
      const mem = (bytes: number): Measurement => ({ opsPerSec: Number.NaN, heapBytesPerOp: bytes });
      const rows: Row[] = [
        { suite: "memory", case: `raw floor: heap per in-flight request (${n} held)`, measurement: mem(floorInFlight) },
        {
          suite: "memory",
          case: `AhpClient->memory->AhpServer: heap per in-flight request (${n} held)`,
          measurement: mem(oursInFlight),
          floor: mem(floorInFlight),
          ratio: oursInFlight / floorInFlight,
          note: "ratio = bytes / floor bytes (lower is better); both sides of the connection",
        },
        {
          suite: "memory",
          case: `raw floor: heap left after ${total} requests`,
          measurement: { ...floorLeft.run, heapBytesPerOp: floorLeft.bytesPerOp },
        },
        {
          suite: "memory",
          case: `AhpClient->memory->AhpServer: heap left after ${total} requests`,
          measurement: { ...oursLeft.run, heapBytesPerOp: oursLeft.bytesPerOp },
          note: "per request, after a full GC: about 0 unless something leaks",
        },
      ];
      return rows;
    } finally {
      await o.close();
      await f.close();
    }
  },
};

/**
 * Shared pieces of the stdio and Unix socket suites: the raw NDJSON client used for the floor,
 * the request and notification bytes, child CPU accounting, the measurements and the standard
 * set of rows.
 */
import { readFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import {
  interleaved,
  measurePairedSequential,
  measurePipelined,
  medianMeasurement,
  pairedRatioNote,
  type BlockRatios,
  type Measurement,
  type PairedSequential,
  type Row,
} from "./harness.js";

export const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };

/**
 * Session and agent ids as long as the random UUIDs AhpClient uses, so that the floor's request
 * has the same size on the wire as ours (the floor does not pay for generating them).
 */
const SESSION_ID = "6c1f0a52-3d4e-4b7a-9f21-0e8d5c3b2a19";
const AGENT_ID = "0b9e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b";

/** The event a `client.send("pre_action", payload)` puts on the wire, as plain data. */
export function rawEvent(eventType = "pre_action") {
  return { event_type: eventType, session_id: SESSION_ID, agent_id: AGENT_ID, timestamp: new Date().toISOString(), depth: 0, payload };
}

/**
 * The floor's client: plain JSON.stringify / JSON.parse, one write per request, lines cut from
 * the received text by index, a Map of pending ids. Request ids are a counter padded to the
 * length of AhpClient's UUIDs. No validation, no library.
 */
export class RawNdjsonClient {
  readonly #writable: Writable;
  readonly #pending = new Map<string, (result: unknown) => void>();
  #rest = "";
  #id = 0;

  constructor(readable: Readable, writable: Writable) {
    this.#writable = writable;
    readable.setEncoding("utf8");
    readable.on("data", (chunk: string) => {
      const text = this.#rest.length === 0 ? chunk : this.#rest + chunk;
      let start = 0;
      let nl: number;
      while ((nl = text.indexOf("\n", start)) !== -1) {
        const message = JSON.parse(text.slice(start, nl)) as { id: string; result: unknown };
        start = nl + 1;
        const resolve = this.#pending.get(message.id);
        if (resolve !== undefined) {
          this.#pending.delete(message.id);
          resolve(message.result);
        }
      }
      this.#rest = start === text.length ? "" : text.slice(start);
    });
  }

  #drained?: Promise<void>;

  /** Writes one message; resolves at once unless the stream asks to wait for "drain". */
  #write(text: string): Promise<void> | undefined {
    if (this.#writable.write(text)) return undefined;
    this.#drained ??= new Promise<void>((resolve) =>
      this.#writable.once("drain", () => {
        this.#drained = undefined;
        resolve();
      }),
    );
    return this.#drained;
  }

  /** One request; `id` defaults to the next counter value. */
  request(method: string, params: unknown, id = String(++this.#id).padStart(36, "0")): Promise<unknown> {
    const answered = new Promise<unknown>((resolve) => this.#pending.set(id, resolve));
    void this.#write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return answered;
  }

  notify(method: string, params: unknown): Promise<void> | undefined {
    return this.#write(`${JSON.stringify({ jsonrpc: "2.0", method, params })}\n`);
  }
}

/** Bytes of one floor request on the wire (with its newline), as `RawNdjsonClient.request` writes it. */
export function rawRequestBytes(): number {
  const id = "1".padStart(36, "0");
  return Buffer.byteLength(`${JSON.stringify({ jsonrpc: "2.0", id, method: "ahp/event", params: rawEvent() })}\n`);
}

/** User+system CPU time of another process so far, in µs (Linux /proc; undefined elsewhere). */
export function processCpuUs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 (utime, stime) in clock ticks of 1/100 s; the slice starts at field 3.
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/** What one implementation under test offers. */
export interface Contender {
  /** One blocking round trip (a pre_action request answered with a decision). */
  request(): Promise<unknown>;
  /** One notification (post_action); a promise when the writer has to wait before the next. */
  notify(): unknown;
  /** A round trip that comes back after every earlier notification was read. */
  flush(): Promise<unknown>;
  /** The peer process, for its CPU time. */
  peerPid?: number;
}

/** One contender connected to a peer process of its own. */
export interface Connection extends Contender {
  /** Disconnects and ends the peer process. */
  close(): Promise<void>;
}

/** Starts a fresh peer process for one contender and connects to it. */
export type Connect = () => Promise<Connection>;

/** Every figure of the standard rows, per contender. */
export interface ContenderResults<K extends string> {
  /** Sequential round trips, all contenders at once in paired blocks (ratios against the floor). */
  sequential: PairedSequential<K>;
  pipelined: Record<K | "floor", Measurement>;
  notifications: Record<K | "floor", Measurement>;
}

/** Adds the peer's CPU to a measurement's (this process's) CPU per operation. */
async function withPeerCpu(pid: number | undefined, ops: number, run: () => Promise<Measurement>): Promise<Measurement> {
  const before = processCpuUs(pid);
  const m = await run();
  const after = processCpuUs(pid);
  if (before === undefined || after === undefined || m.cpuUsPerOp === undefined) return m;
  return { ...m, cpuUsPerOp: m.cpuUsPerOp + (after - before) / ops };
}

/**
 * Unmeasured and pipelined (many calls fast): both processes' hot paths must be optimized, and
 * the scheduler must have settled the two processes, before any figure means something. Every
 * contender gets the same before any of its figures.
 */
async function warmUp(c: Contender, quick: boolean): Promise<void> {
  await measurePipelined(() => c.request(), { total: quick ? 500 : 20_000, concurrency: 64, runs: 1, warmup: 0 });
}

/**
 * Runs the standard measurements against every contender (one of them named "floor").
 *
 * Sequential: every contender connected at the same time, each warmed up, then paired blocks of
 * sequential round trips ({@link measurePairedSequential}); CPU per operation counts this process
 * and the contender's own peer process during the contender's turns (the other peers are idle).
 * Pipelined and notifications: in alternating rounds (see {@link interleaved}), each round on a
 * fresh peer process of one contender, warmed up the same way; the median of each figure.
 */
export async function measureContenders<K extends string>(
  connect: Record<K | "floor", Connect>,
  quick: boolean,
): Promise<ContenderResults<K>> {
  type Name = K | "floor";
  const names = Object.keys(connect) as Name[];
  const open = new Map<Name, Connection>();
  let sequential: PairedSequential<K>;
  try {
    for (const name of names) open.set(name, await connect[name]());
    for (const c of open.values()) await warmUp(c, quick);
    const ops = {} as Record<Name, () => Promise<unknown>>;
    const peerCpuUs = {} as Record<Name, () => number | undefined>;
    for (const [name, c] of open) {
      ops[name] = () => c.request();
      peerCpuUs[name] = () => processCpuUs(c.peerPid);
    }
    sequential = await measurePairedSequential(ops, {
      blocks: quick ? 4 : 40,
      blockSize: quick ? 50 : 500,
      warmup: quick ? 200 : 1000,
      peerCpuUs,
    });
  } finally {
    for (const c of open.values()) await c.close();
  }
  const rounds = {} as Record<Name, () => Promise<Throughput>>;
  for (const name of names) rounds[name] = () => measureThroughput(connect[name], quick);
  const throughput = await interleaved(rounds, quick ? 1 : 3, (list) => ({
    pipelined: medianMeasurement(list.map((x) => x.pipelined)),
    notifications: medianMeasurement(list.map((x) => x.notifications)),
  }));
  const pipelined = {} as Record<Name, Measurement>;
  const notifications = {} as Record<Name, Measurement>;
  for (const name of names) {
    pipelined[name] = throughput[name].pipelined;
    notifications[name] = throughput[name].notifications;
  }
  return { sequential, pipelined, notifications };
}

interface Throughput {
  pipelined: Measurement;
  notifications: Measurement;
}

/** One round of the pipelined and notification figures on a fresh connection. */
async function measureThroughput(connect: Connect, quick: boolean): Promise<Throughput> {
  const c = await connect();
  try {
    await warmUp(c, quick);
    const total = quick ? 2000 : 20_000;
    const pipeRuns = 3;
    const pipeWarmup = quick ? 500 : 2000;
    const pipelined = await withPeerCpu(c.peerPid, total * pipeRuns + pipeWarmup, () =>
      measurePipelined(() => c.request(), { total, concurrency: 64, runs: pipeRuns, warmup: pipeWarmup }),
    );
    const notifications = await measureNotifications(c, quick ? 5000 : 30_000, pipeRuns);
    return { pipelined, notifications };
  } finally {
    await c.close();
  }
}

/** Notifications per second: `count` notifications (64 writes in flight) followed by one round trip. */
async function measureNotifications(c: Contender, count: number, runs: number): Promise<Measurement> {
  const once = async () => {
    let started = 0;
    const worker = async () => {
      while (started < count) {
        started++;
        await c.notify();
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    await c.flush();
  };
  await once();
  const rates: number[] = [];
  const cpuStart = process.cpuUsage();
  const peerStart = processCpuUs(c.peerPid);
  for (let r = 0; r < runs; r++) {
    const start = process.hrtime.bigint();
    await once();
    rates.push(count / (Number(process.hrtime.bigint() - start) / 1e9));
  }
  const cpu = process.cpuUsage(cpuStart);
  const peerEnd = processCpuUs(c.peerPid);
  rates.sort((a, b) => a - b);
  const peer = peerStart === undefined || peerEnd === undefined ? 0 : peerEnd - peerStart;
  return { opsPerSec: rates[Math.floor(rates.length / 2)]!, cpuUsPerOp: (cpu.user + cpu.system + peer) / (count * runs) };
}

/** The standard rows: floor, ours against the floor (targets), and optional other libraries. */
export function contenderRows<O extends string>(
  suite: string,
  r: ContenderResults<"mine" | O>,
  ourLabel: string,
  others: Array<{ key: O; label: string }> = [],
): Row[] {
  const cpuNote = "CPU = this process + the peer process";
  const s = r.sequential.measurements;
  // `O` never names the floor: every key of `others` has its block ratios.
  const ratio = r.sequential.ratios as Record<"mine" | O, BlockRatios>;
  const { pipelined: p, notifications: n } = r;
  const rows: Row[] = [
    { suite, case: "raw floor: sequential round trip", measurement: s.floor, note: cpuNote },
    {
      suite,
      case: `${ourLabel}: sequential round trip`,
      measurement: s.mine,
      floor: s.floor,
      ratio: ratio.mine.median,
      target: "p50 <= 1.1x floor p50",
      note: `${pairedRatioNote(ratio.mine, "p50 latency / floor p50")}; lower is better`,
    },
    { suite, case: "raw floor: pipelined (64 in flight)", measurement: p.floor },
    {
      suite,
      case: `${ourLabel}: pipelined (64 in flight)`,
      measurement: p.mine,
      floor: p.floor,
      ratio: p.mine.opsPerSec / p.floor.opsPerSec,
      target: ">= 0.9x floor",
    },
    { suite, case: "raw floor: notifications (64 writes in flight)", measurement: n.floor },
    {
      suite,
      case: `${ourLabel}: notifications (64 writes in flight)`,
      measurement: n.mine,
      floor: n.floor,
      ratio: n.mine.opsPerSec / n.floor.opsPerSec,
    },
  ];
  for (const { key, label } of others) {
    rows.push(
      {
        suite,
        case: `${label}: sequential round trip`,
        measurement: s[key],
        floor: s.floor,
        ratio: ratio[key].median,
        note: pairedRatioNote(ratio[key], "p50 latency / floor p50"),
      },
      {
        suite,
        case: `${label}: pipelined (64 in flight)`,
        measurement: p[key],
        floor: p.floor,
        ratio: p[key].opsPerSec / p.floor.opsPerSec,
      },
      {
        suite,
        case: `${label}: notifications (64 writes in flight)`,
        measurement: n[key],
        floor: n.floor,
        ratio: n[key].opsPerSec / n.floor.opsPerSec,
      },
      {
        suite,
        case: `${ourLabel} vs ${label}: pipelined throughput`,
        measurement: p.mine,
        floor: p[key],
        ratio: p.mine.opsPerSec / p[key].opsPerSec,
        target: ">= 3x",
        note: `floor column = ${label}`,
      },
    );
  }
  return rows;
}

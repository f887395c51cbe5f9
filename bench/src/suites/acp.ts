/**
 * The ACP suspend/resume bridge (@ahp/acp-bridge):
 *
 * - proxy overhead: one `session/prompt` turn with 20 streamed updates from a stock SDK agent
 *   (a child process) through the `ahp acp-proxy` wiring (bridge process with an in-process
 *   default-policy harness and a file store, the agent as its child), and through the real
 *   `ahp acp-proxy` binary when the CLI is built, against the same agent script connected
 *   directly over stdio by the same SDK client (the floor). The cases alternate turn by turn
 *   (rotating which goes first), so all of them see the same machine load. Ratio = p50 / floor
 *   p50 (target <= 1.2x); added latency per forwarded message = (p50 - floor p50) / 22 (20
 *   updates, request, response). CPU: the bridge process's own CPU per turn (from /proc, Linux)
 *   against the agent's own CPU per turn in the direct case, and per forwarded message;
 * - suspend → resume round trip of an idle session (tunnel suspend, then resume with the
 *   handle), in memory (bridge and agent in process, memory store) and over stdio (the proxy
 *   wiring above, file store with fsync), p50/p99;
 * - memory: heap held per suspended session (N sessions suspended, after a full GC) against a
 *   floor of the stored records alone kept in a Map, and the byte size of one stored record.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { agent, client, ndJsonStream, type ClientConnection } from "@agentclientprotocol/sdk";
import { createAcpBridge, createUpstreamApp, ManualClock, MemorySuspensionStore } from "@ahp/acp-bridge";
import { latencyRatio, measureSequential, percentile, type Measurement, type Row, type Suite } from "../harness.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const peer = (name: string) => fileURLToPath(new URL(`../peers/${name}`, import.meta.url));
const UPDATES = 20;
/** Messages the bridge forwards per turn: the updates, the request and the response. */
const FORWARDED = UPDATES + 2;
/** The `ahp` binary of apps/cli (present once the CLI is built). */
const AHP_BIN = fileURLToPath(new URL("../../../apps/cli/bin/ahp.js", import.meta.url));
const AHP_MAIN = fileURLToPath(new URL("../../../apps/cli/dist/main.js", import.meta.url));

/** CPU time (user + system, µs) a process has used so far, itself only (Linux /proc); NaN elsewhere. */
function processCpuUs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime + stime, in clock ticks of 10 ms
  } catch {
    return Number.NaN;
  }
}

interface Peer {
  conn: ClientConnection;
  child: ChildProcess;
  sessionId: string;
  close(): Promise<void>;
}

async function stdioPeer(script: string, env: NodeJS.ProcessEnv = {}, args: string[] = [peer(script)]): Promise<Peer> {
  const child = spawn(process.execPath, args, {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ACP_UPDATES: String(UPDATES), ...env },
  });
  const conn = client({ name: "bench" })
    .onNotification("session/update", () => undefined)
    .connect(
      ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
    );
  await conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await conn.agent.request("session/new", { cwd: "/bench", mcpServers: [] });
  return {
    conn,
    child,
    sessionId,
    close: async () => {
      conn.close();
      child.stdin.end();
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)));
    },
  };
}

const prompt = (p: Peer) =>
  p.conn.agent.request("session/prompt", { sessionId: p.sessionId, prompt: [{ type: "text", text: "answer in 20 chunks" }] });

interface TurnFigures {
  measurement: Measurement;
  /** CPU of the peer's own process per turn (µs). */
  peerCpuUs: number;
}

/**
 * Prompt turns on every peer, alternating turn by turn (the one that goes first rotates), so
 * that all of them see the same load; latency per turn, the bench client's CPU per turn, and
 * the peer process's own CPU per turn.
 */
async function interleavedTurns(peers: Peer[], iterations: number, warmup: number): Promise<TurnFigures[]> {
  for (let i = 0; i < warmup; i++) for (const p of peers) await prompt(p);
  const samples = peers.map(() => [] as number[]);
  const clientCpu = peers.map(() => 0);
  const peerCpu0 = peers.map((p) => processCpuUs(p.child.pid));
  for (let i = 0; i < iterations; i++) {
    for (let k = 0; k < peers.length; k++) {
      const j = (i + k) % peers.length;
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await prompt(peers[j]!);
      samples[j]!.push(Number(process.hrtime.bigint() - t0) / 1000);
      const c = process.cpuUsage(c0);
      clientCpu[j]! += c.user + c.system;
    }
  }
  return peers.map((p, j) => {
    const sorted = samples[j]!.sort((a, b) => a - b);
    const p50Us = percentile(sorted, 0.5);
    return {
      measurement: {
        // Turns per second of this case alone: the inverse of its mean latency.
        opsPerSec: 1e6 / (sorted.reduce((a, b) => a + b, 0) / sorted.length),
        p50Us,
        p99Us: percentile(sorted, 0.99),
        cpuUsPerOp: clientCpu[j]! / iterations,
      },
      peerCpuUs: (processCpuUs(p.child.pid) - peerCpu0[j]!) / iterations,
    };
  });
}

async function roundTrip(ctx: ClientConnection["agent"], sessionId: string): Promise<void> {
  const sus = await ctx.request<{ handle: string }>("_ahpHarness/session/suspend", { sessionId });
  await ctx.request("session/resume", { sessionId, cwd: "/bench", _meta: { "ahpHarness/resume": { handle: sus.handle } } });
}

/** Bridge and a stock agent in process, memory store: the machinery without transports. */
async function inMemory() {
  const a = agent({ name: "m" })
    .onRequest("initialize", () => ({ protocolVersion: 1, agentCapabilities: { sessionCapabilities: { resume: {} } } }))
    .onRequest("session/new", () => ({ sessionId: `m${Math.random().toString(36).slice(2)}` }))
    .onRequest("session/resume", () => ({}))
    .onRequest("session/prompt", () => ({ stopReason: "end_turn" as const }));
  const store = new MemorySuspensionStore();
  const bridge = await createAcpBridge({ agent: a, store, clock: new ManualClock() });
  const conn = client({ name: "m" })
    .onNotification("session/update", () => undefined)
    .connect(createUpstreamApp(bridge));
  await conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  return { bridge, conn, store, close: async () => (conn.close(), await bridge.close()) };
}

async function memoryPerSuspension(n: number): Promise<{ ours: Measurement; floor: Measurement; recordBytes: number }> {
  const m = await inMemory();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await m.conn.agent.request("session/new", { cwd: "/bench/project", mcpServers: [] })).sessionId);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (const sessionId of ids) {
    await m.conn.agent.request("_ahpHarness/session/suspend", {
      sessionId,
      reason: "waiting for CI",
      resumeWhen: { onEvent: "ci.passed", timeout: { durationMinutes: 60 } },
    });
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  const records = [...m.store.records.values()];
  const recordBytes = Buffer.byteLength(`${JSON.stringify(records[0])}\n`);
  // Floor: the stored records alone, parsed, in a Map (the least any bridge must keep).
  const texts = records.map((r) => JSON.stringify(r));
  gc();
  const f0 = process.memoryUsage().heapUsed;
  const floorMap = new Map(texts.map((t) => [t.slice(0, 40), JSON.parse(t) as unknown]));
  gc();
  const f1 = process.memoryUsage().heapUsed;
  void floorMap.size;
  await m.close();
  // The memory store keeps its own copy of each record: subtract it, it stands for the disk.
  return {
    ours: { opsPerSec: Number.NaN, heapBytesPerOp: Math.max(0, (after - before - (f1 - f0)) / n) },
    floor: { opsPerSec: Number.NaN, heapBytesPerOp: Math.max(0, (f1 - f0) / n) },
    recordBytes,
  };
}

export const suite: Suite = {
  name: "acp",
  async run({ quick }) {
    const store = mkdtempSync(join(tmpdir(), "ahp-bench-acp-"));
    const rows: Row[] = [];
    try {
      const direct = await stdioPeer("acp-agent.mjs");
      const proxied = await stdioPeer("acp-proxy-peer.mjs", { ACP_STORE: store });
      // The real binary, when the CLI is built: the same bridge behind `ahp acp-proxy`.
      const cli = existsSync(AHP_MAIN)
        ? await stdioPeer("acp-agent.mjs", {}, [
            AHP_BIN,
            "acp-proxy",
            "--log-level",
            "warn",
            "--store",
            join(store, "cli"),
            "--",
            process.execPath,
            peer("acp-agent.mjs"),
          ])
        : undefined;
      // Another build of the bridge (its `dist/index.js`), to compare builds in the same minutes.
      const baselineModule = process.env.ACP_BASELINE_BRIDGE;
      const baseline =
        baselineModule === undefined || baselineModule === ""
          ? undefined
          : await stdioPeer("acp-proxy-peer.mjs", {
              ACP_STORE: join(store, "baseline"),
              ACP_BRIDGE_MODULE: pathToFileURL(baselineModule).href,
            });
      // The hop alone: a process that copies bytes both ways and does nothing else.
      const pipe = await stdioPeer("acp-pipe-peer.mjs");
      const peers = [direct, proxied, pipe, ...(cli === undefined ? [] : [cli]), ...(baseline === undefined ? [] : [baseline])];
      const figures = await interleavedTurns(peers, quick ? 20 : 1500, quick ? 5 : 200);
      const [floor, ours, hop] = figures as [TurnFigures, TurnFigures, TurnFigures];
      const real = cli === undefined ? undefined : figures[3];
      const base = baseline === undefined ? undefined : figures[peers.length - 1];
      const cpuNote = (f: TurnFigures) =>
        `bridge process CPU ${f.peerCpuUs.toFixed(0)} µs/turn = ${(f.peerCpuUs / FORWARDED).toFixed(1)} µs per forwarded message, ${(f.peerCpuUs / floor.peerCpuUs).toFixed(2)}x the agent's own CPU per turn`;
      const perMessage = (f: TurnFigures) => (((f.measurement.p50Us ?? 0) - (floor.measurement.p50Us ?? 0)) / FORWARDED).toFixed(1);
      rows.push({
        suite: "acp",
        case: `floor: prompt turn, ${UPDATES} updates, stock agent over stdio (direct)`,
        measurement: floor.measurement,
        note: `turns/s; latency per turn; CPU µs/op = bench client; agent process CPU ${floor.peerCpuUs.toFixed(0)} µs/turn`,
      });
      rows.push({
        suite: "acp",
        case: `prompt turn, ${UPDATES} updates, through the acp-proxy wiring (bridge process + agent child)`,
        measurement: ours.measurement,
        floor: floor.measurement,
        ratio: latencyRatio(ours.measurement, floor.measurement),
        target: "p50 <= 1.2x floor",
        note: `ratio = p50 / floor p50; +${perMessage(ours)} µs per forwarded message (${FORWARDED} per turn); ${cpuNote(ours)}`,
      });
      rows.push({
        suite: "acp",
        case: "same, through a bare byte pipe (a process copying bytes both ways, nothing parsed)",
        measurement: hop.measurement,
        floor: floor.measurement,
        ratio: latencyRatio(hop.measurement, floor.measurement),
        note: `the extra process hop alone, the least any proxy process costs; +${perMessage(hop)} µs per forwarded message; pipe process CPU ${hop.peerCpuUs.toFixed(0)} µs/turn`,
      });
      if (real !== undefined) {
        rows.push({
          suite: "acp",
          case: `same, through the \`ahp acp-proxy\` binary (embedded harness, file store)`,
          measurement: real.measurement,
          floor: floor.measurement,
          ratio: latencyRatio(real.measurement, floor.measurement),
          target: "p50 <= 1.2x floor",
          note: `+${perMessage(real)} µs per forwarded message; ${cpuNote(real)}`,
        });
      }
      if (base !== undefined) {
        rows.push({
          suite: "acp",
          case: "same wiring, baseline build of the bridge (ACP_BASELINE_BRIDGE)",
          measurement: base.measurement,
          floor: floor.measurement,
          ratio: latencyRatio(base.measurement, floor.measurement),
          note: `+${perMessage(base)} µs per forwarded message; ${cpuNote(base)}`,
        });
      }
      const rtStdio = await measureSequential(() => roundTrip(proxied.conn.agent, proxied.sessionId), {
        iterations: quick ? 10 : 200,
        runs: 1,
        warmup: quick ? 2 : 20,
      });
      rows.push({
        suite: "acp",
        case: "suspend → resume round trip over stdio (acp-proxy wiring, file store, fsync)",
        measurement: rtStdio,
        note: "idle session; gates and reports through the in-process harness",
      });
      await direct.close();
      await proxied.close();
      await pipe.close();
      await cli?.close();
      await baseline?.close();

      const m = await inMemory();
      const { sessionId } = await m.conn.agent.request("session/new", { cwd: "/bench", mcpServers: [] });
      const rtMemory = await measureSequential(() => roundTrip(m.conn.agent, sessionId), {
        iterations: quick ? 50 : 2000,
        runs: quick ? 1 : 3,
        warmup: quick ? 10 : 200,
      });
      await m.close();
      rows.push({
        suite: "acp",
        case: "suspend → resume round trip in memory (SDK apps, memory store, no harness)",
        measurement: rtMemory,
      });

      const mem = await memoryPerSuspension(quick ? 200 : 2000);
      rows.push({ suite: "acp", case: "floor: one stored record, parsed, in a Map", measurement: mem.floor, note: "heap B per session" });
      rows.push({
        suite: "acp",
        case: "heap held per suspended session (bridge state, timers armed)",
        measurement: mem.ours,
        floor: mem.floor,
        ratio: (mem.ours.heapBytesPerOp ?? Number.NaN) / (mem.floor.heapBytesPerOp || Number.NaN),
        note: `stored record ${mem.recordBytes} B on disk`,
      });
      rows.push({
        suite: "acp",
        case: "stored record size (one suspension, JSON line)",
        measurement: { opsPerSec: Number.NaN, heapBytesPerOp: mem.recordBytes },
        note: "bytes (in the heap column)",
      });
    } finally {
      rmSync(store, { recursive: true, force: true });
    }
    return rows;
  },
};

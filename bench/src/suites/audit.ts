/**
 * The cost of the write-ahead audit log, in two settings, each against a floor measured in the
 * same run:
 *
 * - **The harness** (the target): a harness process as `ahp serve` runs it (AhpServer,
 *   the built-in default policy, a Unix socket; `audit-harness-peer.mjs`) with the log off, in
 *   `write` and in `fsync` mode, all three running at once and taking turns in rounds; this
 *   process is the agent (AhpClient) and sends a mix of `pre_action` events. The figure is the
 *   harness process's CPU per decision (from /proc) while its turn lasts. Target: `write` adds at
 *   most 30% to the CPU of the harness with the log off (the median of the rounds' ratios), at
 *   64 calls in flight and at 1; at 64 in flight `fsync` keeps at least 0.8x of `write`'s
 *   throughput.
 * - **The log alone**: AhpClient -> in-memory transport -> AhpServer with a trivial handler and
 *   `withAudit` writing a real file, in each sync mode, against the same server with audit off.
 *   Here the harness does almost nothing, so the rows show what the log itself costs per record.
 *
 * 64 calls in flight (an agent fleet): group commit puts the records of one event-loop turn in
 * one write (and, with `fsync`, one fdatasync); 1 call in flight (one agent, sequential): every
 * record is its own group, the worst case. `fsync` figures depend on the disk (on tmpfs they are
 * not durable at all): read them with the note saying where the file was.
 *
 * The record floor: what a record needs at the least, in a bare loop without server, promises or
 * redaction: canonical JSON of a record like the ones `withAudit` writes, one HMAC-SHA256, the
 * SHA-256 that chains the next record, and the line appended to a buffer written with one
 * `write(2)` per group (64 records, or 1). Each sync row's note gives the CPU it adds per decision
 * over audit off, as a multiple of this floor: the limit the log can aim at.
 */
import { createHash } from "node:crypto";
import { spawn } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AUDIT_SYNC_MODES,
  AuditKey,
  canonicalJson,
  openAuditLog,
  sha256Hex,
  withAudit,
  type AuditLog,
  type AuditSyncMode,
} from "@ahp/audit";
import { AhpClient, AhpServer, createLinkedPair, type AhpServerHandlers } from "@ahp/core";
import { UnixSocketClientTransport } from "@ahp/transport-unix";
import { measurePipelined, measureSequential, throughputRatio, type Measurement, type Row, type Suite } from "../harness.js";
import { processCpuUs } from "../ndjson-bench.js";

const KEY = "4d".repeat(32);
const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };
const handlers: AhpServerHandlers = {
  onEvent: (event) =>
    String((event.payload as typeof payload).arguments.command).includes("rm -rf")
      ? { decision: "block", reason: "no" }
      : { decision: "allow" },
};

interface Setup {
  client: AhpClient;
  log?: AuditLog;
  close(): Promise<void>;
}

async function setUp(dir: string, sync: AuditSyncMode | "off"): Promise<Setup> {
  let log: AuditLog | undefined;
  let h = handlers;
  if (sync !== "off") {
    log = await openAuditLog({ key: KEY, path: join(dir, `${sync}.log`), sync, checkpoint: { intervalMs: 1000 } });
    h = withAudit(handlers, log);
  }
  const server = new AhpServer({ handlers: h });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient({ timeoutMs: 0 });
  await client.connect(agentSide);
  return {
    client,
    ...(log === undefined ? {} : { log }),
    async close() {
      await client.close();
      await server.close();
      await log?.close();
    },
  };
}

/**
 * The record floor (see the module comment): `count` records, `group` per write(2), in a bare
 * loop; CPU per record from process.cpuUsage.
 */
function recordFloor(file: string, count: number, group: number): Measurement {
  const key = AuditKey.fromText(KEY);
  const fd = openSync(file, "a", 0o600);
  let prev = createHash("sha256").update("genesis").digest("hex");
  const payloadSha = createHash("sha256").update(canonicalJson(payload)).digest("hex");
  let buffer = "";
  const one = (seq: number) => {
    const record: Record<string, unknown> = {
      kind: "decision",
      session: "session-1",
      agent: "agent-1",
      event_type: "pre_action",
      form: "request",
      request_id: seq,
      decision: "allow",
      latency_us: 12,
      depth: 0,
      conn: { id: 1, transport: "memory" },
      payload_sha256: payloadSha,
      time: new Date().toISOString(),
      v: 1,
      seq,
      kid: key.id,
      prev,
    };
    record.mac = key.mac(canonicalJson(record));
    const line = canonicalJson(record);
    prev = sha256Hex(line);
    buffer += `${line}\n`;
    if (seq % group === 0) {
      writeSync(fd, buffer);
      buffer = "";
    }
  };
  try {
    for (let i = 1; i <= Math.min(2000, count); i++) one(i);
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 1; i <= count; i++) one(i);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const used = process.cpuUsage(cpu);
    return { opsPerSec: count / seconds, cpuUsPerOp: (used.user + used.system) / count };
  } finally {
    closeSync(fd);
  }
}

const perWrite = (log: AuditLog | undefined) => {
  const s = log?.stats;
  return s === undefined || s.groups === 0 ? "" : `, ${(s.records / s.groups).toFixed(1)} records per write`;
};

const WD = "/home/dev/project";
/** The event mix of the harness rows: what an agent sends, decided by the default policy (allow, block, escalate). */
const MIX: unknown[] = [
  { tool: "bash", arguments: { command: "npm test" }, working_directory: WD },
  { tool: "bash", arguments: { command: "git status --short" }, working_directory: WD },
  { tool: "read_file", arguments: { path: "src/server.ts" }, working_directory: WD },
  { tool: "bash", arguments: { command: "ls -la src && cat package.json | jq .name" }, working_directory: WD },
  { tool: "write_file", arguments: { path: "src/parser.ts", content: "export const x = 1;\n" }, working_directory: WD },
  { tool: "bash", arguments: { command: "rm -rf /" }, working_directory: WD },
  { tool: "bash", arguments: { command: "curl -s https://example.com/status" }, working_directory: WD },
  { tool: "bash", arguments: { command: "git push origin main" }, working_directory: WD },
  { tool: "write_file", arguments: { path: "/etc/hosts", content: "x" }, working_directory: WD },
  { tool: "bash", arguments: { command: 'git commit -m "parser: enforce batch limit"' }, working_directory: WD },
];

const HARNESS_MODES = ["off", "write", "fsync"] as const;
type HarnessMode = (typeof HARNESS_MODES)[number];

interface HarnessProcess {
  client: AhpClient;
  pid: number;
  /** Sends the next event of the mix. */
  send(): Promise<unknown>;
  /** Ends the harness; resolves with its log's stats. */
  stop(): Promise<{ records?: number; groups?: number }>;
}

/** Starts `audit-harness-peer.mjs` in `mode` on a fresh socket and connects an AhpClient to it. */
async function startHarness(dir: string, mode: HarnessMode): Promise<HarnessProcess> {
  const socket = join(dir, `${mode}.sock`);
  const peer = fileURLToPath(new URL("./audit-harness-peer.mjs", import.meta.url));
  const child = spawn(process.execPath, [peer, socket, mode, join(dir, `harness-${mode}.log`)], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
      if (err.includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`audit harness (${mode}) exited with ${code}: ${err}`)));
  });
  const client = new AhpClient({ timeoutMs: 0 });
  await client.connect(new UnixSocketClientTransport({ path: socket }));
  let n = 0;
  return {
    client,
    pid: child.pid!,
    send: () => client.send("pre_action", MIX[n++ % MIX.length]),
    async stop() {
      await client.close();
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.stdin.end();
        });
      }
      try {
        return JSON.parse(out) as { records?: number; groups?: number };
      } catch {
        return {};
      }
    },
  };
}

/** One turn of one harness: `count` decisions, `concurrency` in flight; the harness's CPU per decision and the rate. */
async function harnessTurn(h: HarnessProcess, count: number, concurrency: number): Promise<{ cpuUs: number; rate: number }> {
  const cpuStart = processCpuUs(h.pid);
  const start = process.hrtime.bigint();
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      await h.send();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpuEnd = processCpuUs(h.pid);
  return { cpuUs: cpuStart === undefined || cpuEnd === undefined ? Number.NaN : (cpuEnd - cpuStart) / count, rate: count / seconds };
}

const median = (values: number[]) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
};

/**
 * The median of the rounds' ratios, or (when no round gave one: a turn shorter than a clock tick,
 * in a quick run) the ratio of the totals over all rounds.
 */
function orWhole(
  ratio: number,
  of: Array<{ cpuUs: number; rate: number }>,
  base: Array<{ cpuUs: number; rate: number }>,
  key: "cpuUs" | "rate",
): number {
  if (Number.isFinite(ratio)) return ratio;
  const sum = (list: Array<{ cpuUs: number; rate: number }>) => list.reduce((n, t) => n + t[key], 0);
  return sum(of) / sum(base);
}

/**
 * The harness rows: three harness processes (log off, `write`, `fsync`) take turns in rounds (the
 * order rotating), so that the machine's load hits them alike; per round the ratio of `write`'s
 * CPU per decision to off's, and of `fsync`'s throughput to `write`'s. Figures: medians over the
 * rounds.
 */
async function harnessRows(dir: string, quick: boolean, concurrency: number, floor: Measurement): Promise<Row[]> {
  const label = concurrency === 1 ? "1 in flight" : `${concurrency} in flight`;
  const rounds = quick ? 2 : 9;
  // CPU time of another process comes in clock ticks of 10 ms: a turn lasts many of them.
  const perTurn = quick ? 600 : concurrency === 1 ? 1500 : 4000;
  const harnesses = {} as Record<HarnessMode, HarnessProcess>;
  const turns: Record<HarnessMode, Array<{ cpuUs: number; rate: number }>> = { off: [], write: [], fsync: [] };
  const stats = {} as Record<HarnessMode, { records?: number; groups?: number }>;
  try {
    for (const mode of HARNESS_MODES) harnesses[mode] = await startHarness(dir, mode);
    for (const mode of HARNESS_MODES) await harnessTurn(harnesses[mode], quick ? 200 : 3000, concurrency); // warm-up
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < HARNESS_MODES.length; k++) {
        const mode = HARNESS_MODES[(r + k) % HARNESS_MODES.length]!;
        turns[mode].push(await harnessTurn(harnesses[mode], perTurn, concurrency));
      }
    }
  } finally {
    for (const mode of HARNESS_MODES) if (harnesses[mode] !== undefined) stats[mode] = await harnesses[mode].stop();
  }
  const figure = (mode: HarnessMode): Measurement => ({
    opsPerSec: median(turns[mode].map((t) => t.rate)),
    cpuUsPerOp: median(turns[mode].map((t) => t.cpuUs)),
  });
  const perRound = (
    mode: HarnessMode,
    of: (t: { cpuUs: number; rate: number }, base: { cpuUs: number; rate: number }) => number,
    base: HarnessMode,
  ) => turns[mode].map((t, i) => of(t, turns[base][i]!));
  const quartiles = (values: number[]) => {
    const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
    return `${at(0.25).toFixed(2)}–${at(0.75).toFixed(2)}`;
  };
  const off = figure("off");
  const rows: Row[] = [
    {
      suite: "audit",
      case: `harness, audit off (floor), ${label}`,
      measurement: off,
      note: "harness process (AhpServer + default policy, Unix socket): its CPU per decision; event mix of 10 pre_action payloads",
    },
  ];
  const cpuRatios = perRound("write", (t, base) => t.cpuUs / base.cpuUs, "off");
  const write = figure("write");
  const added = (write.cpuUsPerOp ?? Number.NaN) - (off.cpuUsPerOp ?? Number.NaN);
  const perWriteNote = (s: { records?: number; groups?: number }) =>
    s.records !== undefined && s.groups !== undefined && s.groups > 0 ? `, ${(s.records / s.groups).toFixed(1)} records per write` : "";
  rows.push({
    suite: "audit",
    case: `harness, audit write, ${label}`,
    measurement: write,
    floor: off,
    ratio: orWhole(median(cpuRatios), turns.write, turns.off, "cpuUs"),
    target: "≤ 1.30x CPU",
    note: `ratio: harness CPU per decision over audit off, median of ${rounds} rounds (quartiles ${quartiles(cpuRatios)}); adds ${added.toFixed(1)} µs = ${(added / (floor.cpuUsPerOp ?? Number.NaN)).toFixed(1)}x the record floor${perWriteNote(stats.write ?? {})}`,
  });
  const fsyncCpu = perRound("fsync", (t, base) => t.cpuUs / base.cpuUs, "off");
  const fsyncRate = perRound("fsync", (t, base) => t.rate / base.rate, "write");
  rows.push({
    suite: "audit",
    case: `harness, audit fsync, ${label}`,
    measurement: figure("fsync"),
    floor: write,
    ratio: orWhole(median(fsyncRate), turns.fsync, turns.write, "rate"),
    target: concurrency === 1 ? "report" : "≥ 0.8x write",
    note: `ratio: decisions/s over audit write (quartiles ${quartiles(fsyncRate)}); CPU ${median(fsyncCpu).toFixed(2)}x audit off${perWriteNote(stats.fsync ?? {})}`,
  });
  return rows;
}

export const suite: Suite = {
  name: "audit",
  async run({ quick }) {
    const dir = await mkdtemp(join(tmpdir(), "ahp-bench-audit-"));
    const total = quick ? 400 : 20_000;
    const sequential = quick ? 100 : 3_000;
    const rows: Row[] = [];
    try {
      const modes = ["off", ...AUDIT_SYNC_MODES] as const;
      for (const [label, measure, group] of [
        [
          "64 in flight",
          (s: Setup) =>
            measurePipelined(() => s.client.send("pre_action", payload), {
              total,
              concurrency: 64,
              runs: quick ? 1 : 3,
              warmup: quick ? 100 : 2000,
            }),
          64,
        ],
        [
          "1 in flight",
          (s: Setup) =>
            measureSequential(() => s.client.send("pre_action", payload), {
              iterations: sequential,
              runs: quick ? 1 : 3,
              warmup: quick ? 50 : 500,
            }),
          1,
        ],
      ] as const) {
        let floor: Measurement | undefined;
        let none: Measurement | undefined;
        const bare = recordFloor(join(dir, `floor-${group}.log`), quick ? 2000 : 50_000, group);
        rows.push({
          suite: "audit",
          case: `record floor (bare loop), ${group} per write`,
          measurement: bare,
          note: "canonical JSON + HMAC-SHA256 + SHA-256 chain + append, one write(2) per group; no server",
        });
        rows.push(...(await harnessRows(dir, quick, group, bare)));
        for (const mode of modes) {
          const setup = await setUp(dir, mode);
          let m: Measurement;
          try {
            m = await measure(setup);
          } finally {
            await setup.close();
          }
          if (mode === "off") {
            floor = m;
            rows.push({
              suite: "audit",
              case: `log alone: audit off (floor), ${label}`,
              measurement: m,
              note: "AhpClient -> linked pair -> AhpServer, pre_action",
            });
            continue;
          }
          if (mode === "none") none = m;
          // What waiting for the write adds, over recording without waiting (the record's own CPU cost).
          const overNone = mode === "none" || none === undefined ? "" : `, ${throughputRatio(m, none).toFixed(2)}x of sync none`;
          const added = (m.cpuUsPerOp ?? Number.NaN) - (floor!.cpuUsPerOp ?? Number.NaN);
          const overBare = `, adds ${added.toFixed(1)} µs CPU/decision = ${(added / (bare.cpuUsPerOp ?? Number.NaN)).toFixed(1)}x the record floor`;
          rows.push({
            suite: "audit",
            case: `log alone: withAudit sync ${mode}, ${label}`,
            measurement: m,
            floor: floor!,
            ratio: throughputRatio(m, floor!),
            target: "report",
            note: `ratio: decisions/s over audit off${overNone}${overBare}${perWrite(setup.log)}`,
          });
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return rows;
  },
};

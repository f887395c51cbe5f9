/** Minimal benchmark kit: warm-up, timed runs, percentiles, ratios against a floor. */

export interface Measurement {
  /** Operations per second over the timed runs (median run). */
  opsPerSec: number;
  /** Per-operation latency percentiles in microseconds, when sampled. */
  p50Us?: number;
  p99Us?: number;
  /** CPU time (user+system) per operation in microseconds. */
  cpuUsPerOp?: number;
  /** Heap bytes per operation (memory suite). */
  heapBytesPerOp?: number;
  /** Machine instructions per operation, counted by callgrind (instructions suite). */
  instructionsPerOp?: number;
}

export interface Row {
  suite: string;
  case: string;
  measurement: Measurement;
  /** The floor this row is compared against (same suite, same run). */
  floor?: Measurement;
  /** measurement / floor for throughput (higher is better), or latency ratio where noted. */
  ratio?: number;
  target?: string;
  note?: string;
}

export interface Suite {
  name: string;
  run(options: { quick: boolean }): Promise<Row[]>;
}

const nowNs = () => process.hrtime.bigint();

/**
 * Runs `op` sequentially: `warmup` operations, then `runs` timed runs of `iterations` each.
 * Returns the median run's throughput, latency percentiles over all operations and CPU per op.
 */
export async function measureSequential(
  op: () => unknown,
  { iterations = 5000, runs = 5, warmup = 1000, sampleLatency = true } = {},
): Promise<Measurement> {
  for (let i = 0; i < warmup; i++) await op();
  const rates: number[] = [];
  const samples: number[] = [];
  const cpuStart = process.cpuUsage();
  let total = 0;
  for (let r = 0; r < runs; r++) {
    const start = nowNs();
    for (let i = 0; i < iterations; i++) {
      if (sampleLatency) {
        const t = nowNs();
        await op();
        samples.push(Number(nowNs() - t) / 1000);
      } else await op();
    }
    const seconds = Number(nowNs() - start) / 1e9;
    rates.push(iterations / seconds);
    total += iterations;
  }
  const cpu = process.cpuUsage(cpuStart);
  rates.sort((a, b) => a - b);
  samples.sort((a, b) => a - b);
  return {
    opsPerSec: rates[Math.floor(rates.length / 2)]!,
    ...(samples.length > 0 ? { p50Us: percentile(samples, 0.5), p99Us: percentile(samples, 0.99) } : {}),
    cpuUsPerOp: (cpu.user + cpu.system) / total,
  };
}

/** Runs `total` operations with at most `concurrency` in flight; returns throughput of the median of `runs`. */
export async function measurePipelined(
  op: () => Promise<unknown>,
  { total = 20000, concurrency = 64, runs = 3, warmup = 2000 } = {},
): Promise<Measurement> {
  const once = async (count: number) => {
    let started = 0;
    const worker = async () => {
      while (started < count) {
        started++;
        await op();
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  };
  await once(warmup);
  const rates: number[] = [];
  const cpuStart = process.cpuUsage();
  for (let r = 0; r < runs; r++) {
    const start = nowNs();
    await once(total);
    rates.push(total / (Number(nowNs() - start) / 1e9));
  }
  const cpu = process.cpuUsage(cpuStart);
  rates.sort((a, b) => a - b);
  return { opsPerSec: rates[Math.floor(rates.length / 2)]!, cpuUsPerOp: (cpu.user + cpu.system) / (total * runs) };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

export function throughputRatio(m: Measurement, floor: Measurement): number {
  return m.opsPerSec / floor.opsPerSec;
}

/** p50 latency of `m` over the floor's (lower is better). */
export const latencyRatio = (m: Measurement, floor: Measurement): number => (m.p50Us ?? Number.NaN) / (floor.p50Us ?? Number.NaN);

function median(values: Array<number | undefined>): number | undefined {
  const sorted = values.filter((v): v is number => v !== undefined && Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[Math.floor(sorted.length / 2)];
}

/** The median of each figure over several measurements of the same case. */
export function medianMeasurement(list: Measurement[]): Measurement {
  const m: Measurement = { opsPerSec: median(list.map((x) => x.opsPerSec)) ?? Number.NaN };
  const p50 = median(list.map((x) => x.p50Us));
  const p99 = median(list.map((x) => x.p99Us));
  const cpu = median(list.map((x) => x.cpuUsPerOp));
  const heap = median(list.map((x) => x.heapBytesPerOp));
  const instructions = median(list.map((x) => x.instructionsPerOp));
  if (p50 !== undefined) m.p50Us = p50;
  if (p99 !== undefined) m.p99Us = p99;
  if (cpu !== undefined) m.cpuUsPerOp = cpu;
  if (heap !== undefined) m.heapBytesPerOp = heap;
  if (instructions !== undefined) m.instructionsPerOp = instructions;
  return m;
}

/**
 * Runs every case once per round, alternating (floor, ours, others, floor, ours, …), and
 * combines each case's results with `combine` (the median of each figure): all cases see the
 * same machine load, so their ratios hold while absolute figures drift with it.
 */
export async function interleaved<K extends string, R>(
  cases: Record<K, () => Promise<R>>,
  rounds: number,
  combine: (results: R[]) => R,
): Promise<Record<K, R>> {
  const samples = new Map<K, R[]>();
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(cases) as Array<[K, () => Promise<R>]>) {
      const list = samples.get(name) ?? [];
      list.push(await run());
      samples.set(name, list);
    }
  }
  const out = {} as Record<K, R>;
  for (const [name, list] of samples) out[name] = combine(list);
  return out;
}

/** How one contender compared with the floor, block by block, in {@link measurePairedSequential}. */
export interface BlockRatios {
  /** Median over the blocks of (this contender's p50 in the block / the floor's p50 in the same block). */
  median: number;
  /** First and third quartiles of the block ratios. */
  q1: number;
  q3: number;
  /** Number of blocks, each one pair. */
  blocks: number;
}

/** What {@link measurePairedSequential} returns: figures per contender and ratios against the floor. */
export interface PairedSequential<K extends string> {
  /** Per contender, over all its timed round trips: p50/p99, ops/s of the median block, CPU per op. */
  measurements: Record<K | "floor", Measurement>;
  /** Per contender other than the floor: its block ratios against the floor. */
  ratios: Record<Exclude<K, "floor">, BlockRatios>;
}

export interface PairedOptions<K extends string> {
  /** Number of blocks; every contender runs once per block. */
  blocks?: number;
  /** Sequential operations per contender and block. */
  blockSize?: number;
  /** Unmeasured sequential operations per contender before the first block. */
  warmup?: number;
  /**
   * Per contender, a CPU time counter in µs of another process that works for this contender
   * alone (its peer process): read before and after each of the contender's turns and added to
   * its CPU per operation. When one read gives undefined, the contender's CPU is this process's.
   */
  peerCpuUs?: Partial<Record<K | "floor", () => number | undefined>>;
}

/**
 * Sequential latency of several contenders against a floor, paired block by block: all
 * contenders stay connected, and each block runs `blockSize` sequential operations of every
 * contender in turn (the order rotates by one on every block, so that with two contenders it
 * swaps). Each block gives, per contender, the p50 of its operations in that block divided by
 * the floor's p50 in the same block; the reported ratio is the median of these block ratios.
 *
 * Two contenders measured in separate time windows see different machine states (on a small
 * machine, the scheduler may place the processes on the same or on different CPUs from one
 * window to the next), which moves the ratio of their overall p50s from run to run. Within one
 * block both see nearly the same state, so the median block ratio holds where the ratio of
 * overall p50s does not.
 */
export async function measurePairedSequential<K extends string>(
  ops: Record<K | "floor", () => Promise<unknown>>,
  { blocks = 40, blockSize = 500, warmup = 1000, peerCpuUs = {} }: PairedOptions<K> = {},
): Promise<PairedSequential<K>> {
  type Name = K | "floor";
  const names = Object.keys(ops) as Name[];
  const op = (name: Name) => ops[name];
  for (const name of names) for (let i = 0; i < warmup; i++) await op(name)();
  const state = new Map<Name, { samples: number[]; blockP50: number[]; rates: number[]; cpuUs: number; peerUs: number | undefined }>(
    names.map((name) => [name, { samples: [], blockP50: [], rates: [], cpuUs: 0, peerUs: 0 }]),
  );
  for (let b = 0; b < blocks; b++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(b + j) % names.length]!;
      const run = op(name);
      const s = state.get(name)!;
      const readPeer = peerCpuUs[name];
      const peerBefore = readPeer?.();
      const cpuStart = process.cpuUsage();
      const block: number[] = [];
      const start = nowNs();
      for (let i = 0; i < blockSize; i++) {
        const t = nowNs();
        await run();
        block.push(Number(nowNs() - t) / 1000);
      }
      const seconds = Number(nowNs() - start) / 1e9;
      const cpu = process.cpuUsage(cpuStart);
      const peerAfter = readPeer?.();
      s.cpuUs += cpu.user + cpu.system;
      s.peerUs =
        s.peerUs === undefined || peerBefore === undefined || peerAfter === undefined ? undefined : s.peerUs + peerAfter - peerBefore;
      s.rates.push(blockSize / seconds);
      s.samples.push(...block);
      block.sort((x, y) => x - y);
      s.blockP50.push(percentile(block, 0.5));
    }
  }
  const total = blocks * blockSize;
  const measurements = {} as Record<Name, Measurement>;
  for (const [name, s] of state) {
    s.samples.sort((x, y) => x - y);
    s.rates.sort((x, y) => x - y);
    measurements[name] = {
      opsPerSec: percentile(s.rates, 0.5),
      p50Us: percentile(s.samples, 0.5),
      p99Us: percentile(s.samples, 0.99),
      cpuUsPerOp: (s.cpuUs + (s.peerUs ?? 0)) / total,
    };
  }
  const floor = state.get("floor")!.blockP50;
  const ratios = {} as Record<Exclude<K, "floor">, BlockRatios>;
  for (const [name, s] of state) {
    if (name === "floor") continue;
    const list = s.blockP50.map((p50, b) => p50 / floor[b]!).sort((x, y) => x - y);
    ratios[name as Exclude<K, "floor">] = {
      median: percentile(list, 0.5),
      q1: percentile(list, 0.25),
      q3: percentile(list, 0.75),
      blocks,
    };
  }
  return { measurements, ratios };
}

/** The note of a row whose ratio is a {@link BlockRatios} median: what the ratio is and its quartiles. */
export function pairedRatioNote(r: BlockRatios, of = "p50 / floor p50"): string {
  return `ratio = median over ${r.blocks} paired blocks of ${of} (q1–q3 ${r.q1.toFixed(2)}–${r.q3.toFixed(2)})`;
}

/** The names of one in-process transport suite's rows. */
export interface SplitRowLabels {
  floor: string;
  floorNotifications: string;
  ours: string;
  harnessSide: string;
  agentSide: string;
  notifications: string;
  notificationsNote: string;
}

/**
 * The standard rows of an in-process transport suite (client and server in one process):
 * floors, ours against them (targets), each side alone against the floor, notifications. The
 * sequential rows come from one {@link measurePairedSequential} over the floor, ours and the two
 * split pairs; their ratios are median block ratios.
 */
export function splitTransportRows(
  suite: string,
  labels: SplitRowLabels,
  paired: PairedSequential<"ours" | "serverOnly" | "clientOnly">,
  p: Record<"floor" | "ours" | "floorNote" | "oursNote", Measurement>,
): Row[] {
  const s = paired.measurements;
  const r = paired.ratios;
  return [
    { suite, case: `floor: ${labels.floor}, sequential`, measurement: s.floor },
    { suite, case: "floor: same, pipelined 64", measurement: p.floor },
    { suite, case: `floor: same, ${labels.floorNotifications}`, measurement: p.floorNote },
    {
      suite,
      case: `${labels.ours}, sequential`,
      measurement: s.ours,
      floor: s.floor,
      ratio: r.ours.median,
      target: "p50 <= 1.1x floor",
      note: pairedRatioNote(r.ours),
    },
    {
      suite,
      case: "same, pipelined 64",
      measurement: p.ours,
      floor: p.floor,
      ratio: throughputRatio(p.ours, p.floor),
      target: ">= 0.9x floor",
    },
    {
      suite,
      case: `split: ${labels.harnessSide}, sequential`,
      measurement: s.serverOnly,
      floor: s.floor,
      ratio: r.serverOnly.median,
      note: `harness side alone; ${pairedRatioNote(r.serverOnly)}`,
    },
    {
      suite,
      case: `split: ${labels.agentSide}, sequential`,
      measurement: s.clientOnly,
      floor: s.floor,
      ratio: r.clientOnly.median,
      note: `agent side alone; ${pairedRatioNote(r.clientOnly)}`,
    },
    {
      suite,
      case: `same, ${labels.notifications}`,
      measurement: p.oursNote,
      floor: p.floorNote,
      ratio: throughputRatio(p.oursNote, p.floorNote),
      note: labels.notificationsNote,
    },
  ];
}

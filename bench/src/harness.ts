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
 * floors, ours against them (targets), each side alone against the floor, notifications.
 */
export function splitTransportRows(
  suite: string,
  labels: SplitRowLabels,
  s: Record<"floor" | "ours" | "serverOnly" | "clientOnly", Measurement>,
  p: Record<"floor" | "ours" | "floorNote" | "oursNote", Measurement>,
): Row[] {
  return [
    { suite, case: `floor: ${labels.floor}, sequential`, measurement: s.floor },
    { suite, case: "floor: same, pipelined 64", measurement: p.floor },
    { suite, case: `floor: same, ${labels.floorNotifications}`, measurement: p.floorNote },
    {
      suite,
      case: `${labels.ours}, sequential`,
      measurement: s.ours,
      floor: s.floor,
      ratio: latencyRatio(s.ours, s.floor),
      target: "p50 <= 1.1x floor",
      note: "ratio = p50 / floor p50",
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
      ratio: latencyRatio(s.serverOnly, s.floor),
      note: "harness side alone; ratio = p50 / floor p50",
    },
    {
      suite,
      case: `split: ${labels.agentSide}, sequential`,
      measurement: s.clientOnly,
      floor: s.floor,
      ratio: latencyRatio(s.clientOnly, s.floor),
      note: "agent side alone; ratio = p50 / floor p50",
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

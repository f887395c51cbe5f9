/**
 * A fuzz campaign against one transport: batches of generated inputs (a seed per batch, so any
 * batch can be regenerated), each followed by the canaries, with the oracles checked after every
 * batch (alive, answers, resident memory) and at the end (clean exit, audit log verifies).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toAuditKey, verifyAuditLog } from "@ahp/audit";
import fc from "fast-check";
import { saveCorpusCase, type CorpusCase } from "./corpus.js";
import { HttpDriver } from "./drivers/http.js";
import { MemoryDriver } from "./drivers/memory.js";
import { NdjsonDriver } from "./drivers/ndjson.js";
import type { BatchResult, Driver, TransportName } from "./drivers/types.js";
import { WebSocketDriver } from "./drivers/ws.js";
import { HarnessProcess } from "./harness-process.js";
import { build, recipe, type FuzzInput } from "./mutate.js";

export const TRANSPORTS: readonly TransportName[] = ["stdio", "unix", "http", "ws", "memory"];
export const DEFAULT_RSS_LIMIT_BYTES = 768 * 1024 * 1024;

/** A harness under test and a driver connected to it. */
export interface Target {
  transport: TransportName;
  driver: Driver;
  /** The child process (absent for the in-process variant). */
  harness?: HarnessProcess;
  alive(): boolean;
  rssBytes(): number;
  /** Stops the harness and checks how it ended and its audit log; returns the problems. */
  finish(): Promise<{ problems: string[]; audit: string }>;
}

export async function startTarget(transport: TransportName): Promise<Target> {
  if (transport === "memory") {
    const dir = await mkdtemp(join(tmpdir(), "ahp-fuzz-mem-"));
    const key = toAuditKey(randomBytes(32));
    const auditFile = join(dir, "audit.log");
    const driver = await MemoryDriver.start({ auditFile, key });
    return {
      transport,
      driver,
      alive: () => true,
      rssBytes: () => process.memoryUsage.rss(),
      async finish() {
        await driver.close();
        const report = await verifyAuditLog(auditFile, key);
        await rm(dir, { recursive: true, force: true });
        const audit = `${report.ok ? "OK" : "BROKEN"}: ${report.records} records`;
        return { problems: report.ok ? [] : [`audit log does not verify: ${JSON.stringify(report).slice(0, 500)}`], audit };
      },
    };
  }
  const harness = await HarnessProcess.start({ [transport]: true });
  let driver: Driver;
  try {
    if (transport === "stdio") {
      const child = harness.child;
      driver = new NdjsonDriver("stdio", child.stdout!, child.stdin!, async () => void child.stdin!.end());
    } else if (transport === "unix") driver = await NdjsonDriver.unix(harness.urls.unix!);
    else if (transport === "http") driver = new HttpDriver(harness.urls.http!);
    else driver = new WebSocketDriver(harness.urls.ws!, harness);
  } catch (error) {
    await harness.dispose();
    throw error;
  }
  return {
    transport,
    driver,
    harness,
    alive: () => harness.alive,
    rssBytes: () => harness.rssBytes(),
    async finish() {
      const problems: string[] = [];
      await driver.close();
      const { code, signal } = await harness.stop();
      if (code !== 0) problems.push(`ahp serve exited with ${code ?? signal}`);
      if (harness.strayStderr.trim() !== "")
        problems.push(`ahp serve wrote to stderr outside its JSON logs: ${harness.strayStderr.slice(0, 1000)}`);
      const verified = await harness.verifyAudit();
      if (verified.code !== 0) problems.push(`ahp audit verify failed (${verified.code}): ${verified.output.slice(0, 1000)}`);
      await harness.dispose();
      return { problems, audit: verified.output.trim().split("\n").slice(-2).join(" | ") };
    },
  };
}

/** The inputs of batch `batch` of a campaign with `seed` (regenerable). */
export function batchInputs(seed: number, batch: number, size: number): FuzzInput[] {
  const recipes = fc.sample(recipe, { seed: (seed + batch * 7919) | 0, numRuns: size });
  return recipes.map((r, i) => build(r, `f${batch}-${i}`));
}

export interface CampaignOptions {
  /** Every batch goes to each of these targets, concurrently. */
  transports: readonly TransportName[];
  seed: number;
  /** Stop after this many inputs per transport (default 10,000)... */
  inputs?: number;
  /** ...or once this much time has passed, whichever comes first. */
  timeMs?: number;
  /** Inputs per pipelined batch. Default 100. */
  batchSize?: number;
  /** Save every failing batch here (reduced first when `reduce`). */
  corpusDir?: string;
  reduce?: boolean;
  rssLimitBytes?: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** Stop a transport at its first failing batch. Default true. */
  stopOnFailure?: boolean;
}

export interface CampaignFailure {
  batch: number;
  problems: string[];
  crashed: boolean;
  saved?: string;
}

export interface CampaignReport {
  transport: TransportName;
  seed: number;
  inputs: number;
  batches: number;
  durationMs: number;
  crashes: number;
  hangs: number;
  unanswered: number;
  failures: CampaignFailure[];
  peakRssBytes: number;
  /** Slowest batch (ms). */
  slowestBatchMs: number;
  audit: string;
  /** Problems found when the harness was stopped (exit code, audit log). */
  finalProblems: string[];
}

function emptyReport(transport: TransportName, seed: number): CampaignReport {
  return {
    transport,
    seed,
    inputs: 0,
    batches: 0,
    durationMs: 0,
    crashes: 0,
    hangs: 0,
    unanswered: 0,
    failures: [],
    peakRssBytes: 0,
    slowestBatchMs: 0,
    audit: "",
    finalProblems: [],
  };
}

/** Runs a campaign; each batch is generated once and sent to every transport's harness concurrently. */
export async function runCampaign(options: CampaignOptions): Promise<CampaignReport[]> {
  const { seed } = options;
  const maxInputs = options.inputs ?? 10_000;
  const batchSize = options.batchSize ?? 100;
  const rssLimit = options.rssLimitBytes ?? DEFAULT_RSS_LIMIT_BYTES;
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const deadline = options.timeMs === undefined ? Infinity : started + options.timeMs;
  log(`fuzz: seed ${seed}, batches of ${batchSize}, transports ${options.transports.join(", ")}`);
  const lanes = await Promise.all(
    options.transports.map(async (transport) => ({
      report: emptyReport(transport, seed),
      target: await startTarget(transport),
      done: false,
    })),
  );
  try {
    let sent = 0;
    for (let batch = 0; sent < maxInputs && Date.now() < deadline && lanes.some((l) => !l.done); batch++) {
      const units = batchInputs(seed, batch, Math.min(batchSize, maxInputs - sent));
      sent += units.length;
      await Promise.all(
        lanes
          .filter((lane) => !lane.done)
          .map(async (lane) => {
            const { report } = lane;
            const transport = report.transport;
            const result = await runBatch(lane.target, units, `${batch}`, rssLimit);
            report.inputs += units.length;
            report.batches++;
            report.unanswered += result.unanswered;
            report.slowestBatchMs = Math.max(report.slowestBatchMs, result.elapsedMs);
            report.peakRssBytes = Math.max(report.peakRssBytes, lane.target.rssBytes());
            if (result.problems.length === 0) return;
            const crashed = !lane.target.alive();
            if (crashed) report.crashes++;
            if (result.unanswered > 0 && !crashed) report.hangs++;
            const failure: CampaignFailure = { batch, problems: result.problems, crashed };
            log(`fuzz ${transport}: batch ${batch} FAILED (reproduce: pnpm fuzz --transport ${transport} --seed ${seed} --batch ${batch})`);
            for (const p of result.problems.slice(0, 10)) log(`  ${p}`);
            if (crashed || result.unanswered > 0) {
              // Start over: the harness is gone or may still be busy with the batch.
              await lane.target.finish().catch(() => undefined);
              lane.target = await startTarget(transport);
            }
            if (options.corpusDir !== undefined) {
              const inputs = options.reduce ? await reduceBatch(transport, units, rssLimit, log) : units;
              failure.saved = await saveCorpusCase(options.corpusDir, { transport, seed, batch, problems: result.problems, inputs });
              log(`  saved ${inputs.length} input(s) to ${failure.saved}`);
            }
            report.failures.push(failure);
            if (options.stopOnFailure !== false) lane.done = true;
          }),
      );
    }
  } finally {
    await Promise.all(
      lanes.map(async ({ report, target }) => {
        const final = await target.finish();
        report.finalProblems = final.problems;
        report.audit = final.audit;
        report.durationMs = Date.now() - started;
        log(
          `fuzz ${report.transport}: ${report.inputs} inputs in ${report.batches} batches, ${(report.durationMs / 1000).toFixed(1)} s; ` +
            `crashes ${report.crashes}, hangs ${report.hangs}, unanswered ${report.unanswered}, failing batches ${report.failures.length}; ` +
            `peak RSS ${(report.peakRssBytes / 1048576).toFixed(0)} MiB; audit ${report.audit}` +
            (report.finalProblems.length > 0 ? `; AT EXIT: ${report.finalProblems.join("; ")}` : ""),
        );
      }),
    );
  }
  return lanes.map((l) => l.report);
}

/** Runs one batch and the per-batch oracles. */
export async function runBatch(
  target: Target,
  units: readonly FuzzInput[],
  tag: string,
  rssLimit = DEFAULT_RSS_LIMIT_BYTES,
): Promise<BatchResult> {
  let result: BatchResult;
  try {
    result = await target.driver.run(units, tag);
  } catch (error) {
    result = { problems: [`driver failed: ${(error as Error).message}`], unanswered: 0, elapsedMs: 0 };
  }
  if (!target.alive()) result.problems.push(`the harness process died: ${target.harness?.strayStderr.slice(0, 2000) ?? ""}`);
  const rss = target.rssBytes();
  if (rss > rssLimit)
    result.problems.push(`resident memory ${(rss / 1048576).toFixed(0)} MiB exceeds ${(rssLimit / 1048576).toFixed(0)} MiB`);
  return result;
}

/**
 * Shrinks a failing batch by halving: each half is replayed against a fresh harness, and the
 * search continues in a half that still fails. Returns the smallest failing part found.
 */
export async function reduceBatch(
  transport: TransportName,
  units: readonly FuzzInput[],
  rssLimit: number,
  log: (line: string) => void,
): Promise<FuzzInput[]> {
  let current = [...units];
  const fails = async (part: FuzzInput[]) => {
    const target = await startTarget(transport);
    try {
      const result = await runBatch(target, part, "reduce", rssLimit);
      const final = await target.finish();
      return result.problems.length > 0 || final.problems.length > 0;
    } catch {
      return true;
    }
  };
  while (current.length > 1) {
    const half = Math.ceil(current.length / 2);
    const [a, b] = [current.slice(0, half), current.slice(half)];
    if (await fails(a)) current = a;
    else if (await fails(b)) current = b;
    else break;
    log(`  reduced to ${current.length} input(s)`);
  }
  return current;
}

/** Replays corpus cases on one target; returns the problems per case. */
export async function replayCorpus(target: Target, cases: readonly CorpusCase[]): Promise<Array<{ name: string; problems: string[] }>> {
  const out: Array<{ name: string; problems: string[] }> = [];
  for (const c of cases) {
    const result = await runBatch(target, c.inputs, `corpus-${c.name}`);
    out.push({ name: c.name, problems: result.problems });
  }
  return out;
}

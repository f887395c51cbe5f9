/**
 * `pnpm fuzz`: a fuzz campaign against `ahp serve` (built-in default policy, audit log on) over
 * stdio, a Unix socket, HTTP and WebSocket at once. Failing batches are shrunk and saved under
 * `packages/fuzz/corpus/`, which the test suite replays.
 *
 *   pnpm fuzz --time 10m                       run for ten minutes (seed from the clock)
 *   pnpm fuzz --inputs 50000 --seed 7          50,000 inputs per transport, seed 7
 *   pnpm fuzz --transport http --seed 7 --batch 12   replay one batch of a campaign
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { batchInputs, runBatch, runCampaign, startTarget, TRANSPORTS, type TransportName } from "../src/index.js";

const usage = `Usage: pnpm fuzz [--time 10m] [--inputs N] [--transport stdio,unix,http,ws,memory] [--seed N]
                 [--batch-size N] [--batch N] [--corpus DIR] [--no-save] [--keep-going]

  --time D          stop after this long (e.g. 90s, 10m, 1h); with --inputs, whichever comes first
  --inputs N        inputs per transport (default 10000, or unlimited with --time)
  --transport LIST  comma-separated (default stdio,unix,http,ws)
  --seed N          campaign seed (default: from the clock; printed)
  --batch-size N    inputs per pipelined batch (default 100)
  --batch N         only replay batch N of the campaign with --seed (one transport)
  --corpus DIR      where failing inputs are saved (default packages/fuzz/corpus)
  --no-save         do not save failing inputs
  --keep-going      continue a transport after a failing batch
`;

function duration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (m === null) throw new Error(`--time expects a duration like 90s or 10m, got ${JSON.stringify(text)}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "ms" | "s" | "m" | "h"];
  return Number(m[1]) * unit;
}

function positiveInt(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name} expects a non-negative integer, got ${JSON.stringify(text)}`);
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== "--"),
    options: {
      time: { type: "string" },
      inputs: { type: "string" },
      transport: { type: "string" },
      seed: { type: "string" },
      "batch-size": { type: "string" },
      batch: { type: "string" },
      corpus: { type: "string" },
      "no-save": { type: "boolean" },
      "keep-going": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  const transports = (values.transport ?? "stdio,unix,http,ws").split(",").map((t) => t.trim()) as TransportName[];
  for (const t of transports) if (!TRANSPORTS.includes(t)) throw new Error(`unknown transport ${t}; one of ${TRANSPORTS.join(", ")}`);
  const seed = positiveInt("seed", values.seed) ?? Date.now() % 1_000_000_000;
  const batchSize = positiveInt("batch-size", values["batch-size"]) ?? 100;
  const log = (line: string) => process.stdout.write(`${line}\n`);

  const only = positiveInt("batch", values.batch);
  if (only !== undefined) {
    if (transports.length !== 1) throw new Error("--batch replays on one --transport");
    const target = await startTarget(transports[0]!);
    const result = await runBatch(target, batchInputs(seed, only, batchSize), `replay-${only}`);
    const final = await target.finish();
    const problems = [...result.problems, ...final.problems];
    log(problems.length === 0 ? `batch ${only} of seed ${seed} passes on ${transports[0]}` : problems.join("\n"));
    return problems.length === 0 ? 0 : 1;
  }

  const timeMs = values.time === undefined ? undefined : duration(values.time);
  const inputs = positiveInt("inputs", values.inputs) ?? (timeMs === undefined ? 10_000 : Number.MAX_SAFE_INTEGER);
  const corpusDir = values["no-save"] ? undefined : (values.corpus ?? fileURLToPath(new URL("../corpus", import.meta.url)));
  const reports = await runCampaign({
    transports,
    seed,
    inputs,
    batchSize,
    ...(timeMs === undefined ? {} : { timeMs }),
    ...(corpusDir === undefined ? {} : { corpusDir, reduce: true }),
    stopOnFailure: values["keep-going"] !== true,
    log,
  });
  log("");
  log("transport  inputs   crashes  hangs  unanswered  failing batches  peak RSS");
  for (const r of reports) {
    log(
      `${r.transport.padEnd(10)} ${String(r.inputs).padEnd(8)} ${String(r.crashes).padEnd(8)} ${String(r.hangs).padEnd(6)} ` +
        `${String(r.unanswered).padEnd(11)} ${String(r.failures.length).padEnd(16)} ${(r.peakRssBytes / 1048576).toFixed(0)} MiB`,
    );
  }
  const failed = reports.some((r) => r.failures.length > 0 || r.finalProblems.length > 0);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`pnpm fuzz: ${(error as Error).message}\n${usage}`);
    process.exit(2);
  },
);

/**
 * `pnpm soak`: a long run of `ahp serve` (built-in default policy, audit log on) per transport:
 * 64 agents (64 connections; over stdio they share the one connection) send `pre_action`
 * events one at a time until 1,000,000 events have been answered. Samples the harness's
 * resident memory and V8 heap every second, computes the p99 latency of every window of
 * 100,000 events, counts errors (a failed call or a wrong decision), verifies the audit log at
 * the end, and writes `soak.json` and `soak.svg` (memory over time, p99 per window).
 *
 *   pnpm soak                                   1,000,000 events per transport, 64 agents
 *   pnpm soak --events 200000 --transport http  a shorter run on one transport
 */
import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { connectAgent, HarnessProcess, preAction, type RpcConnection } from "../src/index.js";

type Transport = "stdio" | "unix" | "http" | "ws";

interface Sample {
  t: number;
  rssMiB: number;
  heapMiB?: number;
  events: number;
}

interface TransportResult {
  transport: Transport;
  events: number;
  agents: number;
  seconds: number;
  eventsPerSecond: number;
  errors: number;
  firstErrors: string[];
  p99PerWindowMs: number[];
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  peakRssMiB: number;
  peakHeapMiB: number;
  samples: Sample[];
  audit: string;
  exitCode: number | null;
}

// Reports the harness's V8 heap on its stderr as a JSON log line every second (parsed by HarnessProcess).
const HEAP_PROBE =
  "data:text/javascript,setInterval(()=>{const m=process.memoryUsage();process.stderr.write(JSON.stringify({level:'debug',msg:'soak-memory',heapUsed:m.heapUsed,rss:m.rss})+'\\n')},1000).unref()";

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function soak(
  transport: Transport,
  total: number,
  agents: number,
  window: number,
  log: (l: string) => void,
): Promise<TransportResult> {
  const h = await HarnessProcess.start({ [transport]: true, nodeArgs: ["--import", HEAP_PROBE], args: ["--log-level", "debug"] });
  const latencies = new Float64Array(total);
  let issued = 0;
  let done = 0;
  let errors = 0;
  const firstErrors: string[] = [];
  const samples: Sample[] = [];
  const started = performance.now();
  const heap = () => {
    for (let i = h.logs.length - 1; i >= 0; i--) if (h.logs[i]!.msg === "soak-memory") return Number(h.logs[i]!.heapUsed);
    return undefined;
  };
  const sampler = setInterval(() => {
    const heapUsed = heap();
    samples.push({
      t: (performance.now() - started) / 1000,
      rssMiB: h.rssBytes() / 1048576,
      ...(heapUsed === undefined ? {} : { heapMiB: heapUsed / 1048576 }),
      events: done,
    });
    // Keep the parsed log lines from growing without bound over a long run.
    if (h.logs.length > 10_000) h.logs.splice(0, h.logs.length - 100);
  }, 1000);
  let lastReport = 0;
  const agent = async (rpc: RpcConnection, n: number) => {
    for (;;) {
      const i = issued++;
      if (i >= total) return;
      const destructive = i % 10 === 9;
      const t0 = performance.now();
      try {
        const answer = await rpc.call("ahp/event", preAction(destructive ? "rm -rf /" : `ls -la src/${i % 100}`, `soak-${n}`), 30_000);
        const decision = (answer.result as { decision?: unknown } | undefined)?.decision;
        if (decision !== (destructive ? "block" : "allow")) {
          errors++;
          if (firstErrors.length < 5) firstErrors.push(`wrong answer: ${JSON.stringify(answer).slice(0, 200)}`);
        }
      } catch (error) {
        errors++;
        if (firstErrors.length < 5) firstErrors.push((error as Error).message);
      }
      latencies[done++] = performance.now() - t0;
      if (done - lastReport >= window) {
        lastReport = done;
        log(
          `soak ${transport}: ${done} events, ${(done / ((performance.now() - started) / 1000)).toFixed(0)}/s, RSS ${(h.rssBytes() / 1048576).toFixed(0)} MiB, errors ${errors}`,
        );
      }
    }
  };
  const connections = await Promise.all(Array.from({ length: agents }, () => connectAgent(h, transport)));
  await Promise.all(connections.map((rpc, n) => agent(rpc, n)));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await Promise.all([...new Set(connections)].filter(() => transport !== "stdio").map((c) => c.close()));
  const { code } = await h.stop(60_000);
  const verified = await h.verifyAudit();
  await h.dispose();
  const p99PerWindowMs: number[] = [];
  for (let start = 0; start < done; start += window)
    p99PerWindowMs.push(percentile(latencies.slice(start, Math.min(done, start + window)).sort(), 99));
  const all = latencies.slice(0, done).sort();
  const heaps = samples.map((s) => s.heapMiB ?? 0);
  return {
    transport,
    events: done,
    agents,
    seconds,
    eventsPerSecond: done / seconds,
    errors,
    firstErrors,
    p99PerWindowMs,
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    maxMs: percentile(all, 100),
    peakRssMiB: h.peakRssBytes / 1048576,
    peakHeapMiB: Math.max(0, ...heaps),
    samples,
    audit: `${verified.code === 0 ? "" : `FAILED (${verified.code}) `}${verified.output.trim().split("\n").slice(-2).join(" | ")}`,
    exitCode: code,
  };
}

/** One row per transport: memory over time (RSS, heap) and p99 per window. */
function svg(results: readonly TransportResult[], window: number): string {
  const W = 1100;
  const rowH = 230;
  const H = 40 + rowH * results.length;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="15">ahp serve soak: ${results[0]?.agents ?? 0} agents, audit on; memory over time and p99 latency per ${window.toLocaleString("en")} events</text>`,
  ];
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  results.forEach((r, row) => {
    const y0 = 40 + row * rowH;
    const plot = (
      x: number,
      w: number,
      title: string,
      draw: (px: (v: number) => number, py: (v: number) => number) => string[],
      xMax: number,
      yMax: number,
      xLabel: string,
      yLabel: string,
    ) => {
      const left = x + 50;
      const top = y0 + 25;
      const pw = w - 70;
      const ph = rowH - 70;
      const px = (v: number) => left + (xMax === 0 ? 0 : (v / xMax) * pw);
      const py = (v: number) => top + ph - (yMax === 0 ? 0 : (v / yMax) * ph);
      out.push(`<text x="${x + 10}" y="${y0 + 15}" font-weight="bold">${esc(title)}</text>`);
      out.push(`<rect x="${left}" y="${top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`);
      for (let k = 0; k <= 4; k++) {
        const v = (yMax * k) / 4;
        out.push(`<text x="${left - 5}" y="${py(v) + 4}" text-anchor="end" fill="#555">${v.toFixed(v < 10 ? 1 : 0)}</text>`);
        out.push(`<line x1="${left}" x2="${left + pw}" y1="${py(v)}" y2="${py(v)}" stroke="#eee"/>`);
      }
      out.push(
        `<text x="${left + pw / 2}" y="${top + ph + 28}" text-anchor="middle" fill="#555">${esc(xLabel)} (max ${xMax.toFixed(0)})</text>`,
      );
      out.push(
        `<text x="${x + 12}" y="${top + ph / 2}" fill="#555" transform="rotate(-90 ${x + 12} ${top + ph / 2})" text-anchor="middle">${esc(yLabel)}</text>`,
      );
      out.push(...draw(px, py));
    };
    const tMax = Math.max(1, ...r.samples.map((s) => s.t));
    const mMax = Math.max(1, ...r.samples.map((s) => Math.max(s.rssMiB, s.heapMiB ?? 0))) * 1.1;
    const line = (points: Array<[number, number]>, colour: string, px: (v: number) => number, py: (v: number) => number) =>
      `<polyline fill="none" stroke="${colour}" stroke-width="1.5" points="${points.map(([a, b]) => `${px(a).toFixed(1)},${py(b).toFixed(1)}`).join(" ")}"/>`;
    plot(
      0,
      W / 2,
      `${r.transport}: ${r.events.toLocaleString("en")} events in ${r.seconds.toFixed(0)} s, ${r.errors} errors; RSS (blue), heap used (orange)`,
      (px, py) => [
        line(
          r.samples.map((s) => [s.t, s.rssMiB]),
          "#1f77b4",
          px,
          py,
        ),
        line(
          r.samples.filter((s) => s.heapMiB !== undefined).map((s) => [s.t, s.heapMiB!]),
          "#ff7f0e",
          px,
          py,
        ),
      ],
      tMax,
      mMax,
      "seconds",
      "MiB",
    );
    const pMax = Math.max(1, ...r.p99PerWindowMs.filter(Number.isFinite)) * 1.1;
    plot(
      W / 2,
      W / 2,
      `${r.transport}: p99 per window (overall p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms)`,
      (px, py) => {
        const bw = (px(1) - px(0)) * 0.8;
        return r.p99PerWindowMs.map(
          (v, i) =>
            `<rect x="${px(i).toFixed(1)}" y="${py(v).toFixed(1)}" width="${bw.toFixed(1)}" height="${(py(0) - py(v)).toFixed(1)}" fill="#2ca02c"/>`,
        );
      },
      r.p99PerWindowMs.length,
      pMax,
      `window of ${window.toLocaleString("en")} events`,
      "p99 ms",
    );
  });
  out.push("</svg>");
  return out.join("\n");
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== "--"),
    options: {
      events: { type: "string" },
      agents: { type: "string" },
      window: { type: "string" },
      transport: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(
      "Usage: pnpm soak [--events 1000000] [--agents 64] [--window 100000] [--transport stdio,unix,http,ws] [--out DIR]\n",
    );
    return 0;
  }
  const total = Number(values.events ?? 1_000_000);
  const agents = Number(values.agents ?? 64);
  const window = Number(values.window ?? Math.min(100_000, Math.max(1, Math.floor(total / 10))));
  const transports = (values.transport ?? "stdio,unix,http,ws").split(",") as Transport[];
  const out = resolve(values.out ?? join(tmpdir(), `ahp-soak-${new Date().toISOString().replace(/[:.]/g, "-")}`));
  await mkdir(out, { recursive: true });
  const log = (l: string) => process.stdout.write(`${l}\n`);
  const results: TransportResult[] = [];
  for (const transport of transports) {
    log(`soak ${transport}: ${total} events, ${agents} agents`);
    const r = await soak(transport, total, agents, window, log);
    results.push(r);
    log(
      `soak ${transport}: ${r.events} events in ${r.seconds.toFixed(1)} s (${r.eventsPerSecond.toFixed(0)}/s), errors ${r.errors}, ` +
        `p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, max ${r.maxMs.toFixed(1)} ms, ` +
        `p99 per window [${r.p99PerWindowMs.map((v) => v.toFixed(1)).join(", ")}] ms, peak RSS ${r.peakRssMiB.toFixed(0)} MiB, peak heap ${r.peakHeapMiB.toFixed(0)} MiB; ` +
        `exit ${r.exitCode}; audit ${r.audit}`,
    );
    for (const e of r.firstErrors) log(`  error: ${e}`);
    await writeFile(join(out, "soak.json"), `${JSON.stringify({ agents, window, results }, null, 1)}\n`);
    await writeFile(join(out, "soak.svg"), svg(results, window));
  }
  log(`soak: results in ${join(out, "soak.json")}, plot in ${join(out, "soak.svg")}`);
  return results.every((r) => r.errors === 0 && r.exitCode === 0 && !r.audit.startsWith("FAILED")) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`pnpm soak: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(2);
  },
);

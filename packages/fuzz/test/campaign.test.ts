/**
 * The CI fuzz budget (issue: "at least 10,000 inputs per transport within a few minutes"):
 * 10,000 generated inputs sent to a real `ahp serve` (built-in default policy, audit log on)
 * over stdio, a Unix socket, HTTP and WebSocket, each batch to the four harnesses at once, plus
 * the in-process composition where `Object.prototype` itself is watched. After every batch of
 * 100: the harness is alive, every request got exactly one well-formed answer of the kind the
 * specification requires (or the connection was closed and the harness logged why), the canary
 * requests are answered correctly (which they would not be with a polluted `Object.prototype`),
 * resident memory is under the bound; at the end the harness exits cleanly and
 * `ahp audit verify` accepts its log. `FUZZ_SEED` picks another campaign.
 */
import { describe, expect, it } from "vitest";
import { runCampaign, type CampaignReport } from "../src/index.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125);
const INPUTS = 10_000;

function summary(r: CampaignReport): string {
  return (
    `${r.transport}: ${r.inputs} inputs, ${(r.durationMs / 1000).toFixed(1)} s, crashes ${r.crashes}, hangs ${r.hangs}, ` +
    `unanswered ${r.unanswered}, peak RSS ${(r.peakRssBytes / 1048576).toFixed(0)} MiB, slowest batch ${r.slowestBatchMs.toFixed(0)} ms`
  );
}

function expectClean(r: CampaignReport): void {
  const failures = r.failures.map((f) => `batch ${f.batch}: ${f.problems.slice(0, 5).join(" | ")}`);
  expect({ transport: r.transport, failures, atExit: r.finalProblems }).toEqual({ transport: r.transport, failures: [], atExit: [] });
  expect(r.inputs).toBe(INPUTS);
  expect(r.crashes + r.hangs + r.unanswered).toBe(0);
}

describe(`fuzz campaign, seed ${SEED}`, () => {
  it(`${INPUTS} inputs per transport against ahp serve over stdio, Unix socket, HTTP, WebSocket and in process`, async () => {
    const lines: string[] = [];
    const reports = await runCampaign({
      transports: ["stdio", "unix", "http", "ws", "memory"],
      seed: SEED,
      inputs: INPUTS,
      log: (l) => lines.push(l),
    });
    console.log(reports.map(summary).join("\n"));
    expect(reports.map((r) => r.transport)).toEqual(["stdio", "unix", "http", "ws", "memory"]);
    for (const r of reports) expectClean(r);
    // The audit log recorded the campaign's events (not an empty log that trivially verifies).
    for (const r of reports) expect(r.audit).toMatch(/OK/);
  });
});

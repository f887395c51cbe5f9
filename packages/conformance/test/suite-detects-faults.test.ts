/**
 * A suite that cannot fail is worthless: run it against harnesses with one deliberate fault each
 * (in a child vitest process) and check that the checks meant to catch that fault fail, while
 * the intact harness passes everything.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAULTS } from "./fixtures/faults.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const vitestBin = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");

interface AssertionResult {
  ancestorTitles: string[];
  title: string;
  status: "passed" | "failed" | "skipped" | "pending" | "todo";
}

/** Failed checklist numbers (and extra ids) per fault. */
const failures = new Map<string, Set<string>>();
const passed = new Map<string, number>();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-conformance-"));
  const output = join(dir, "report.json");
  const log = await new Promise<string>((resolve) => {
    execFile(
      process.execPath,
      [
        vitestBin,
        "run",
        "--config",
        "test/fixtures/vitest.broken.config.ts",
        "--root",
        packageDir,
        "--maxWorkers=3",
        "--reporter=json",
        `--outputFile=${output}`,
      ],
      { cwd: packageDir, env: { ...process.env, CI: "true", FORCE_COLOR: "0" }, timeout: 480_000, maxBuffer: 64 * 1024 * 1024 },
      // Failing tests make the run exit non-zero: that is the point.
      (_error, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
    );
  });
  let report: { testResults: Array<{ assertionResults: AssertionResult[] }> };
  try {
    report = JSON.parse(await readFile(output, "utf8")) as typeof report;
  } catch (error) {
    throw new Error(`the child vitest run left no report (${String(error)}):\n${log.slice(-4000)}`, { cause: error });
  }
  for (const file of report.testResults) {
    for (const result of file.assertionResults) {
      const fault = result.ancestorTitles[0]!;
      if (result.status === "passed") passed.set(fault, (passed.get(fault) ?? 0) + 1);
      if (result.status !== "failed") continue;
      const id = /^§17\.(\d+) /.exec(result.title)?.[1] ?? /^\[([a-z0-9-]+)\]/.exec(result.title)?.[1] ?? result.title;
      if (!failures.has(fault)) failures.set(fault, new Set());
      failures.get(fault)!.add(id);
    }
  }
}, 120_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  // The child run takes minutes on a busy machine.
}, 540_000);

describe("the suite detects faulty harnesses", () => {
  it("passes the intact harness completely", () => {
    expect([...(failures.get("intact") ?? [])]).toEqual([]);
    expect(passed.get("intact")).toBeGreaterThanOrEqual(70);
  });

  for (const [fault, { caughtBy: items }] of Object.entries(FAULTS)) {
    if (fault === "intact") continue;
    it(`${fault}: fails ${items.join(", ")}`, () => {
      const failed = failures.get(fault) ?? new Set<string>();
      for (const item of items) expect(failed.has(item), `${fault} is caught by ${item} (failed: ${[...failed].join(", ")})`).toBe(true);
    });
  }
});

/**
 * Every benchmark suite still runs and reports what it claims: `pnpm bench --quick` (short runs,
 * figures not meaningful) in a child process, rows read back from `--json`.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Row } from "../src/harness.js";

const benchDir = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "ahp-bench-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Suites with a test file of their own here (e.g. `aarts-hook.test.ts`) are run there, not twice. */
const dedicated = new Set(
  readdirSync(join(benchDir, "test"))
    .filter((f) => f.endsWith(".test.ts") && f !== "suites.test.ts")
    .map((f) => f.replace(/\.test\.ts$/, "")),
);
const allSuiteFiles = readdirSync(join(benchDir, "src", "suites"))
  .filter((f) => /\.m?ts$/.test(f))
  .map((f) => f.replace(/\.m?ts$/, ""))
  .sort();
const suiteFiles = allSuiteFiles.filter((f) => !dedicated.has(f));

/** One suite, quick, in its own child process: each gets its own generous limit on a loaded machine. */
function runQuick(file: string): Promise<{ rows: Row[]; stdout: string }> {
  const out = join(dir, `${file}.json`);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/run.ts", "--quick", "--json", out, file],
      // The instructions suite runs two processes under callgrind (about 20 s of CPU time in all):
      // minutes of wall-clock time on a loaded machine.
      { cwd: benchDir, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`bench ${file} failed: ${error.message}\n${stderr}`));
        else resolve({ rows: JSON.parse(readFileSync(out, "utf8")) as Row[], stdout });
      },
    );
  });
}

const rows: Row[] = [];

describe.sequential("pnpm bench --quick", () => {
  for (const file of suiteFiles) {
    it(`${file}: runs and reports a finite figure on every row, and a ratio wherever there is a target`, async () => {
      const { rows: suiteRows, stdout } = await runQuick(file);
      expect(suiteRows.length, file).toBeGreaterThan(0);
      expect(new Set(suiteRows.map((r) => r.suite)).size, file).toBe(1);
      expect(stdout).toMatch(/^suite\s+case\s+ops\/s/m);
      for (const row of suiteRows) {
        if (row.note?.startsWith("skipped:")) continue;
        const m = row.measurement;
        const figure = Number.isFinite(m.opsPerSec) ? m.opsPerSec : (m.heapBytesPerOp ?? m.instructionsPerOp);
        expect(Number.isFinite(figure), `${row.suite}: ${row.case}`).toBe(true);
        if (row.target !== undefined) expect(Number.isFinite(row.ratio), `${row.suite}: ${row.case}`).toBe(true);
      }
      rows.push(...suiteRows);
    });
  }

  it("every suite ran, and the suites with a structure to keep still have it", () => {
    const seen = new Set(rows.map((r) => r.suite));
    expect(seen.size).toBe(suiteFiles.length);
    for (const name of ["core", "memory", "stdio", "stdio-layers", "unix", "http", "ws", "policy", "instructions"])
      expect(seen).toContain(name);
    // Every suite is run by some test: here, or by its own file.
    for (const file of dedicated) expect(allSuiteFiles).toContain(file);
    // The layer suite: every harness and agent variant against its side's base, then the two estimates.
    const layers = rows.filter((r) => r.suite === "stdio-layers");
    expect(layers.map((r) => r.case.split(":")[0])).toEqual([
      ...Array<string>(8).fill("harness side"),
      ...Array<string>(8).fill("agent side"),
      "both sides",
      "both sides",
    ]);
    for (const row of layers.filter((r) => !r.note?.startsWith("base of this side"))) expect(Number.isFinite(row.ratio)).toBe(true);
    // The transport suites compare against their floor and, on stdio, vscode-jsonrpc.
    expect(rows.some((r) => r.suite === "stdio" && r.case.includes("vscode-jsonrpc") && r.target === ">= 3x")).toBe(true);
    // Instruction counts where valgrind is installed, one row saying why not where it is not.
    const instructions = rows.filter((r) => r.suite === "instructions");
    if (spawnSync("sh", ["-c", "command -v valgrind"]).status === 0) {
      // In memory, then over NDJSON streams: each a floor row and ours against it.
      expect(instructions.map((r) => r.measurement.instructionsPerOp! > 0)).toEqual([true, true, true, true]);
      for (const [floor, ours] of [
        [0, 1],
        [2, 3],
      ] as const) {
        expect(instructions[ours]!.ratio).toBeCloseTo(
          instructions[ours]!.measurement.instructionsPerOp! / instructions[floor]!.measurement.instructionsPerOp!,
        );
      }
    } else {
      expect(instructions).toHaveLength(1);
      expect(instructions[0]!.note).toMatch(/^skipped: valgrind is not installed/);
    }
  });
});

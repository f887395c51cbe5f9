/**
 * `pnpm bench aarts-hook --quick` still runs and reports what it claims: the floor, the
 * handshake-only limit and the three ways to run the hook, each a p50 with a ratio to the floor
 * measured in the same run (figures not meaningful with so few spawns).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Row } from "../src/harness.js";

const benchDir = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "ahp-bench-hook-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runSuite(): Promise<Row[]> {
  const out = join(dir, "rows.json");
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/run.ts", "aarts-hook", "--quick", "--json", out],
      { cwd: benchDir, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 },
      (error, _stdout, stderr) => {
        if (error) reject(new Error(`bench failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(readFileSync(out, "utf8")) as Row[]);
      },
    );
  });
}

describe("pnpm bench aarts-hook --quick", () => {
  it("reports the floor, the limit and every way to run the hook against the floor of the same run", async () => {
    const rows = await runSuite();
    expect(rows.map((r) => r.suite)).toEqual(Array<string>(5).fill("aarts-hook"));
    expect(rows.map((r) => r.case.split(":")[0])).toEqual([
      "floor",
      "limit",
      "claude-code PreToolUse, allow",
      "claude-code PreToolUse, allow",
      "claude-code PreToolUse, allow",
    ]);
    expect(rows.slice(2).map((r) => r.case.split(": ")[1])).toEqual([
      "installer command (ahp-aarts-hook, code cache)",
      "node dist/bin.cjs (no code cache)",
      "ahp hook claude-code",
    ]);
    const floor = rows[0]!.measurement;
    expect(floor.p50Us).toBeGreaterThan(0);
    for (const row of rows.slice(1)) {
      expect(row.floor).toEqual(floor);
      expect(row.ratio).toBeCloseTo(row.measurement.p50Us! / floor.p50Us!);
      expect(row.measurement.p99Us).toBeGreaterThanOrEqual(row.measurement.p50Us!);
    }
    expect(rows[2]!.target).toBe("<= 1.25x p50");
  });
});

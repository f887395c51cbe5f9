/**
 * Every benchmark suite still runs and reports what it claims: `pnpm bench --quick` (short runs,
 * figures not meaningful) in a child process, rows read back from `--json`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Row } from "../src/harness.js";

const benchDir = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "ahp-bench-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runQuick(): Promise<{ rows: Row[]; stdout: string }> {
  const out = join(dir, "rows.json");
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/run.ts", "--quick", "--json", out],
      { cwd: benchDir, maxBuffer: 16 * 1024 * 1024, timeout: 110_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`bench failed: ${error.message}\n${stderr}`));
        else resolve({ rows: JSON.parse(readFileSync(out, "utf8")) as Row[], stdout });
      },
    );
  });
}

describe("pnpm bench --quick", () => {
  it("runs every suite and reports a finite figure on every row, and a ratio wherever there is a target", async () => {
    const suites = readdirSync(join(benchDir, "src", "suites")).filter((f) => f.endsWith(".ts"));
    const { rows, stdout } = await runQuick();
    const seen = new Set(rows.map((r) => r.suite));
    expect(seen.size).toBe(suites.length);
    for (const name of ["core", "memory", "stdio", "unix", "http", "ws", "policy", "aarts-hook"]) expect(seen).toContain(name);
    for (const row of rows) {
      const m = row.measurement;
      const figure = Number.isFinite(m.opsPerSec) ? m.opsPerSec : m.heapBytesPerOp;
      expect(Number.isFinite(figure), `${row.suite}: ${row.case}`).toBe(true);
      if (row.target !== undefined) expect(Number.isFinite(row.ratio), `${row.suite}: ${row.case}`).toBe(true);
    }
    // The transport suites compare against their floor and, on stdio, vscode-jsonrpc.
    expect(rows.some((r) => r.suite === "stdio" && r.case.includes("vscode-jsonrpc") && r.target === ">= 2x")).toBe(true);
    expect(stdout).toMatch(/^suite\s+case\s+ops\/s/m);
  });
});

/**
 * `pnpm bench`: runs every suite in src/suites (or those named on the command line) and prints
 * one table (a suite is named by its name or its file's, e.g. `core` or `core-roundtrip`). `--quick` shortens every run (used by tests to prove the suites still execute).
 * `--json FILE` also writes the rows as JSON.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Row, Suite } from "./harness.js";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const jsonIndex = args.indexOf("--json");
const jsonFile = jsonIndex >= 0 ? args[jsonIndex + 1] : undefined;
const wanted = args.filter((a, i) => !a.startsWith("--") && (jsonIndex === -1 || i !== jsonIndex + 1));

const files = readdirSync(join(here, "suites"))
  .filter((f) => /\.(ts|mts)$/.test(f))
  .sort();

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || Number.isNaN(n) ? "" : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

const rows: Row[] = [];
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, "suites", file)).href)) as { suite: Suite };
  const suite = mod.suite;
  if (wanted.length > 0 && !wanted.includes(suite.name) && !wanted.includes(file.replace(/\.m?ts$/, ""))) continue;
  process.stderr.write(`running ${suite.name}...\n`);
  const suiteRows = await suite.run({ quick });
  rows.push(...suiteRows);
}

const header = [
  "suite",
  "case",
  "ops/s",
  "p50 µs",
  "p99 µs",
  "CPU µs/op",
  "heap B/op",
  "instr/op",
  "floor ops/s",
  "ratio",
  "target",
  "note",
];
const table = rows.map((r) => [
  r.suite,
  r.case,
  fmt(r.measurement.opsPerSec),
  fmt(r.measurement.p50Us, 1),
  fmt(r.measurement.p99Us, 1),
  fmt(r.measurement.cpuUsPerOp, 1),
  fmt(r.measurement.heapBytesPerOp),
  fmt(r.measurement.instructionsPerOp),
  fmt(r.floor?.opsPerSec),
  r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}x`,
  r.target ?? "",
  r.note ?? "",
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
const line = (cells: string[]) =>
  cells
    .map((c, i) => c.padEnd(widths[i]!))
    .join("  ")
    .trimEnd();
console.log(line(header));
console.log(widths.map((w) => "-".repeat(w)).join("  "));
for (const row of table) console.log(line(row));
if (jsonFile !== undefined) writeFileSync(jsonFile, JSON.stringify(rows, null, 2));

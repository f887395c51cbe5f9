/**
 * Instructions per in-process `pre_action` round trip, counted by valgrind's callgrind: a figure
 * that machine load does not move, unlike the `core` suite's times. Ours is AhpClient ->
 * in-memory pair -> AhpServer with full validation on both sides; the floor is the `core`
 * suite's (the same request and response stringified and parsed both ways). A second pair adds
 * the NDJSON framing of the stdio and Unix socket transports: ours on core's NDJSON client and
 * server transports over two in-memory Node streams, against the stdio floor's client and peer
 * over the same streams (everything but the system calls).
 *
 * Each implementation runs in its own `node --single-threaded --hash-seed=1 --random-seed=1`
 * process under `valgrind --tool=callgrind --instr-atstart=no` (peers/core-roundtrip-child.mjs):
 * start-up and a warm-up run uncounted, then counting is switched on (`callgrind_control -i on`)
 * and the child makes N round trips, then 2N, with a count taken after each
 * (`callgrind_control -d`). The marginal cost of one round trip is (count(2N) - count(N)) / N:
 * what both phases share (the hand-over with this process) cancels out. Without valgrind the
 * suite reports one row saying so.
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Measurement, Row, Suite } from "../harness.js";

const child = fileURLToPath(new URL("../peers/core-roundtrip-child.mjs", import.meta.url));
const run = promisify(execFile);

/**
 * Flags that make V8's work repeatable run to run: no background compiler or GC threads, fixed
 * seeds, no collection started by a timer (the memory reducer fires after seconds of idleness,
 * which on a busy machine can land inside one phase and not the other), and `gc()` for the child
 * to collect at the end of every phase so that each phase starts from the same heap.
 */
export const NODE_FLAGS = ["--single-threaded", "--hash-seed=1", "--random-seed=1", "--no-memory-reducer", "--expose-gc"];

const hasValgrind = (): boolean =>
  spawnSync("sh", ["-c", "command -v valgrind && command -v callgrind_control"], { stdio: "ignore" }).status === 0;

/** The instruction count (`totals:`) of each callgrind dump, in the order taken. */
function readDumps(dir: string): number[] {
  const parts = readdirSync(dir)
    .map((name) => /^cg\.out\.(\d+)$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ part: Number(m[1]), file: join(dir, m[0]) }))
    .sort((a, b) => a.part - b.part);
  return parts.map(({ file }) => {
    const totals = /^totals:\s+(\d+)/m.exec(readFileSync(file, "utf8"));
    if (totals === null) throw new Error(`no totals in callgrind dump ${file}`);
    return Number(totals[1]);
  });
}

/** What peers/core-roundtrip-child.mjs runs. */
type Mode = "ours" | "floor" | "ours-streams" | "floor-streams";

/** Runs one implementation under callgrind: the instructions counted for each phase of `counts` round trips. */
async function countPhases(mode: Mode, counts: number[], warmup: number): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "ahp-callgrind-"));
  try {
    const proc = spawn(
      "valgrind",
      [
        "--tool=callgrind",
        "--instr-atstart=no",
        `--callgrind-out-file=${join(dir, "cg.out")}`,
        process.execPath,
        ...NODE_FLAGS,
        child,
        mode,
        counts.join(","),
        "--warmup",
        String(warmup),
        "--phases",
      ],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    let stderr = "";
    proc.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    const pid = String(proc.pid);
    let result: { decisions?: number } | undefined;
    for await (const line of createInterface({ input: proc.stdout })) {
      if (line === "ready") await run("callgrind_control", ["-i", "on", pid]);
      else if (line.startsWith("done ")) await run("callgrind_control", ["-d", line.replace(" ", "-"), pid]);
      else if (line.startsWith("{")) {
        result = JSON.parse(line) as { decisions?: number };
        continue;
      } else continue;
      proc.stdin.write("go\n");
    }
    const code = await exited;
    const expected = counts.reduce((a, b) => a + b, 0);
    if (code !== 0 || result?.decisions !== expected) {
      throw new Error(
        `callgrind run of ${mode} failed (exit ${code}, ${result?.decisions} of ${expected} decisions): ${stderr.slice(-2000)}`,
      );
    }
    const dumps = readDumps(dir);
    if (dumps.length < counts.length) throw new Error(`expected ${counts.length} callgrind dumps, found ${dumps.length}`);
    return dumps.slice(0, counts.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Marginal instructions per round trip: (count(2N) - count(N)) / N. */
async function marginal(mode: Mode, n: number, warmup: number): Promise<{ perOp: number; counts: number[] }> {
  const counts = await countPhases(mode, [n, 2 * n], warmup);
  return { perOp: (counts[1]! - counts[0]!) / n, counts };
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

export const suite: Suite = {
  name: "instructions",
  async run({ quick }) {
    const suite = "instructions";
    if (!hasValgrind()) {
      return [
        {
          suite,
          case: "instructions per pre_action round trip",
          measurement: { opsPerSec: Number.NaN },
          note: "skipped: valgrind is not installed (Debian package valgrind)",
        },
      ];
    }
    const n = quick ? 500 : 10_000;
    const warmup = quick ? 5_000 : 10_000;
    // Both processes at once: a count does not depend on what else the machine does.
    const [floor, ours] = await Promise.all([marginal("floor", n, warmup), marginal("ours", n, warmup)]);
    const [floorStreams, oursStreams] = await Promise.all([marginal("floor-streams", n, warmup), marginal("ours-streams", n, warmup)]);
    const floorM: Measurement = { opsPerSec: Number.NaN, instructionsPerOp: floor.perOp };
    const oursM: Measurement = { opsPerSec: Number.NaN, instructionsPerOp: ours.perOp };
    const floorStreamsM: Measurement = { opsPerSec: Number.NaN, instructionsPerOp: floorStreams.perOp };
    const oursStreamsM: Measurement = { opsPerSec: Number.NaN, instructionsPerOp: oursStreams.perOp };
    const method = `callgrind Ir, (count(${2 * n}) - count(${n})) / ${n}`;
    const rows: Row[] = [
      {
        suite,
        case: "floor: stringify/parse both ways, instructions per round trip",
        measurement: floorM,
        note: `${method}; counts ${floor.counts.map(fmt).join(" / ")}`,
      },
      {
        suite,
        case: "AhpClient->memory->AhpServer pre_action, instructions per round trip",
        measurement: oursM,
        floor: floorM,
        ratio: ours.perOp / floor.perOp,
        target: "<= 1.5x floor",
        note: `full validation both sides; counts ${ours.counts.map(fmt).join(" / ")}`,
      },
      {
        suite,
        case: "floor: stdio floor's client and peer over in-memory streams, instructions per round trip",
        measurement: floorStreamsM,
        note: `NDJSON lines cut by index, JSON.parse, one write per message; ${method}; counts ${floorStreams.counts.map(fmt).join(" / ")}`,
      },
      {
        suite,
        case: "AhpClient->NDJSON streams->AhpServer pre_action, instructions per round trip",
        measurement: oursStreamsM,
        floor: floorStreamsM,
        ratio: oursStreams.perOp / floorStreams.perOp,
        target: "<= 1.5x floor",
        note: `core's NDJSON client and server transports over in-memory streams, full validation; counts ${oursStreams.counts.map(fmt).join(" / ")}`,
      },
    ];
    return rows;
  },
};

/**
 * Both replay runners of the wire vectors (`schemas/vectors/run.py` and `ahp conformance
 * harness`) against the built `ahp serve --config ahp-serve.yaml`: every vector must pass. A
 * deliberately wrong harness shows that both runners report a failure.
 *
 * Needs `pnpm build` (the harness under test is the built CLI, as users run it). The Python
 * runner needs `python3`: under `CI=true` its absence fails the test, elsewhere it is skipped.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";

// Each test starts `ahp` processes; on a busy machine one start can take many seconds.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const HARNESS_DIR = fileURLToPath(new URL("../../../schemas/vectors/harness/", import.meta.url));
const RUN_PY = fileURLToPath(new URL("../../../schemas/vectors/run.py", import.meta.url));
const WRONG = fileURLToPath(new URL("./fixtures/conformance/wrong-harness.mjs", import.meta.url));

/** `ahp serve` configured as the vectors' profile says; started once per vector. */
const SERVE = [process.execPath, BIN, "serve", "--config", "ahp-serve.yaml"];
const WRONG_HARNESS = [process.execPath, WRONG];
const JOBS = String(availableParallelism());
/**
 * The deadline of one vector counts from the harness's start, and starting `ahp serve` costs
 * about 1 s of CPU (module loading): on a loaded machine that alone passed the default 10 s.
 * A cap, not a delay: a vector ends as soon as the harness ends its output.
 */
const CASE_TIMEOUT_MS = "60000";
/**
 * A full run starts one harness per vector (105 processes): about 2 min of CPU, 5–6 min on a
 * loaded 2-core machine, over 15 min at a load average of 40. So the Python runner's full run is
 * held to progress, not to a total: it reports each vector as it ends (`--progress`), and the
 * test fails when no vector ends for `STALL_MS`. The test's own limit only stops a run that
 * never ends.
 */
const FULL_RUN_MS = 900_000;
const STALL_MS = 300_000;
const PROGRESS_RUN_MS = 3_600_000;

const python = spawnSync("python3", ["--version"], { encoding: "utf8" });
const hasPython = python.status === 0;
const inCi = process.env.CI === "true";
if (!hasPython && !inCi) console.warn("skipping the Python runner: python3 is not installed (apt-get install python3)");

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end. With `stallMs`, every line on stderr counts as progress, and the
 * command is killed (and the promise rejected) when none comes for that long.
 */
function exec(command: string, args: string[], stallMs?: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: HARNESS_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let stalled: NodeJS.Timeout | undefined;
    const watch = () => {
      if (stallMs === undefined) return;
      clearTimeout(stalled);
      stalled = setTimeout(() => {
        child.kill("SIGKILL");
        const last = stderr.trimEnd().split("\n").pop() ?? "";
        reject(new Error(`no vector ended for ${stallMs / 1000} s; last progress: ${last || "(none)"}`));
      }, stallMs);
    };
    watch();
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
      watch();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(stalled);
      resolve({ code, stdout, stderr });
    });
  });
}

const nodeRunner = (own: string[], harness: string[], stallMs?: number) =>
  exec(process.execPath, [BIN, "conformance", "harness", ...own, "--", ...harness], stallMs);
const pythonRunner = (own: string[], harness: string[], stallMs?: number) =>
  exec("python3", [RUN_PY, "harness", ...own, ...(stallMs === undefined ? [] : ["--progress"]), "--", ...harness], stallMs);

/** The vector count, from the runner's own list. */
async function vectorCount(): Promise<number> {
  const listed = await exec(process.execPath, [BIN, "conformance", "harness", "--list"]);
  expect(listed.code).toBe(0);
  return listed.stdout.split("\n").filter((l) => l.trim() !== "").length;
}

/**
 * Both runners replay every vector against `ahp serve` when `AHP_CONFORMANCE_FULL=1`. By default
 * (CI) the Python runner, the one other-language SDKs use, replays all of them and the Node runner
 * the handshake area: one full run costs ~2 min of CPU (a harness process per vector), and the
 * two runners share the vectors; their comparison logic is proven by the wrong-harness cases below.
 */
const FULL_BOTH = process.env.AHP_CONFORMANCE_FULL === "1";
const runners = [
  {
    name: "ahp conformance harness",
    run: nodeRunner,
    available: true,
    scope: FULL_BOTH ? undefined : "handshake/",
    stallMs: undefined,
    limitMs: FULL_RUN_MS,
  },
  {
    name: "python3 run.py",
    run: pythonRunner,
    available: hasPython || inCi,
    scope: undefined,
    stallMs: STALL_MS,
    limitMs: PROGRESS_RUN_MS,
  },
] as const;

describe("conformance runners against ahp serve", () => {
  it("the CLI is built", () => {
    expect(existsSync(BIN), "run `pnpm build` first").toBe(true);
  });

  for (const runner of runners) {
    it.skipIf(!runner.available)(
      `${runner.name}: ${runner.scope === undefined ? "every wire vector passes" : `the ${runner.scope} vectors pass`} against ahp serve --config ahp-serve.yaml`,
      async () => {
        const total = await vectorCount();
        expect(total).toBeGreaterThan(100);
        const scope = runner.scope === undefined ? [] : ["--filter", runner.scope];
        const result = await runner.run(["--jobs", JOBS, "--timeout-ms", CASE_TIMEOUT_MS, ...scope], SERVE, runner.stallMs);
        expect(result.stdout.split("\n").filter((l) => l.startsWith("FAIL "))).toEqual([]);
        if (runner.scope === undefined) expect(result.stdout).toContain(`\n${total} passed, 0 failed\n`);
        else expect(result.stdout).toMatch(/\n[1-9]\d* passed, 0 failed\n/);
        expect(result.code).toBe(0);
        if (runner.stallMs !== undefined) expect(result.stderr).toContain(`(${total}/${total})`);
      },
      runner.limitMs,
    );

    it.skipIf(!runner.available)(
      `${runner.name}: a harness answering a wrong error code is reported as failed`,
      async () => {
        const result = await runner.run(["--jobs", JOBS, "--filter", "handshake/version-3.0-rejected"], WRONG_HARNESS);
        expect(result.stdout).toContain("FAIL handshake/version-3.0-rejected");
        expect(result.stdout).toMatch(/error\.code: expected -32000, got -32099/);
        expect(result.stdout).toContain("0 passed, 1 failed");
        expect(result.code).toBe(1);
      },
      60_000,
    );

    it.skipIf(!runner.available)(
      `${runner.name}: a harness that answers nothing fails the vectors that expect an answer`,
      async () => {
        const result = await runner.run(
          ["--jobs", JOBS, "--filter", "handshake/version-2.4"],
          [process.execPath, "-e", "process.stdin.resume()"],
        );
        expect(result.stdout).toContain("FAIL handshake/version-2.4");
        expect(result.stdout).toContain("0 passed, 1 failed");
        expect(result.code).toBe(1);
      },
      60_000,
    );
  }
});

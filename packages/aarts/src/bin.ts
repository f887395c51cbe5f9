/**
 * `ahp-aarts-hook`: the AARTS hook command for agent hosts (see `runHookCommand`).
 *
 * Run directly (`node dist/bin.cjs …`) it runs the command. Loaded by the launcher
 * (`dist/launch.cjs`, which compiles this file with V8's code cache) it only exports
 * {@link run}, and the launcher calls it.
 */
import { runHookCommand } from "./hook/command.js";

/** What one run of the command ended with. */
export interface BinResult {
  /** Process exit code. */
  readonly code: number;
  /** The run answered a host's hook (not `--version`, `install`, `doctor` or a usage error). */
  readonly answeredHook: boolean;
}

const HOSTLESS = new Set(["install", "doctor", "help"]);

/** Runs the command with this process's argv and streams; sets the exit code when done. */
export async function run(): Promise<BinResult> {
  const argv = process.argv.slice(2);
  const code = await runHookCommand(argv, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  });
  process.exitCode = code;
  // Never keep the host waiting on a handle that failed to close.
  setTimeout(() => process.exit(code), 1_000).unref();
  const first = argv.find((a) => !a.startsWith("-"));
  return { code, answeredHook: first !== undefined && !HOSTLESS.has(first) && !argv.includes("--version") && !argv.includes("--help") };
}

if (typeof require !== "undefined" && require.main === module) void run();

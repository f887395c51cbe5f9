/**
 * `ahp hook <host>` / `ahp hook install <host>`: the AARTS hook command of `@ahp/aarts`,
 * reached through the `ahp` CLI. The host spawns it for every tool call: `ahp hook <host> …`
 * runs `@ahp/aarts`'s launcher (its one-file bin through V8's code cache, as `ahp-aarts-hook`
 * does) before the CLI loads anything else; `install`, `doctor` and `--help` go through
 * {@link run}.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { CliIo } from "../io.js";

export const usage = `Usage: ahp hook <host> [options]          answer a host's hook (JSON on stdin) through an AHP harness
       ahp hook install <host> [--write]  print or write the host's hook configuration
       ahp hook doctor <host>             prove the host will load the configuration

Hosts: claude-code, cursor, copilot-cli, vscode, cline, windsurf.
Run 'ahp hook --help' for every option (--connect, --fail-open/--fail-closed, --timeout-ms, ...).
`;

/** Hosts whose hooks `ahp hook` answers through the launcher (the hook command's own host ids). */
const HOOK_HOSTS = new Set(["claude-code", "cursor", "copilot-cli", "vscode", "cline", "windsurf"]);

/** The launcher of `@ahp/aarts` (`dist/launch.cjs`), as it exports it. */
interface Launcher {
  launch(binPath: string): void;
}

/**
 * Answers `ahp hook <host> …` (`argv` is `process.argv`) through `@ahp/aarts`'s launcher, which
 * reads the host's hook on stdin, prints the answer and sets the exit code. Returns false, having
 * done nothing, for anything else (`install`, `doctor`, `--help`, `--version`, an unknown host) and
 * when the launcher cannot be found: the CLI's dispatch then runs the command.
 */
export function launchHook(argv: string[]): boolean {
  const [command, host] = argv.slice(2);
  if (command !== "hook" || host === undefined || !HOOK_HOSTS.has(host)) return false;
  if (argv.some((a) => a === "--help" || a === "-h" || a === "--version")) return false;
  let launcher: Launcher;
  let dist: string;
  try {
    const require = createRequire(import.meta.url);
    dist = join(dirname(require.resolve("@ahp/aarts/package.json")), "dist");
    launcher = require(join(dist, "launch.cjs")) as Launcher;
  } catch {
    return false;
  }
  argv.splice(2, 1); // the bin reads `<host> [options]`
  launcher.launch(join(dist, "bin.cjs"));
  return true;
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { runHookCommand } = await import("@ahp/aarts/hook");
  return runHookCommand(argv, {
    stdin: io.stdin as AsyncIterable<Uint8Array | string>,
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    cwd: process.cwd(),
    programName: "ahp hook",
  });
}

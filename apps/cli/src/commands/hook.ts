/**
 * `ahp hook <host>` / `ahp hook install <host>`: the AARTS hook command of `@ahp/aarts`,
 * reached through the `ahp` CLI. The host spawns it for every tool call, so the module is
 * loaded only for this command. (Hosts that care about every millisecond of start-up can call
 * the package's own one-file bin, `ahp-aarts-hook`, directly.)
 */
import type { CliIo } from "../io.js";

export const usage = `Usage: ahp hook <host> [options]          answer a host's hook (JSON on stdin) through an AHP harness
       ahp hook install <host> [--write]  print or write the host's hook configuration
       ahp hook doctor <host>             prove the host will load the configuration

Hosts: claude-code, cursor, copilot-cli, vscode, cline, windsurf.
Run 'ahp hook --help' for every option (--connect, --fail-open/--fail-closed, --timeout-ms, ...).
`;

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

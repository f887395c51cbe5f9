/**
 * `ahp` entry point. `ahp hook <host> …`, which an agent host runs for every tool call, goes to
 * the hook's own launcher before the CLI loads its commands (see `launchHook`); everything else
 * goes through the command dispatch.
 */
import { launchHook } from "./commands/hook.js";

if (!launchHook(process.argv)) {
  const [{ main }, { processIo }] = await Promise.all([import("./cli.js"), import("./io.js")]);
  main(process.argv.slice(2), processIo()).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`ahp: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

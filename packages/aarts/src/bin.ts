/** `ahp-aarts-hook`: the AARTS hook command for agent hosts (see `runHookCommand`). */
import { runHookCommand } from "./hook/command.js";

void runHookCommand(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
  // Never keep the host waiting on a handle that failed to close.
  setTimeout(() => process.exit(code), 1_000).unref();
});

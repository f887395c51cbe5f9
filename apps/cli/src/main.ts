/** `ahp` entry point. */
import { main } from "./cli.js";
import { processIo } from "./io.js";

main(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ahp: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

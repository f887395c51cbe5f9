/** `ahp`: command dispatch. */
import { createRequire } from "node:module";
import { closest } from "./args.js";
import { ConfigError, EXIT_CONFIG, EXIT_OK, EXIT_USAGE, ExitError, UsageError, type CliIo } from "./io.js";

export const usage = `Usage: ahp <command> [options]

Commands:
  serve     run an AHP harness (stdio, HTTP, WebSocket, Unix socket)
  send      be an agent: send one or many events and print the decisions
  schema    print or write the JSON Schema set
  audit     verify, tail or summarise a tamper-evident audit log
  policy    test, explain and replay policies (change a policy safely)
  hook      answer an agent host's hook (Claude Code, Cursor, Copilot, ...) through a harness (AARTS)
  acp-proxy run any ACP agent behind the suspend/resume bridge (stdio proxy, AHP-gated)
  conformance  run the AHP wire vectors against any stdio harness

Run 'ahp <command> --help' for the options of a command; 'ahp --version' prints the version.
`;

/** The package's version (from src/ and from dist/ alike, package.json is one level up). */
export function version(): string {
  return (createRequire(import.meta.url)("../package.json") as { version: string }).version;
}

type Command = { run(argv: string[], io: CliIo): Promise<number>; usage: string };

const commands: Record<string, () => Promise<Command>> = {
  serve: () => import("./commands/serve.js"),
  send: () => import("./commands/send.js"),
  schema: () => import("./commands/schema.js"),
  audit: () => import("./commands/audit.js"),
  policy: () => import("./commands/policy.js"),
  hook: () => import("./commands/hook.js"),
  "acp-proxy": () => import("./commands/acp-proxy.js"),
  conformance: () => import("./commands/conformance.js"),
};

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(usage);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (name === "--version" || name === "-v") {
    io.stdout.write(`${version()}\n`);
    return EXIT_OK;
  }
  const load = commands[name];
  if (load === undefined) {
    const near = closest(name, Object.keys(commands));
    io.stderr.write(
      `ahp: unknown command ${JSON.stringify(name)}${near === undefined ? "" : ` (did you mean ${near}?)`}; see 'ahp --help'\n`,
    );
    return EXIT_USAGE;
  }
  const command = await load();
  try {
    return await command.run(rest, io);
  } catch (error) {
    // One line each: a usage error points at --help, a configuration error says what to do.
    if (error instanceof UsageError) {
      io.stderr.write(`ahp ${name}: ${error.message}; see 'ahp ${name} --help'\n`);
      return EXIT_USAGE;
    }
    if (error instanceof ConfigError) {
      io.stderr.write(`ahp ${name}: ${error.message}\n${error.hint === undefined ? "" : `hint: ${error.hint}\n`}`);
      return EXIT_CONFIG;
    }
    if (error instanceof ExitError) {
      io.stderr.write(`ahp ${name}: ${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

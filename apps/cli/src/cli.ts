/** `ahp`: command dispatch. */
import { UsageError, EXIT_USAGE, EXIT_OK, type CliIo } from "./io.js";

export const usage = `Usage: ahp <command> [options]

Commands:
  serve     run an AHP harness (stdio, HTTP, WebSocket, Unix socket)
  send      be an agent: send one or many events and print the decisions
  schema    print or write the JSON Schema set
  audit     verify, tail or summarise a tamper-evident audit log
  hook      answer an agent host's hook (Claude Code, Cursor, Copilot, ...) through a harness (AARTS)

Run 'ahp <command> --help' for the options of a command.
`;

type Command = { run(argv: string[], io: CliIo): Promise<number>; usage: string };

const commands: Record<string, () => Promise<Command>> = {
  serve: () => import("./commands/serve.js"),
  send: () => import("./commands/send.js"),
  schema: () => import("./commands/schema.js"),
  audit: () => import("./commands/audit.js"),
  hook: () => import("./commands/hook.js"),
};

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(usage);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const load = commands[name];
  if (load === undefined) {
    io.stderr.write(`ahp: unknown command ${JSON.stringify(name)}\n\n${usage}`);
    return EXIT_USAGE;
  }
  const command = await load();
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`ahp ${name}: ${error.message}\n\n${command.usage}`);
      return EXIT_USAGE;
    }
    throw error;
  }
}

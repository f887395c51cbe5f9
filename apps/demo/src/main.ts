/**
 * `pnpm demo [--transport memory|stdio|http|ws|unix] [--color|--no-color] [--keep]`:
 * a coding-agent session against the default policy, on an embedded harness (or the real
 * `ahp serve --stdio` as a child process with --transport stdio).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { runDemo } from "./demo.js";
import { TRANSPORTS, type TransportKind } from "./harness.js";
import { runInspectorDemo } from "./inspector.js";

const usage = `Usage: ahp-demo [--transport ${TRANSPORTS.join("|")}] [--scenario acp] [--color|--no-color] [--keep] [--audit FILE] [--inspector]

Plays a coding-agent session against the built-in default policy and prints the timeline,
a summary, and the verification of the audit log the harness wrote.

  --transport T   memory (default: embedded harness), stdio (harness as a child process),
                  http, ws, unix (embedded harness behind a loopback listener)
  --scenario acp  a stock ACP client and agent through the suspend/resume bridge instead
  --keep          keep the temporary directory with the audit log
  --audit FILE    write the audit log to FILE (kept; the key is printed) instead of a temporary one
  --inspector     turn on the Agent Host port, print the inspector's URL and wait for you to
                  approve the escalated npm install there (blocked after 5 minutes)
  --color, --no-color   force colours on or off (default: on for terminals)
`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        transport: { type: "string", default: "memory" },
        color: { type: "boolean" },
        "no-color": { type: "boolean" },
        keep: { type: "boolean" },
        audit: { type: "string" },
        inspector: { type: "boolean" },
        scenario: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}`);
    return 64;
  }
  if (values.help) {
    process.stdout.write(usage);
    return 0;
  }
  if (!(TRANSPORTS as readonly string[]).includes(values.transport)) {
    process.stderr.write(`unknown transport ${JSON.stringify(values.transport)}\n\n${usage}`);
    return 64;
  }
  const color = values["no-color"] ? false : values.color ? true : undefined;
  if (values.inspector) {
    await runInspectorDemo({ out: process.stdout, err: process.stderr, env: process.env, ...(color === undefined ? {} : { color }) });
    return 0;
  }
  if (values.scenario !== undefined) {
    if (values.scenario !== "acp") {
      process.stderr.write(`unknown scenario ${JSON.stringify(values.scenario)}\n\n${usage}`);
      return 64;
    }
    const { runAcpDemo } = await import("./acp.js");
    const acp = await runAcpDemo({ out: process.stdout, err: process.stderr, env: process.env, ...(color === undefined ? {} : { color }) });
    return acp.stopReasons[1] === "end_turn" ? 0 : 1;
  }
  const result = await runDemo({
    transport: values.transport as TransportKind,
    out: process.stdout,
    err: process.stderr,
    env: process.env,
    ...(color === undefined ? {} : { color }),
    ...(values.keep ? { keep: true } : {}),
    ...(values.audit === undefined ? {} : { auditFile: resolve(values.audit) }),
  });
  return result.audit.ok ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);

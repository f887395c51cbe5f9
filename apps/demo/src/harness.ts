/** Starts the demo's harness behind the chosen transport and returns the agent's side of it. */
import { mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createLinkedPair, type Transport } from "@ahp/core";
import type { AuditKey } from "@ahp/audit";
import { createHarness, type Harness } from "@ahp/cli/harness";
import { createLogger } from "@ahp/observability";
import { HttpClientTransport, listenHttp } from "@ahp/transport-http";
import { StdioClientTransport } from "@ahp/transport-stdio";
import { UnixSocketClientTransport, listenUnix } from "@ahp/transport-unix";
import { WebSocketClientTransport, listenWebSocket } from "@ahp/transport-ws";
import { DEMO_POLICY } from "./policy.js";

export const TRANSPORTS = ["memory", "stdio", "http", "ws", "unix"] as const;
export type TransportKind = (typeof TRANSPORTS)[number];

export interface RunningHarness {
  /** The agent's transport (not started). */
  transport: Transport;
  /** Where the harness runs, for the banner. */
  where: string;
  auditFile: string;
  close(): Promise<void>;
}

export interface HarnessSetup {
  dir: string;
  key: AuditKey;
  /** Hex form of the key, written to a file for a child harness. */
  keyHex: string;
  stderr: NodeJS.WritableStream;
  /** Where the harness writes its audit log (default `audit.log` in `dir`). */
  auditFile?: string;
}

export async function startHarness(kind: TransportKind, setup: HarnessSetup): Promise<RunningHarness> {
  const auditFile = setup.auditFile ?? join(setup.dir, "audit.log");
  if (kind === "stdio") return startChild(setup, auditFile);
  const log = createLogger({ stream: setup.stderr, level: "warn", bindings: { component: "demo-harness" } });
  const harness = await createHarness({ log, name: "ahp-demo-harness", policy: DEMO_POLICY, audit: { file: auditFile, key: setup.key } });
  const { server } = harness;
  switch (kind) {
    case "memory": {
      const [agentSide, harnessSide] = createLinkedPair();
      await server.connect(harnessSide);
      return {
        transport: agentSide,
        where: "embedded, in-memory transport",
        auditFile,
        close: async () => {
          await harness.server.whenIdle(5000);
          await harness.close();
        },
      };
    }
    case "http": {
      const l = await listenHttp(server, { host: "127.0.0.1", port: 0 });
      return { transport: new HttpClientTransport(l.url), where: `embedded, ${l.url}`, auditFile, close: closeBoth(l, harness) };
    }
    case "ws": {
      const l = await listenWebSocket(server, { host: "127.0.0.1", port: 0 });
      return { transport: new WebSocketClientTransport(l.url), where: `embedded, ${l.url}`, auditFile, close: closeBoth(l, harness) };
    }
    case "unix": {
      const path = join(setup.dir, "harness.sock");
      const l = await listenUnix(server, { path });
      return {
        transport: new UnixSocketClientTransport({ path }),
        where: `embedded, unix:${path}`,
        auditFile,
        close: closeBoth(l, harness),
      };
    }
  }
}

const closeBoth = (listener: { close(): Promise<void> }, harness: Harness) => async () => {
  // The agent has closed its side: let the harness read and handle what is still in flight.
  await harness.server.whenIdle(5000);
  await listener.close();
  await harness.close();
};

/** stdio: the harness is the real `ahp serve --stdio` in a child process. */
async function startChild(setup: HarnessSetup, auditFile: string): Promise<RunningHarness> {
  await mkdir(setup.dir, { recursive: true });
  const policyFile = join(setup.dir, "policy.json");
  const keyFile = join(setup.dir, "audit.key");
  await writeFile(policyFile, `${JSON.stringify(DEMO_POLICY, null, 2)}\n`);
  await writeFile(keyFile, setup.keyHex, { mode: 0o600 });
  const cli = join(dirname(createRequire(import.meta.url).resolve("@ahp/cli/package.json")), "dist", "main.js");
  const args = [
    cli,
    "serve",
    "--stdio",
    "--name",
    "ahp-demo-harness",
    "--policy",
    policyFile,
    "--audit",
    auditFile,
    "--audit-key-file",
    keyFile,
    "--log-level",
    "warn",
  ];
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: (chunk) => setup.stderr.write(chunk) });
  return {
    transport,
    where: `child process: ahp serve --stdio (pid after start)`,
    auditFile,
    // The agent's close() ends the child's stdin; the child flushes its audit log and exits.
    close: async () => {},
  };
}

/**
 * Ready wiring: `createAcpBridge` (any agent connector, harness client and store), in memory
 * (`connectInMemory`) and over stdio (`spawnAgent`: the agent as a child process, and
 * `serveStdio`: the bridge on this process's stdin/stdout).
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { AgentApp, AgentConnection, ClientApp, Stream } from "@agentclientprotocol/sdk";
import type { AhpClient } from "@ahp/core";
import type { BridgeCoreOptions } from "./agent-face.js";
import { AcpBridgeEngine } from "./bridge.js";
import { systemClock, type Clock } from "./clock.js";
import type { DownstreamConnector, DownstreamTarget } from "./downstream.js";
import { FileSuspensionStore, defaultStoreDir } from "./file-store.js";
import { HarnessLink, type HarnessFailure } from "./harness.js";
import { ndJsonNodeStream } from "./node-stream.js";
import type { SuspensionStore } from "./store.js";
import { connectUpstream } from "./upstream.js";

/** Options of `createAcpBridge`: the real agent, the harness link, the suspension store and clock, and the bridge's own settings. */
export interface AcpBridgeOptions extends Omit<BridgeCoreOptions, "agent" | "clock" | "store" | "harness"> {
  /** The real agent: an SDK agent app (in memory), a stream, or a connector called on every (re)start. */
  agent: DownstreamTarget | DownstreamConnector;
  /** A connected AHP client (handshake done). Without one, no gates and no reports. */
  harness?: AhpClient;
  /** Default: a {@link FileSuspensionStore} in `storeDir` (default {@link defaultStoreDir}). */
  store?: SuspensionStore;
  storeDir?: string;
  clock?: Clock;
  /** Suspend gate failure policy (§7.5). Default `proceed`. */
  suspendGateFailure?: "proceed" | "reject";
  maxGateWaitMs?: number;
  parkThresholdMs?: number;
  escalationTimeoutMinutes?: number;
  harnessTimeoutMs?: number;
  /** Harness failures and what the bridge did about them (§7.5). */
  onHarnessFailure?: (failure: HarnessFailure) => void;
}

/**
 * The ACP suspend/resume bridge, ready to serve: {@link createAcpBridge} makes it, `connect` serves
 * a client connection.
 */
export class AcpBridge extends AcpBridgeEngine {
  /** Serves one client connection: a stream (stdio, socket) or a client app in memory. */
  connect(target: Stream | ClientApp): AgentConnection {
    return connectUpstream(this, target);
  }
}

/** Creates the bridge and loads its stored suspensions (a corrupt record rejects with its path). */
export async function createAcpBridge(options: AcpBridgeOptions): Promise<AcpBridge> {
  const clock = options.clock ?? systemClock;
  const target = options.agent;
  const connector: DownstreamConnector = typeof target === "function" ? target : () => target;
  const harness =
    options.harness === undefined
      ? undefined
      : new HarnessLink({
          client: options.harness,
          clock,
          ...(options.suspendGateFailure === undefined ? {} : { suspendGateFailure: options.suspendGateFailure }),
          ...(options.maxGateWaitMs === undefined ? {} : { maxGateWaitMs: options.maxGateWaitMs }),
          ...(options.parkThresholdMs === undefined ? {} : { parkThresholdMs: options.parkThresholdMs }),
          ...(options.escalationTimeoutMinutes === undefined ? {} : { escalationTimeoutMinutes: options.escalationTimeoutMinutes }),
          ...(options.harnessTimeoutMs === undefined ? {} : { timeoutMs: options.harnessTimeoutMs }),
          ...(options.onHarnessFailure === undefined ? {} : { onFailure: options.onHarnessFailure }),
        });
  const store = options.store ?? new FileSuspensionStore(options.storeDir ?? defaultStoreDir());
  const { harness: _client, ...rest } = options;
  const bridge = new AcpBridge({ ...rest, agent: connector, clock, store, ...(harness === undefined ? {} : { harness }) });
  await bridge.start();
  return bridge;
}

/** Connects a client app to the bridge in memory (the client side of a test or an embedding host). */
export function connectInMemory(bridge: AcpBridge, clientApp: ClientApp): AgentConnection {
  return bridge.connect(clientApp);
}

/** An agent app as an in-memory target (for `agent:`). */
export const inMemoryAgent =
  (app: AgentApp): DownstreamConnector =>
  () =>
    app;

/** An agent command run as a child process for the bridge (see {@link spawnAgent}). */
export interface SpawnedAgent {
  /** Connector for `agent:`: spawns a fresh child on every call (a restart after the child died). */
  connector: DownstreamConnector;
  /** The live child, when there is one. */
  readonly child: ChildProcess | undefined;
  kill(signal?: NodeJS.Signals): void;
}

/** Spawns the agent command as a child process speaking ACP over its stdin/stdout; stderr is inherited or given. */
export function spawnAgent(
  command: string,
  args: readonly string[] = [],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; stderr?: "inherit" | "ignore" | "pipe" } = {},
): SpawnedAgent {
  let child: ChildProcess | undefined;
  return {
    connector: () => {
      const c = spawn(command, [...args], {
        stdio: ["pipe", "pipe", options.stderr ?? "inherit"],
        ...(options.env ? { env: options.env } : {}),
        ...(options.cwd ? { cwd: options.cwd } : {}),
      });
      child = c;
      c.on("error", () => undefined);
      c.stdin!.on("error", () => undefined);
      return ndJsonNodeStream(c.stdout!, c.stdin!);
    },
    get child() {
      return child;
    },
    kill(signal: NodeJS.Signals = "SIGTERM") {
      child?.kill(signal);
    },
  };
}

/**
 * An ACP stream over Node streams (a process's stdin/stdout, a socket): one JSON message per
 * line, as the SDK's `ndJsonStream`, with the messages written in one event-loop turn coalesced into one
 * write of the output.
 */
export function nodeStream(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Stream {
  return ndJsonNodeStream(input, output);
}

/** The stream of this process's stdin/stdout (stdout carries only ACP). */
export function processStdioStream(): Stream {
  return nodeStream(process.stdin, process.stdout);
}

/** Serves the bridge on this process's stdin/stdout until stdin ends. */
export async function serveStdio(bridge: AcpBridge): Promise<void> {
  const connection = bridge.connect(processStdioStream());
  await connection.closed;
}

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
  /** Timeout of the harness calls that may be held for a person (gates), or a function read at each call. */
  harnessTimeoutMs?: number | (() => number | undefined);
  /**
   * Settles once `harness` is connected, when it is handed over before its handshake is done (a
   * quick start: the agent and the harness come up side by side). Gates wait for it.
   */
  harnessReady?: Promise<unknown>;
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
          ...(options.harnessReady === undefined ? {} : { ready: options.harnessReady }),
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
  /** Connector for `agent:`: the child started by `start()` first, then a fresh child on every call (a restart after it died). */
  connector: DownstreamConnector;
  /** The live child, when there is one. */
  readonly child: ChildProcess | undefined;
  /** Starts the child now (before the client's `initialize`), so its start-up runs beside the bridge's. */
  start(): ChildProcess;
  /** Signals the child (with `processGroup`, its whole process group). */
  kill(signal?: NodeJS.Signals): void;
  /**
   * Ends the child and everything it started: SIGTERM to its process group (or the child alone
   * without `processGroup`), then SIGKILL to whatever is left after `graceMs` (default 3000).
   * Resolves once no process of the group is left (or the grace and a last SIGKILL passed).
   */
  stop(graceMs?: number): Promise<void>;
}

/** Options of {@link spawnAgent}. */
export interface SpawnAgentOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  stderr?: "inherit" | "ignore" | "pipe";
  /** A child already started for this command (by a host that starts it before loading the bridge): the first connection uses it. */
  initial?: ChildProcess;
  /**
   * Run the agent in a process group of its own (POSIX), so that `kill` and `stop` reach the
   * processes it starts too (npm wrappers that start a native binary and do not forward signals).
   */
  processGroup?: boolean;
}

/** True while a process of group `pgid` is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Spawns the agent command as a child process speaking ACP over its stdin/stdout; stderr is inherited or given. */
export function spawnAgent(command: string, args: readonly string[] = [], options: SpawnAgentOptions = {}): SpawnedAgent {
  let started: ChildProcess | undefined = options.initial;
  let child: ChildProcess | undefined = options.initial;
  if (options.initial !== undefined) {
    options.initial.on("error", () => undefined);
    options.initial.stdin?.on("error", () => undefined);
  }
  const group = options.processGroup === true && process.platform !== "win32";
  const spawnOne = (): ChildProcess => {
    const c = spawn(command, [...args], {
      stdio: ["pipe", "pipe", options.stderr ?? "inherit"],
      ...(options.env ? { env: options.env } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(group ? { detached: true } : {}),
    });
    child = c;
    c.on("error", () => undefined);
    c.stdin!.on("error", () => undefined);
    return c;
  };
  const signal = (c: ChildProcess | undefined, sig: NodeJS.Signals): void => {
    if (c?.pid === undefined) return;
    try {
      if (group) process.kill(-c.pid, sig);
      else c.kill(sig);
    } catch {
      // already gone
    }
  };
  return {
    connector: () => {
      const c = started ?? spawnOne();
      started = undefined;
      return ndJsonNodeStream(c.stdout!, c.stdin!);
    },
    get child() {
      return child;
    },
    start() {
      started ??= spawnOne();
      return started;
    },
    kill(sig: NodeJS.Signals = "SIGTERM") {
      signal(child, sig);
    },
    async stop(graceMs = 3000) {
      const c = child;
      if (c?.pid === undefined) return;
      const pid = c.pid;
      const alive = () => (group ? groupAlive(pid) : c.exitCode === null && c.signalCode === null);
      if (!alive()) return;
      signal(c, "SIGTERM");
      const deadline = Date.now() + graceMs;
      while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      if (alive()) signal(c, "SIGKILL");
      // A SIGKILL'd process is gone once the kernel reaped it: wait briefly for that.
      const reaped = Date.now() + 2000;
      while (alive() && Date.now() < reaped) await new Promise((resolve) => setTimeout(resolve, 25));
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

/**
 * `ahp acp-proxy [--connect SPEC] [--store DIR] [--fail-closed] -- <agent command...>`: the ACP
 * suspend/resume bridge as a stdio proxy in front of any ACP agent. The editor speaks ACP to this
 * process's stdin/stdout; the agent runs as a child; suspensions are kept in the store across
 * restarts; the harness (`--connect`, or the embedded default-policy harness) gates suspends and
 * resumes and hears the lifecycle. stdout carries only ACP; logs are JSON lines on stderr.
 *
 * Start-up does nothing the client's `initialize` does not need before answering it: the agent is
 * started first, before the bridge's modules load; a remote harness is connected beside it, the
 * embedded one (its policy compile) only once the `initialize` answer is out; the gates wait for
 * the harness. The agent runs in a process group of its own, ended
 * as a whole when the proxy stops (also on SIGTERM, SIGINT, SIGHUP), so no agent process outlives
 * the proxy.
 */
// Only what starting the agent needs is loaded before it starts; the rest is imported beside it.
import { spawn } from "node:child_process";
import type { Transport } from "@ahp/core";
import type { LogLevel } from "@ahp/observability";
import { parse, toInt } from "../args.js";
import type { Harness } from "../harness.js";
import { EXIT_FAILURE, EXIT_OK, UsageError, type CliIo } from "../io.js";

export const usage = `Usage: ahp acp-proxy [--connect SPEC] [--store DIR] [--fail-closed] [options] -- <agent command...>

Runs the ACP suspend/resume bridge in front of any ACP agent: the editor talks ACP to this
process (stdin/stdout), the agent runs as a child process. Sessions can be suspended
(session/suspend, _ahpHarness/session/suspend) and resumed later, also after a restart; an AHP
harness gates every suspend and resume and hears the lifecycle. Without --connect the built-in
default-policy harness runs in this process. stdout carries only ACP; logs are JSON lines on
stderr.

  --connect SPEC        the harness: stdio:'CMD ARGS' | unix:PATH | http(s)://HOST:PORT/ahp |
                        ws(s)://HOST:PORT/ahp (default: the built-in one, in this process)
  --api-key KEY         harness credential (X-API-Key / ?api_key=); or env AHP_API_KEY
  --bearer TOKEN        harness bearer token; or env AHP_BEARER_TOKEN
  --store DIR           where suspensions are kept (default ${"$"}XDG_STATE_HOME/ahp/acp-bridge or
                        ~/.local/state/ahp/acp-bridge)
  --fail-closed         refuse a suspend when the harness cannot be reached (default: proceed;
                        resumes always fail closed)
  --fresh-transcript    allow continueTranscript:false by starting a new agent session with a digest
  --max-quiesce-ms N    drain deadline before a suspend interrupts the turn (default 120000)
  --decision-timeout-ms N
                        how long to wait for the harness's answer on a tool call or a suspend or
                        resume gate, which it may hold for a person's approval (default: the
                        timeout_ms the harness advertises in its handshake)
  --log-level LEVEL     debug | info | warn | error | silent (default info)
  -h, --help            this text

Zed (settings.json), the agent behind the bridge:

  {
    "agent_servers": {
      "My agent (suspendable)": {
        "command": "ahp",
        "args": ["acp-proxy", "--store", "/home/me/.local/state/ahp/acp-bridge", "--", "my-agent", "--acp"],
        "env": {}
      }
    }
  }
`;

const options = {
  connect: { type: "string" },
  "api-key": { type: "string" },
  bearer: { type: "string" },
  store: { type: "string" },
  "fail-closed": { type: "boolean" },
  "fresh-transcript": { type: "boolean" },
  "max-quiesce-ms": { type: "string" },
  "decision-timeout-ms": { type: "string" },
  "log-level": { type: "string" },
} as const;

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;

export async function run(argv: string[], io: CliIo): Promise<number> {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const agentCommand = dash === -1 ? [] : argv.slice(dash + 1);
  const { values } = parse(own, options);
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  const [command, ...args] = agentCommand;
  if (command === undefined) throw new UsageError("give the agent command after --, e.g. ahp acp-proxy -- my-agent --acp");
  const level = values["log-level"] ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  const maxQuiesceMs = toInt("max-quiesce-ms", values["max-quiesce-ms"], { min: 1 });
  const decisionTimeoutMs = toInt("decision-timeout-ms", values["decision-timeout-ms"], { min: 1 });

  // The agent first, in a process group of its own: its start-up runs while the rest loads.
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], detached: process.platform !== "win32" });
  child.on("error", () => undefined);
  // Last resort when this process ends without the orderly stop below: nothing of the agent stays.
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(process.platform === "win32" ? child.pid : -child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  process.once("exit", killGroup);
  let stopRequested!: (signal: NodeJS.Signals) => void;
  const stopSignal = new Promise<NodeJS.Signals>((resolve) => (stopRequested = resolve));
  const onSignal = (signal: NodeJS.Signals) => stopRequested(signal);
  const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  for (const sig of SIGNALS) process.on(sig, onSignal);
  const cleanupProcess = () => {
    for (const sig of SIGNALS) process.off(sig, onSignal);
    process.off("exit", killGroup);
  };

  const spec = values.connect ?? io.env.AHP_CONNECT;
  const [{ AhpClient, createLinkedPair }, bridgeModule, { createLogger }, connectModule] = await Promise.all([
    import("@ahp/core"),
    import("@ahp/acp-bridge"),
    import("@ahp/observability"),
    // The client transports only when a remote harness is named.
    spec === undefined ? undefined : import("../connect.js"),
  ]);
  const { createAcpBridge, defaultStoreDir, FileSuspensionStore, nodeStream, spawnAgent, SuspensionStoreError } = bridgeModule;
  const log = createLogger({ stream: io.stderr, level: level as LogLevel | "silent", bindings: { component: "ahp-acp-proxy" } });
  const agent = spawnAgent(command, args, { stderr: "inherit", processGroup: true, initial: child });
  log.info("agent started", { agent: command, pid: child.pid });

  // The harness: remote (--connect, connected now) or the embedded default-policy harness (started
  // once the client's initialize is answered, so that its policy compile does not delay that answer).
  let embedded: Harness | undefined;
  const ahp = new AhpClient({ agentInfo: { framework: "ahp-acp-proxy", version: "0.1.0" } });
  let startEmbedded!: () => void;
  const embeddedWanted = new Promise<void>((resolve) => (startEmbedded = resolve));
  const harnessUp = (async () => {
    let transport: Transport;
    if (spec !== undefined && connectModule !== undefined) {
      const auth = connectModule.authFrom(values, io.env);
      transport = connectModule.createClientTransport(spec, { ...(auth === undefined ? {} : { auth }), stderr: "inherit" });
    } else {
      await embeddedWanted;
      const { createHarness } = await import("../harness.js");
      embedded = await createHarness({
        log: log.child({ component: "ahp-harness" }),
        name: "ahp-acp-proxy-harness",
        syncNotifications: true,
      });
      // Both ends live in this process and neither keeps or changes a message it handed over, so
      // messages pass as objects, not through JSON text (the events are still validated on both
      // ends).
      const [agentSide, harnessSide] = createLinkedPair({ encoding: "none" });
      await embedded.server.connect(harnessSide);
      transport = agentSide;
    }
    await ahp.connect(transport, { capabilities: ["pre_action", "run_lifecycle", "heartbeat", "session_start", "session_end", "error"] });
  })();
  const harnessFailed = harnessUp.then(
    () => {
      log.info("harness connected", {
        connect: spec ?? "embedded",
        decision_timeout_ms: decisionTimeoutMs ?? ahp.harnessConfig.timeout_ms ?? null,
      });
      return new Promise<never>(() => undefined);
    },
    (error: unknown) => {
      log.error("harness unreachable", { error: (error as Error).message, connect: spec ?? "embedded" });
      return "harness_unreachable" as const;
    },
  );

  const stop = async () => {
    await agent.stop();
    cleanupProcess();
    await ahp.close().catch(() => undefined);
    await embedded?.close();
  };

  const storeDir = values.store ?? defaultStoreDir(io.env);
  let bridge;
  try {
    bridge = await createAcpBridge({
      agent: agent.connector,
      harness: ahp,
      harnessReady: harnessUp,
      // A gate the harness holds for a person is answered when the person decides: wait as long as
      // the harness said it may hold (its handshake's timeout_ms), or as told.
      harnessTimeoutMs: () => decisionTimeoutMs ?? ahp.harnessConfig.timeout_ms ?? undefined,
      store: new FileSuspensionStore(storeDir),
      ...(values["fail-closed"] ? { suspendGateFailure: "reject" as const } : {}),
      ...(values["fresh-transcript"] ? { emulateFreshTranscript: true } : {}),
      ...(maxQuiesceMs === undefined ? {} : { maxQuiesceMs }),
      onHarnessFailure: (f) =>
        log.warn("harness failure", { phase: f.phase, session_id: f.sessionId, outcome: f.outcome, error: f.error.message }),
      onAgentExit: (i) =>
        log.warn("agent exited", { suspended_sessions: i.suspended, error: i.error instanceof Error ? i.error.message : undefined }),
      onerror: (e) => log.debug("bridge", { error: e.message }),
      onInitialized: startEmbedded,
    });
  } catch (error) {
    const message = error instanceof SuspensionStoreError ? error.message : `cannot start: ${(error as Error).message}`;
    log.error("suspension store", { error: message, store: storeDir });
    io.stderr.write(`ahp acp-proxy: ${message}\n`);
    startEmbedded();
    await harnessUp.catch(() => undefined);
    await stop();
    return EXIT_FAILURE;
  }
  log.info("serving", { agent: command, store: storeDir });
  const connection = bridge.connect(nodeStream(io.stdin, io.stdout));
  const ended = await Promise.race([
    connection.closed.then(() => "client_disconnected" as const),
    harnessFailed,
    stopSignal.then((signal) => ({ signal })),
  ]);
  if (ended === "client_disconnected") log.info("client disconnected");
  else if (typeof ended === "object") log.info("stopping", { signal: ended.signal });
  if (ended !== "client_disconnected") {
    // The client is still attached: stop reading it so that nothing keeps this process alive.
    connection.close();
    (io.stdin as Partial<NodeJS.ReadStream>).destroy?.();
  }
  await bridge.close();
  // A client that never initialized never needed the embedded harness: start it only to close it.
  startEmbedded();
  await harnessUp.catch(() => undefined);
  if (embedded !== undefined) await embedded.server.whenIdle(2000);
  await stop();
  log.info("stopped");
  return ended === "harness_unreachable" ? EXIT_FAILURE : EXIT_OK;
}

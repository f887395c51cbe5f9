/**
 * The hook command people install in agent hosts:
 *
 *   ahp-aarts-hook <host> --connect unix:/run/ahp.sock [--fail-closed] [--timeout-ms N]
 *   ahp-aarts-hook install <host> [--write] [--project] [hook options…]
 *
 * `runHookCommand(argv, io)` is what the bin and the `ahp` CLI (`ahp hook …`) call. It reads
 * the host's hook JSON from stdin and always answers in the host's native format: under
 * fail-closed every failure (harness down, timeout, crash, bad input, bad configuration)
 * renders a deny, never an exit code the host would treat as a non-blocking error.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Transport } from "@ahp/core";
import { AARTS_PACKAGE_VERSION, type HookPoint } from "../catalog.js";
import { AhpBridge } from "../bridge/bridge.js";
import { EngineFailure } from "../errors.js";
import { AartsHost, MemorySubAgentRegistry, unansweredVerdict, type AuditRecord, type HookRegistration } from "../host/host.js";
import type { AartsEvent } from "../types.js";
import { failureVerdict } from "../host/policy.js";
import { FileStateStore } from "../host/state.js";
import { decodeHookInput, type HookRuntime, type NativeResponse } from "../hosts/common.js";
import { SUBPROCESS_HOSTS } from "../hosts/registry.js";
import { openTransport, parseConnect, type ConnectSpec } from "./connect.js";
import { parseArgs, resolveSettings, type HookCommandIo, type HookSettings, type ParsedArgs } from "./settings.js";
import { CLAUDE_ASK_HONOURED_SINCE, compareVersions } from "./versions.js";

export { MAX_HOOK_INPUT_BYTES, type HookCommandIo } from "./settings.js";

/**
 * `install`, `doctor` and the usage text, loaded when asked for: the one-file bin keeps them in
 * `dist/admin.cjs`, which a hook answered for a host never loads (ADR 0173).
 */
const admin = () => import("./admin.js");

/**
 * Milliseconds on a monotonic clock, for `--verbose` timings. Not `performance.now()`: the first
 * use of the `performance` global loads `perf_hooks` and nine internal modules, in every process.
 */
const msNow = () => {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
};

async function readAll(stdin: HookCommandIo["stdin"], limit: number): Promise<Uint8Array> {
  const tooLarge = () => new Error(`hook input exceeds ${limit} bytes`);
  if (typeof stdin === "string" || stdin instanceof Uint8Array) {
    const bytes = typeof stdin === "string" ? Buffer.from(stdin, "utf8") : stdin;
    if (bytes.byteLength > limit) throw tooLarge();
    return bytes;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const add = (chunk: Uint8Array | string) => {
    const b = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    size += b.length;
    if (size > limit) throw tooLarge();
    chunks.push(b);
  };
  if (isEventStream(stdin)) {
    // A Node stream (process.stdin) is read through its events, as a bare `node -e` reads it: its
    // async iterator would compile and run a good part of Node's stream utilities in every hook.
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        stdin.off("data", onData).off("end", onEnd).off("error", done).off("close", onClose);
        if (error === undefined) resolve();
        else {
          stdin.destroy();
          reject(error);
        }
      };
      const onData = (chunk: Uint8Array | string) => {
        try {
          add(chunk);
        } catch (error) {
          done(error as Error);
        }
      };
      const onEnd = () => done();
      const onClose = () => done(new Error("stdin closed before its end"));
      stdin.on("data", onData).on("end", onEnd).on("error", done).on("close", onClose);
    });
  } else {
    for await (const chunk of stdin) add(chunk);
  }
  return Buffer.concat(chunks);
}

/** The part of a Node readable stream {@link readAll} uses. */
interface EventStream {
  on(event: string, listener: (...args: never[]) => void): EventStream;
  off(event: string, listener: (...args: never[]) => void): EventStream;
  destroy(): unknown;
}

const isEventStream = (stdin: object): stdin is EventStream & AsyncIterable<Uint8Array | string> =>
  typeof (stdin as Partial<EventStream>).on === "function" &&
  typeof (stdin as Partial<EventStream>).off === "function" &&
  typeof (stdin as Partial<EventStream>).destroy === "function";

function write(io: HookCommandIo, response: NativeResponse): number {
  if (response.stdout !== "") io.stdout.write(response.stdout);
  if (response.stderr !== "") io.stderr.write(response.stderr);
  return response.exitCode;
}

/**
 * Runs the hook command. Resolves with the process exit code; never rejects. The caller writes
 * nothing else to stdout.
 */
export async function runHookCommand(argv: readonly string[], io: HookCommandIo): Promise<number> {
  const env = io.env ?? process.env;
  const args = parseArgs(argv);
  const [first, second] = args.positional;
  const prog = io.programName ?? "ahp-aarts-hook";
  if (args.flags.has("--help") || args.flags.has("-h") || first === "help") {
    io.stdout.write((await admin()).usage(prog));
    return 0;
  }
  if (args.flags.has("--version")) {
    io.stdout.write(`${AARTS_PACKAGE_VERSION}\n`);
    return 0;
  }
  if (first === "install") return (await admin()).runInstall(second, args, io, env);
  if (first === "doctor") return (await admin()).runDoctor(second, args.flags, io, env);
  const host = first === undefined ? undefined : SUBPROCESS_HOSTS[first];
  if (host === undefined) {
    io.stderr.write(`${first === undefined ? "missing host" : `unknown host ${JSON.stringify(first)}`}\n\n${(await admin()).usage(prog)}`);
    return 64;
  }
  return runHook(host.hostId, args, io, env);
}

/** How long the host lets a hook run before it kills it (`--host-timeout-ms`, else the host's default). */
const hostTimeoutOf = (hostId: string, settings: HookSettings) =>
  settings.hostTimeoutMs ?? (hostId === "claude-code" || hostId === "vscode" ? 60_000 : 30_000);

/** What the hook keeps back from the host's limit, to answer before it is killed. */
const marginOf = (hostTimeoutMs: number) => Math.max(2_000, Math.round(hostTimeoutMs * 0.1));

/**
 * Connection limit of every `--connect` target, and of the handshake: 10 s, within the host's
 * limit. Not `--timeout-ms`, which bounds the wait for a decision: a short decision wait must not
 * make a slow start of a live harness look like a harness that is down.
 */
const connectTimeoutOf = (hostId: string, settings: HookSettings) => {
  const host = hostTimeoutOf(hostId, settings);
  return Math.max(1_000, Math.min(10_000, host - marginOf(host) - 1_000));
};

/**
 * Starts connecting to every `unix:` harness at once, before stdin is read (keyed by position
 * in `settings.connect`): the connection is ready when the event is. Nothing is sent until the
 * bridge's version check takes the connection; a connection never taken is closed at the end.
 */
function preconnect(hostId: string, settings: HookSettings, errors: readonly string[], io: HookCommandIo): Map<number, Promise<Transport>> {
  const early = new Map<number, Promise<Transport>>();
  if (errors.length > 0) return early;
  settings.connect.forEach((value, i) => {
    let spec: ConnectSpec;
    try {
      spec = parseConnect(value);
    } catch {
      return; // reported once stdin has been read
    }
    if (spec.kind !== "unix") return;
    const opening = openTransport(spec, {
      ...(io.cwd === undefined ? {} : { cwd: io.cwd }),
      connectTimeoutMs: connectTimeoutOf(hostId, settings),
    });
    opening.catch(() => undefined); // the failure is the bridge's to report, when it takes the connection
    early.set(i, opening);
  });
  return early;
}

async function runHook(
  hostId: string,
  args: ParsedArgs,
  io: HookCommandIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const t0 = msNow();
  const { settings, errors } = resolveSettings(args, env);
  const early = preconnect(hostId, settings, errors, io);
  try {
    return await answerHook(hostId, settings, errors, early, io, env, t0);
  } finally {
    await Promise.allSettled([...early.values()].map((opening) => opening.then((transport) => transport.close())));
  }
}

async function answerHook(
  hostId: string,
  settings: HookSettings,
  errors: readonly string[],
  early: Map<number, Promise<Transport>>,
  io: HookCommandIo,
  env: Readonly<Record<string, string | undefined>>,
  t0: number,
): Promise<number> {
  const host = SUBPROCESS_HOSTS[hostId]!;
  const timings: Record<string, number> = {};
  const mark = (name: string, since: number) => (timings[name] = (timings[name] ?? 0) + (msNow() - since));
  const now = io.now ?? (() => new Date());
  const pendingWrites: Promise<unknown>[] = [];
  const log = (level: string, message: string) => {
    if (settings.verbose || level === "config") io.stderr.write(`ahp-aarts-hook: ${message}\n`);
    if (settings.auditLog !== undefined && (level === "error" || level === "config")) {
      pendingWrites.push(
        appendLine(settings.auditLog, { ts: now().toISOString(), level: level === "config" ? "error" : level, host_id: hostId, message }),
      );
    }
  };

  let input: Record<string, unknown> = {};
  const fail = (failure: EngineFailure): number => {
    const verdict = failureVerdict([failure], settings.failurePolicy);
    log("error", `${failure.failureCause}: ${failure.message}; ${settings.failurePolicy} applied`);
    return write(io, host.renderFailure(input, verdict, failure.engineId ?? "ahp-aarts-hook", settings.event));
  };

  let bytes: Uint8Array;
  try {
    const tRead = msNow();
    bytes = await readAll(io.stdin, settings.maxInputBytes);
    mark("stdin", tRead);
  } catch (error) {
    const code = fail(new EngineFailure("internal", `cannot read stdin: ${(error as Error).message}`));
    await Promise.allSettled(pendingWrites);
    return code;
  }
  try {
    input = decodeHookInput(bytes);
  } catch (error) {
    const code = fail(new EngineFailure("internal", (error as Error).message));
    await Promise.allSettled(pendingWrites);
    return code;
  }
  // A hook that is not usable (no harness, bad option) blocks whatever the failure policy says:
  // --fail-open is for a harness that is down, not for a hook that was never set up. The host's
  // deny answer goes to stdout, the reason to stderr, and the exit code is 2 (a block for
  // Claude Code, VS Code, Cursor and Windsurf).
  const configError = (problems: string[]): number => {
    for (const p of problems) log("config", p);
    const failure = new EngineFailure("incompatible", `configuration error: ${problems.join("; ")}`);
    write(io, host.renderFailure(input, failureVerdict([failure], "fail-closed"), "ahp-aarts-hook", settings.event));
    return 2;
  };
  if (errors.length > 0 || settings.connect.length === 0) {
    const problems =
      settings.connect.length === 0 ? [...errors, "no harness configured (--connect, AHP_CONNECT or the configuration file)"] : [...errors];
    const code = configError(problems);
    await Promise.allSettled(pendingWrites);
    return code;
  }

  let specs: ConnectSpec[];
  try {
    specs = settings.connect.map(parseConnect);
  } catch (error) {
    const code = configError([(error as Error).message]);
    await Promise.allSettled(pendingWrites);
    return code;
  }

  const canPrompt = new Set<HookPoint>(host.canPrompt(input, settings.event));
  const hostModifiable = host.modifiable(input, settings.event);
  const versionTimeout = connectTimeoutOf(hostId, settings);
  // The host kills the hook at its own limit; a decision still held for a person by then must
  // not become the host's default (allow). Wait up to the limit minus a margin, tell the harness
  // so (metadata.ahp_wait), and answer the host's own prompt (ask) or deny when nothing came.
  const hostTimeoutMs = hostTimeoutOf(hostId, settings);
  const margin = marginOf(hostTimeoutMs);
  const waitMs = settings.timeoutMs ?? hostTimeoutMs - margin - 1_000;
  const unanswered: "ask" | "deny" = canPrompt.size > 0 && askHonoured(hostId, settings.adapter.hostVersion) ? "ask" : "deny";
  const hooks: HookRegistration[] = specs.map((spec, i) => ({
    id: specs.length === 1 ? "ahp" : `ahp${i + 1}`,
    engine: new AhpBridge({
      transport: () => {
        const opened = early.get(i);
        early.delete(i);
        return (
          opened ??
          openTransport(spec, {
            ...(io.cwd === undefined ? {} : { cwd: io.cwd }),
            env,
            connectTimeoutMs: versionTimeout,
            requestTimeoutMs: Math.max(waitMs, 10_000),
          })
        );
      },
      remote: spec.remote,
      remoteTransmissionConsent: settings.remoteConsent,
      hostModifiable,
      ...(settings.modifyUnsupported === undefined ? {} : { modifyUnsupported: settings.modifyUnsupported }),
      lifecycleNotifications: settings.lifecycleNotifications,
      lifecycleGates: settings.lifecycleGates,
      announceWait: unanswered === "ask" ? "ask" : "block",
      handshakeTimeoutMs: versionTimeout,
      // Random UUIDs, drawn where the one-file bin draws them (src/hook/crypto-lite.ts).
      connectionId: randomUUID(),
      generateId: randomUUID,
      onlog: (entry) => log(entry.level, `bridge: ${entry.message}`),
    }),
  }));
  const audit = (record: AuditRecord) => {
    if (settings.auditLog !== undefined) pendingWrites.push(appendLine(settings.auditLog, record));
  };
  const aartsHost = new AartsHost({
    hooks,
    failurePolicy: settings.failurePolicy,
    mergePolicy: settings.mergePolicy,
    timeoutMs: waitMs,
    unanswered,
    versionCheckTimeoutMs: versionTimeout,
    recommendedTimeoutProceeds: settings.recommendedTimeoutProceeds,
    canPrompt: (hook) => canPrompt.has(hook),
    auditAllowSampleRate: settings.auditAllowSampleRate,
    onaudit: audit,
    onlog: (entry) => log(entry.level, entry.message),
    now,
  });
  const cwd = hostCwd(input);
  const runtime: HookRuntime = {
    evaluate: async (event, options) => {
      const tEval = msNow();
      try {
        return await aartsHost.evaluate(
          withWorkingDirectory(event, cwd),
          options?.subAgents === undefined ? {} : { subAgents: new MemorySubAgentRegistry(options.subAgents) },
        );
      } finally {
        mark("engine", tEval);
      }
    },
    notify: async (event) => {
      const tNotify = msNow();
      try {
        await aartsHost.notify(withWorkingDirectory(event, cwd));
      } finally {
        mark("engine", tNotify);
      }
    },
    state: new FileStateStore(settings.stateDir),
    now,
    options: settings.adapter,
  };

  // Safety net: whatever hangs, the host gets an answer before its own hook timeout, and that
  // answer is never allow (the harness may be holding the decision for a person).
  const budget = Math.max(1_000, hostTimeoutMs - 1_000);
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  const watchdogFailure = new EngineFailure("timeout", `hook did not finish within ${budget} ms`);
  const watchdogFired = (error: unknown) => error === watchdogFailure;
  let code: number;
  const tRun = msNow();
  try {
    const response = await Promise.race([
      host.run(input, runtime, settings.event),
      new Promise<never>((_, reject) => {
        watchdog = setTimeout(() => reject(watchdogFailure), budget);
      }),
    ]);
    code = write(io, response);
  } catch (error) {
    code = watchdogFired(error)
      ? write(io, host.renderFailure(input, unansweredVerdict(unanswered, "ahp-aarts-hook", budget), "ahp-aarts-hook", settings.event))
      : fail(
          EngineFailure.isInstance(error)
            ? error
            : new EngineFailure("internal", `adapter failed: ${(error as Error)?.message ?? String(error)}`, { cause: error }),
        );
  } finally {
    clearTimeout(watchdog);
    mark("adapter", tRun);
  }
  const tClose = msNow();
  await Promise.allSettled([aartsHost.close(), ...pendingWrites]);
  await Promise.allSettled(pendingWrites); // writes queued while closing
  mark("close", tClose);
  if (settings.verbose) {
    const ms = (n: number | undefined) => `${(n ?? 0).toFixed(1)} ms`;
    io.stderr.write(
      `ahp-aarts-hook: timings: total ${ms(msNow() - t0)} (stdin ${ms(timings.stdin)}, engine ${ms(timings.engine)} incl. connect and handshake, ` +
        `adapter state and rendering ${ms((timings.adapter ?? 0) - (timings.engine ?? 0))}, close ${ms(timings.close)})\n`,
    );
  }
  return code;
}

/**
 * Whether the host is known to hold a tool call its hook answered "ask" until the user agrees.
 * Claude Code 2.1.83 does not in print mode (`-p`, what SDK and ACP agents run): a tool in
 * `--allowedTools` then runs (found with the real CLI in the real-host rig); 2.1.332 does not run
 * it. A decision nobody answered is therefore denied unless the version is known to honour ask.
 */
function askHonoured(hostId: string, hostVersion: string | undefined): boolean {
  if (hostId !== "claude-code") return true;
  return hostVersion !== undefined && compareVersions(hostVersion, CLAUDE_ASK_HONOURED_SINCE) >= 0;
}

/** The host's working directory from its hook input (`cwd`, else the first workspace root). */
export function hostCwd(input: Record<string, unknown>): string | undefined {
  if (typeof input.cwd === "string" && input.cwd !== "") return input.cwd;
  for (const key of ["workspace_roots", "workspaceRoots"]) {
    const roots = input[key];
    if (Array.isArray(roots) && typeof roots[0] === "string" && roots[0] !== "") return roots[0];
  }
  return undefined;
}

/** The event with the host's working directory in `environment.working_directory` (kept when already set). */
function withWorkingDirectory<E extends AartsEvent>(event: E, cwd: string | undefined): E {
  if (cwd === undefined) return event;
  const environment = (event as { environment?: Record<string, unknown> }).environment;
  if (typeof environment?.working_directory === "string") return event;
  return { ...event, environment: { ...(environment ?? {}), working_directory: cwd } };
}

/** Appends one JSON line (synchronously: tiny, and off the thread pool on the hook's critical path). */
async function appendLine(file: string, record: unknown): Promise<void> {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  appendFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

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
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { Transport } from "@ahp/core";
import { AARTS_PACKAGE_VERSION, type HookPoint } from "../catalog.js";
import { AhpBridge } from "../bridge/bridge.js";
import type { ModifyUnsupported } from "../bridge/mapping.js";
import { EngineFailure } from "../errors.js";
import { AartsHost, MemorySubAgentRegistry, unansweredVerdict, type AuditRecord, type HookRegistration } from "../host/host.js";
import type { AartsEvent } from "../types.js";
import { failureVerdict, type FailurePolicy, type MergePolicy } from "../host/policy.js";
import { defaultStateDir, FileStateStore } from "../host/state.js";
import { mkdirp, readText, writeText } from "../host/fs-async.js";
import { decodeHookInput, type AdapterOptions, type HookRuntime, type NativeResponse } from "../hosts/common.js";
import { SUBPROCESS_HOSTS } from "../hosts/registry.js";
import { runDoctor } from "./doctor.js";
import { commandArgv, openTransport, parseConnect, type ConnectSpec } from "./connect.js";
import { CLAUDE_ASK_HONOURED_SINCE, compareVersions, INSTALL_HOSTS, installPlan, type InstallHost } from "./install.js";

/**
 * The process streams and environment {@link runHookCommand} works with; the bin passes the real
 * ones, tests and the `ahp hook` CLI command pass their own.
 */
export interface HookCommandIo {
  /** The host's hook JSON (a stream, or the bytes already read). */
  readonly stdin: AsyncIterable<Uint8Array | string> | Uint8Array | string;
  /** Receives the answer in the host's native format (nothing else is written to it). */
  readonly stdout: { write(chunk: string): unknown };
  /** Receives usage errors, host-specific messages and, with `--verbose`, diagnostics. */
  readonly stderr: { write(chunk: string): unknown };
  /** Environment variables read (`AHP_CONNECT`, `AHP_HOOK_*`, `HOME`, …); default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Working directory (relative socket paths, project-scope install targets); default `process.cwd()`. */
  readonly cwd?: string;
  /** Clock (tests). */
  readonly now?: () => Date;
  /** How the command is called, for usage text (`ahp hook` through the CLI). Default `ahp-aarts-hook`. */
  readonly programName?: string;
}

/**
 * Milliseconds on a monotonic clock, for `--verbose` timings. Not `performance.now()`: the first
 * use of the `performance` global loads `perf_hooks` and nine internal modules, in every process.
 */
const msNow = () => {
  const [s, ns] = process.hrtime();
  return s * 1e3 + ns / 1e6;
};

/** Largest hook input accepted (bytes). */
export const MAX_HOOK_INPUT_BYTES = 32 * 1024 * 1024;

const usage = (prog: string) => `Usage: ${prog} <host> [options]          read the host's hook JSON on stdin, answer natively
       ${prog} install <host> [options]  print (or --write) the host's hook configuration
       ${prog} doctor <host> [options]   prove the host will load the installed configuration
       ${prog} --help | --version

Hosts: ${Object.keys(SUBPROCESS_HOSTS).join(", ")}

Options:
  --connect SPEC          harness: unix:PATH | stdio:CMD | http(s)://URL | ws(s)://URL (repeatable)
  --fail-open             engine failures allow (AARTS default)
  --fail-closed           engine failures deny
  --timeout-ms N          verdict timeout for every hook (default: the host's limit minus a margin)
  --host-timeout-ms N     the host's own limit for this hook (default Claude Code / VS Code 60000,
                          others 30000); a decision held for a person past it is never allowed:
                          the host's own prompt answers (ask) where it has one, else deny
  --gate-lifecycle        send lifecycle hooks (SessionStart, PreCompact, Stop) as pre_action
                          gates a policy can refuse, instead of lifecycle notifications
  --merge POLICY          permissive (AARTS default) | strict (recommended for security) | majority
  --modify-unsupported M  deny | ask | allow: harness modification this host cannot apply
  --modify-as M           ask | allow: how Claude Code shows an applied modification (default ask)
  --remote-consent        allow sending events to an HTTP/WebSocket harness
  --config FILE           JSON configuration (default $AHP_HOOK_CONFIG, ~/.config/ahp/hook.json)
  --state-dir DIR         per-session state (default $AHP_HOOK_STATE_DIR, ~/.local/state/ahp/aarts)
  --audit-log FILE|none   decision log (default <state-dir>/audit.jsonl)
  --event NAME            native event name (Copilot CLI inputs do not carry it)
  --max-input-bytes N     largest hook input accepted (default 32 MiB)
  --verbose               diagnostics on stderr
Install options:
  --write                 write the configuration (user scope) instead of printing it
  --project               allow writing a project-scope configuration (Copilot CLI, VS Code)
  --command CMD           command to put in the configuration (default ahp-aarts-hook)
  --events A,B            restrict to these native events
  --host-version V        the host's version (default: \`claude --version\` for Claude Code)
  --approval-timeout-ms N the harness's --approval-timeout-ms: the per-hook timeout written fits it
Doctor options:
  --settings FILE         configuration to check (default: the file install writes)
  --claude CMD            Claude Code command to run the host's own check (default: claude)

Exit codes: 0 answered (the answer is on stdout); 2 blocked because the hook itself is not
usable (no harness configured, bad option: the reason is on stderr; hosts treat 2 as a block);
64 usage error. Recommended: a running harness on a Unix socket (\`ahp serve --unix PATH\`,
then --connect unix:PATH); --connect stdio: starts a whole harness for every tool call.

Environment: AHP_CONNECT, AHP_HOOK_FAILURE_POLICY, AHP_HOOK_TIMEOUT_MS, AHP_HOOK_MERGE,
AHP_HOOK_CONFIG, AHP_HOOK_STATE_DIR, AHP_REMOTE_CONSENT=1. Flags win over the environment,
which wins over the configuration file.
`;

interface HookSettings {
  connect: string[];
  maxInputBytes: number;
  failurePolicy: FailurePolicy;
  timeoutMs?: number;
  mergePolicy: MergePolicy;
  modifyUnsupported?: ModifyUnsupported;
  modifyAs?: "ask" | "allow";
  remoteConsent: boolean;
  stateDir: string;
  auditLog?: string;
  auditAllowSampleRate: number;
  event?: string;
  verbose: boolean;
  lifecycleNotifications: boolean;
  lifecycleGates: boolean;
  hostTimeoutMs?: number;
  recommendedTimeoutProceeds: boolean;
  adapter: AdapterOptions;
}

interface ParsedArgs {
  positional: string[];
  flags: Map<string, string[]>;
  errors: string[];
}

const VALUE_FLAGS = new Set([
  "--connect",
  "--timeout-ms",
  "--merge",
  "--config",
  "--state-dir",
  "--audit-log",
  "--event",
  "--modify-unsupported",
  "--modify-as",
  "--command",
  "--events",
  "--host-version",
  "--settings",
  "--max-input-bytes",
  "--host-timeout-ms",
  "--approval-timeout-ms",
  "--claude",
]);
const SWITCHES = new Set([
  "--fail-open",
  "--fail-closed",
  "--remote-consent",
  "--verbose",
  "--write",
  "--project",
  "--help",
  "-h",
  "--version",
  "--lifecycle-notifications",
  "--recommended-timeout-proceeds",
  "--gate-lifecycle",
]);

function parseArgs(argv: readonly string[]): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  const errors: string[] = [];
  const add = (k: string, v: string) => flags.set(k, [...(flags.get(k) ?? []), v]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("-")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (VALUE_FLAGS.has(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined) errors.push(`${name} needs a value`);
      else add(name, value);
    } else if (SWITCHES.has(name)) add(name, "");
    else errors.push(`unknown option ${arg}`);
  }
  return { positional, flags, errors };
}

const last = (args: ParsedArgs, name: string) => args.flags.get(name)?.at(-1);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function loadConfigFile(args: ParsedArgs, env: Readonly<Record<string, string | undefined>>, errors: string[]): Record<string, unknown> {
  const explicit = last(args, "--config") ?? (env.AHP_HOOK_CONFIG || undefined);
  const home = env.HOME ?? homedir();
  const path = explicit ?? join(env.XDG_CONFIG_HOME ?? join(home, ".config"), "ahp", "hook.json");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (explicit !== undefined) errors.push(`cannot read configuration ${path}: ${(error as Error).message}`);
    return {};
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (!isRecord(value)) throw new Error("not a JSON object");
    return value;
  } catch (error) {
    errors.push(`configuration ${path} is not valid: ${(error as Error).message}`);
    return {};
  }
}

/** Resolves settings from flags, environment and configuration file (in that order of precedence). */
function resolveSettings(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
): { settings: HookSettings; errors: string[] } {
  const errors = [...args.errors];
  const file = loadConfigFile(args, env, errors);
  const connectFlags = args.flags.get("--connect");
  const fileConnect =
    typeof file.connect === "string"
      ? [file.connect]
      : Array.isArray(file.connect)
        ? file.connect.filter((c): c is string => typeof c === "string")
        : [];
  const connect =
    connectFlags ??
    (env.AHP_CONNECT
      ? env.AHP_CONNECT.split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : fileConnect);

  let failurePolicy: FailurePolicy = "fail-open";
  const policySources = [
    args.flags.has("--fail-closed") ? "fail-closed" : args.flags.has("--fail-open") ? "fail-open" : undefined,
    env.AHP_HOOK_FAILURE_POLICY,
    typeof file.failurePolicy === "string" ? file.failurePolicy : undefined,
  ];
  if (args.flags.has("--fail-closed") && args.flags.has("--fail-open")) errors.push("--fail-open and --fail-closed are exclusive");
  const chosen = policySources.find((p) => p !== undefined && p !== "");
  if (chosen === "fail-closed" || chosen === "fail-open") failurePolicy = chosen;
  else if (chosen !== undefined) {
    errors.push(`unknown failure policy ${JSON.stringify(chosen)} (fail-open | fail-closed)`);
    failurePolicy = "fail-closed"; // a broken policy setting must not silently open
  }

  let timeoutMs: number | undefined;
  const timeoutText =
    last(args, "--timeout-ms") ?? env.AHP_HOOK_TIMEOUT_MS ?? (typeof file.timeoutMs === "number" ? String(file.timeoutMs) : undefined);
  if (timeoutText !== undefined) {
    const n = Number(timeoutText);
    if (!Number.isInteger(n) || n <= 0 || n > 600_000)
      errors.push(`--timeout-ms ${JSON.stringify(timeoutText)}: expected an integer 1..600000`);
    else timeoutMs = n;
  }

  const merge = last(args, "--merge") ?? env.AHP_HOOK_MERGE ?? (typeof file.mergePolicy === "string" ? file.mergePolicy : "permissive");
  if (merge !== "permissive" && merge !== "strict" && merge !== "majority") errors.push(`unknown merge policy ${JSON.stringify(merge)}`);
  const modifyUnsupported =
    last(args, "--modify-unsupported") ?? (typeof file.modifyUnsupported === "string" ? file.modifyUnsupported : undefined);
  if (modifyUnsupported !== undefined && !["deny", "ask", "allow"].includes(modifyUnsupported))
    errors.push(`unknown --modify-unsupported ${modifyUnsupported}`);
  const modifyAs = last(args, "--modify-as") ?? (typeof file.modifyAs === "string" ? file.modifyAs : undefined);
  if (modifyAs !== undefined && modifyAs !== "ask" && modifyAs !== "allow") errors.push(`unknown --modify-as ${modifyAs}`);

  const stateDir =
    last(args, "--state-dir") ??
    (env.AHP_HOOK_STATE_DIR || undefined) ??
    (typeof file.stateDir === "string" ? file.stateDir : defaultStateDir(env));
  const auditFlag = last(args, "--audit-log") ?? (typeof file.auditLog === "string" ? file.auditLog : undefined);
  const auditLog = auditFlag === "none" ? undefined : (auditFlag ?? join(stateDir, "audit.jsonl"));
  const sample = typeof file.auditAllowSampleRate === "number" ? file.auditAllowSampleRate : 0;
  const hostVersion = last(args, "--host-version") ?? (typeof file.hostVersion === "string" ? file.hostVersion : undefined);
  const toolMap = isRecord(file.toolMap)
    ? (Object.fromEntries(Object.entries(file.toolMap).filter(([, v]) => typeof v === "string")) as Record<string, string>)
    : undefined;
  const mcpTools = Array.isArray(file.mcpTools) ? file.mcpTools.filter((t): t is string => typeof t === "string") : undefined;
  const event = last(args, "--event");
  let hostTimeoutMs: number | undefined;
  const hostTimeoutText =
    last(args, "--host-timeout-ms") ??
    env.AHP_HOOK_HOST_TIMEOUT_MS ??
    (typeof file.hostTimeoutMs === "number" ? String(file.hostTimeoutMs) : undefined);
  if (hostTimeoutText !== undefined) {
    const n = Number(hostTimeoutText);
    if (!Number.isInteger(n) || n < 2_000 || n > 3_600_000)
      errors.push(`--host-timeout-ms ${JSON.stringify(hostTimeoutText)}: expected an integer 2000..3600000`);
    else hostTimeoutMs = n;
  }
  let maxInputBytes = MAX_HOOK_INPUT_BYTES;
  const maxText = last(args, "--max-input-bytes") ?? (typeof file.maxInputBytes === "number" ? String(file.maxInputBytes) : undefined);
  if (maxText !== undefined) {
    const n = Number(maxText);
    if (!Number.isInteger(n) || n < 2) errors.push(`--max-input-bytes ${JSON.stringify(maxText)}: expected an integer >= 2`);
    else maxInputBytes = n;
  }

  return {
    settings: {
      connect,
      maxInputBytes,
      failurePolicy,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      mergePolicy: (["permissive", "strict", "majority"].includes(merge) ? merge : "strict") as MergePolicy,
      ...(modifyUnsupported === "deny" || modifyUnsupported === "ask" || modifyUnsupported === "allow" ? { modifyUnsupported } : {}),
      ...(modifyAs === "ask" || modifyAs === "allow" ? { modifyAs } : {}),
      remoteConsent: args.flags.has("--remote-consent") || env.AHP_REMOTE_CONSENT === "1" || file.remoteTransmissionConsent === true,
      stateDir,
      ...(auditLog === undefined ? {} : { auditLog }),
      auditAllowSampleRate: Math.min(1, Math.max(0, sample)),
      ...(event === undefined ? {} : { event }),
      verbose: args.flags.has("--verbose"),
      lifecycleNotifications: args.flags.has("--lifecycle-notifications") || file.lifecycleNotifications === true,
      lifecycleGates: args.flags.has("--gate-lifecycle") || file.lifecycleGates === true,
      ...(hostTimeoutMs === undefined ? {} : { hostTimeoutMs }),
      recommendedTimeoutProceeds: args.flags.has("--recommended-timeout-proceeds") || file.recommendedTimeoutProceeds === true,
      adapter: {
        ...(modifyAs === "ask" || modifyAs === "allow" ? { modifyAs } : {}),
        ...(hostVersion === undefined ? {} : { hostVersion }),
        ...(toolMap === undefined ? {} : { toolMap }),
        ...(mcpTools === undefined ? {} : { mcpTools }),
        ...(env.HOME === undefined ? {} : { home: env.HOME }),
      },
    },
    errors,
  };
}

async function readAll(stdin: HookCommandIo["stdin"], limit: number): Promise<Uint8Array> {
  const tooLarge = () => new Error(`hook input exceeds ${limit} bytes`);
  if (typeof stdin === "string" || stdin instanceof Uint8Array) {
    const bytes = typeof stdin === "string" ? Buffer.from(stdin, "utf8") : stdin;
    if (bytes.byteLength > limit) throw tooLarge();
    return bytes;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    size += b.length;
    if (size > limit) throw tooLarge();
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

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
    io.stdout.write(usage(prog));
    return 0;
  }
  if (args.flags.has("--version")) {
    io.stdout.write(`${AARTS_PACKAGE_VERSION}\n`);
    return 0;
  }
  if (first === "install") return runInstall(second, args, io, env);
  if (first === "doctor") return runDoctor(second, args.flags, io, env);
  const host = first === undefined ? undefined : SUBPROCESS_HOSTS[first];
  if (host === undefined) {
    io.stderr.write(`${first === undefined ? "missing host" : `unknown host ${JSON.stringify(first)}`}\n\n${usage(prog)}`);
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

/** `claude --version` → `2.1.83`, or undefined when it cannot be run or read. */
async function detectClaudeVersion(command: string, env: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const argv = commandArgv(command);
  if (argv.length === 0) return undefined;
  // Loaded here only: the hook itself never starts a process.
  const { execFileSync } = await import("node:child_process");
  try {
    const out = execFileSync(argv[0]!, [...argv.slice(1), "--version"], {
      encoding: "utf8",
      timeout: 15_000,
      stdio: ["ignore", "pipe", "ignore"],
      env: env,
    });
    return /\d+\.\d+\.\d+/.exec(out)?.[0];
  } catch {
    return undefined;
  }
}

/** Quotes one argument for a POSIX shell command line inside a configuration file. */
function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

async function runInstall(
  host: string | undefined,
  args: ParsedArgs,
  io: HookCommandIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  if (host === undefined || !(INSTALL_HOSTS as readonly string[]).includes(host)) {
    io.stderr.write(
      `install: ${host === undefined ? "missing host" : `unknown host ${JSON.stringify(host)}`} (${INSTALL_HOSTS.join(", ")})\n`,
    );
    return 64;
  }
  if (args.errors.length > 0) {
    io.stderr.write(`install: ${args.errors.join("; ")}\n`);
    return 64;
  }
  const { settings, errors } = resolveSettings(args, env);
  if (errors.length > 0) {
    io.stderr.write(`install: ${errors.join("; ")}\n`);
    return 64;
  }
  // Options to embed in the installed command line (explicit flags only; env/config stay where they are).
  const embed: string[] = [];
  for (const c of args.flags.get("--connect") ?? []) embed.push("--connect", shellQuote(c));
  if (args.flags.has("--fail-closed")) embed.push("--fail-closed");
  for (const name of ["--timeout-ms", "--merge", "--modify-unsupported", "--modify-as", "--config", "--state-dir", "--audit-log"]) {
    const v = last(args, name);
    if (v !== undefined) embed.push(name, shellQuote(v));
  }
  if (args.flags.has("--remote-consent")) embed.push("--remote-consent");
  if (args.flags.has("--gate-lifecycle")) embed.push("--gate-lifecycle");
  // The per-hook timeout the host gets: Claude Code's default (60 s), or long enough for a
  // person to answer within the harness's --approval-timeout-ms; the hook is told the same.
  let hookTimeoutSec = host === "copilot-cli" ? 30 : 60;
  const approvalText = last(args, "--approval-timeout-ms");
  if (approvalText !== undefined) {
    const n = Number(approvalText);
    if (!Number.isInteger(n) || n <= 0 || n > 3_000_000) {
      io.stderr.write(`install: --approval-timeout-ms ${JSON.stringify(approvalText)}: expected an integer 1..3000000\n`);
      return 64;
    }
    hookTimeoutSec = Math.max(hookTimeoutSec, Math.ceil(n / 1000) + 15);
  }
  if (!args.flags.has("--host-timeout-ms") && host !== "cline" && host !== "windsurf" && host !== "cursor")
    embed.push("--host-timeout-ms", String(hookTimeoutSec * 1000));
  else if (args.flags.has("--host-timeout-ms")) embed.push("--host-timeout-ms", shellQuote(last(args, "--host-timeout-ms")!));
  let hostVersion = last(args, "--host-version");
  if (hostVersion === undefined && host === "claude-code") hostVersion = await detectClaudeVersion(last(args, "--claude") ?? "claude", env);
  // The hook is told the version too: how it answers a decision nobody answered depends on it.
  if (hostVersion !== undefined && host === "claude-code") embed.push("--host-version", shellQuote(hostVersion));
  const events = last(args, "--events")
    ?.split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  let plan;
  try {
    plan = installPlan(host as InstallHost, {
      command: last(args, "--command") ?? "ahp-aarts-hook",
      args: embed,
      failClosed: settings.failurePolicy === "fail-closed",
      home: env.HOME ?? homedir(),
      cwd: io.cwd ?? process.cwd(),
      ...(events === undefined ? {} : { events }),
      ...(hostVersion === undefined ? {} : { hostVersion }),
      hookTimeoutSec,
    });
  } catch (error) {
    io.stderr.write(`install: ${(error as Error).message}\n`);
    return 64;
  }
  const target = last(args, "--settings") ?? plan.path;
  const advice: string[] = [];
  const connects = args.flags.get("--connect") ?? [];
  if (connects.length === 0)
    advice.push("no --connect given: the hook needs AHP_CONNECT or a configuration file, else it blocks every call (exit 2)");
  if (connects.length === 0 || connects.some((c) => c.startsWith("stdio:")))
    advice.push(
      "recommended: keep a harness running on a Unix socket (ahp serve --unix ~/.ahp/harness.sock) and install with --connect unix:~/.ahp/harness.sock; --connect stdio: starts a whole harness for every tool call",
    );
  if (host === "claude-code")
    advice.push(
      `per-hook timeout written: ${hookTimeoutSec} s${approvalText === undefined ? " (fit it to the harness with --approval-timeout-ms)" : ""}`,
    );
  const notes = [...plan.notes, ...advice];
  if (!args.flags.has("--write")) {
    io.stdout.write(plan.text);
    io.stderr.write(
      `# ${plan.scope} scope: ${target}\n${notes.map((n) => `# ${n}`).join("\n")}\n# add --write to install it${plan.scope === "project" ? " (with --project)" : ""}\n`,
    );
    return 0;
  }
  if (plan.scope === "project" && !args.flags.has("--project")) {
    io.stderr.write(`install: ${host} hooks are configured per project (${target}); add --project to write there\n`);
    return 64;
  }
  try {
    if (plan.files !== undefined) {
      await mkdirp(target);
      for (const [name, content] of Object.entries(plan.files)) await writeText(join(target, name), content, 0o755);
      io.stderr.write(`wrote ${Object.keys(plan.files).length} hook scripts to ${target}\n`);
      return 0;
    }
    let existing: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(await readText(target)) as unknown;
      if (!isRecord(parsed)) throw new Error("not a JSON object");
      existing = parsed;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        io.stderr.write(`install: ${target} exists but is not a JSON object (${(error as Error).message}); not modified\n`);
        return 1;
      }
    }
    await mkdirp(dirname(target));
    await writeText(target, `${JSON.stringify(plan.merge!(existing), null, 2)}\n`);
    io.stderr.write(`updated ${target}\n${notes.map((n) => `# ${n}`).join("\n")}\n`);
    return 0;
  } catch (error) {
    io.stderr.write(`install: cannot write ${target}: ${(error as Error).message}\n`);
    return 1;
  }
}

/**
 * The hook command's options: its arguments parsed, then resolved against the environment and the
 * configuration file. Shared by answering a hook (`command.ts`) and by `install` (`admin.ts`).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ModifyUnsupported } from "../bridge/mapping.js";
import type { FailurePolicy, MergePolicy } from "../host/policy.js";
import { defaultStateDir } from "../host/state.js";
import type { AdapterOptions } from "../hosts/common.js";

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

/** Largest hook input accepted (bytes). */
export const MAX_HOOK_INPUT_BYTES = 32 * 1024 * 1024;

export interface HookSettings {
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

export interface ParsedArgs {
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

export function parseArgs(argv: readonly string[]): ParsedArgs {
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

export const last = (args: ParsedArgs, name: string) => args.flags.get(name)?.at(-1);
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

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
export function resolveSettings(
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

/**
 * What the hook command does besides answering hooks: `install`, `doctor` and its usage text.
 * Loaded only when asked for, so that the process a host spawns for every tool call does not load
 * them (the one-file bin keeps this module in `dist/admin.cjs`, ADR 0173).
 */
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { mkdirp, readText, writeText } from "../host/fs-async.js";
import { commandArgv } from "./connect.js";
import { INSTALL_HOSTS, installPlan, type InstallHost } from "./install.js";
import { isRecord, last, resolveSettings, type HookCommandIo, type ParsedArgs } from "./settings.js";

export { runDoctor } from "./doctor.js";

/** The usage text of the hook command, as `prog` (`ahp-aarts-hook`, `ahp hook`). */
export const usage = (prog: string) => `Usage: ${prog} <host> [options]          read the host's hook JSON on stdin, answer natively
       ${prog} install <host> [options]  print (or --write) the host's hook configuration
       ${prog} doctor <host> [options]   prove the host will load the installed configuration
       ${prog} --help | --version

Hosts: ${INSTALL_HOSTS.join(", ")}

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

/** `claude --version` → `2.1.83`, or undefined when it cannot be run or read. */
async function detectClaudeVersion(command: string, env: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const argv = commandArgv(command);
  if (argv.length === 0) return undefined;
  // Loaded here only: the hook itself never starts a process.
  const { execFileSync } = await import("node:child_process");
  try {
    const out = execFileSync(argv[0]!, [...argv.slice(1), "--version"], {
      encoding: "utf8",
      // Generous: Claude Code loads a large bundle, which on a busy machine takes many seconds.
      timeout: 60_000,
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

export async function runInstall(
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

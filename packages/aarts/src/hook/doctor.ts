/**
 * `doctor <host>`: proves the host will load the hook configuration `install` wrote.
 *
 * 1. The configuration is read and every hook event in it is checked against the events the
 *    host's version accepts (Claude Code ignores the whole file when it meets one it does not
 *    know).
 * 2. For Claude Code, the host's own check: the real CLI is started once in a scratch HOME holding
 *    a copy of the settings whose hook commands are replaced by a marker, with the model API
 *    pointed at a closed loopback port. The settings loaded only when the `SessionStart` marker
 *    appears. Nothing of the user's runs (no hook command, no model request succeeds).
 *
 * Exit code 0 when the configuration will load, 1 when it will not (or cannot be read), 64 on
 * usage errors.
 */
import { createServer } from "node:net";
import { existsSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { commandArgv } from "./connect.js";
import { claudeEventsFor, INSTALL_HOSTS, installPlan, type InstallHost } from "./install.js";

interface DoctorIo {
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
  readonly cwd?: string;
}

/** Claude Code events this project does not register but Claude Code knows (left alone by the check). */
const CLAUDE_OTHER_EVENTS = ["Notification", "PermissionRequest"];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export async function runDoctor(
  host: string | undefined,
  flags: ReadonlyMap<string, string[]>,
  io: DoctorIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const last = (name: string) => flags.get(name)?.at(-1);
  if (host === undefined || !(INSTALL_HOSTS as readonly string[]).includes(host)) {
    io.stderr.write(
      `doctor: ${host === undefined ? "missing host" : `unknown host ${JSON.stringify(host)}`} (${INSTALL_HOSTS.join(", ")})\n`,
    );
    return 64;
  }
  const home = env.HOME ?? homedir();
  const plan = installPlan(host as InstallHost, {
    command: "ahp-aarts-hook",
    args: [],
    failClosed: false,
    home,
    cwd: io.cwd ?? process.cwd(),
  });
  const target = last("--settings") ?? plan.path;
  const say = (line: string) => io.stdout.write(`${line}\n`);
  if (plan.files !== undefined) {
    // Script hosts (Cline): one executable per hook type.
    const missing = Object.keys(plan.files).filter((name) => !existsSync(join(target, name)));
    say(`${host}: hook scripts in ${target}: ${missing.length === 0 ? "all present" : `missing ${missing.join(", ")}`}`);
    say(`${host}: no host check available; the scripts are run by name`);
    return missing.length === 0 ? 0 : 1;
  }
  let settings: Record<string, unknown>;
  try {
    // Loaded here only: a hook run never needs node:fs/promises.
    const { readFile } = await import("node:fs/promises");
    const parsed = JSON.parse(await readFile(target, "utf8")) as unknown;
    if (!isRecord(parsed)) throw new Error("not a JSON object");
    settings = parsed;
  } catch (error) {
    say(`${host}: cannot read ${target}: ${(error as Error).message}`);
    return 1;
  }
  const hooks = isRecord(settings.hooks) ? settings.hooks : {};
  const events = Object.keys(hooks);
  if (events.length === 0) {
    say(`${host}: ${target} has no hooks`);
    return 1;
  }
  if (host !== "claude-code") {
    const known = JSON.parse(plan.text) as { hooks: Record<string, unknown> };
    const unknown = events.filter((e) => !(e in known.hooks));
    say(
      `${host}: ${target}: events ${events.join(", ")}${unknown.length > 0 ? `; not known to this installer: ${unknown.join(", ")}` : ""}`,
    );
    say(`${host}: no host check available for this host; the configuration was checked against the installer's event list`);
    return unknown.length === 0 ? 0 : 1;
  }

  const claude = last("--claude") ?? "claude";
  const version = last("--host-version") ?? (await claudeVersion(claude, env));
  const accepted = new Set([...claudeEventsFor(version), ...CLAUDE_OTHER_EVENTS]);
  const rejected = events.filter((e) => !accepted.has(e));
  say(`claude-code ${version ?? "(version unknown: `claude --version` failed)"}: ${target}: events ${events.join(", ")}`);
  if (rejected.length > 0) {
    say(
      `claude-code: NOT LOADED: ${rejected.join(", ")} ${rejected.length === 1 ? "is" : "are"} not accepted by this version; ` +
        "Claude Code then ignores every hook in the file. Reinstall: ahp hook install claude-code --write",
    );
    return 1;
  }
  if (version === undefined) {
    say("claude-code: the host's own check needs the claude command (--claude CMD)");
    return 1;
  }
  const loaded = await claudeLoadsHooks(claude, settings, env);
  say(
    loaded
      ? "claude-code: the host's own check passed: Claude Code ran a SessionStart hook from these settings"
      : "claude-code: the host's own check FAILED: Claude Code ran no hook from these settings",
  );
  return loaded ? 0 : 1;
}

async function claudeVersion(command: string, env: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const argv = commandArgv(command);
  if (argv.length === 0) return undefined;
  const { execFile } = await import("node:child_process");
  return new Promise((resolve) => {
    // Generous, as in the installer: Claude Code loads a large bundle, which on a busy machine takes many seconds.
    execFile(argv[0]!, [...argv.slice(1), "--version"], { timeout: 60_000, env: env }, (error, stdout) =>
      resolve(error ? undefined : /\d+\.\d+\.\d+/.exec(String(stdout))?.[0]),
    );
  });
}

/** A loopback port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Runs the real CLI once in a scratch HOME; true when a SessionStart hook of the settings ran. */
async function claudeLoadsHooks(command: string, settings: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>) {
  const { mkdtemp, mkdir, rm, writeFile } = await import("node:fs/promises");
  const argv = commandArgv(command);
  const scratch = await mkdtemp(join(tmpdir(), "ahp-hook-doctor-"));
  const marker = join(scratch, "loaded");
  try {
    const hooks = settings.hooks as Record<string, unknown>;
    const probe: Record<string, unknown> = {};
    const markerCommand = `node -e "require('fs').writeFileSync(process.argv[1],'1')" ${JSON.stringify(marker)}`;
    for (const [event, groups] of Object.entries(hooks)) {
      // Same events and matchers; every command replaced so nothing of the user's runs.
      probe[event] = Array.isArray(groups)
        ? (groups as unknown[]).map((g: unknown) =>
            isRecord(g) ? { ...g, hooks: [{ type: "command", command: event === "SessionStart" ? markerCommand : "true" }] } : g,
          )
        : groups;
    }
    if (!Array.isArray(probe.SessionStart)) probe.SessionStart = [{ hooks: [{ type: "command", command: markerCommand }] }];
    await mkdir(join(scratch, "home", ".claude"), { recursive: true });
    await mkdir(join(scratch, "project"));
    await writeFile(join(scratch, "home", ".claude", "settings.json"), JSON.stringify({ ...settings, hooks: probe }));
    const port = await closedPort();
    const { spawn } = await import("node:child_process");
    const child = spawn(argv[0]!, [...argv.slice(1), "-p", "ping", "--output-format", "json"], {
      cwd: join(scratch, "project"),
      env: {
        PATH: env.PATH,
        HOME: join(scratch, "home"),
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
        ANTHROPIC_API_KEY: "doctor-probe",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
      },
      stdio: "ignore",
      detached: true,
    });
    const deadline = Date.now() + 60_000;
    const exited = new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.once("error", () => resolve());
    });
    let done = false;
    void exited.then(() => (done = true));
    while (!existsSync(marker) && !done && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await exited;
    return existsSync(marker);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * `ahp hook doctor claude-code` against the real Claude Code: the settings the installer writes
 * pass the host's own check; a file with an event the version does not know (what the installer
 * used to write for 2.1.83) is reported as not loaded, and the host's own check agrees.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AHP_CLI } from "../src/harness.js";
import { claudeCliPath, ensureHost, HOSTS } from "../src/hosts.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function ahp(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [AHP_CLI, ...args], { env: { ...process.env, ...env }, timeout: 180_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs `argv` with `args` to its end (bounded at 180 s); its standard output. */
function execFileText(argv: readonly string[], args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(argv[0]!, [...argv.slice(1), ...args], { timeout: 180_000 }, (error, stdout) =>
      error ? reject(new Error(`${argv.join(" ")} failed`, { cause: error })) : resolve(stdout),
    );
  });
}

/** Milliseconds `run` took. */
async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.each([
  ["claudeAgentSdk", "2.1.83"],
  ["claudeCode", HOSTS.claudeCode.version],
] as const)("ahp hook doctor with the real Claude Code via %s (%s)", (key, version) => {
  it("passes the installed settings; a file the version would ignore is reported, and the host's own check agrees", async () => {
    const host = await ensureHost(key);
    const claude = claudeCliPath(host).map(quote).join(" ");
    const home = await mkdtemp(join(tmpdir(), "ahp-rh-doctor-"));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    await mkdir(join(home, ".claude"));
    const env = { HOME: home };
    // The installer and the doctor give `claude --version` 15 s and 30 s and then go on without a
    // version; how long it takes here is said with any failure below.
    const versionMs = await timed(() => execFileText(claudeCliPath(host), ["--version"]));
    const slow = `(\`claude --version\` took ${Math.round(versionMs)} ms here)`;
    const installed = await ahp(["hook", "install", "claude-code", "--write", "--connect", "unix:/nowhere.sock", "--claude", claude], env);
    expect(installed.code, installed.stderr).toBe(0);
    // The installer asked the real CLI for its version.
    expect(installed.stderr, slow).toContain(`Claude Code ${version}: events written`);
    const good = await ahp(["hook", "doctor", "claude-code", "--claude", claude], env);
    expect(good.stdout, slow).toContain(`claude-code ${version}: `);
    expect(good.stdout).toContain("the host's own check passed");
    expect(good.code, good.stdout).toBe(0);

    // What the installer used to write: PermissionDenied next to the rest.
    const settingsPath = join(home, ".claude", "settings.json");
    const settings = JSON.parse(await readFile(settingsPath, "utf8")) as { hooks: Record<string, unknown> };
    settings.hooks.PermissionDenied = [{ matcher: "*", hooks: [{ type: "command", command: "true" }] }];
    await writeFile(settingsPath, JSON.stringify(settings));
    const withNewEvent = await ahp(["hook", "doctor", "claude-code", "--claude", claude], env);
    if (version === "2.1.83") {
      expect(withNewEvent.code).toBe(1);
      expect(withNewEvent.stdout).toContain("NOT LOADED: PermissionDenied");
      // The host's own check, forced past the static one, agrees: no hook runs at all.
      const forced = await ahp(["hook", "doctor", "claude-code", "--claude", claude, "--host-version", "99.0.0"], env);
      expect(forced.code).toBe(1);
      expect(forced.stdout).toContain("the host's own check FAILED");
    } else {
      expect(withNewEvent.code, withNewEvent.stdout).toBe(0);
      expect(withNewEvent.stdout).toContain("the host's own check passed");
    }
  });
});

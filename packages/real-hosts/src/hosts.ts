/**
 * The real agent hosts the rig drives, pinned, and their installation into a shared cache.
 *
 * Each host is installed once with npm into `<cache>/<pkg>@<version>` (the cache is
 * `AHP_REAL_HOSTS_CACHE`, else `~/.cache/ahp-real-hosts`). Several test files may ask for the
 * same host at once: the install goes into a private temporary folder that is renamed into
 * place when complete, so a reader never sees half an install, and a lock folder keeps the
 * others waiting rather than downloading the same thing again.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, rename, rm, rmdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

export const HOSTS = {
  /** Ships Claude Code 2.1.83 as `cli.js` (the version claude-agent-acp 0.23.1 runs). */
  claudeAgentSdk: { pkg: "@anthropic-ai/claude-agent-sdk", version: "0.2.83" },
  /** The newest Claude Code on the registry when pinned: a native binary in a platform package. */
  claudeCode: { pkg: "@anthropic-ai/claude-code", version: "2.1.332" },
  claudeAgentAcp: { pkg: "@zed-industries/claude-agent-acp", version: "0.23.1" },
  codexAcp: { pkg: "@zed-industries/codex-acp", version: "0.16.0" },
  geminiCli: { pkg: "@google/gemini-cli", version: "0.61.0" },
  copilot: { pkg: "@github/copilot", version: "1.0.102" },
  cline: { pkg: "cline", version: "3.0.65" },
  acpSdk: { pkg: "@agentclientprotocol/sdk", version: "1.9.0" },
} as const;

export type HostKey = keyof typeof HOSTS;

export interface InstalledHost {
  /** The npm prefix the host is installed in. */
  dir: string;
  version: string;
  /** The host package's own folder, `<dir>/node_modules/<pkg>`. */
  pkgDir: string;
}

/** The cache folder: `AHP_REAL_HOSTS_CACHE`, else `~/.cache/ahp-real-hosts`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.AHP_REAL_HOSTS_CACHE || join(homedir(), ".cache", "ahp-real-hosts");
}

const INSTALL_TIMEOUT_MS = 10 * 60_000;
/** A lock older than this is left over from a killed install and is taken over. */
const STALE_LOCK_MS = INSTALL_TIMEOUT_MS + 60_000;

function installed(dir: string, pkg: string): boolean {
  return existsSync(join(dir, "node_modules", pkg, "package.json"));
}

/** Installs (once) and locates a pinned host. */
export async function ensureHost(key: HostKey): Promise<InstalledHost> {
  const { pkg, version } = HOSTS[key];
  const spec = `${pkg}@${version}`;
  const dir = join(cacheDir(), spec);
  const pkgDir = join(dir, "node_modules", pkg);
  const result = { dir, version, pkgDir };
  if (installed(dir, pkg)) return result;
  await mkdir(join(dir, ".."), { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + INSTALL_TIMEOUT_MS + 120_000;
  for (;;) {
    if (installed(dir, pkg)) return result;
    if (await takeLock(lock)) break;
    if (Date.now() > deadline) throw new Error(`timed out waiting for another install of ${spec} (lock ${lock})`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  try {
    if (installed(dir, pkg)) return result;
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    await mkdir(tmp, { recursive: true });
    try {
      await npmInstall(tmp, spec);
      await rm(dir, { recursive: true, force: true });
      await rename(tmp, dir);
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      throw error;
    }
    if (!installed(dir, pkg)) throw new Error(`npm installed ${spec} but ${pkgDir} is missing`);
    return result;
  } finally {
    await rmdir(lock).catch(() => undefined);
  }
}

async function takeLock(lock: string): Promise<boolean> {
  try {
    await mkdir(lock);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const info = await stat(lock).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_LOCK_MS) await rmdir(lock).catch(() => undefined);
    return false;
  }
}

function npmInstall(prefix: string, spec: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      "npm",
      ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", spec],
      { timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (error) reject(new Error(`npm install ${spec} failed: ${error.message}\n${stderr}`));
        else resolve();
      },
    );
  });
}

/**
 * The Claude Code CLI inside an installed package, as the argv prefix to run it: `[node, cli.js]`
 * when the package ships `cli.js` (the agent SDK, older claude-code), else the native binary
 * that newer claude-code ships in a platform package (`@anthropic-ai/claude-code-<os>-<arch>`).
 */
export function claudeCliPath(host: InstalledHost): string[] {
  const cliJs = join(host.pkgDir, "cli.js");
  if (existsSync(cliJs)) return [process.execPath, cliJs];
  const scope = join(host.dir, "node_modules", "@anthropic-ai");
  const platform = `claude-code-${process.platform}-${process.arch}`;
  const candidates = existsSync(scope) ? readdirSync(scope).filter((name) => name.startsWith(platform) && !name.includes("musl")) : [];
  for (const name of candidates) {
    const manifest = JSON.parse(readFileSync(join(scope, name, "package.json"), "utf8")) as {
      bin?: string | Record<string, string>;
    };
    const bins = typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {});
    for (const file of [...bins, "claude", "bin/claude"]) {
      const path = join(scope, name, file);
      if (existsSync(path)) return [path];
    }
  }
  const bin = join(host.pkgDir, "bin", "claude.exe");
  if (existsSync(bin)) return [bin];
  throw new Error(`no Claude Code CLI found in ${host.pkgDir} (looked for cli.js and ${platform})`);
}

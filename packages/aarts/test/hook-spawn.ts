/**
 * Spawning the built hook command as a host does, for the tests of the one-file bin
 * (`e2e/hook-bin.test.ts`) and of the installed command (`hook-launch.test.ts`): the outputs
 * (`dist/bin.cjs`, `dist/launch.cjs`, `dist/admin.cjs`) are rebuilt first when missing or older
 * than the sources, and one spawn gives back exit code, stdout, stderr and the answer parsed.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package directory. */
export const pkg = fileURLToPath(new URL("../", import.meta.url));
/** The one-file bin (`node dist/bin.cjs …` runs the command without the code cache). */
export const bin = join(pkg, "dist", "bin.cjs");
/** The installed command: the launcher that loads the bin through V8's code cache. */
export const launcher = join(pkg, "bin", "ahp-aarts-hook.cjs");

const outputs = { bin, launch: join(pkg, "dist", "launch.cjs"), admin: join(pkg, "dist", "admin.cjs") };
const sources = { bin: "src/bin.ts", launch: "src/hook/launch.ts", admin: "src/hook/admin.ts" };

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Rebuilds the bin's outputs with the package's own build configuration when any is missing or stale. */
export async function ensureHookBuilt(): Promise<void> {
  const newest = Math.max(newestSource(join(pkg, "src")), newestSource(join(pkg, "..", "core", "src")));
  if (Object.values(outputs).every((file) => existsSync(file) && statSync(file).mtimeMs > newest)) return;
  const { build } = await import("tsup");
  const configs = (await import("../tsup.config.js")).default as unknown as Record<string, unknown>[];
  const binConfig = configs.find((c) => JSON.stringify(c.entry).includes("launch"))!;
  await build({
    ...binConfig,
    entry: Object.fromEntries(Object.entries(sources).map(([name, file]) => [name, join(pkg, file)])),
    outDir: join(pkg, "dist"),
    tsconfig: join(pkg, "tsconfig.json"),
    config: false,
    silent: true,
  });
}

/** What one spawn ended with. */
export interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when empty or not JSON). */
  json: unknown;
  /** Wall-clock time from spawn to exit. */
  ms: number;
}

/**
 * Runs `node <nodeArgs>` with `input` on stdin and only `env` in its environment; killed
 * (SIGKILL) after `timeoutMs` (default 60 s).
 */
export function spawnHook(nodeArgs: string[], input: string, env: Record<string, string>, timeoutMs = 60_000): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, nodeArgs, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      let json: unknown;
      try {
        json = stdout.trim() === "" ? undefined : JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json, ms: Date.now() - started });
    });
    child.stdin.end(input);
  });
}

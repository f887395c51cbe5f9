/**
 * The installed command (`bin/ahp-aarts-hook.cjs`, the launcher of `dist/launch.cjs`) spawned as a
 * host spawns it, against a real AhpServer on a Unix socket: it answers as the bin does, writes
 * V8's code cache after the first answered hook and uses it afterwards, recovers from a corrupt
 * cache, stays fail-closed, and never loads `node:crypto` on the way. The cache file helpers are
 * tested directly.
 *
 * `dist/bin.cjs` and `dist/launch.cjs` are rebuilt first when missing or older than the sources.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeCacheDir, codeCacheFile, writeCodeCache } from "../src/hook/launch.js";
import { startUnixHarness, testPolicy, type UnixHarness } from "./unix-harness.js";

const pkg = fileURLToPath(new URL("../", import.meta.url));
const launcher = join(pkg, "bin", "ahp-aarts-hook.cjs");
const outputs = [join(pkg, "dist", "bin.cjs"), join(pkg, "dist", "launch.cjs")];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

async function ensureBuilt(): Promise<void> {
  const sources = Math.max(newestSource(join(pkg, "src")), newestSource(join(pkg, "..", "core", "src")));
  if (outputs.every((file) => existsSync(file) && statSync(file).mtimeMs > sources)) return;
  const { build } = await import("tsup");
  const configs = (await import("../tsup.config.js")).default as unknown as Record<string, unknown>[];
  const binConfig = configs.find((c) => JSON.stringify(c.entry).includes("launch"))!;
  await build({
    ...binConfig,
    entry: { bin: join(pkg, "src", "bin.ts"), launch: join(pkg, "src", "hook", "launch.ts") },
    outDir: join(pkg, "dist"),
    tsconfig: join(pkg, "tsconfig.json"),
    config: false,
    silent: true,
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(nodeArgs: string[], args: string[], input: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, launcher, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

const bash = readFileSync(new URL("./fixtures/hosts/claude-code/pre-tool-use-bash.json", import.meta.url), "utf8");
const rm = readFileSync(new URL("./fixtures/hosts/claude-code/pre-tool-use-rm.json", import.meta.url), "utf8");

let harness: UnixHarness;
let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  harness = await startUnixHarness(testPolicy);
  dir = mkdtempSync(join(tmpdir(), "aarts-launch-"));
}, 120_000);
afterAll(async () => {
  await harness?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh home whose cache directory is `<home>/cache/ahp/aarts`. */
function freshHome(name: string): { env: Record<string, string>; cacheDir: string } {
  const home = join(dir, name);
  mkdirSync(home);
  return {
    env: { HOME: home, XDG_CACHE_HOME: join(home, "cache"), AHP_HOOK_STATE_DIR: join(home, "state") },
    cacheDir: join(home, "cache", "ahp", "aarts"),
  };
}
const caches = (cacheDir: string) => (existsSync(cacheDir) ? readdirSync(cacheDir).filter((f) => f.endsWith(".v8cache")) : []);
const hookArgs = () => ["claude-code", "--connect", `unix:${harness.path}`];

describe("the installed command (launcher with V8's code cache)", () => {
  it("answers like the bin, writes the cache after the first hook and reads it afterwards", async () => {
    const { env, cacheDir } = freshHome("cache-cycle");
    const version = await run([], ["--version"], "", env);
    expect(version).toMatchObject({ code: 0, stdout: "0.1.0\n" });
    expect(caches(cacheDir)).toEqual([]); // only a run that answered a hook writes the cache

    expect(await run([], hookArgs(), bash, env)).toMatchObject({ code: 0, stdout: "{}\n", stderr: "" });
    const [file] = caches(cacheDir);
    expect(file).toMatch(/^bin-\d+-\d+-.+\.v8cache$/);
    const written = statSync(join(cacheDir, file!));
    expect(written.size).toBeGreaterThan(10_000);
    expect(written.mode & 0o777).toBe(0o600);

    // Accepted: answered again and the cache is not rewritten.
    const denied = await run([], hookArgs(), rm, env);
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "destructive command" },
    });
    const after = statSync(join(cacheDir, file!));
    expect([after.ino, after.mtimeMs]).toEqual([written.ino, written.mtimeMs]);
    expect(caches(cacheDir)).toEqual([file]);
  });

  it("a corrupt cache is rejected by V8, the hook still answers, and the cache is rewritten", async () => {
    const { env, cacheDir } = freshHome("corrupt");
    expect((await run([], hookArgs(), bash, env)).stdout).toBe("{}\n");
    const [file] = caches(cacheDir);
    const garbage = Buffer.alloc(4096, 7);
    writeFileSync(join(cacheDir, file!), garbage);
    expect(await run([], hookArgs(), bash, env)).toMatchObject({ code: 0, stdout: "{}\n", stderr: "" });
    const rewritten = readFileSync(join(cacheDir, file!));
    expect(rewritten.length).toBeGreaterThan(10_000);
    expect(rewritten.equals(garbage)).toBe(false);
  });

  it("AHP_HOOK_CODE_CACHE=0 runs without a cache; an unwritable cache directory costs nothing but the cache", async () => {
    const off = freshHome("off");
    expect(await run([], hookArgs(), bash, { ...off.env, AHP_HOOK_CODE_CACHE: "0" })).toMatchObject({ code: 0, stdout: "{}\n" });
    expect(caches(off.cacheDir)).toEqual([]);
    const blocked = freshHome("blocked");
    writeFileSync(join(blocked.env.HOME!, "cache"), "a file where the cache directory would go");
    expect(await run([], hookArgs(), bash, blocked.env)).toMatchObject({ code: 0, stdout: "{}\n", stderr: "" });
  });

  it("stays fail-closed: harness down ⇒ deny", async () => {
    const { env } = freshHome("down");
    const down = ["claude-code", "--connect", `unix:${join(dir, "no-harness.sock")}`, "--fail-closed"];
    for (let i = 0; i < 2; i++) {
      const r = await run([], down, bash, env);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } });
    }
  });

  it("answering a hook never loads node:crypto (the bin's SHA-256 and random bytes come from crypto-lite)", async () => {
    const { env } = freshHome("modules");
    const preload = join(dir, "modules.cjs");
    const report = join(dir, "modules.json");
    writeFileSync(
      preload,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList)));\n`,
    );
    for (let i = 0; i < 2; i++) {
      // First run: compiled and cached; second: from the cache.
      expect(await run(["--require", preload], hookArgs(), bash, env)).toMatchObject({ code: 0, stdout: "{}\n" });
      const loaded = JSON.parse(readFileSync(report, "utf8")) as string[];
      expect(loaded.some((m) => m.includes("internal/streams"))).toBe(true); // the report is real
      expect(loaded.filter((m) => /crypto/.test(m))).toEqual([]);
    }
    // The state file still has its SHA-256 name (same as before crypto-lite): one file per session.
    const state = readdirSync(env.AHP_HOOK_STATE_DIR!).filter((f) => f.endsWith(".json"));
    expect(state).toHaveLength(1);
    expect(state[0]).toMatch(/^[0-9a-f]{32}\.json$/);
  });
});

describe("code cache files", () => {
  it("live in AHP_HOOK_CACHE_DIR, else XDG_CACHE_HOME, else LOCALAPPDATA on Windows, else ~/.cache", () => {
    expect(codeCacheDir({ AHP_HOOK_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe("/c");
    expect(codeCacheDir({ XDG_CACHE_HOME: "/x", HOME: "/h" })).toBe(join("/x", "ahp", "aarts"));
    expect(codeCacheDir({ LOCALAPPDATA: "/l", HOME: "/h" }, "win32")).toBe(join("/l", "ahp", "aarts", "cache"));
    expect(codeCacheDir({ LOCALAPPDATA: "/l", HOME: "/h" }, "linux")).toBe(join("/h", ".cache", "ahp", "aarts"));
  });

  it("are named by the bin's size and mtime, V8's version and the architecture", () => {
    const a = codeCacheFile("/d", { size: 100, mtimeMs: 1.5e12 }, "11.3.244.8-node.38", "x64");
    expect(a).toBe(join("/d", "bin-100-1500000000000-11.3.244.8_node.38-x64.v8cache"));
    const others = [
      codeCacheFile("/d", { size: 101, mtimeMs: 1.5e12 }, "11.3.244.8-node.38", "x64"),
      codeCacheFile("/d", { size: 100, mtimeMs: 1.5e12 + 1000 }, "11.3.244.8-node.38", "x64"),
      codeCacheFile("/d", { size: 100, mtimeMs: 1.5e12 }, "12.4.254.21-node.33", "x64"),
      codeCacheFile("/d", { size: 100, mtimeMs: 1.5e12 }, "11.3.244.8-node.38", "arm64"),
    ];
    expect(new Set([a, ...others]).size).toBe(5);
  });

  it("are written atomically, 0600, keeping the seven newest caches of other builds", () => {
    const cacheDir = join(dir, "prune", "ahp");
    mkdirSync(cacheDir, { recursive: true });
    for (let i = 0; i < 10; i++) {
      const old = join(cacheDir, `bin-${i}-0-v-x64.v8cache`);
      writeFileSync(old, "old");
      utimesSync(old, 1_000 + i, 1_000 + i);
    }
    writeFileSync(join(cacheDir, "unrelated.txt"), "kept");
    const file = join(cacheDir, "bin-99-0-v-x64.v8cache");
    writeCodeCache(file, Buffer.from("fresh"));
    expect(readFileSync(file, "utf8")).toBe("fresh");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(cacheDir).sort()).toEqual(
      ["bin-3-0-v-x64.v8cache", "bin-4-0-v-x64.v8cache", "bin-5-0-v-x64.v8cache", "bin-6-0-v-x64.v8cache"]
        .concat(["bin-7-0-v-x64.v8cache", "bin-8-0-v-x64.v8cache", "bin-9-0-v-x64.v8cache", "bin-99-0-v-x64.v8cache"])
        .concat(["unrelated.txt"])
        .sort(),
    );
    // Never throws, leaves no temporary file behind.
    const blocked = join(dir, "prune", "a-file");
    writeFileSync(blocked, "");
    expect(() => writeCodeCache(join(blocked, "bin-1-0-v-x64.v8cache"), Buffer.from("x"))).not.toThrow();
    expect(readdirSync(join(dir, "prune")).sort()).toEqual(["a-file", "ahp"]);
  });
});

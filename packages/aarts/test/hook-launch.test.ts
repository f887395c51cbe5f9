/**
 * The installed command (`bin/ahp-aarts-hook.cjs`, the launcher of `dist/launch.cjs`) spawned as a
 * host spawns it, against a real AhpServer on a Unix socket: it answers as the bin does, writes
 * V8's code cache after the first answered hook and uses it afterwards, recovers from a corrupt
 * cache, stays fail-closed, and never loads `node:crypto` on the way. The cache file helpers are
 * tested directly.
 *
 * The bin's outputs are rebuilt first when missing or older than the sources (`./hook-spawn.ts`).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInThisContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { codeCacheDir, codeCacheFile, exitWhenFlushed, wrap, writeCodeCache } from "../src/hook/launch.js";
import { ensureHookBuilt, launcher, spawnHook, type HookRun } from "./hook-spawn.js";
import { startUnixHarness, testPolicy, type UnixHarness } from "./unix-harness.js";

const run = (nodeArgs: string[], args: string[], input: string, env: Record<string, string>): Promise<HookRun> =>
  spawnHook([...nodeArgs, launcher, ...args], input, { PATH: process.env.PATH ?? "", ...env });

const bash = readFileSync(new URL("./fixtures/hosts/claude-code/pre-tool-use-bash.json", import.meta.url), "utf8");
const rm = readFileSync(new URL("./fixtures/hosts/claude-code/pre-tool-use-rm.json", import.meta.url), "utf8");

let harness: UnixHarness;
let dir: string;
beforeAll(async () => {
  await ensureHookBuilt();
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

// Every test spawns several Node processes: generous limits for a loaded machine.
describe("the installed command (launcher with V8's code cache)", { timeout: 120_000 }, () => {
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

  it("answering a hook never loads node:crypto, perf_hooks or the install/doctor module", async () => {
    const { env } = freshHome("modules");
    const preload = join(dir, "modules.cjs");
    const report = join(dir, "modules.json");
    writeFileSync(
      preload,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify({ builtin: process.moduleLoadList, files: Object.keys(require.cache) })));\n`,
    );
    const loaded = () => JSON.parse(readFileSync(report, "utf8")) as { builtin: string[]; files: string[] };
    for (let i = 0; i < 2; i++) {
      // First run: compiled and cached; second: from the cache.
      expect(await run(["--require", preload], hookArgs(), bash, env)).toMatchObject({ code: 0, stdout: "{}\n" });
      const { builtin, files } = loaded();
      expect(builtin.some((m) => m.includes("internal/streams"))).toBe(true); // the report is real
      // (Node's own start-up loads internal/perf/utils and observe; `performance` would load these.)
      expect(builtin.filter((m) => /crypto|perf_hooks|internal\/perf\/(performance|usertiming|nodetiming)$/.test(m))).toEqual([]);
      expect(files.some((f) => f.endsWith("launch.cjs"))).toBe(true);
      expect(files.filter((f) => f.endsWith("admin.cjs"))).toEqual([]);
    }
    // install, doctor and the usage text are in dist/admin.cjs, loaded when asked for.
    const help = await run(["--require", preload], ["--help"], "", env);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: ahp-aarts-hook <host> \[options\]/);
    expect(help.stdout).toContain("Hosts: claude-code, cursor, copilot-cli, vscode, cline, windsurf");
    expect(loaded().files.filter((f) => f.endsWith("admin.cjs"))).toHaveLength(1);
    const install = await run([], ["install", "claude-code", "--connect", "unix:/run/ahp.sock", "--host-version", "2.1.332"], "", env);
    expect(install.code).toBe(0);
    expect(JSON.stringify(JSON.parse(install.stdout))).toContain("ahp-aarts-hook claude-code --connect unix:/run/ahp.sock");
    // The state file still has its SHA-256 name (same as before crypto-lite): one file per session.
    const state = readdirSync(env.AHP_HOOK_STATE_DIR!).filter((f) => f.endsWith(".json"));
    expect(state).toHaveLength(1);
    expect(state[0]).toMatch(/^[0-9a-f]{32}\.json$/);
  });
});

describe("the end of a run", { timeout: 120_000 }, () => {
  it("the process ends once the answer is written, also when something else would keep it alive", async () => {
    const { env } = freshHome("exit");
    const preload = join(dir, "keep-alive.cjs");
    writeFileSync(preload, "setInterval(() => undefined, 60_000);\n"); // a handle that never ends by itself
    for (let i = 0; i < 2; i++) {
      const r = await run(["--require", preload], hookArgs(), bash, { ...env, AHP_HOOK_TRACE: "1" });
      expect(r).toMatchObject({ code: 0, stdout: "{}\n" });
      const marks = Object.fromEntries([...r.stderr.matchAll(/(answered|exit) (\d+\.\d)/g)].map((m) => [m[1], Number(m[2])]));
      // Without the exit at the answer, only the bin's one-second safety net would end it.
      expect(marks.exit! - marks.answered!).toBeLessThan(1_000);
    }
    // A deny keeps its exit code.
    const denied = await run(["--require", preload], [...hookArgs(), "--fail-closed"], rm, env);
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("exitWhenFlushed exits with the code only after every stream has called back", () => {
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
    try {
      const callbacks: (() => void)[] = [];
      const stream = { write: (_: string, cb: () => void) => void callbacks.push(cb) };
      exitWhenFlushed(2, [stream, stream]);
      expect(callbacks).toHaveLength(2);
      callbacks[0]!();
      expect(exit).not.toHaveBeenCalled();
      callbacks[1]!();
      expect(exit).toHaveBeenCalledExactlyOnceWith(2);
    } finally {
      exit.mockRestore();
    }
  });
});

describe("wrap", () => {
  it("drops the #! line but keeps line numbers, and leaves a bin without one as it is", () => {
    const body = "#!/usr/bin/env node\nmodule.exports = new Error('x').stack.split('\\n')[1];";
    const mod = { exports: "" };
    (runInThisContext(wrap(body), { filename: "bin.cjs" }) as (...a: unknown[]) => void)({}, () => undefined, mod, "bin.cjs", ".");
    expect(mod.exports).toMatch(/bin\.cjs:2:/);
    expect(wrap("exports.a = 1;")).toBe("(function (exports, require, module, __filename, __dirname) {exports.a = 1;\n})");
    expect(wrap("#!/usr/bin/env node")).toBe("(function (exports, require, module, __filename, __dirname) {\n})");
  });
});

describe("AHP_HOOK_TRACE=1", { timeout: 120_000 }, () => {
  it("prints when each phase of the run ended, in ms since the process started, and nothing without it", async () => {
    const { env } = freshHome("trace");
    for (const cache of ["compiled", "code cache"]) {
      const r = await run([], hookArgs(), bash, { ...env, AHP_HOOK_TRACE: "1" });
      expect(r).toMatchObject({ code: 0, stdout: "{}\n" });
      const m =
        /^ahp-aarts-hook: trace \(ms since start\): launcher ([\d.]+), bin loaded \(([a-z ]+)\) ([\d.]+), answered ([\d.]+), exit ([\d.]+)\n$/.exec(
          r.stderr,
        );
      expect(m, r.stderr).not.toBeNull();
      expect(m![2]).toBe(cache);
      const marks = [m![1], m![3], m![4], m![5]].map(Number);
      expect([...marks].sort((a, b) => a - b)).toEqual(marks);
    }
    expect(await run([], hookArgs(), bash, env)).toMatchObject({ code: 0, stdout: "{}\n", stderr: "" });
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

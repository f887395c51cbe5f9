/**
 * The `ahp-aarts-hook` launcher (`dist/launch.cjs`): loads the one-file bin (`dist/bin.cjs`)
 * through V8's code cache, so that a hook process spawned for every tool call neither parses
 * nor compiles the bin's functions again (ADR 0168).
 *
 * The cache is one file per bin build, Node version and architecture, in the user's cache
 * directory; it is written once, after the first run that answered a host's hook (so that it
 * holds the functions that path runs), atomically (temporary file + rename). V8 checks the
 * cache against the source and its own version and flags; a rejected, unreadable or unwritable
 * cache only costs the compilation it would have saved. `AHP_HOOK_CODE_CACHE=0` turns it off.
 */
import { isAscii } from "node:buffer";
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { Script } from "node:vm";

/** What the bin exports when it is not the main module (`src/bin.ts`). */
interface Bin {
  run(): Promise<{ code: number; answeredHook: boolean }>;
}

/** Where code caches are kept: `$AHP_HOOK_CACHE_DIR`, else the user's cache directory + `ahp/aarts`. */
export function codeCacheDir(env: Readonly<Record<string, string | undefined>>, platform = process.platform): string {
  if (env.AHP_HOOK_CACHE_DIR) return env.AHP_HOOK_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "ahp", "aarts");
  if (platform === "win32" && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, "ahp", "aarts", "cache");
  return join(env.HOME || homedir(), ".cache", "ahp", "aarts");
}

const CACHE_PREFIX = "bin-";

/**
 * The cache file of one bin build for this Node: the build is named by the bin's size and
 * modification time, Node by its V8 version and the architecture (V8 also checks both itself).
 */
export function codeCacheFile(dir: string, bin: { size: number; mtimeMs: number }, v8 = process.versions.v8, arch = process.arch): string {
  return join(dir, `${CACHE_PREFIX}${bin.size}-${Math.trunc(bin.mtimeMs)}-${v8.replace(/[^\w.]/g, "_")}-${arch}.v8cache`);
}

/**
 * The CommonJS wrapper Node itself puts around a module, so that the bin runs as it would under
 * `require`. The `#!` line is cut off as a slice (V8 shares the text: no copy of the bin on the
 * young heap) that keeps its line break, so that line numbers stay those of the file.
 */
export const wrap = (source: string) => {
  const lineEnd = source.startsWith("#!") ? source.indexOf("\n") : 0;
  const body = lineEnd === -1 ? "" : source.slice(lineEnd);
  return `(function (exports, require, module, __filename, __dirname) {${body}\n})`;
};

/**
 * Loads the bin at `binPath` through the code cache; falls back to a plain `require` when the
 * source cannot be read. Returns the bin and, when the cache is missing or was rejected, a
 * function that writes a fresh one (call it after the run, off the host's critical path).
 */
export function loadBin(
  binPath: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): { bin: Bin; writeCache?: () => void } {
  const requireBin = createRequire(binPath);
  if (env.AHP_HOOK_CODE_CACHE === "0") return { bin: requireBin(binPath) as Bin };
  let source: string;
  let cacheFile: string;
  try {
    const fd = openSync(binPath, "r");
    try {
      const stat = fstatSync(fd);
      source = readWhole(fd, stat.size);
      cacheFile = codeCacheFile(codeCacheDir(env), stat);
    } finally {
      closeSync(fd);
    }
  } catch {
    return { bin: requireBin(binPath) as Bin };
  }
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // no cache yet
  }
  const script = new Script(wrap(source), { filename: binPath, ...(cachedData === undefined ? {} : { cachedData }) });
  const mod = { exports: {} as Bin };
  (script.runInThisContext() as (...args: unknown[]) => void).call(mod.exports, mod.exports, requireBin, mod, binPath, dirname(binPath));
  if (cachedData !== undefined && !script.cachedDataRejected) return { bin: mod.exports };
  return { bin: mod.exports, writeCache: () => writeCodeCache(cacheFile, script.createCachedData()) };
}

/**
 * The text of a file of `size` bytes in one read where the kernel allows (a file descriptor given
 * to `readFileSync` is read 8 KiB at a time); the bin is built ASCII, so it is decoded as Latin-1
 * (a plain copy), and as UTF-8 when it is not.
 */
function readWhole(fd: number, size: number): string {
  const bytes = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const n = readSync(fd, bytes, filled, size - filled, filled);
    if (n === 0) throw new Error("file shrank while read");
    filled += n;
  }
  return isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
}

/** Caches of other builds kept besides the one written (several installed versions may share the directory). */
const KEEP_OTHER_CACHES = 7;

/** Writes a cache file atomically and prunes the oldest caches of other builds; never throws. */
export function writeCodeCache(file: string, data: Buffer): void {
  const dir = dirname(file);
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, data, { mode: 0o600 });
    renameSync(tmp, file);
    const name = file.slice(dir.length + 1);
    const others = readdirSync(dir)
      .filter((other) => other !== name && other.startsWith(CACHE_PREFIX) && other.endsWith(".v8cache"))
      .map((other) => ({ path: join(dir, other), mtimeMs: statSync(join(dir, other)).mtimeMs }))
      .sort((a, b) => b.mtimeMs - a.mtimeMs);
    for (const old of others.slice(KEEP_OTHER_CACHES)) unlinkSync(old.path);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {
      // not created
    }
  }
}

/**
 * Runs the bin next to this file (`dist/bin.cjs`); writes the code cache after a hook was answered.
 * With `AHP_HOOK_TRACE=1`, prints on stderr when each phase ended, in ms since the process started.
 */
export function launch(binPath = join(__dirname, "bin.cjs"), env: Readonly<Record<string, string | undefined>> = process.env): void {
  const trace = env.AHP_HOOK_TRACE === "1" ? traceMarks() : undefined;
  trace?.("launcher");
  const { bin, writeCache } = loadBin(binPath, env);
  trace?.(writeCache === undefined ? "bin loaded (code cache)" : "bin loaded (compiled)");
  void bin.run().then(({ code, answeredHook }) => {
    trace?.("answered");
    if (writeCache !== undefined && answeredHook) writeCache();
    exitWhenFlushed(code);
  });
}

/**
 * Ends the process once stdout and stderr have handed over what was written to them. The run is
 * over (answer written, state file and audit lines written, harness connection closed): what a
 * natural exit would add is Node's teardown, which runs the tasks V8 has queued meanwhile (such as
 * a young-generation collection) although nothing will use their result, while the host waits for
 * the process to end.
 */
export function exitWhenFlushed(code: number, streams: readonly Flushable[] = [process.stdout, process.stderr]): void {
  let pending = streams.length;
  const flushed = () => {
    if (--pending === 0) process.exit(code);
  };
  if (pending === 0) process.exit(code);
  for (const stream of streams) stream.write("", flushed);
}

/** A stream whose `write` calls back once the data was handed to the system (or failed to be). */
interface Flushable {
  write(chunk: string, callback: () => void): unknown;
}

/** Phase marks for `AHP_HOOK_TRACE=1`: ms since the process started, printed on stderr at exit. */
function traceMarks(): (phase: string) => void {
  const marks: string[] = [];
  process.once("exit", () => {
    marks.push(`exit ${(process.uptime() * 1e3).toFixed(1)}`);
    process.stderr.write(`ahp-aarts-hook: trace (ms since start): ${marks.join(", ")}\n`);
  });
  return (phase) => void marks.push(`${phase} ${(process.uptime() * 1e3).toFixed(1)}`);
}

if (typeof require !== "undefined" && require.main === module) launch();

/**
 * A real `redis-server` for tests (this package's and yours): started on a free loopback port in a temporary
 * directory, stopped (and its directory removed) afterwards. Under `CI=true` a missing
 * `redis-server` fails the tests; elsewhere they skip with a hint.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Whether `redis-server` is on the PATH. */
export const redisAvailable = spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
/** Whether this is a CI run (`CI=true`), where a missing `redis-server` fails instead of skipping. */
export const inCi = process.env.CI === "true";
/** The message a skipped Redis test prints. */
export const redisSkipReason = "redis-server is not installed (apt-get install redis-server); Redis tests skipped";
/** Run the Redis tests when redis-server exists, and always in CI (where a missing one fails). */
export const runRedis = redisAvailable || inCi;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A running `redis-server` started by {@link startRedis}. */
export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (its data is gone: nothing is persisted). */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  dispose(): Promise<void>;
}

/** Starts a `redis-server` on a free loopback port with a temporary directory (persistence off). */
export async function startRedis(options: { password?: string } = {}): Promise<RedisProcess> {
  if (!redisAvailable) throw new Error(inCi ? "redis-server is required in CI: apt-get install -y redis-server" : redisSkipReason);
  const dir = await mkdtemp(join(tmpdir(), "ahp-redis-"));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no"];
    if (options.password !== undefined) args.push("--requirepass", options.password);
    const c = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    child = c;
    await new Promise<void>((resolve, reject) => {
      let out = "";
      const onData = (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("Ready to accept connections")) {
          c.stdout.off("data", onData);
          c.stdout.resume();
          resolve();
        }
      };
      c.stdout.on("data", onData);
      c.stderr.resume();
      c.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${out.slice(-500)}`)));
    });
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (c === undefined || c.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once("exit", () => resolve()));
    c.kill("SIGTERM");
    await exited;
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start: launch,
    async dispose() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

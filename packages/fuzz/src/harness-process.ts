/**
 * A real `ahp serve` as a child process (the built CLI), with the built-in default policy and the
 * audit log on: started on the transports asked for, watched (alive, resident memory, its JSON
 * log lines on stderr), stopped with SIGTERM, and its audit log verified with `ahp audit verify`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";

/** The inspector's address line on stderr (`--inspect=127.0.0.1:0`). */
const INSPECTOR_LINE = /^Debugger listening on (ws:\/\/\S+)/;
/** The inspector's other notes on stderr. */
const INSPECTOR_NOTE =
  /^(For help, see: https:\/\/nodejs\.org\/\S*|Debugger attached\.|Debugger ending on \S+|Waiting for the debugger to disconnect\.\.\.)$/;

/** The repository root (the folder holding `pnpm-workspace.yaml`) above `from`. */
export function repoRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, "pnpm-workspace.yaml"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no pnpm-workspace.yaml above ${from}`);
    dir = parent;
  }
}

/** The built `ahp` command (`AHP_CLI_BIN` overrides); `pnpm build` makes it. */
export function cliBin(): string {
  const bin = process.env.AHP_CLI_BIN ?? join(repoRoot(), "apps", "cli", "dist", "main.js");
  if (!existsSync(bin)) throw new Error(`the ahp command is not built (${bin}); run pnpm build first`);
  return bin;
}

export interface HarnessProcessOptions {
  /** `stdio`, or network listeners. */
  stdio?: boolean;
  http?: boolean;
  ws?: boolean;
  unix?: boolean;
  /** More `ahp serve` flags. */
  args?: string[];
  /** Extra environment. */
  env?: NodeJS.ProcessEnv;
  /** Node flags for the harness process (e.g. `--max-old-space-size=256`). */
  nodeArgs?: string[];
  /** The harness's file-descriptor limit (`ulimit -n` in a shell that then runs it). Default: inherited. */
  fileLimit?: number;
  /**
   * Open the Node inspector on a loopback port chosen by the system, so that
   * {@link HarnessProcess.heapAfterGc} can measure the harness's live heap. Its messages on stderr
   * are not counted as stray output.
   */
  inspect?: boolean;
}

export interface LogLine {
  level?: string;
  msg?: string;
  [key: string]: unknown;
}

export class HarnessProcess {
  readonly child: ChildProcess;
  readonly dir: string;
  readonly auditFile: string;
  readonly keyFile: string;
  /** Listener addresses by transport: `http://…/ahp`, `ws://…/ahp`, a socket path. */
  readonly urls: { http?: string; ws?: string; unix?: string };
  readonly logs: LogLine[] = [];
  /** stderr text that was not a JSON log line (a crash trace would land here). */
  strayStderr = "";
  #logListeners = new Set<() => void>();
  #exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #exited = false;
  #peakRssBytes = 0;
  #inspectorUrl: string | undefined;

  private constructor(
    child: ChildProcess,
    dir: string,
    urls: HarnessProcess["urls"],
    exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
  ) {
    this.child = child;
    this.dir = dir;
    this.auditFile = join(dir, "audit.log");
    this.keyFile = join(dir, "audit.key");
    this.urls = urls;
    this.#exit = exit;
    void exit.then(() => (this.#exited = true));
  }

  /** Starts `ahp serve` and resolves once every listener asked for has logged its address. */
  static async start(options: HarnessProcessOptions): Promise<HarnessProcess> {
    const dir = await mkdtemp(join(tmpdir(), "ahp-fuzz-"));
    const keyFile = join(dir, "audit.key");
    await writeFile(keyFile, randomBytes(32).toString("hex"), { mode: 0o600 });
    const args = ["serve", "--audit", join(dir, "audit.log"), "--audit-key-file", keyFile];
    const want: Array<"http" | "ws" | "unix" | "stdio"> = [];
    if (options.stdio) {
      args.push("--stdio");
      want.push("stdio");
    }
    if (options.http) {
      args.push("--http", "127.0.0.1:0");
      want.push("http");
    }
    if (options.ws) {
      args.push("--ws", "127.0.0.1:0");
      want.push("ws");
    }
    if (options.unix) {
      args.push("--unix", join(dir, "ahp.sock"));
      want.push("unix");
    }
    args.push(...(options.args ?? []));
    const command = [...(options.inspect ? ["--inspect=127.0.0.1:0"] : []), ...(options.nodeArgs ?? []), cliBin(), ...args];
    const limit = options.fileLimit;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 16)) throw new RangeError("`fileLimit` must be an integer >= 16");
    const child =
      limit === undefined
        ? spawn(process.execPath, command, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...options.env } })
        : // `exec`: the harness replaces the shell, so its pid and signals are the harness's own.
          spawn("bash", ["-c", `ulimit -n ${limit} && exec "$0" "$@"`, process.execPath, ...command], {
            stdio: ["pipe", "pipe", "pipe"],
            env: { ...process.env, ...options.env },
          });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    const urls: HarnessProcess["urls"] = {};
    const harness = new HarnessProcess(child, dir, urls, exit);
    const seen = new Set<string>();
    let pending = "";
    let ready: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (ready = resolve));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      pending += chunk;
      for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        let parsed: LogLine | undefined;
        try {
          parsed = JSON.parse(line) as LogLine;
        } catch {
          const inspector = options.inspect ? INSPECTOR_LINE.exec(line) : null;
          if (inspector !== null) harness.#inspectorUrl = inspector[1];
          else if (!(options.inspect && INSPECTOR_NOTE.test(line))) harness.strayStderr += `${line}\n`;
          continue;
        }
        harness.logs.push(parsed);
        for (const listener of harness.#logListeners) listener();
        if (parsed.msg === "listening" && typeof parsed.transport === "string") {
          const t = parsed.transport;
          if (t === "http" || t === "ws") urls[t] = String(parsed.url);
          if (t === "unix") urls.unix = String(parsed.path);
          seen.add(t);
          if (want.every((w) => seen.has(w))) ready();
        }
      }
    });
    const failed = exit.then(({ code, signal }) => {
      throw new Error(`ahp serve exited during start (${code ?? signal}): ${harness.strayStderr}`);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`ahp serve did not start within 60 s: ${harness.strayStderr}`)), 60_000);
    });
    try {
      await Promise.race([started, failed, timeout]);
    } catch (error) {
      child.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
      throw error;
    } finally {
      clearTimeout(timer);
      failed.catch(() => undefined);
    }
    return harness;
  }

  get alive(): boolean {
    return !this.#exited && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resident memory of the harness process now (Linux `/proc`; 0 elsewhere), and the peak seen. */
  rssBytes(): number {
    const pid = this.child.pid;
    if (pid === undefined || !this.alive) return 0;
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const match = /VmRSS:\s+(\d+) kB/.exec(status);
      const rss = match === null ? 0 : Number(match[1]) * 1024;
      if (rss > this.#peakRssBytes) this.#peakRssBytes = rss;
      return rss;
    } catch {
      return 0;
    }
  }

  get peakRssBytes(): number {
    return this.#peakRssBytes;
  }

  /**
   * The harness's live JavaScript heap: a full garbage collection in the harness, then its
   * `process.memoryUsage()` (needs `inspect: true`). Unlike the resident size, this does not move
   * with how much room V8 keeps for its heap, so it tells a leak from a heap that grew and stays.
   */
  async heapAfterGc(timeoutMs = 60_000): Promise<{ heapUsed: number; external: number; arrayBuffers: number }> {
    const url = this.#inspectorUrl;
    if (url === undefined) throw new Error("the harness was not started with `inspect: true`");
    const socket = new WebSocket(url);
    const timer = setTimeout(() => socket.terminate(), timeoutMs);
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once("open", () => resolve());
        socket.once("error", reject);
        socket.once("close", () => reject(new Error("the inspector closed its connection")));
      });
      let nextId = 0;
      const call = (method: string, params: Record<string, unknown> = {}) =>
        new Promise<{ result?: { result?: { value?: unknown } } }>((resolve, reject) => {
          const id = ++nextId;
          const onMessage = (data: Buffer) => {
            const message = JSON.parse(data.toString("utf8")) as {
              id?: number;
              error?: { message: string };
              result?: { result?: { value?: unknown } };
            };
            if (message.id !== id) return;
            socket.off("message", onMessage);
            if (message.error !== undefined) reject(new Error(`${method}: ${message.error.message}`));
            else resolve(message);
          };
          socket.on("message", onMessage);
          socket.once("close", () => reject(new Error(`the inspector closed its connection during ${method}`)));
          socket.send(JSON.stringify({ id, method, params }));
        });
      await call("HeapProfiler.enable");
      await call("HeapProfiler.collectGarbage");
      const answer = await call("Runtime.evaluate", {
        expression:
          "(() => { const m = process.memoryUsage(); return JSON.stringify({ heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }); })()",
        returnByValue: true,
      });
      return JSON.parse(String(answer.result?.result?.value)) as { heapUsed: number; external: number; arrayBuffers: number };
    } finally {
      clearTimeout(timer);
      socket.terminate();
    }
  }

  /** Log lines at warn or error level. */
  warnings(): LogLine[] {
    return this.logs.filter((l) => l.level === "warn" || l.level === "error");
  }

  /** Resolves true once `test()` holds (checked on every new log line), false after `timeoutMs`. */
  waitForLogs(test: () => boolean, timeoutMs: number): Promise<boolean> {
    if (test()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.#logListeners.delete(check);
        resolve(value);
      };
      const check = () => {
        if (test()) done(true);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#logListeners.add(check);
    });
  }

  /** Sends SIGTERM (or ends stdin for stdio) and waits for the exit. */
  async stop(timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.alive) {
      this.child.stdin?.end();
      this.child.kill("SIGTERM");
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.child.kill("SIGKILL");
        resolve();
      }, timeoutMs);
    });
    await Promise.race([this.#exit, killed]);
    clearTimeout(timer);
    return this.#exit;
  }

  /** `ahp audit verify` on the audit log: exit code and output. */
  verifyAudit(): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [cliBin(), "audit", "verify", this.auditFile, "--key-file", this.keyFile], { stdio: "pipe" });
      let output = "";
      child.stdout.setEncoding("utf8").on("data", (c: string) => (output += c));
      child.stderr.setEncoding("utf8").on("data", (c: string) => (output += c));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, output }));
    });
  }

  async dispose(): Promise<void> {
    if (this.alive) await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * The agent side of stdio (spec §13.1): spawns the harness as a child process and speaks
 * NDJSON over its stdin/stdout. Framing, the write queue, backpressure and size limits are
 * core's {@link NdjsonStreamTransport}; this class owns the child's lifecycle.
 *
 * Unlike the reference, a harness that exits, crashes or cannot be spawned closes the transport
 * at once with an {@link AhpLocalError} carrying `details: { exitCode, signal, stderrTail }`,
 * so an `AhpClient` fails every pending request immediately with that cause (spec §14 item 9),
 * and `close()` really terminates the child (item 17).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { PassThrough, type Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { AhpLocalError, NdjsonClientTransport, toError, type MessageLimits, type NdjsonWriteOptions, type NdjsonStreams } from "@ahp/core";
import { ByteTail } from "./stderr-tail.js";

/**
 * What happens to the child's stderr. It is always read through a pipe so that its last bytes
 * can be attached to the error when the harness dies.
 *
 * - `inherit` (default): copied to this process's stderr (the reference inherits it).
 * - `pipe`: exposed as {@link StdioClientTransport.stderr}; read it, or the child blocks once
 *   the pipe is full.
 * - `ignore`: discarded (the tail is still kept).
 * - a function: called with each chunk as text (never split inside a character).
 */
export type StdioStderr = "inherit" | "pipe" | "ignore" | ((chunk: string) => void);

/**
 * Options of {@link StdioClientTransport}: the harness command and how its process is run, plus
 * core's message limits and NDJSON write grouping.
 */
export interface StdioClientTransportOptions extends MessageLimits, NdjsonWriteOptions {
  /** The harness executable (looked up on `PATH`). */
  command: string;
  args?: readonly string[];
  /** The child's complete environment. Default: this process's environment (as the reference). */
  env?: Record<string, string | undefined>;
  /** The child's working directory. Default: this process's. */
  cwd?: string | URL;
  stderr?: StdioStderr;
  /**
   * `close()` ends the child's stdin and waits this long for it to exit, then sends SIGTERM,
   * waits as long again, then sends SIGKILL. Default 2000.
   */
  closeGraceMs?: number;
  /** How many trailing bytes of stderr to keep for error details. Default 4096. */
  stderrTailBytes?: number;
}

/** Default `closeGraceMs`: how long `close()` waits after ending stdin, and again after SIGTERM. */
export const DEFAULT_CLOSE_GRACE_MS = 2000;
/** Default `stderrTailBytes`: the trailing stderr bytes kept for the error when the harness dies. */
export const DEFAULT_STDERR_TAIL_BYTES = 4096;

/** `details` of the error a stdio client transport closes with when the harness goes away. */
export interface StdioExitDetails {
  /** Exit code, or `null` when the child was killed by a signal or never started. */
  exitCode: number | null;
  /** The signal that killed the child, or `null`. */
  signal: NodeJS.Signals | null;
  /** The last bytes (default 4 KiB) the child wrote to stderr. */
  stderrTail: string;
  pid?: number;
  /** Set when the transport had to stop the child itself after it closed its stdout. */
  terminatedBy?: "SIGTERM" | "SIGKILL";
}

/**
 * The agent-side transport over stdio: `start()` spawns the harness command and speaks NDJSON on
 * its stdin/stdout. A harness that exits, crashes or cannot be spawned closes the transport at
 * once with an `AhpLocalError` whose `details` are {@link StdioExitDetails}, so pending requests
 * fail with that cause; `close()` ends stdin and escalates to SIGTERM, then SIGKILL, after
 * `closeGraceMs` each.
 *
 * ```ts
 * const client = new AhpClient();
 * await client.connect(new StdioClientTransport({ command: "ahp", args: ["serve", "--stdio"] }));
 * ```
 */
export class StdioClientTransport extends NdjsonClientTransport {
  readonly #options: StdioClientTransportOptions;
  readonly #graceMs: number;
  readonly #tail: ByteTail;
  readonly #stderrPipe?: PassThrough;
  #child?: ChildProcess;
  #terminatedBy?: "SIGTERM" | "SIGKILL";
  #exit?: { code: number | null; signal: NodeJS.Signals | null };
  #exitWaiters: Array<() => void> = [];
  #childClosed = false;
  #childCloseWaiters: Array<() => void> = [];

  constructor(options: StdioClientTransportOptions) {
    if (typeof options?.command !== "string" || options.command.length === 0) {
      throw new AhpLocalError("INVALID_ARGUMENT", "StdioClientTransport: `command` must be a non-empty string");
    }
    const stderr = options.stderr;
    if (stderr !== undefined && typeof stderr !== "function" && !["inherit", "pipe", "ignore"].includes(stderr)) {
      throw new AhpLocalError("INVALID_ARGUMENT", 'StdioClientTransport: `stderr` must be "inherit", "pipe", "ignore" or a function');
    }
    const graceMs = nonNegative("closeGraceMs", options.closeGraceMs, DEFAULT_CLOSE_GRACE_MS);
    const tailBytes = nonNegative("stderrTailBytes", options.stderrTailBytes, DEFAULT_STDERR_TAIL_BYTES);
    super("StdioClientTransport", { transport: "stdio" }, options);
    this.#options = options;
    this.#graceMs = graceMs;
    this.#tail = new ByteTail(tailBytes);
    if (options.stderr === "pipe") this.#stderrPipe = new PassThrough();
  }

  /** The child's process id once spawned. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The child's exit code once it exited (`null` when killed by a signal). */
  get exitCode(): number | null | undefined {
    return this.#exit?.code;
  }

  /** The signal that ended the child, once it exited. */
  get signalCode(): NodeJS.Signals | null | undefined {
    return this.#exit?.signal;
  }

  /** With `stderr: "pipe"`: the child's stderr (available before `start()`); otherwise `null`. */
  get stderr(): Readable | null {
    return this.#stderrPipe ?? null;
  }

  /** The last bytes the child wrote to stderr so far. */
  get stderrTail(): string {
    return this.#tail.text();
  }

  protected async openStreams(): Promise<NdjsonStreams> {
    const { command, args = [], env, cwd } = this.#options;
    let child: ChildProcess;
    try {
      child = spawn(command, [...args], {
        ...(env === undefined ? {} : { env }),
        ...(cwd === undefined ? {} : { cwd }),
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
    } catch (error) {
      throw spawnError(command, error);
    }
    this.#child = child;
    this.#watchChild(child);

    const spawnFailure = await new Promise<Error | undefined>((resolve) => {
      const onSpawn = () => {
        child.off("error", onError);
        resolve(undefined);
      };
      const onError = (error: Error) => {
        child.off("spawn", onSpawn);
        resolve(error);
      };
      child.once("spawn", onSpawn);
      child.once("error", onError);
    });
    if (spawnFailure !== undefined) throw spawnError(command, spawnFailure);

    return {
      readable: child.stdout!,
      writable: child.stdin!,
      info: { transport: "stdio", remote: `pid:${child.pid}` },
      release: () => this.#terminate(),
    };
  }

  #watchChild(child: ChildProcess): void {
    // Errors of the pipes surface through the transport; these listeners only keep an
    // emitted 'error' from being thrown before (or after) the transport listens.
    child.stdin?.on("error", noop);
    child.stdout?.on("error", noop);
    child.stderr?.on("error", noop);
    child.on("error", (error) => {
      if (this.isOpen) this.onerror?.(error);
    });
    child.once("exit", (code, signal) => {
      this.#exit = { code, signal };
      const waiters = this.#exitWaiters;
      this.#exitWaiters = [];
      for (const waiter of waiters) waiter();
    });
    child.once("close", () => {
      this.#childClosed = true;
      const waiters = this.#childCloseWaiters;
      this.#childCloseWaiters = [];
      for (const waiter of waiters) waiter();
    });

    const stderr = child.stderr;
    if (stderr === null) return;
    const mode = this.#options.stderr ?? "inherit";
    const decoder = typeof mode === "function" ? new StringDecoder("utf8") : undefined;
    const pipe = this.#stderrPipe;
    stderr.on("data", (chunk: Buffer) => {
      this.#tail.push(chunk);
      if (mode === "inherit") process.stderr.write(chunk);
      else if (typeof mode === "function") this.#toCallback(mode, decoder!.write(chunk));
      else if (pipe !== undefined && !pipe.write(chunk)) {
        // The reader is slow: stop reading the child's stderr until it catches up.
        stderr.pause();
        pipe.once("drain", () => stderr.resume());
      }
    });
    stderr.once("end", () => {
      if (typeof mode === "function") this.#toCallback(mode, decoder!.end());
      pipe?.end();
    });
  }

  #toCallback(callback: (chunk: string) => void, text: string): void {
    if (text.length === 0) return;
    try {
      callback(text);
    } catch (error) {
      this.onerror?.(toError(error));
    }
  }

  /**
   * Makes sure the child is gone (runs once, when the transport closes for any reason): end of
   * stdin, then SIGTERM, then SIGKILL, each after the grace period.
   */
  async #terminate(): Promise<void> {
    const child = this.#child!;
    child.stdout?.resume(); // keep draining so the child never blocks on a full pipe
    if (this.#exit === undefined) {
      if (child.stdin !== null && !child.stdin.writableEnded) child.stdin.end();
      if (!(await this.#waitExit(this.#graceMs))) {
        this.#terminatedBy = "SIGTERM";
        this.onerror?.(
          new AhpLocalError("TRANSPORT_ERROR", `harness did not exit within ${this.#graceMs} ms after end of input; sending SIGTERM`, {
            details: { pid: child.pid },
          }),
        );
        child.kill("SIGTERM");
        if (!(await this.#waitExit(this.#graceMs))) {
          this.#terminatedBy = "SIGKILL";
          this.onerror?.(
            new AhpLocalError("TRANSPORT_ERROR", `harness ignored SIGTERM for ${this.#graceMs} ms; sending SIGKILL`, {
              details: { pid: child.pid },
            }),
          );
          child.kill("SIGKILL");
          if (!(await this.#waitExit(Math.max(this.#graceMs, 1000)))) {
            this.onerror?.(new AhpLocalError("TRANSPORT_ERROR", "harness did not exit after SIGKILL", { details: { pid: child.pid } }));
            return;
          }
        }
      }
    }
    // 'close' follows 'exit' once stdout and stderr are read to their end, so the stderr tail is
    // complete. A grandchild holding the pipes open would delay it forever: wait a bounded time.
    await this.#waitChildClosed(Math.min(Math.max(this.#graceMs, 100), 1000));
  }

  #waitExit(timeoutMs: number): Promise<boolean> {
    if (this.#exit !== undefined) return Promise.resolve(true);
    return waitFor(this.#exitWaiters, timeoutMs);
  }

  #waitChildClosed(timeoutMs: number): Promise<boolean> {
    if (this.#childClosed) return Promise.resolve(true);
    return waitFor(this.#childCloseWaiters, timeoutMs);
  }

  protected peerClosed(cause: Error | undefined): AhpLocalError {
    const exit = this.#exit;
    const stderrTail = this.#tail.text();
    const details: StdioExitDetails = {
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stderrTail,
      ...(this.#child?.pid === undefined ? {} : { pid: this.#child.pid }),
      ...(this.#terminatedBy === undefined ? {} : { terminatedBy: this.#terminatedBy }),
    };
    let message: string;
    if (this.#terminatedBy !== undefined) message = `harness closed its output and was stopped with ${this.#terminatedBy}`;
    else if (exit === undefined) message = "harness closed its output";
    else if (exit.signal !== null) message = `harness was killed by signal ${exit.signal}`;
    else message = `harness exited with code ${exit.code}`;
    const last = lastLine(stderrTail);
    if (last !== "") message += ` (stderr: ${last})`;
    return new AhpLocalError("CONNECTION_CLOSED", message, {
      details: details as unknown as Record<string, unknown>,
      ...(cause === undefined ? {} : { cause }),
    });
  }

  protected override finished(): void {
    this.#stderrPipe?.end();
  }
}

function waitFor(waiters: Array<() => void>, timeoutMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const waiter = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      const index = waiters.indexOf(waiter);
      if (index >= 0) waiters.splice(index, 1);
      resolve(false);
    }, timeoutMs);
    waiters.push(waiter);
  });
}

function spawnError(command: string, error: unknown): AhpLocalError {
  const e = toError(error);
  const code = (e as NodeJS.ErrnoException).code;
  return new AhpLocalError("TRANSPORT_ERROR", `failed to start harness ${JSON.stringify(command)}: ${e.message}`, {
    cause: e,
    details: { exitCode: null, signal: null, stderrTail: "", ...(code === undefined ? {} : { code }) },
  });
}

function lastLine(text: string): string {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (line !== "") return line.length > 200 ? `${line.slice(0, 200)}…` : line;
  }
  return "";
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new AhpLocalError("INVALID_ARGUMENT", `StdioClientTransport: \`${name}\` must be a finite number >= 0`);
  }
  return value;
}

function noop(): void {}

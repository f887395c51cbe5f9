/** Shared helpers for the stdio transport tests. */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Absolute path of a fixture script. */
export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** Options of a StdioClientTransport that runs a fixture with this Node binary. */
export const nodeFixture = (name: string, ...args: string[]) => ({ command: process.execPath, args: [fixture(name), ...args] });

/** Milliseconds since `start`. */
export const since = (start: number): number => performance.now() - start;

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the process exited on its own before the deadline (false: it had to be killed). */
  exitedInTime: boolean;
}

/**
 * Runs a Node script to completion, killing it when it outlives `deadlineMs` (a leaked handle
 * keeps a process alive; a process that cleans up exits by itself). With `endInput: false` its
 * stdin stays open until it exits.
 */
export function runNode(
  script: string,
  args: string[] = [],
  { deadlineMs = 10_000, input, endInput = true }: { deadlineMs?: number; input?: string; endInput?: boolean } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [script, ...args], { stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    let exitedInTime = true;
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const timer = setTimeout(() => {
      exitedInTime = false;
      child.kill("SIGKILL");
    }, deadlineMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, exitedInTime });
    });
    child.stdin.on("error", () => {});
    if (input !== undefined) child.stdin.write(input);
    if (endInput) child.stdin.end();
  });
}

/** `Promise.withResolvers()` for Node 20. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

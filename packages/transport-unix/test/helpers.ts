/** Shared helpers for the Unix socket transport tests. */
import { vi } from "vitest";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** How long a wait lasts before it fails: generous, because the machine may be busy. */
export const WAIT_MS = 60_000;

// A test that waits must outlive its waits, so that a failed wait reports what it awaited.
vi.setConfig({ testTimeout: WAIT_MS + 30_000, hookTimeout: WAIT_MS + 30_000 });

export { deferred, runNode, type RunResult } from "@ahp/conformance";

export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

export const since = (start: number): number => performance.now() - start;

/**
 * Waits until `check()` holds, polling every few ms, for at most `timeoutMs` (generous: the machine
 * may be busy); the error names `what` was awaited.
 */
export async function until(check: () => boolean, timeoutMs = WAIT_MS, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Waits until `read()` is above zero and has held still for `stillMs` (it may grow slowly on a busy
 * machine); returns that value.
 */
export async function untilSteady(read: () => number, what: string, stillMs = 250): Promise<number> {
  let last = -1;
  let since = performance.now();
  await until(
    () => {
      const now = read();
      if (now !== last) {
        last = now;
        since = performance.now();
      }
      return now > 0 && performance.now() - since >= stillMs;
    },
    WAIT_MS,
    `${what} holding still`,
  );
  return last;
}

/** A fresh short directory under the OS temp dir (socket paths are limited to ~107 bytes). */
export function tempDir(): { dir: string; path: (name?: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "ahp-"));
  return { dir, path: (name = "h.sock") => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Starts the harness fixture on `path` and resolves once it listens. */
export async function startHarness(path: string, options: Record<string, unknown> = {}) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [fixture("unix-harness.mjs"), path, JSON.stringify(options)], {
    stdio: "pipe",
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
      if (out.includes("listening")) resolve();
    });
    void exited.then(({ code }) => reject(new Error(`harness exited with ${code} before listening: ${stderr}`)));
  });
  return {
    child,
    exited,
    stderr: () => stderr,
    async kill(signal: NodeJS.Signals = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

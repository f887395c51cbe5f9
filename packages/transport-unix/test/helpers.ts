/** Shared helpers for the Unix socket transport tests. */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export { deferred, runNode, type RunResult } from "@ahp/conformance";

export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

export const since = (start: number): number => performance.now() - start;

/** Waits until `check()` holds, polling every 10 ms, for at most `timeoutMs` (generous: the machine may be busy). */
export async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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

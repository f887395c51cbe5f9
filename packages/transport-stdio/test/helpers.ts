/** Shared helpers for the stdio transport tests. */
import { vi } from "vitest";
import { fileURLToPath } from "node:url";

/** How long a wait lasts before it fails: generous, because the machine may be busy. */
export const WAIT_MS = 60_000;

// A test that waits must outlive its waits, so that a failed wait reports what it awaited.
vi.setConfig({ testTimeout: WAIT_MS + 30_000, hookTimeout: WAIT_MS + 30_000 });

export { deferred, runNode, type RunResult } from "@ahp/conformance";

/** Absolute path of a fixture script. */
export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** Options of a StdioClientTransport that runs a fixture with this Node binary. */
export const nodeFixture = (name: string, ...args: string[]) => ({ command: process.execPath, args: [fixture(name), ...args] });

/** Milliseconds since `start`. */
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

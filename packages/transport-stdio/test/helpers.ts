/** Shared helpers for the stdio transport tests. */
import { fileURLToPath } from "node:url";

export { deferred, runNode, type RunResult } from "@ahp/conformance";

/** Absolute path of a fixture script. */
export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** Options of a StdioClientTransport that runs a fixture with this Node binary. */
export const nodeFixture = (name: string, ...args: string[]) => ({ command: process.execPath, args: [fixture(name), ...args] });

/** Milliseconds since `start`. */
export const since = (start: number): number => performance.now() - start;

/** Waits until `check()` holds, polling every 10 ms, for at most `timeoutMs` (generous: the machine may be busy). */
export async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

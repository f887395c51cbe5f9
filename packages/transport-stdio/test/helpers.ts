/** Shared helpers for the stdio transport tests. */
import { fileURLToPath } from "node:url";

export { deferred, runNode, type RunResult } from "@ahp/conformance";

/** Absolute path of a fixture script. */
export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** Options of a StdioClientTransport that runs a fixture with this Node binary. */
export const nodeFixture = (name: string, ...args: string[]) => ({ command: process.execPath, args: [fixture(name), ...args] });

/** Milliseconds since `start`. */
export const since = (start: number): number => performance.now() - start;

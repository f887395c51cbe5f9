/** What the tests that run one host per test share: a condition poll and a host stopped after each test. */
import { afterEach } from "vitest";
import { startHost, type Running } from "./harness.js";

/** Polls until `check` holds (or fails after a generous deadline): never a fixed sleep. */
export async function until<T>(check: () => T | undefined | false, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Starts hosts as {@link startHost} does; each one is stopped after the test that started it. */
export interface HostPerTest {
  start(options?: Parameters<typeof startHost>[0]): Promise<Running>;
}

/** Call once at the top of a test file: registers the `afterEach` that stops the hosts a test started. */
export function hostPerTest(): HostPerTest {
  const running: Running[] = [];
  afterEach(async () => {
    for (const run of running.splice(0)) await run.stop();
  });
  return {
    async start(options) {
      const run = await startHost(options);
      running.push(run);
      return run;
    },
  };
}

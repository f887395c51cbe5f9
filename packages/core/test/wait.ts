/** Waiting in tests for a condition, never for a fixed time or a number of event-loop turns. */

/**
 * Resolves once `check()` returns true (polled every few ms); rejects after `timeoutMs`, which is
 * generous: the machine may be busy.
 */
export async function until(check: () => boolean, timeoutMs = 15_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

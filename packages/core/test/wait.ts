/** Waiting in tests for a condition, never for a fixed time or a number of event-loop turns. */
import { vi } from "vitest";

/** How long a wait lasts before it fails: generous, because the machine may be busy. */
export const WAIT_MS = 60_000;

// A test that waits must outlive its waits, so that a failed wait reports what it awaited.
vi.setConfig({ testTimeout: WAIT_MS + 30_000, hookTimeout: WAIT_MS + 30_000 });

/**
 * Resolves once `check()` returns true (polled every few ms); rejects after `timeoutMs`, naming
 * `what` was awaited.
 */
export async function until(check: () => boolean, what = "condition", timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * A short observation window for a check that something does NOT happen. Call it only after a
 * positive signal proved the input was handled, so a slow machine cannot make the check pass
 * vacuously.
 */
export const observe = (ms = 50) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * How long the host role waits for an engine (its own limit, or the engine's `waitFor`, ADR 0163)
 * and what an unanswered wait becomes.
 */
import type { HookPoint } from "../catalog.js";
import { EngineFailure } from "../errors.js";
import type { Verdict } from "../types.js";
import type { AartsEngine, EngineWait } from "./engine.js";

/** An engine's `waitFor(hookPoint, own)`, checked: the own limit when it has none, throws or answers nonsense (told to `warn`). */
export function engineWait(engine: AartsEngine, hookPoint: HookPoint, own: number, warn: (message: string) => void): EngineWait {
  let wait: EngineWait | undefined;
  try {
    wait = engine.waitFor?.(hookPoint, own);
  } catch (error) {
    warn(`waitFor failed, using ${own} ms: ${(error as Error).message}`);
  }
  if (wait === undefined || typeof wait.timeoutMs !== "number" || Number.isNaN(wait.timeoutMs)) return { timeoutMs: own, held: false };
  return { timeoutMs: wait.timeoutMs, held: wait.held === true };
}

/** The verdict of a blocking hook a reachable engine did not answer in time (option `unanswered`). */
export function unansweredVerdict(decision: "ask" | "deny", engineId: string, timeoutMs: number): Verdict {
  return {
    decision,
    category: "engine_timeout",
    severity: "warning",
    source: "host",
    reasons: [
      decision === "ask"
        ? `Nobody answered ${engineId} within ${timeoutMs} ms; handed to the host's prompt`
        : `Nobody answered ${engineId} within ${timeoutMs} ms; timed out, blocked`,
    ],
  };
}

/** Runs `fn`, rejecting with a `timeout` EngineFailure (and aborting its signal) after `timeoutMs` (`0` or not finite: never). */
export async function withTimeout<T>(fn: (signal: AbortSignal) => Promise<T>, timeoutMs: number, engineId: string): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      fn(controller.signal),
      new Promise<never>((_, reject) => {
        if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
          timer = setTimeout(() => {
            const failure = new EngineFailure("timeout", `no verdict within ${timeoutMs} ms`, { engineId });
            controller.abort(failure);
            reject(failure);
          }, timeoutMs);
        }
      }),
    ]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * How long one held request may wait, and what it answers when nobody decided (ADR 0145).
 *
 * A client with a hard outer limit (a host hook killed after N seconds) says so in the event's
 * `metadata.ahp_wait`: `{ "max_ms": <ms it will wait>, "on_timeout": "ask" | "block" }`. The hold
 * then ends {@link WAIT_MARGIN_MS} before that limit (never later than the approval timeout) and
 * answers `escalate` ("ask": the client hands the call to its host's own prompt) or `block`.
 */

/** How much earlier than the client's `max_ms` the hold ends, so the answer reaches it in time. */
export const WAIT_MARGIN_MS = 1500;

/** The client's outer limit from `metadata.ahp_wait`. */
export interface ClientWait {
  maxMs: number;
  onTimeout: "ask" | "block";
}

/**
 * What the person's absence became, and what actually happened to the request: the words the
 * audit record, the inspector and the notifications share.
 */
export type HoldOutcome = "approved" | "edited" | "denied" | "handed-to-host" | "timed-out" | "agent-gone" | "cancelled" | "stopped";

/** Reads `metadata.ahp_wait`; a malformed value is ignored with the reason in `problem`. */
export function parseClientWait(metadata: unknown): { wait?: ClientWait; problem?: string } {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return {};
  const raw = (metadata as Record<string, unknown>).ahp_wait;
  if (raw === undefined) return {};
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { problem: "ahp_wait must be an object" };
  const w = raw as Record<string, unknown>;
  const maxMs = w.max_ms;
  if (typeof maxMs !== "number" || !Number.isInteger(maxMs) || maxMs <= 0)
    return { problem: "ahp_wait.max_ms must be a positive integer (ms)" };
  const onTimeout = w.on_timeout ?? "block";
  if (onTimeout !== "ask" && onTimeout !== "block") return { problem: 'ahp_wait.on_timeout must be "ask" or "block"' };
  return { wait: { maxMs, onTimeout } };
}

/** The hold's budget: the host's own, shortened to end {@link WAIT_MARGIN_MS} before the client's limit. */
export function holdBudget(hostBudgetMs: number, wait: ClientWait | undefined): number {
  if (wait === undefined) return hostBudgetMs;
  return Math.max(1, Math.min(hostBudgetMs, wait.maxMs - WAIT_MARGIN_MS));
}

/** Whole seconds for people ("12 s"), at least 1. */
export function seconds(ms: number): string {
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}

/** What every transport driver of the campaign does with one batch of fuzz input. */
import type { FuzzInput } from "../mutate.js";

export type TransportName = "stdio" | "unix" | "http" | "ws" | "memory";

export interface BatchResult {
  /** Oracle violations (empty: the batch passed). */
  problems: string[];
  /** Requests that got no answer before the batch timed out. */
  unanswered: number;
  /** Milliseconds from the first byte sent to the last answer. */
  elapsedMs: number;
}

export interface Driver {
  readonly transport: TransportName;
  /**
   * Sends `units` pipelined, then the canary requests, and checks every answer against the
   * model. `tag` makes the canary ids unique.
   */
  run(units: readonly FuzzInput[], tag: string): Promise<BatchResult>;
  close(): Promise<void>;
}

export const DEFAULT_BATCH_TIMEOUT_MS = 60_000;

/** The engine contract seen from the host role (in-process, subprocess or remote engines). */
import type { HookPoint } from "../catalog.js";
import type { AartsEvent, VersionCheckRequest, VersionCheckResponse } from "../types.js";

/** Per-call options an engine receives from the host role: the hook's timeout and a signal aborted when the host stops waiting. */
export interface EvaluateOptions {
  /** The hook's timeout; engines that talk to something else apply it (or a smaller one) too. */
  readonly timeoutMs?: number;
  /** Aborted when the host stops waiting (timeout). */
  readonly signal?: AbortSignal;
}

/** How long the host waits for an engine's verdict on a hook, and what an expiry means (ADR 0163). */
export interface EngineWait {
  /** The wait in ms (`0` or not finite: no limit). */
  readonly timeoutMs: number;
  /**
   * The engine may hold this decision for a person (its harness advertised a hold longer than the
   * host's own limit): an expiry is a person who has not answered, answered with the host's own
   * prompt (`ask`) or `deny`, never with the failure policy's `allow` (ADR 0140).
   */
  readonly held: boolean;
}

/**
 * An AARTS security engine. `evaluate` answers blocking hooks with a verdict; it may resolve to
 * anything (the host validates it) and signals failures by rejecting. `notify` receives
 * Notification hooks (SessionEnd, PostAskResolution); without it the host calls `evaluate` and
 * ignores the answer.
 */
export interface AartsEngine {
  versionCheck(request: VersionCheckRequest, options?: { signal?: AbortSignal }): Promise<VersionCheckResponse>;
  evaluate(event: AartsEvent, options?: EvaluateOptions): Promise<unknown>;
  notify?(event: AartsEvent): Promise<void>;
  /**
   * How long the host waits for this engine's verdict on `hookPoint`, given the host's own limit
   * (ADR 0145, 0163). Read after a successful version check; without it the own limit applies.
   */
  waitFor?(hookPoint: HookPoint, ownTimeoutMs: number): EngineWait;
  close?(): Promise<void>;
}

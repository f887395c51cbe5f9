/** The engine contract seen from the host role (in-process, subprocess or remote engines). */
import type { AartsEvent, VersionCheckRequest, VersionCheckResponse } from "../types.js";

/** Per-call options an engine receives from the host role: the hook's timeout and a signal aborted when the host stops waiting. */
export interface EvaluateOptions {
  /** The hook's timeout; engines that talk to something else apply it (or a smaller one) too. */
  readonly timeoutMs?: number;
  /** Aborted when the host stops waiting (timeout). */
  readonly signal?: AbortSignal;
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
  close?(): Promise<void>;
}

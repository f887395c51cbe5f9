/**
 * Limit reports (`AhpLimitError` on a listener's or server's `onerror`) as one log line and one
 * count each.
 */
import { limitRejectionOf, type LimitRejection } from "@ahp/core";
import type { Logger } from "./logger.js";
import type { AhpMetrics } from "./metrics.js";

/** Where {@link limitReporter} sends each limit report. */
export interface LimitReporterOptions {
  /** Counts each report in `ahp_limit_rejections_total{transport,limit}`. */
  metrics?: AhpMetrics;
  /** Writes each report as one `warn` line `limit` with the limit, its value, the transport and the peer. */
  logger?: Logger;
}

/**
 * Returns a function for `onerror` callbacks: for a limit report it logs and counts it once
 * (the same report reaching two callbacks, e.g. a transport's and its server's, counts once)
 * and returns the {@link LimitRejection}; for anything else it returns undefined and does
 * nothing, so that the caller handles the error as before.
 */
export function limitReporter(options: LimitReporterOptions): (error: unknown) => LimitRejection | undefined {
  const seen = new WeakSet<object>();
  return (error) => {
    const rejection = limitRejectionOf(error);
    if (rejection === undefined) return undefined;
    if (seen.has(error as object)) return rejection;
    seen.add(error as object);
    options.metrics?.recordLimitRejection(rejection);
    options.logger?.warn("limit", {
      transport: rejection.transport,
      limit: rejection.limit,
      value: rejection.value,
      action: rejection.action,
      ...(rejection.remote === undefined ? {} : { remote: rejection.remote }),
      ...(rejection.connection === undefined ? {} : { connection: rejection.connection }),
      error: (error as Error).message,
    });
    return rejection;
  };
}

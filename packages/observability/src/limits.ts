/**
 * Limit reports (`AhpLimitError` on a listener's or server's `onerror`): each one counted, and
 * logged aggregated per limit per interval, so that a burst (thousands of refused connections)
 * writes a couple of lines with counts instead of a line per report.
 */
import { limitRejectionOf, type LimitRejection } from "@ahp/core";
import type { Logger } from "./logger.js";
import type { AhpMetrics } from "./metrics.js";

/** The interval limit log lines are aggregated over when `intervalMs` is not given: 10 s. */
export const DEFAULT_LIMIT_LOG_INTERVAL_MS = 10_000;

/** How many distinct peers a summary line names at most. */
const MAX_SAMPLE_REMOTES = 5;

/** Where {@link limitReporter} sends each limit report. */
export interface LimitReporterOptions {
  /** Counts each report in `ahp_limit_rejections_total{transport,limit}` (every report, never aggregated). */
  metrics?: AhpMetrics;
  /**
   * Writes `warn` lines `limit` with the limit, its value, the transport, the action, the peer and
   * `count`: the first report of a limit (per transport and action) at once (`count` 1), then, at
   * the end of the interval, one line for the reports that followed it (`count` N,
   * `aggregated: true`, up to five sample peers in `remotes`).
   */
  logger?: Logger;
  /** Length of an aggregation interval in ms. Default {@link DEFAULT_LIMIT_LOG_INTERVAL_MS}. */
  intervalMs?: number;
  /** Clock in ms (tests). Default `Date.now`. */
  now?: () => number;
}

/** The function {@link limitReporter} returns: an `onerror` filter, plus `flush()` for shutdown. */
export interface LimitReporter {
  (error: unknown): LimitRejection | undefined;
  /** Writes the pending aggregated lines now (call it before the process exits). */
  flush(): void;
}

interface Window {
  readonly start: number;
  readonly rejection: LimitRejection;
  suppressed: number;
  readonly remotes: Set<string>;
  lastMessage: string;
  timer: ReturnType<typeof setTimeout> | undefined;
}

function fieldsOf(rejection: LimitRejection): Record<string, unknown> {
  return {
    transport: rejection.transport,
    limit: rejection.limit,
    value: rejection.value,
    action: rejection.action,
  };
}

/**
 * Returns a function for `onerror` callbacks: for a limit report it counts it and logs it
 * (aggregated, see {@link LimitReporterOptions.logger}) once (the same report reaching two
 * callbacks, e.g. a transport's and its server's, counts once) and returns the
 * {@link LimitRejection}; for anything else it returns undefined and does nothing, so that the
 * caller handles the error as before.
 */
export function limitReporter(options: LimitReporterOptions): LimitReporter {
  const seen = new WeakSet<object>();
  const interval = options.intervalMs ?? DEFAULT_LIMIT_LOG_INTERVAL_MS;
  const now = options.now ?? Date.now;
  const windows = new Map<string, Window>();

  const close = (key: string, window: Window): void => {
    if (window.timer !== undefined) clearTimeout(window.timer);
    windows.delete(key);
    if (window.suppressed === 0) return;
    options.logger?.warn("limit", {
      ...fieldsOf(window.rejection),
      count: window.suppressed,
      aggregated: true,
      interval_ms: interval,
      ...(window.remotes.size === 0 ? {} : { remotes: [...window.remotes] }),
      error: window.lastMessage,
    });
  };

  const log = (rejection: LimitRejection, message: string): void => {
    const logger = options.logger;
    if (logger === undefined) return;
    const key = `${rejection.transport}\u0000${rejection.limit}\u0000${rejection.action}`;
    const at = now();
    let window = windows.get(key);
    if (window !== undefined && at - window.start >= interval) {
      close(key, window);
      window = undefined;
    }
    if (window === undefined) {
      windows.set(key, { start: at, rejection, suppressed: 0, remotes: new Set(), lastMessage: message, timer: undefined });
      logger.warn("limit", {
        ...fieldsOf(rejection),
        ...(rejection.remote === undefined ? {} : { remote: rejection.remote }),
        ...(rejection.connection === undefined ? {} : { connection: rejection.connection }),
        count: 1,
        error: message,
      });
      return;
    }
    window.suppressed++;
    window.lastMessage = message;
    if (rejection.remote !== undefined && window.remotes.size < MAX_SAMPLE_REMOTES) window.remotes.add(rejection.remote);
    if (window.timer === undefined) {
      const open = window;
      open.timer = setTimeout(
        () => {
          if (windows.get(key) === open) close(key, open);
        },
        Math.max(0, open.start + interval - at),
      );
      open.timer.unref?.();
    }
  };

  const report = ((error: unknown) => {
    const rejection = limitRejectionOf(error);
    if (rejection === undefined) return undefined;
    if (seen.has(error as object)) return rejection;
    seen.add(error as object);
    options.metrics?.recordLimitRejection(rejection);
    log(rejection, (error as Error).message);
    return rejection;
  }) as LimitReporter;
  report.flush = () => {
    for (const [key, window] of [...windows]) close(key, window);
  };
  return report;
}

/** All three at once: spans outermost (so they cover the rest), then metrics, then logs. */
import type { AhpServerHandlers } from "@ahp/core";
import { loggingMiddleware, type Logger, type LoggingMiddlewareOptions } from "./logger.js";
import type { AhpMetrics } from "./metrics.js";
import { applyHandlerMiddleware, composeMiddleware, type ApplyMiddlewareOptions, type HandlerMiddleware } from "@ahp/core";
import { tracingMiddleware, type TracingOptions } from "./tracing.js";

/** Options of {@link withObservability}: metrics, tracing and logging (each on when given) and which handlers to wrap. */
export interface ObservabilityOptions extends ApplyMiddlewareOptions {
  metrics?: AhpMetrics;
  /** `true` for the global tracer provider, or tracing options. */
  tracing?: boolean | TracingOptions;
  logger?: Logger;
  logging?: Omit<LoggingMiddlewareOptions, keyof ApplyMiddlewareOptions>;
}

/**
 * Wraps `handlers` with tracing, metrics and logging at once, in that order from the outside in
 * (spans cover the rest); each part is on only when its option is given.
 */
export function withObservability(handlers: AhpServerHandlers, options: ObservabilityOptions): AhpServerHandlers {
  const layers: HandlerMiddleware[] = [];
  if (options.tracing !== undefined && options.tracing !== false)
    layers.push(tracingMiddleware(options.tracing === true ? {} : options.tracing));
  if (options.metrics !== undefined) layers.push(options.metrics.middleware());
  if (options.logger !== undefined) layers.push(loggingMiddleware(options.logger, options.logging));
  if (layers.length === 0) return handlers;
  return applyHandlerMiddleware(handlers, composeMiddleware(...layers), options);
}

export {
  AhpMetrics,
  createAhpMetrics,
  withMetrics,
  trackConnections,
  DEFAULT_LATENCY_BUCKETS,
  type AhpMetricsOptions,
  type ConnectionCounter,
} from "./metrics.js";
export { metricsHandler, listenMetrics, type ListenMetricsOptions, type MetricsHandlerOptions, type MetricsListener } from "./http.js";
export {
  createLogger,
  loggingMiddleware,
  withLogging,
  type LogFields,
  type Logger,
  type LoggerOptions,
  type LoggingMiddlewareOptions,
  type LogLevel,
  type LogStream,
} from "./logger.js";
export {
  withTracing,
  tracingMiddleware,
  spanContextFromMetadata,
  parentContextFromMetadata,
  TRACER_NAME,
  type TracingOptions,
} from "./tracing.js";
export { withObservability, type ObservabilityOptions } from "./observe.js";
export { DEFAULT_LIMIT_LOG_INTERVAL_MS, limitReporter, type LimitReporter, type LimitReporterOptions } from "./limits.js";
export { timeoutLogging, type TimeoutLoggingOptions } from "./timeouts.js";

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
export { redactSecrets, redactValue, composeRedactors, SECRET_PATTERNS, SENSITIVE_KEY, type Redactor } from "./shared/redact.js";
export {
  annotate,
  readAnnotation,
  findRuleId,
  DECISION_ANNOTATION,
  RULE_IN_REASON,
  type DecisionAnnotation,
  type RuleIdSources,
} from "./shared/annotations.js";
export {
  applyHandlerMiddleware,
  composeMiddleware,
  observeHandlers,
  decisionKindOf,
  failureMessage,
  type ApplyMiddlewareOptions,
  type HandlerCall,
  type HandlerForm,
  type HandlerKind,
  type HandlerMiddleware,
  type HandlerObserver,
  type HandlerOutcome,
} from "./shared/intercept.js";

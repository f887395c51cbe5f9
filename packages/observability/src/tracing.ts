/**
 * OpenTelemetry spans per decision, with `@opentelemetry/api` only: users register their own
 * SDK; without one every call is a no-op.
 *
 * Span `ahp.decision <event_type>` (kind SERVER) for requests, batch elements, typed points and
 * queries; `ahp.event <event_type>` for notifications. Attributes: `ahp.event_type`,
 * `ahp.session_id`, `ahp.agent_id`, `ahp.depth`, `ahp.form`, `ahp.decision`, `ahp.rule_id`.
 * The parent comes from the event's metadata when it carries W3C ids (`traceparent`, or
 * `trace_id` + `parent_span_id` [+ `trace_flags`]), else from the active context. The handler
 * runs inside the span's context, so spans it starts become children.
 */
import type { AhpServerHandlers } from "@ahp/core";
import {
  context,
  isValidSpanId,
  isValidTraceId,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import { findRuleId, type RuleIdSources } from "@ahp/core";
import { applyHandlerMiddleware, decisionKindOf, failureMessage, type ApplyMiddlewareOptions, type HandlerMiddleware } from "@ahp/core";
import { redactSecrets, type Redactor } from "@ahp/core";

/** The name of the OpenTelemetry tracer the tracing middleware gets from the provider. */
export const TRACER_NAME = "@ahp/observability";

/** Options of the tracing middleware: the OpenTelemetry tracer (or provider) and which handlers to wrap. */
export interface TracingOptions extends ApplyMiddlewareOptions {
  /** A tracer to use. Default: `tracerProvider.getTracer("@ahp/observability")`. */
  tracer?: Tracer;
  /** Default: the globally registered provider (a no-op until an SDK registers one). */
  tracerProvider?: TracerProvider;
  /** Applied to error messages recorded on spans. Default `redactSecrets`. */
  redactor?: Redactor;
  /** Rule id pattern for reason texts; `false` disables. */
  reasonPattern?: RuleIdSources["reasonPattern"];
  /** Also trace handshakes (`ahp.handshake`). Default false. */
  traceHandshakes?: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The remote parent named by event metadata, if any: a W3C `traceparent` string, or
 * `trace_id` (32 hex) with `parent_span_id` (16 hex) and optional `trace_flags` (number or
 * 2 hex digits; default sampled). Invalid or all-zero ids are ignored.
 */
export function spanContextFromMetadata(metadata: unknown): SpanContext | undefined {
  if (metadata === null || typeof metadata !== "object") return undefined;
  const m = metadata as Record<string, unknown>;
  if (typeof m.traceparent === "string") {
    const match = TRACEPARENT.exec(m.traceparent.trim().toLowerCase());
    if (match !== null && match[1] !== "ff" && isValidTraceId(match[2]!) && isValidSpanId(match[3]!)) {
      return { traceId: match[2]!, spanId: match[3]!, traceFlags: Number.parseInt(match[4]!, 16) & 0xff, isRemote: true };
    }
  }
  const traceId = typeof m.trace_id === "string" ? m.trace_id.toLowerCase() : undefined;
  const spanId = typeof m.parent_span_id === "string" ? m.parent_span_id.toLowerCase() : undefined;
  if (traceId === undefined || spanId === undefined || !isValidTraceId(traceId) || !isValidSpanId(spanId)) return undefined;
  let flags: number = TraceFlags.SAMPLED;
  if (typeof m.trace_flags === "number" && Number.isInteger(m.trace_flags)) flags = m.trace_flags & 0xff;
  else if (typeof m.trace_flags === "string" && /^[0-9a-fA-F]{2}$/.test(m.trace_flags)) flags = Number.parseInt(m.trace_flags, 16);
  return { traceId, spanId, traceFlags: flags, isRemote: true };
}

/** `base` with the remote parent from `metadata` when there is one. */
export function parentContextFromMetadata(metadata: unknown, base: Context = context.active()): Context {
  const remote = spanContextFromMetadata(metadata);
  return remote === undefined ? base : trace.setSpanContext(base, remote);
}

/** The middleware behind {@link withTracing}. */
export function tracingMiddleware(options: TracingOptions = {}): HandlerMiddleware {
  const tracer = options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
  const redactor = options.redactor ?? redactSecrets;
  return async (call, next) => {
    if (call.kind === "handshake" && !options.traceHandshakes) return next();
    const parent = parentContextFromMetadata(call.event?.metadata);
    const name =
      call.kind === "handshake"
        ? "ahp.handshake"
        : call.kind === "notification"
          ? `ahp.event ${call.eventType}`
          : `ahp.decision ${call.eventType}`;
    const attributes: Attributes = {
      "ahp.event_type": call.eventType,
      "ahp.session_id": call.sessionId,
      "ahp.agent_id": call.agentId,
      "ahp.form": call.form,
    };
    if (call.event !== undefined) attributes["ahp.depth"] = call.event.depth;
    if (call.ctx.batch !== undefined) attributes["ahp.batch.index"] = call.ctx.batch.index;
    attributes["ahp.transport"] = call.ctx.connection.info.transport;
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    const pattern = options.reasonPattern === undefined ? {} : { reasonPattern: options.reasonPattern };
    try {
      const result = await context.with(trace.setSpan(parent, span), next);
      if (span.isRecording()) {
        const decision = call.kind === "query" ? "answer" : decisionKindOf(result);
        if (decision !== undefined) span.setAttribute("ahp.decision", decision);
        const rule = findRuleId({ target: call.target, result, ...pattern });
        if (rule !== undefined) span.setAttribute("ahp.rule_id", rule);
      }
      return result;
    } catch (error) {
      if (span.isRecording()) {
        const message = redactor(failureMessage(error));
        span.setAttribute("ahp.decision", "error");
        const rule = findRuleId({ target: call.target, ...pattern });
        if (rule !== undefined) span.setAttribute("ahp.rule_id", rule);
        span.recordException({ name: error instanceof Error ? error.name : "Error", message });
        span.setStatus({ code: SpanStatusCode.ERROR, message });
      }
      throw error;
    } finally {
      span.end();
    }
  };
}

/** Wraps every handler in a span. Failures set the span status, then are rethrown unchanged. */
export function withTracing(handlers: AhpServerHandlers, options: TracingOptions = {}): AhpServerHandlers {
  return applyHandlerMiddleware(handlers, tracingMiddleware(options), options);
}

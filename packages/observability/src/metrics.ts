/**
 * Prometheus metrics for an AhpServer, on a private prom-client `Registry` (never the global
 * default one):
 *
 * | metric | type | labels |
 * |---|---|---|
 * | `ahp_events_total` | counter | `event_type`, `decision` |
 * | `ahp_decision_latency_seconds` | histogram | `event_type` |
 * | `ahp_inflight_requests` | gauge | |
 * | `ahp_connected_agents` | gauge | |
 * | `ahp_handler_failures_total` | counter | `event_type` |
 * | `ahp_policy_reloads_total` | counter | `result` (`success`/`failure`) |
 * | `ahp_audit_failures_total` | counter | `kind` (`write`/`checkpoint`/`anchor`/`file_replaced`) |
 * | `ahp_audit_unrecorded_total` | counter | `outcome` (`failed_closed`/`released`) |
 * | `ahp_audit_available` | gauge | |
 * | `ahp_limit_rejections_total` | counter | `transport`, `limit` |
 * | `ahp_handler_timeouts_total` | counter | `event_type` |
 */
import type { AhpServerHandlers, LimitRejection } from "@ahp/core";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import {
  applyHandlerMiddleware,
  decisionKindOf,
  handlerTimeoutOf,
  observeHandlers,
  type ApplyMiddlewareOptions,
  type HandlerCall,
  type HandlerMiddleware,
} from "@ahp/core";

/** Seconds: 100 µs … 10 s, dense below 10 ms where in-process decisions land. */
export const DEFAULT_LATENCY_BUCKETS: readonly number[] = Object.freeze([
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]);

/** Decision tags that become label values; anything else is counted as `other` (bounded cardinality). */
const KNOWN_DECISIONS = new Set(["allow", "block", "modify", "defer", "escalate", "refine", "approve", "reject", "retry", "queue", "skip"]);

/** Options of {@link createAhpMetrics}: the registry to use, the name prefix and default labels. */
export interface AhpMetricsOptions {
  /** Registry to register in. Default: a new private `Registry`. */
  registry?: Registry;
  /** Metric name prefix. Default `ahp_`. */
  prefix?: string;
  /** Histogram buckets (seconds). Default {@link DEFAULT_LATENCY_BUCKETS}. */
  latencyBuckets?: readonly number[];
  /** Labels added to every metric of the registry (e.g. `{ harness: "prod-1" }`). */
  defaultLabels?: Record<string, string>;
}

/** Anything with a live connection count (an `AhpServer`). */
export interface ConnectionCounter {
  readonly connectionCount: number;
}

/**
 * The harness's Prometheus metrics (prom-client): events by type and decision, decision latency,
 * in-flight requests, failures, limit rejections and handler timeouts. `middleware()` counts and
 * times every handler call; `registry` is what a `/metrics` endpoint serves.
 */
export class AhpMetrics {
  readonly registry: Registry;
  /** `ahp_events_total{event_type,decision}`: one per handled event; `decision` is the tag, `none` for notifications, `answer` for queries, `error` for failures. */
  readonly eventsTotal: Counter<"event_type" | "decision">;
  /** `ahp_decision_latency_seconds{event_type}`: handler time of requests and batch elements (failures included). */
  readonly decisionLatency: Histogram<"event_type">;
  /** `ahp_inflight_requests`: handler calls of requests and batch elements currently running. */
  readonly inflightRequests: Gauge;
  /** `ahp_connected_agents`: open agent connections (tracked servers plus manual hooks). */
  readonly connectedAgents: Gauge;
  /** `ahp_handler_failures_total{event_type}`: handler threw, timed out or was aborted. */
  readonly handlerFailures: Counter<"event_type">;
  /** `ahp_policy_reloads_total{result}`. */
  readonly policyReloads: Counter<"result">;
  /** `ahp_audit_failures_total{kind}`: audit log writes that failed, checkpoints that failed, live files found deleted. */
  readonly auditFailures: Counter<"kind">;
  /** `ahp_audit_unrecorded_total{outcome}`: calls answered without their audit record (fail-closed answer, or the handler's answer released). */
  readonly auditUnrecorded: Counter<"outcome">;
  /** `ahp_audit_available`: 1 while the audit log can be written, 0 after a failed write until the next success. */
  readonly auditAvailable: Gauge;
  /** `ahp_limit_rejections_total{transport,limit}`: a server limit refused, delayed or cut something (see {@link recordLimitRejection}). */
  readonly limitRejections: Counter<"transport" | "limit">;
  /** `ahp_handler_timeouts_total{event_type}`: handler calls the server answered on its own because they ran past the time limit (also counted as handler failures). */
  readonly handlerTimeouts: Counter<"event_type">;
  #manualConnections = 0;
  readonly #servers = new Set<ConnectionCounter>();

  constructor(options: AhpMetricsOptions = {}) {
    this.registry = options.registry ?? new Registry();
    if (options.defaultLabels !== undefined) this.registry.setDefaultLabels(options.defaultLabels);
    const p = options.prefix ?? "ahp_";
    const registers = [this.registry];
    const servers = this.#servers;
    const manual = () => this.#manualConnections;
    this.eventsTotal = new Counter({
      name: `${p}events_total`,
      help: "AHP events handled, by event type and decision",
      labelNames: ["event_type", "decision"] as const,
      registers,
    });
    this.decisionLatency = new Histogram({
      name: `${p}decision_latency_seconds`,
      help: "Time the handler took to decide, in seconds",
      labelNames: ["event_type"] as const,
      buckets: [...(options.latencyBuckets ?? DEFAULT_LATENCY_BUCKETS)],
      registers,
    });
    this.inflightRequests = new Gauge({
      name: `${p}inflight_requests`,
      help: "AHP requests whose handler is running",
      registers,
    });
    this.connectedAgents = new Gauge({
      name: `${p}connected_agents`,
      help: "Open agent connections",
      registers,
      collect() {
        let count = manual();
        for (const server of servers) count += server.connectionCount;
        this.set(count);
      },
    });
    this.handlerFailures = new Counter({
      name: `${p}handler_failures_total`,
      help: "Handler calls that threw, timed out or were aborted, by event type",
      labelNames: ["event_type"] as const,
      registers,
    });
    this.policyReloads = new Counter({
      name: `${p}policy_reloads_total`,
      help: "Policy reloads by result",
      labelNames: ["result"] as const,
      registers,
    });
    // Show both results from the start so that rate() works before the first failure.
    this.policyReloads.inc({ result: "success" }, 0);
    this.policyReloads.inc({ result: "failure" }, 0);
    this.auditFailures = new Counter({
      name: `${p}audit_failures_total`,
      help: "Audit log problems: failed writes, failed checkpoints, live files found deleted",
      labelNames: ["kind"] as const,
      registers,
    });
    this.auditUnrecorded = new Counter({
      name: `${p}audit_unrecorded_total`,
      help: "Calls answered without their audit record, by what the agent got",
      labelNames: ["outcome"] as const,
      registers,
    });
    this.auditAvailable = new Gauge({
      name: `${p}audit_available`,
      help: "1 while the audit log can be written, 0 after a failed write until the next success",
      registers,
    });
    this.limitRejections = new Counter({
      name: `${p}limit_rejections_total`,
      help: "Times a server limit acted (refused a connection, answered an error, paused reading, dropped a peer), by transport and limit",
      labelNames: ["transport", "limit"] as const,
      registers,
    });
    this.handlerTimeouts = new Counter({
      name: `${p}handler_timeouts_total`,
      help: "Handler calls that ran past the handler time limit and were answered by the server, by event type",
      labelNames: ["event_type"] as const,
      registers,
    });
  }

  /**
   * Counts one limit that acted (a {@link LimitRejection} from `limitRejectionOf(error)` on a
   * listener's or server's `onerror`). Only the transport and limit name become labels.
   */
  recordLimitRejection(rejection: Pick<LimitRejection, "transport" | "limit">): void {
    this.limitRejections.inc({ transport: rejection.transport, limit: rejection.limit });
  }

  /** Manual hook for transports that are not tracked through a server: a connection opened. */
  connectionOpened(): void {
    this.#manualConnections++;
  }

  /** Manual hook: a connection closed. */
  connectionClosed(): void {
    if (this.#manualConnections > 0) this.#manualConnections--;
  }

  /**
   * Reads `server.connectionCount` at every scrape (the server counts connections for all its
   * transports). Returns a function that stops tracking.
   */
  trackConnections(server: ConnectionCounter): () => void {
    this.#servers.add(server);
    return () => {
      this.#servers.delete(server);
    };
  }

  /**
   * An audit log problem (`write`: a group of records could not be written; `checkpoint`; `anchor`: publishing a checkpoint to its anchor; `file_replaced`).
   * The first call also shows the audit series (and `ahp_audit_available`) from then on.
   */
  recordAuditFailure(kind: "write" | "checkpoint" | "anchor" | "file_replaced"): void {
    this.auditFailures.inc({ kind });
    if (kind === "write") this.auditAvailable.set(0);
  }

  /** The audit log is in use (`available` true) or could not be written (false). Call once when it opens. */
  setAuditAvailable(available: boolean): void {
    this.auditAvailable.set(available ? 1 : 0);
    // Show every series from the start so that alerts and rate() work before the first failure.
    for (const kind of ["write", "checkpoint", "anchor", "file_replaced"]) this.auditFailures.inc({ kind }, 0);
    for (const outcome of ["failed_closed", "released"]) this.auditUnrecorded.inc({ outcome }, 0);
  }

  /** A call answered without its audit record: `failed_closed` (the agent got a fail-closed answer) or `released`. */
  recordAuditUnrecorded(outcome: "failed_closed" | "released"): void {
    this.auditUnrecorded.inc({ outcome });
  }

  /** Counts a policy reload. */
  recordPolicyReload(ok: boolean): void {
    this.policyReloads.inc({ result: ok ? "success" : "failure" });
  }

  /** The middleware behind {@link withMetrics}. */
  middleware(): HandlerMiddleware {
    return observeHandlers<boolean>({
      start: (call) => {
        if (!measured(call)) return false;
        this.inflightRequests.inc();
        return true;
      },
      end: (call, outcome, counted) => {
        if (call.kind === "handshake") return;
        if (counted) {
          this.inflightRequests.dec();
          this.decisionLatency.observe({ event_type: call.eventType }, Number(outcome.durationNs) / 1e9);
        }
        if (!outcome.ok) {
          this.handlerFailures.inc({ event_type: call.eventType });
          if (handlerTimeoutOf(outcome.error) !== undefined) this.handlerTimeouts.inc({ event_type: call.eventType });
          this.eventsTotal.inc({ event_type: call.eventType, decision: "error" });
          return;
        }
        this.eventsTotal.inc({ event_type: call.eventType, decision: decisionLabel(call, outcome.result) });
      },
    });
  }

  /** The exposition text (what `/metrics` serves). */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}

const measured = (call: HandlerCall) => call.kind !== "handshake" && call.form !== "notification";

function decisionLabel(call: HandlerCall, result: unknown): string {
  if (call.kind === "notification") return "none";
  if (call.kind === "query") return "answer";
  const tag = decisionKindOf(result);
  return tag !== undefined && KNOWN_DECISIONS.has(tag) ? tag : "other";
}

/** A new {@link AhpMetrics} in its own registry (or `options.registry`). */
export function createAhpMetrics(options: AhpMetricsOptions = {}): AhpMetrics {
  return new AhpMetrics(options);
}

/** Wraps every handler so that each call is counted and timed. Failures are counted, then rethrown. */
export function withMetrics(handlers: AhpServerHandlers, metrics: AhpMetrics, options: ApplyMiddlewareOptions = {}): AhpServerHandlers {
  return applyHandlerMiddleware(handlers, metrics.middleware(), options);
}

/** `metrics.trackConnections(server)` as a function. */
export function trackConnections(server: ConnectionCounter, metrics: AhpMetrics): () => void {
  return metrics.trackConnections(server);
}

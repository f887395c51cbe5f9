/**
 * The harness people run: a policy engine (the built-in default policy unless a file is given,
 * hot-reloaded when it is), an optional tamper-evident audit log, Prometheus metrics and JSON
 * logs, composed into one AhpServer. Shared by `ahp serve` and the demo.
 */
import { AhpServer, annotate, applyHandlerMiddleware, composeMiddleware, type AhpServerHandlers, type HarnessConfig } from "@ahp/core";
import type { AgentHost } from "@ahp/agent-host";
import {
  openAuditLog,
  auditMiddleware,
  type AuditFailureMode,
  type AuditIncident,
  type AuditKey,
  type AuditLog,
  type AuditSink,
  type AuditSyncMode,
} from "@ahp/audit";
import { createAhpMetrics, limitReporter, timeoutLogging, trackConnections, type AhpMetrics, type Logger } from "@ahp/observability";
import type { RedisStateStore } from "@ahp/state-redis";
import { Counter, Gauge } from "prom-client";
import {
  DEFAULT_POLICY,
  PolicyEngine,
  PolicyStateError,
  composeHandlers,
  loadPolicyFile,
  watchPolicyFile,
  type PolicyEvaluation,
  type PolicyFileInput,
  type PolicyWatcher,
  type ShadowDisagreement,
} from "@ahp/policy";

/** Options of {@link createHarness}: the policy, audit log, metrics, logger, Agent Host and shared state of the harness. */
export interface HarnessOptions {
  /** A policy file (YAML or JSON), watched and hot-reloaded. Default: the built-in default policy. */
  policyFile?: string;
  /** A policy given in code (used when no file is given). */
  policy?: PolicyFileInput;
  /**
   * A candidate policy file evaluated beside the enforced policy and never enforced (shadow mode),
   * hot-reloaded like the policy. Disagreements go to the audit record (`shadow`) and to
   * `ahp_shadow_disagreements_total{from,to,rule}`.
   */
  shadowPolicyFile?: string;
  /** Limit reports are logged once per limit per this interval, with a count (default 10000 ms). */
  limitLogIntervalMs?: number;
  /** Audit log file and its HMAC key. */
  audit?: HarnessAuditOptions;
  /** Metrics registry to record into (created when absent). */
  metrics?: AhpMetrics;
  log: Logger;
  config?: HarnessConfig;
  name?: string;
  /** Every policy evaluation (the demo prints them). */
  onDecision?: (evaluation: PolicyEvaluation) => void;
  /** Handlers the policy falls through to when no rule matches. */
  handlers?: AhpServerHandlers;
  /**
   * An Agent Host adapter: it sees every event and the policy's decision, and holds escalations
   * for a human. It sits inside metrics and audit, so they record the final (human) decision.
   */
  agentHost?: AgentHost;
  /** The server's own per-handler time limit (default: the advertised `timeout_ms`). */
  handlerTimeoutMs?: number;
  /** Keep the policy's state (rate limits, quotas) on Redis, shared with other replicas. Default: in memory. */
  state?: { url: string; password?: string; keyPrefix?: string };
  /**
   * Answer a notification whose handler returned synchronously at once, the metrics and timeout
   * log observing it right after (`applyHandlerMiddleware`'s `syncNotifications`). Default false.
   */
  syncNotifications?: boolean;
}

/** The audit log of a harness: its file, key and write-ahead settings. */
export interface HarnessAuditOptions {
  /** The log file (with `sink`: only the name the logs give the log). */
  file: string;
  key: AuditKey;
  /** Where records go instead of `file` (a store of your own). Checkpoints need `file`: none are written. */
  sink?: AuditSink;
  includePayloads?: boolean;
  /** When a decision is released relative to its record. Default `write` (write-ahead; survives a crash of the process). */
  sync?: AuditSyncMode;
  /** What a call gets when its record cannot be written. Default `closed` (the event type's fail-closed decision). */
  failure?: AuditFailureMode;
  /** Interval of signed checkpoints next to the log (ms); 0 turns them off. Default 1000. */
  checkpointMs?: number;
  /** Replica id recorded in every record and checkpoint. */
  replicaId?: string;
  /** Also publish every signed checkpoint here: a file (replaced atomically) or an http(s) URL (POST). */
  anchor?: string;
}

/** A harness built by {@link createHarness}: the server to connect transports to, its policy engine, metrics and audit log. */
export interface Harness {
  readonly server: AhpServer;
  readonly engine: PolicyEngine;
  readonly metrics: AhpMetrics;
  readonly audit?: AuditLog;
  /**
   * For the listeners' `onerror`: logs and counts a limit report (once, whichever callbacks it
   * reaches) and returns true; returns false for anything else.
   */
  reportLimit(error: unknown): boolean;
  /**
   * Whether the harness can decide now (for `GET /readyz`): the policy is loaded, the audit log
   * (when there is one) is writable, the shared state store (when there is one) answers a PING.
   * A policy reload that failed leaves the harness ready (the last good policy is in force); the
   * `policy` check's detail says so.
   */
  readiness(): Promise<HarnessReadiness>;
  close(): Promise<void>;
}

/** One dependency's part of {@link HarnessReadiness}. */
export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

/** The answer of {@link Harness.readiness}: `ready` is true when every check is ok. */
export interface HarnessReadiness {
  ready: boolean;
  checks: Record<string, ReadinessCheck>;
}

/**
 * A harness could not start: its policy could not be loaded, its audit log could not be opened
 * (or written), or its state store could not be set up. `cause` is what failed.
 */
export class HarnessStartError extends Error {
  override name = "HarnessStartError";
  constructor(
    readonly part: "policy" | "audit" | "state",
    /** The file involved (the policy file or the audit log), if any. */
    readonly file: string,
    cause: unknown,
  ) {
    super(`${part}${file === "" ? "" : ` ${file}`}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The time a state store PING may take before the harness counts the store as unreachable. */
const READINESS_PING_MS = 1000;

/** The version `ahp serve` reports in `harness_info.version` of its handshake answer. */
export const HARNESS_VERSION = "0.1.0";

/** Fail closed: a failing handler is answered with a blocking decision (the audit log and the timeout log say so). */
const HANDLER_FAILURE = "decision";

/**
 * The harness `ahp serve` runs, for embedding: an `AhpServer` answering with the policy engine
 * (fail closed on handler failure), with metrics, the audit log (write-ahead) and the shared
 * state store when configured. Connect transports to `server`; `close()` stops it all.
 */
export async function createHarness(options: HarnessOptions): Promise<Harness> {
  const { log } = options;
  const metrics = options.metrics ?? createAhpMetrics();
  let stateStore: Awaited<ReturnType<typeof openStateStore>> | undefined;
  try {
    stateStore = options.state === undefined ? undefined : await openStateStore(options.state, log, metrics);
  } catch (error) {
    throw new HarnessStartError("state", "", error);
  }
  let shadow: PolicyEngine | undefined;
  if (options.shadowPolicyFile !== undefined) {
    try {
      shadow = await PolicyEngine.fromFile(options.shadowPolicyFile, {
        onerror: (error) => log.warn("shadow policy", { error: error.message }),
      });
    } catch (error) {
      await stateStore?.close();
      throw new HarnessStartError("policy", options.shadowPolicyFile, error);
    }
  }
  const shadowDisagreements =
    shadow === undefined
      ? undefined
      : new Counter({
          name: "ahp_shadow_disagreements_total",
          help: "Events the shadow (candidate, never enforced) policy decided differently from the enforced one",
          labelNames: ["from", "to", "rule"],
          registers: [metrics.registry],
        });
  const engineOptions = {
    ...(shadow === undefined
      ? {}
      : {
          shadow,
          onShadowDisagreement: (d: ShadowDisagreement) =>
            shadowDisagreements?.inc({ from: d.from, to: d.to, rule: d.shadowRule ?? d.enforcedRule ?? "(default)" }),
        }),
    onDecision: (e: PolicyEvaluation) => {
      // Hand the rule id to the audit log and metrics (they read it from the event).
      if (e.ruleId !== undefined) annotate(e.event, { ruleId: e.ruleId, latencyNs: e.latencyNs });
      options.onDecision?.(e);
    },
    onerror: (error: Error) => {
      if (error instanceof PolicyStateError) stateStore?.failed(error);
      else log.warn("policy", { error: error.message });
    },
    ...(stateStore === undefined ? {} : { stateStore: stateStore.store }),
  };
  let engine: PolicyEngine;
  try {
    engine =
      options.policyFile !== undefined
        ? new PolicyEngine(await loadPolicyFile(options.policyFile), engineOptions)
        : new PolicyEngine(options.policy ?? DEFAULT_POLICY, engineOptions);
  } catch (error) {
    await stateStore?.close();
    throw new HarnessStartError("policy", options.policyFile ?? "", error);
  }
  log.info("policy loaded", { policy: engine.policy.name ?? options.policyFile ?? "default", rules: engine.policy.data.rules.length });

  let watcher: PolicyWatcher | undefined;
  // The last reload that failed (cleared by the next one that succeeds): the previous policy stays in force.
  let reloadFailure: { at: string; error: string } | undefined;
  if (options.policyFile !== undefined) {
    watcher = watchPolicyFile(options.policyFile, {
      engine,
      onReload: (p) => {
        reloadFailure = undefined;
        metrics.recordPolicyReload(true);
        log.info("policy reloaded", { policy: p.name, rules: p.data.rules.length });
      },
      onError: (error) => {
        reloadFailure = { at: new Date().toISOString(), error: error.message };
        metrics.recordPolicyReload(false);
        log.error("policy reload failed; the previous policy stays in force", { error: error.message });
      },
    });
    await watcher.ready;
  }
  let shadowWatcher: PolicyWatcher | undefined;
  if (shadow !== undefined) {
    log.info("shadow policy loaded", { policy: shadow.policy.name ?? options.shadowPolicyFile, rules: shadow.policy.data.rules.length });
    shadowWatcher = shadow.watch({
      onReload: (p) => log.info("shadow policy reloaded", { policy: p.name, rules: p.data.rules.length }),
      onError: (error) => log.error("shadow policy reload failed; the previous candidate stays", { error: error.message }),
    });
    await shadowWatcher.ready;
  }

  let audit: AuditLog | undefined;
  const auditOptions = options.audit;
  if (auditOptions !== undefined) {
    const checkpointMs = auditOptions.checkpointMs ?? 1000;
    const report = auditIncidentReporter(log, metrics);
    // A log learns that it is writable again from its next write; with no calls coming in (a replica
    // taken out of service because it is not ready) there would be none. One pinned record per
    // outage is that write: the log tries it again every second until it is stored.
    let probing = false;
    const probeAudit = () => {
      if (probing || audit === undefined || audit.available) return;
      probing = true;
      audit
        .appendPinned({
          kind: "incident",
          reason: "the audit log could not be written: the harness reported itself not ready until this record was stored",
          data: { incident: "not_ready" },
        })
        .catch(() => undefined)
        .finally(() => (probing = false));
    };
    try {
      audit = await openAuditLog({
        ...(auditOptions.sink === undefined ? { path: auditOptions.file } : { sink: auditOptions.sink }),
        key: auditOptions.key,
        sync: auditOptions.sync ?? "write",
        checkpoint: checkpointMs > 0 && auditOptions.sink === undefined ? { intervalMs: checkpointMs } : false,
        ...(auditOptions.replicaId === undefined ? {} : { replicaId: auditOptions.replicaId }),
        ...(auditOptions.anchor === undefined ? {} : { anchor: auditOptions.anchor }),
        onincident: (incident) => {
          report(incident);
          if (incident.kind === "write_failed") setImmediate(probeAudit);
        },
      });
    } catch (error) {
      await watcher?.close();
      await shadowWatcher?.close();
      await stateStore?.close();
      throw new HarnessStartError("audit", auditOptions.file, error);
    }
    metrics.setAuditAvailable(audit.available);
    log.info("audit log open", {
      file: auditOptions.file,
      key_id: auditOptions.key.id,
      sync: audit.sync,
      failure: auditOptions.failure ?? "closed",
      ...(audit.checkpointPath === undefined ? {} : { checkpoint: audit.checkpointPath, checkpoint_ms: checkpointMs }),
      ...(audit.replicaId === undefined ? {} : { replica_id: audit.replicaId }),
      ...(auditOptions.anchor === undefined ? {} : { anchor: redactUrl(auditOptions.anchor) }),
    });
  }

  let handlers: AhpServerHandlers = composeHandlers(engine, options.handlers);
  if (options.agentHost !== undefined) handlers = options.agentHost.wrap(handlers);
  // Counted and timed; a call the server answers at its handler time limit is also logged.
  const observe = composeMiddleware(metrics.middleware(), timeoutLogging(log, { handlerFailure: HANDLER_FAILURE }));
  if (audit === undefined) {
    handlers = applyHandlerMiddleware(
      handlers,
      observe,
      options.syncNotifications
        ? { syncNotifications: true, onObserverError: (error) => log.debug("middleware", { error: error.message }) }
        : {},
    );
  } else {
    // The audit record outermost, in the same layer: a second layer would hand the audit a
    // promise from the first and race it against an abort signal made for every call.
    const record = auditMiddleware(audit, {
      ...(auditOptions?.includePayloads ? { includePayloads: true } : {}),
      failure: auditOptions?.failure ?? "closed",
      handlerFailure: HANDLER_FAILURE,
      // Each failed write is logged once by the incident reporter; here only the count per call.
      onunaudited: ({ outcome }) => metrics.recordAuditUnrecorded(outcome),
    });
    handlers = applyHandlerMiddleware(handlers, composeMiddleware(record, observe));
  }

  const limits = limitReporter({
    metrics,
    logger: log,
    ...(options.limitLogIntervalMs === undefined ? {} : { intervalMs: options.limitLogIntervalMs }),
  });
  const server = new AhpServer({
    harnessInfo: { name: options.name ?? "ahp-harness", version: HARNESS_VERSION },
    ...(options.config === undefined ? {} : { config: options.config }),
    ...(options.handlerTimeoutMs === undefined ? {} : { handlerTimeoutMs: options.handlerTimeoutMs }),
    // Fail closed: a failing handler is answered with a blocking decision, not an error an
    // agent might treat as "allow".
    handlerFailure: HANDLER_FAILURE,
    handlers,
    onerror: (error) => {
      if (limits(error) === undefined) log.debug("server", { error: error.message });
    },
  });
  const untrack = trackConnections(server, metrics);
  let closed = false;

  return {
    server,
    engine,
    metrics,
    ...(audit === undefined ? {} : { audit }),
    reportLimit: (error) => limits(error) !== undefined,
    async readiness() {
      const checks: Record<string, ReadinessCheck> = {};
      if (closed) checks.harness = { ok: false, detail: "stopping" };
      checks.policy =
        reloadFailure === undefined
          ? { ok: true, detail: `${engine.policy.name ?? options.policyFile ?? "default"} (${engine.policy.data.rules.length} rules)` }
          : {
              ok: true,
              detail: `the last reload failed at ${reloadFailure.at} (${reloadFailure.error}); the previous policy stays in force`,
            };
      checks.audit =
        audit === undefined
          ? { ok: true, detail: "no audit log" }
          : audit.available
            ? { ok: true, detail: "writable" }
            : { ok: false, detail: "the audit log cannot be written: every decision fails closed until it can" };
      if (stateStore === undefined) checks.state = { ok: true, detail: "in this process's memory" };
      else {
        const ping = await stateStore.store.ping(READINESS_PING_MS);
        checks.state = ping.ok
          ? { ok: true, detail: `reachable (${ping.latencyMs.toFixed(1)} ms)` }
          : { ok: false, detail: `unreachable: ${ping.error}; decisions that need it fail closed` };
      }
      return { ready: Object.values(checks).every((c) => c.ok), checks };
    },
    async close() {
      closed = true;
      untrack();
      options.agentHost?.dispose("The harness stopped");
      await watcher?.close();
      await shadowWatcher?.close();
      await server.close();
      limits.flush();
      await audit?.close();
      await stateStore?.close();
    },
  };
}

/** The Redis state store with its log lines (one per change of reachability) and metrics. */
async function openStateStore(state: NonNullable<HarnessOptions["state"]>, log: Logger, metrics: AhpMetrics) {
  // Loaded only when used: a harness without shared state never loads the Redis client.
  const { RedisStateStore, redactRedisUrl } = await import("@ahp/state-redis");
  const failures = new Counter({
    name: "ahp_state_store_failures_total",
    help: "Policy evaluations that needed the shared state store and could not use it (failed closed or lost a counter update)",
    registers: [metrics.registry],
  });
  let up = false;
  let closing = false;
  const holder: { store?: RedisStateStore } = {};
  new Gauge({
    name: "ahp_state_store_up",
    help: "1 when the shared policy state store is reachable",
    registers: [metrics.registry],
    collect() {
      this.set(holder.store?.stats().ready === true ? 1 : 0);
    },
  });
  const store = new RedisStateStore({
    ...state,
    onstatus: (status, detail) => {
      if (status === "ready" && !up) log.info("state store connected", { url: detail.url });
      if (status === "down" && up && !closing)
        log.error("state store unreachable; decisions that need it fail closed until it is back", { url: detail.url });
      up = status === "ready";
    },
    onerror: (error) => log.debug("state store", { error: error.message }),
  });
  if (!(await store.ready())) {
    log.error("state store unreachable; decisions that need it fail closed until it is back", {
      url: redactRedisUrl(state.url),
    });
  }
  holder.store = store;
  const s = store;
  // One log line per second at most while the store is failing; the metric counts every failure.
  let lastLog = 0;
  let suppressed = 0;
  return {
    store: s,
    async close() {
      closing = true;
      await s.close();
    },
    failed(error: Error) {
      failures.inc();
      const now = Date.now();
      if (now - lastLog < 1000) {
        suppressed++;
        return;
      }
      log.warn("policy state", { error: error.message, ...(suppressed > 0 ? { suppressed } : {}) });
      lastLog = now;
      suppressed = 0;
    },
  };
}

/**
 * Audit log incidents as log lines and metrics. Never silent: the first failure of a run of
 * failures is logged at once, later ones at most once a second (with the count), and the
 * recovery is logged too; every failure is counted.
 */
function auditIncidentReporter(log: Logger, metrics: AhpMetrics): (incident: AuditIncident) => void {
  const lastLogged = new Map<string, number>();
  const loud = (incident: AuditIncident) => {
    const now = Date.now();
    if (incident.consecutive !== undefined && incident.consecutive > 1 && now - (lastLogged.get(incident.kind) ?? 0) < 1000) return false;
    lastLogged.set(incident.kind, now);
    return true;
  };
  return (incident) => {
    switch (incident.kind) {
      case "write_failed":
        metrics.recordAuditFailure("write");
        if (loud(incident)) {
          log.error("audit log unavailable", {
            error: incident.message,
            records_not_written: incident.records,
            failures_in_a_row: incident.consecutive,
          });
        }
        break;
      case "restored":
        metrics.setAuditAvailable(true);
        log.warn("audit log writable again", { detail: incident.message });
        break;
      case "file_replaced":
        metrics.recordAuditFailure("file_replaced");
        log.error("audit file deleted while open", { detail: incident.message });
        break;
      case "checkpoint_failed":
        metrics.recordAuditFailure("checkpoint");
        if (loud(incident)) log.error("audit checkpoint failed", { error: incident.message, failures_in_a_row: incident.consecutive });
        break;
      case "anchor_failed":
        metrics.recordAuditFailure("anchor");
        if (loud(incident)) log.error("audit anchor failed", { error: incident.message, failures_in_a_row: incident.consecutive });
        break;
      case "rotation_failed":
        log.error("audit rotation manifest failed", { error: incident.message });
        break;
    }
  };
}

/** A URL as logs may show it: no user name or password. A file path is returned as it is. */
function redactUrl(target: string): string {
  if (!/^https?:\/\//i.test(target)) return target;
  try {
    const url = new URL(target);
    url.username = "";
    url.password = "";
    return url.toString();
  } catch {
    return "(invalid URL)";
  }
}

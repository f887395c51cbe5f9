/**
 * The harness people run: a policy engine (the built-in default policy unless a file is given,
 * hot-reloaded when it is), an optional tamper-evident audit log, Prometheus metrics and JSON
 * logs, composed into one AhpServer. Shared by `ahp serve` and the demo.
 */
import { AhpServer, annotate, type AhpServerHandlers, type HarnessConfig } from "@ahp/core";
import { openAuditLog, withAudit, type AuditKey, type AuditLog } from "@ahp/audit";
import { createAhpMetrics, trackConnections, withMetrics, type AhpMetrics, type Logger } from "@ahp/observability";
import {
  DEFAULT_POLICY,
  PolicyEngine,
  composeHandlers,
  loadPolicyFile,
  watchPolicyFile,
  type PolicyEvaluation,
  type PolicyFileInput,
  type PolicyWatcher,
} from "@ahp/policy";

export interface HarnessOptions {
  /** A policy file (YAML or JSON), watched and hot-reloaded. Default: the built-in default policy. */
  policyFile?: string;
  /** A policy given in code (used when no file is given). */
  policy?: PolicyFileInput;
  /** Audit log file and its HMAC key. */
  audit?: { file: string; key: AuditKey; includePayloads?: boolean };
  /** Metrics registry to record into (created when absent). */
  metrics?: AhpMetrics;
  log: Logger;
  config?: HarnessConfig;
  name?: string;
  /** Every policy evaluation (the demo prints them). */
  onDecision?: (evaluation: PolicyEvaluation) => void;
  /** Handlers the policy falls through to when no rule matches. */
  handlers?: AhpServerHandlers;
}

export interface Harness {
  readonly server: AhpServer;
  readonly engine: PolicyEngine;
  readonly metrics: AhpMetrics;
  readonly audit?: AuditLog;
  close(): Promise<void>;
}

export const HARNESS_VERSION = "0.1.0";

export async function createHarness(options: HarnessOptions): Promise<Harness> {
  const { log } = options;
  const metrics = options.metrics ?? createAhpMetrics();
  const engineOptions = {
    onDecision: (e: PolicyEvaluation) => {
      // Hand the rule id to the audit log and metrics (they read it from the event).
      if (e.ruleId !== undefined) annotate(e.event, { ruleId: e.ruleId, latencyNs: e.latencyNs });
      options.onDecision?.(e);
    },
    onerror: (error: Error) => log.warn("policy", { error: error.message }),
  };
  const engine =
    options.policyFile !== undefined
      ? new PolicyEngine(await loadPolicyFile(options.policyFile), engineOptions)
      : new PolicyEngine(options.policy ?? DEFAULT_POLICY, engineOptions);
  log.info("policy loaded", { policy: engine.policy.name ?? options.policyFile ?? "default", rules: engine.policy.data.rules.length });

  let watcher: PolicyWatcher | undefined;
  if (options.policyFile !== undefined) {
    watcher = watchPolicyFile(options.policyFile, {
      engine,
      onReload: (p) => {
        metrics.recordPolicyReload(true);
        log.info("policy reloaded", { policy: p.name, rules: p.data.rules.length });
      },
      onError: (error) => {
        metrics.recordPolicyReload(false);
        log.error("policy reload failed; the previous policy stays in force", { error: error.message });
      },
    });
    await watcher.ready;
  }

  let audit: AuditLog | undefined;
  if (options.audit !== undefined) {
    audit = await openAuditLog({
      path: options.audit.file,
      key: options.audit.key,
    });
    log.info("audit log open", { file: options.audit.file, key_id: options.audit.key.id });
  }

  let handlers: AhpServerHandlers = composeHandlers(engine, options.handlers);
  handlers = withMetrics(handlers, metrics);
  if (audit !== undefined) {
    handlers = withAudit(handlers, audit, {
      ...(options.audit?.includePayloads ? { includePayloads: true } : {}),
      onerror: (error) => log.error("audit write failed", { error: error.message }),
    });
  }

  const server = new AhpServer({
    harnessInfo: { name: options.name ?? "ahp-harness", version: HARNESS_VERSION },
    ...(options.config === undefined ? {} : { config: options.config }),
    // Fail closed: a failing handler is answered with a blocking decision, not an error an
    // agent might treat as "allow".
    handlerFailure: "decision",
    handlers,
    onerror: (error) => log.debug("server", { error: error.message }),
  });
  const untrack = trackConnections(server, metrics);

  return {
    server,
    engine,
    metrics,
    ...(audit === undefined ? {} : { audit }),
    async close() {
      untrack();
      await watcher?.close();
      await server.close();
      await audit?.close();
    },
  };
}

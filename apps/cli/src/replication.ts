/**
 * Agent Host replication for `ahp serve --state redis://… --agent-host …` (ADR 0085): the shared
 * action log on a Redis Stream next to the policy state, with its log lines and metrics.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { AgentHost, ReplicationOptions } from "@ahp/agent-host";
import type { AhpMetrics, Logger } from "@ahp/observability";
import type { RedisActionStream } from "@ahp/state-redis";
import { Counter, Gauge } from "prom-client";

/** The stream key of a deployment: next to its policy keys when `--state-prefix` is given. */
export const actionStreamKey = (keyPrefix: string | undefined): string =>
  keyPrefix === undefined ? "ahp:agent-host:actions" : `${keyPrefix}agent-host:actions`;

export interface OpenedReplication {
  /** For `new AgentHost({ replication })`. */
  readonly options: ReplicationOptions;
  readonly replicaId: string;
  /** Registers the metrics (once the harness's registry exists). */
  attach(metrics: AhpMetrics, host: AgentHost): void;
  close(): Promise<void>;
}

/** Opens the Redis Stream and the failure reporting (one log line a second at most, every failure counted). */
export async function openReplication(
  state: { url: string; password?: string; keyPrefix?: string },
  log: Logger,
  replicaId = `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`,
): Promise<OpenedReplication> {
  const { RedisActionStream } = await import("@ahp/state-redis");
  let failures: Counter | undefined;
  let pendingFailures = 0;
  let lastLog = 0;
  let suppressed = 0;
  const stream: RedisActionStream = new RedisActionStream({
    url: state.url,
    ...(state.password === undefined ? {} : { password: state.password }),
    key: actionStreamKey(state.keyPrefix),
    onerror: (error) => log.debug("agent-host replication", { error: error.message }),
  });
  const onfailure = (error: Error) => {
    if (failures === undefined) pendingFailures++;
    else failures.inc();
    const now = Date.now();
    if (now - lastLog < 1000) {
      suppressed++;
      return;
    }
    log.warn("agent-host replication", { error: error.message, ...(suppressed > 0 ? { suppressed } : {}) });
    lastLog = now;
    suppressed = 0;
  };
  if (!(await stream.ready()))
    log.error("agent-host replication: the shared action log is unreachable; this replica serves its own sessions until it is back");
  log.info("agent-host replication", { replica_id: replicaId, key: actionStreamKey(state.keyPrefix) });
  return {
    replicaId,
    options: { relay: stream, replicaId, onfailure },
    attach(metrics, host) {
      failures = new Counter({
        name: "ahp_agent_host_replication_failures_total",
        help: "Agent Host replication failures: entries not appended to the shared log, answers not forwarded or unanswered",
        registers: [metrics.registry],
      });
      failures.inc(pendingFailures);
      new Gauge({
        name: "ahp_agent_host_replication_up",
        help: "1 when the shared Agent Host action log (Redis Stream) is reachable",
        registers: [metrics.registry],
        collect() {
          this.set(stream.connected ? 1 : 0);
        },
      });
      new Gauge({
        name: "ahp_agent_host_replication_entries",
        help: "Entries of the shared Agent Host action log: appended by this replica, or applied from the others",
        labelNames: ["direction"],
        registers: [metrics.registry],
        collect() {
          const stats = host.replicationStats();
          this.set({ direction: "appended" }, (stats?.published ?? 0) - (stats?.publishFailures ?? 0));
          this.set({ direction: "applied" }, stats?.applied ?? 0);
        },
      });
      new Gauge({
        name: "ahp_agent_host_remote_sessions",
        help: "Sessions supervised by other replicas and shown by this one",
        registers: [metrics.registry],
        collect() {
          this.set(host.replicationStats()?.remoteSessions ?? 0);
        },
      });
    },
    close: () => stream.close(),
  };
}

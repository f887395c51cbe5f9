/**
 * The seam of Agent Host replication (ADR 0085): the shared log a deployment's replicas append to
 * and tail ({@link ActionRelay}), the options and counters of replication, and the clock that
 * lets a replica reduce another replica's actions with their origin's time.
 */
import type { Clock } from "../reducers/clock.js";

/**
 * A shared, ordered log that every replica of a deployment appends to and tails: the transport of
 * Agent Host replication. Entries are opaque JSON texts. `@ahp/state-redis` implements it on one
 * Redis Stream (`RedisActionStream`).
 */
export interface ActionRelay {
  /** Appends entries in order, after everything this replica appended before. Rejects when the log cannot be reached. */
  publish(entries: readonly string[]): Promise<void>;
  /** Starts delivering the entries of every replica (this one's included) in the log's single order; returns a function that stops it. */
  subscribe(listener: ActionRelayListener): () => void;
  /** Whether appends can succeed now (the connection to the log is up). */
  readonly connected: boolean;
}

/** What an {@link ActionRelay} delivers to its subscriber. */
export interface ActionRelayListener {
  /** Entries in log order. Called again only after the previous call returned. */
  entries(entries: readonly string[]): void;
  /** Tailing started or resumed after an outage: entries appended meanwhile by anyone may be missing. */
  connected(): void;
}

/** Replication of the Agent Host state across harness replicas through a shared log. */
export interface ReplicationOptions {
  /** The shared log. */
  relay: ActionRelay;
  /** This replica's id, unique in the deployment. Default: a random id. */
  replicaId?: string;
  /** Interval of this replica's heartbeat entries. Default 2000 ms. */
  heartbeatMs?: number;
  /** Another replica silent this long is gone: its open tool calls are cancelled and its sessions end here. Default 10 000 ms. */
  replicaTimeoutMs?: number;
  /** An answer forwarded to another replica that gets no reply within this time is rejected. Default 10 000 ms. */
  answerTimeoutMs?: number;
  /** The shared log failed: an append was lost, an answer could not be forwarded. Never throws into the host. */
  onfailure?: (error: Error) => void;
}

/** Counters of replication since the host started. */
export interface ReplicationStats {
  /** This replica's id in the shared log. */
  replicaId: string;
  /** Entries appended to the shared log (attempted). */
  published: number;
  /** Entries that could not be appended (the log unreachable). */
  publishFailures: number;
  /** Entries of other replicas applied here. */
  applied: number;
  /** Answers forwarded to the replica holding the request. */
  forwarded: number;
  /** Answers that could not be forwarded or got no reply. */
  forwardFailures: number;
  /** Sessions supervised by other replicas and mirrored here. */
  remoteSessions: number;
  /** Whether the shared log is reachable now. */
  connected: boolean;
}

/** A clock whose value can be fixed while another replica's action is reduced, and that remembers its last reading. */
export interface ReplicaClock {
  readonly now: Clock;
  at<T>(time: number, fn: () => T): T;
  last(): number;
}

/** Wraps `base` so that remote actions reduce with their origin's time (every replica computes the same state). */
export function replicaClock(base: Clock): ReplicaClock {
  let fixed: number | undefined;
  let last = 0;
  return {
    now: () => (last = fixed ?? base()),
    at(time, fn) {
      const previous = fixed;
      fixed = time;
      try {
        return fn();
      } finally {
        fixed = previous;
      }
    },
    last: () => last,
  };
}

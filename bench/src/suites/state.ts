/**
 * Policy state on Redis (`@ahp/state-redis`) against the engine's own memory: decisions per
 * second of a policy with one rate limit, with its buckets and counters in this process (the
 * floor), in the asynchronous in-memory store (the cost of the shared-state path itself), and on
 * a real `redis-server` for 1 and 3 replicas (engines with their own connections), sequential
 * and with 64 decisions in flight. Round trips per decision are counted by the store.
 *
 * Needs `redis-server` (Debian package `redis-server`); without it only the in-process rows run.
 */
import type { AhpEvent } from "@ahp/core";
import { MemoryStateStore, PolicyEngine, composeHandlers, type PolicyFileInput } from "@ahp/policy";
import { RedisStateStore } from "@ahp/state-redis";
import { redisAvailable, startRedis } from "@ahp/state-redis/testing";
import { measurePipelined, measureSequential, throughputRatio, type Row, type Suite } from "../harness.js";

const POLICY: PolicyFileInput = {
  version: 1,
  rules: [
    {
      id: "shell-rate",
      events: "pre_action",
      match: { tool: "bash" },
      rate_limit: { scope: "session", rate: 1e6, interval_ms: 1000, burst: 1e6 },
    },
  ],
};

let n = 0;
const event = (): AhpEvent => ({
  event_type: "pre_action",
  session_id: `s${n % 64}`,
  agent_id: `a${n++ % 8}`,
  timestamp: "2026-06-01T12:00:00Z",
  depth: 0,
  payload: { tool_name: "bash", arguments: { command: "npm test" } },
});

const decide = (handlers: ReturnType<typeof composeHandlers>) => () => handlers.onEvent!(event(), {} as never) as Promise<unknown>;

export const suite: Suite = {
  name: "state",
  async run({ quick }) {
    const seq = { iterations: quick ? 200 : 5_000, runs: quick ? 1 : 3, warmup: quick ? 50 : 20_000, sampleLatency: true };
    const pipe = { total: quick ? 500 : 20_000, concurrency: 64, runs: quick ? 1 : 3, warmup: quick ? 100 : 2_000 };
    const local = composeHandlers(new PolicyEngine(POLICY));
    const memory = composeHandlers(new PolicyEngine(POLICY, { stateStore: new MemoryStateStore() }));
    const floor = await measureSequential(decide(local), seq);
    const memorySeq = await measureSequential(decide(memory), seq);
    const rows: Row[] = [
      {
        suite: "state",
        case: "floor: state in the engine's memory (sync), one rate limit",
        measurement: floor,
        note: "1 core, no transport",
      },
      {
        suite: "state",
        case: "MemoryStateStore (async shared-state path, in process)",
        measurement: memorySeq,
        floor,
        ratio: throughputRatio(memorySeq, floor),
        note: "the cost of the shared-state path without a network",
      },
    ];
    if (!redisAvailable) {
      rows.push({ suite: "state", case: "Redis rows skipped", measurement: { opsPerSec: 0 }, note: "redis-server is not installed" });
      return rows.filter((r) => r.measurement.opsPerSec > 0);
    }
    const redis = await startRedis();
    try {
      const stores = [0, 1, 2].map(() => new RedisStateStore({ url: redis.url }));
      for (const s of stores) if (!(await s.ready())) throw new Error("redis-server did not accept connections");
      const one = composeHandlers(new PolicyEngine(POLICY, { stateStore: stores[0]! }));
      const three = stores.map((stateStore) => composeHandlers(new PolicyEngine(POLICY, { stateStore })));
      const steps = () => stores.reduce((sum, s) => sum + s.stats().steps, 0);

      const memoryPipe = await measurePipelined(decide(memory), pipe);
      let before = steps();
      let decisions = 0;
      const counted = (op: () => Promise<unknown>) => () => {
        decisions++;
        return op();
      };
      const redisSeq = await measureSequential(counted(decide(one)), seq);
      const rtSeq = (steps() - before) / decisions;
      before = steps();
      decisions = 0;
      const redisPipe = await measurePipelined(counted(decide(one)), pipe);
      const rtPipe = (steps() - before) / decisions;
      let k = 0;
      const spread = () => decide(three[k++ % 3]!)();
      const redisThree = await measurePipelined(spread, pipe);
      await Promise.all(stores.map((s) => s.close()));
      rows.push(
        {
          suite: "state",
          case: "Redis store, 1 replica, sequential",
          measurement: redisSeq,
          floor: memorySeq,
          ratio: throughputRatio(redisSeq, memorySeq),
          target: "<= 1 round trip per decision",
          note: `${rtSeq.toFixed(2)} round trips/decision; p50 ${redisSeq.p50Us?.toFixed(0)} µs (loopback RTT bound)`,
        },
        {
          suite: "state",
          case: "MemoryStateStore, 64 in flight",
          measurement: memoryPipe,
          floor,
          ratio: throughputRatio(memoryPipe, floor),
        },
        {
          suite: "state",
          case: "Redis store, 1 replica, 64 in flight",
          measurement: redisPipe,
          floor: memoryPipe,
          ratio: throughputRatio(redisPipe, memoryPipe),
          target: "<= 1 round trip per decision",
          note: `${rtPipe.toFixed(2)} round trips/decision`,
        },
        {
          suite: "state",
          case: "Redis store, 3 replicas in one process, 64 in flight",
          measurement: redisThree,
          floor: memoryPipe,
          ratio: throughputRatio(redisThree, memoryPipe),
          note: "3 engines, 3 connections, one redis-server (all on this machine)",
        },
      );
    } finally {
      await redis.dispose();
    }
    return rows;
  },
};

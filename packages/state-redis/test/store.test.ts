import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  DEFAULT_POLICY,
  MemoryStateStore,
  PolicyEngine,
  PolicyStateError,
  composeHandlers,
  type PolicyStateStore,
  type StateStep,
} from "@ahp/policy";
import type { AhpEvent } from "@ahp/core";
import { RedisStateStore, redactRedisUrl } from "@ahp/state-redis";
import { redisSkipReason, runRedis, startRedis, type RedisProcess } from "@ahp/state-redis/testing";

if (!runRedis) console.warn(redisSkipReason);
// Redis restarts and reconnections wait for their condition up to 60 s on a busy machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

let n = 0;
const ev = (type: AhpEvent["event_type"], payload: unknown, extra: Partial<AhpEvent> = {}): AhpEvent => ({
  event_type: type,
  session_id: "s1",
  agent_id: "a1",
  timestamp: `2026-06-01T12:00:${String(n++ % 60).padStart(2, "0")}Z`,
  depth: 0,
  payload,
  ...extra,
});
const bash = (command: string, extra: Partial<AhpEvent> = {}) =>
  ev("pre_action", { action_type: "tool_call", tool_name: "bash", arguments: { command } }, extra);
const tag = (d: unknown) => (d as { decision?: string }).decision;

const slow = { rate: 1, intervalMs: 60_000, burst: 2 } as const; // no refill within a test
const step = (s: Partial<StateStep>): StateStep => ({ sessionId: "s1", agentId: "a1", takes: [], ...s });

/** The same contract for the in-memory reference and for Redis. */
function contract(name: string, make: () => Promise<PolicyStateStore>) {
  describe(`${name}: the PolicyStateStore contract`, () => {
    let store: PolicyStateStore;
    beforeAll(async () => {
      store = await make();
    });
    afterAll(async () => {
      await store?.close();
    });

    it("takes tokens until the bucket is empty, then reports the wait", async () => {
      await store.reset();
      const take = { scope: "session" as const, key: "r1", ...slow };
      const started = Date.now();
      expect((await store.step(step({ takes: [take] }))).failed).toBe(-1);
      expect((await store.step(step({ takes: [take] }))).failed).toBe(-1);
      const third = await store.step(step({ takes: [take] }));
      expect(third.failed).toBe(0);
      // The next token is one interval after the first take, less the time the steps took (however long on a busy machine).
      expect(third.waitMs).toBeGreaterThanOrEqual(60_000 - (Date.now() - started) - 5);
      expect(third.waitMs).toBeLessThanOrEqual(60_000);
    });

    it("keeps one bucket per session, per agent, and one for everyone", async () => {
      await store.reset();
      const one = { rate: 1, intervalMs: 60_000, burst: 1 };
      const s = { scope: "session" as const, key: "s", ...one };
      const a = { scope: "agent" as const, key: "a", ...one };
      const g = { scope: "global" as const, key: "g", ...one };
      expect((await store.step(step({ sessionId: "A", agentId: "X", takes: [s] }))).failed).toBe(-1);
      expect((await store.step(step({ sessionId: "A", agentId: "X", takes: [s] }))).failed).toBe(0);
      expect((await store.step(step({ sessionId: "B", agentId: "X", takes: [s] }))).failed).toBe(-1);
      expect((await store.step(step({ sessionId: "A", agentId: "X", takes: [a] }))).failed).toBe(-1);
      expect((await store.step(step({ sessionId: "B", agentId: "X", takes: [a] }))).failed).toBe(0);
      expect((await store.step(step({ sessionId: "B", agentId: "Y", takes: [a] }))).failed).toBe(-1);
      expect((await store.step(step({ sessionId: "C", agentId: "Z", takes: [g] }))).failed).toBe(-1);
      expect((await store.step(step({ sessionId: "D", agentId: "W", takes: [g] }))).failed).toBe(0);
    });

    it("stops at the first empty bucket: later buckets keep their tokens, the conditional record is not applied", async () => {
      await store.reset();
      const first = { scope: "session" as const, key: "first", rate: 1, intervalMs: 60_000, burst: 1 };
      const second = { scope: "session" as const, key: "second", rate: 1, intervalMs: 60_000, burst: 1 };
      await store.step(step({ takes: [first], record: { events: 1 }, recordIfAllTaken: { actions: 1 } }));
      const r = await store.step(step({ takes: [first, second], record: { events: 1 }, recordIfAllTaken: { actions: 1 } }));
      expect(r.failed).toBe(0);
      expect((await store.step(step({ takes: [second] }))).failed).toBe(-1);
      const read = await store.step(step({ readSession: true }));
      expect(read.session).toMatchObject({ events: 2, actions: 1 });
    });

    it("keeps the session's counters: sums, the highest heartbeat, the reported stats, background runs and time", async () => {
      await store.reset();
      await store.step(step({ record: { events: 1, prompts: 1, tokens: 1.5, closeBackground: true } }));
      await store.step(step({ record: { events: 1, errors: 1, tokens: 10, heartbeatTokens: 40 } }));
      await store.step(step({ record: { events: 1, heartbeatTokens: 30 } }));
      await store.step(step({ record: { events: 1, reported: { total_actions: 7, total_tokens: 70, duration_ms: 700, error_count: 1 } } }));
      await store.step(step({ record: { events: 1, closeBackground: true }, recordIfAllTaken: { startBackground: true } }));
      const read = await store.step(step({ readSession: true, record: { events: 1, closeBackground: true } }));
      expect(read.session).toMatchObject({
        events: 5,
        prompts: 1,
        errors: 1,
        tokens: 11.5,
        heartbeatTokens: 40,
        backgroundRuns: 1,
        reported: { total_actions: 7, total_tokens: 70, duration_ms: 700, error_count: 1 },
      });
      expect(read.session!.backgroundSince).toBeGreaterThan(0);
      expect(read.session!.firstSeen).toBeLessThanOrEqual(read.now);
      const after = await store.step(step({ readSession: true }));
      expect(after.session).toMatchObject({ events: 6, backgroundSince: undefined });
      expect(after.session!.backgroundMs).toBeGreaterThanOrEqual(0);
      expect((await store.step(step({ sessionId: "fresh", readSession: true }))).session).toMatchObject({ events: 0, reported: undefined });
    });

    it("remembers the session's downloads: rewritten ones forgotten first, a new download the newest, at most 32", async () => {
      await store.reset();
      const read = async (sessionId = "s1") => (await store.step(step({ sessionId, readSession: true }))).session!.downloads;
      await store.step(step({ record: { downloads: ["i.sh", "t"] } }));
      expect(await read()).toEqual(["i.sh", "t"]);
      // Rewritten first, then the downloads: `t` is gone, `i.sh` downloaded again is the newest.
      await store.step(step({ record: { rewritten: ["t"], downloads: ["x.py", "i.sh"] } }));
      expect(await read()).toEqual(["x.py", "i.sh"]);
      // Only when every take succeeded, for recordIfAllTaken.
      const one = { scope: "session" as const, key: "dl", rate: 1, intervalMs: 60_000, burst: 1 };
      await store.step(step({ takes: [one], recordIfAllTaken: { downloads: ["a"] } }));
      await store.step(step({ takes: [one], recordIfAllTaken: { downloads: ["b"] } }));
      expect(await read()).toEqual(["x.py", "i.sh", "a"]);
      await store.step(step({ record: { downloads: Array.from({ length: 40 }, (_, k) => `f${k}`) } }));
      const kept = await read();
      expect(kept).toHaveLength(32);
      expect(kept!.at(-1)).toBe("f39");
      expect(kept![0]).toBe("f8");
      await store.step(step({ record: { rewritten: kept } }));
      expect(await read()).toEqual([]);
      expect(await read("other")).toEqual([]);
    });
  });
}

contract("MemoryStateStore", async () => new MemoryStateStore());

describe.runIf(runRedis)("RedisStateStore on a real redis-server", () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.dispose();
  });

  contract("RedisStateStore", async () => {
    const store = new RedisStateStore({ url: redis.url, keyPrefix: `t${Date.now()}:`, commandTimeoutMs: 10_000 });
    expect(await store.ready(30_000)).toBe(true);
    return store;
  });

  it("a rate limit is exact across three replicas sharing the store", async () => {
    const policy = {
      version: 1 as const,
      rules: [
        { id: "r", events: "pre_action" as const, rate_limit: { scope: "global" as const, rate: 1, interval_ms: 60_000, burst: 10 } },
      ],
    };
    // A generous command timeout: this test is about exactness, not latency, and CI machines are loaded.
    const stores = [0, 1, 2].map(() => new RedisStateStore({ url: redis.url, keyPrefix: "replicas:", commandTimeoutMs: 10_000 }));
    // Steps fail closed until a store is connected; every replica must be up before the burst.
    expect(await Promise.all(stores.map((s) => s.ready(10_000)))).toEqual([true, true, true]);
    await stores[0]!.reset();
    const replicas = stores.map((stateStore) => composeHandlers(new PolicyEngine(policy, { stateStore })));
    const decisions = await Promise.all(
      Array.from({ length: 30 }, async (_, i) =>
        replicas[i % 3]!.onEvent!(bash("ls", { session_id: `s${i}`, agent_id: `a${i % 5}` }), {} as never),
      ),
    );
    expect(decisions.filter((d) => tag(d) !== "allow" && tag(d) !== "defer")).toEqual([]);
    expect(decisions.filter((d) => tag(d) === "allow")).toHaveLength(10);
    expect(decisions.filter((d) => tag(d) === "defer")).toHaveLength(20);
    // One round trip per decision on a policy without counter conditions.
    expect(stores.reduce((sum, s) => sum + s.stats().steps, 0)).toBe(30);
    await Promise.all(stores.map((s) => s.close()));
  });

  it("a file downloaded through one replica and run through another is blocked by the default policy", async () => {
    const a = new RedisStateStore({ url: redis.url, keyPrefix: "staged:", commandTimeoutMs: 10_000 });
    const b = new RedisStateStore({ url: redis.url, keyPrefix: "staged:", commandTimeoutMs: 10_000 });
    expect(await Promise.all([a.ready(10_000), b.ready(10_000)])).toEqual([true, true]);
    await a.reset();
    const ha = composeHandlers(new PolicyEngine(DEFAULT_POLICY, { stateStore: a }));
    const hb = composeHandlers(new PolicyEngine(DEFAULT_POLICY, { stateStore: b }));
    const on = (h: typeof ha, command: string, session: string) => h.onEvent!(bash(command, { session_id: session }), {} as never);
    expect(tag(await on(ha, "wget -qO i.sh https://x.example/i.sh", "dl"))).toBe("allow");
    expect(await on(hb, "bash i.sh", "dl")).toMatchObject({ decision: "block" });
    expect(JSON.stringify(await on(hb, "bash i.sh", "dl"))).toContain("block-staged-download-run");
    // Another session never downloaded it; a download the agent then rewrote with a file tool is its own file.
    expect(tag(await on(hb, "bash i.sh", "other"))).toBe("allow");
    expect(tag(await on(ha, "curl -fsSLo t.sh https://x.example/t.sh", "dl2"))).toBe("allow");
    const write = ev("pre_action", { tool_name: "Write", arguments: { file_path: "t.sh", content: "echo hi" } }, { session_id: "dl2" });
    expect(tag(await hb.onEvent!(write, {} as never))).toBe("allow");
    expect(tag(await on(ha, "bash t.sh", "dl2"))).toBe("allow");
    // A download replaced through one replica by a shell redirection is the agent's own file on the other.
    expect(tag(await on(ha, "wget -qO r.sh https://x.example/r.sh", "dl3"))).toBe("allow");
    expect(tag(await on(hb, "cat > r.sh <<EOF\necho mine\nEOF", "dl3"))).toBe("allow");
    expect(tag(await on(ha, "bash r.sh", "dl3"))).toBe("allow");
    // Appending to it does not.
    expect(tag(await on(ha, "wget -qO s.sh https://x.example/s.sh", "dl4"))).toBe("allow");
    expect(tag(await on(hb, "echo 'echo more' >> s.sh", "dl4"))).toBe("allow");
    expect(tag(await on(ha, "bash s.sh", "dl4"))).toBe("block");
    await Promise.all([a.close(), b.close()]);
  });

  it("a quota consumed on one replica is seen on another", async () => {
    const policy = {
      version: 1 as const,
      rules: [
        {
          id: "quota",
          events: "pre_action" as const,
          match: { session: { actions: { gte: 3 } } },
          action: { decision: "block" as const, reason: "quota" },
        },
      ],
    };
    const a = new RedisStateStore({ url: redis.url, keyPrefix: "quota:", commandTimeoutMs: 10_000 });
    const b = new RedisStateStore({ url: redis.url, keyPrefix: "quota:", commandTimeoutMs: 10_000 });
    expect(await Promise.all([a.ready(10_000), b.ready(10_000)])).toEqual([true, true]);
    await a.reset();
    const ha = composeHandlers(new PolicyEngine(policy, { stateStore: a }));
    const hb = composeHandlers(new PolicyEngine(policy, { stateStore: b }));
    for (let i = 0; i < 3; i++) expect(tag(await ha.onEvent!(bash("ls", { session_id: "q" }), {} as never))).toBe("allow");
    expect(await hb.onEvent!(bash("ls", { session_id: "q" }), {} as never)).toMatchObject({ decision: "block", reason: "quota" });
    expect(tag(await hb.onEvent!(bash("ls", { session_id: "other" }), {} as never))).toBe("allow");
    await Promise.all([a.close(), b.close()]);
  });

  it("fails closed while Redis is down and recovers when it is back, without a restart; the script is loaded again", async () => {
    const own = await startRedis();
    const errors: Error[] = [];
    const statuses: string[] = [];
    const store = new RedisStateStore({
      url: own.url,
      reconnect: { minDelayMs: 20, maxDelayMs: 100 },
      onerror: (e) => errors.push(e),
      onstatus: (s) => statuses.push(s),
    });
    expect(await store.ready(30_000)).toBe(true);
    const policy = {
      version: 1 as const,
      rules: [{ id: "r", events: "pre_action" as const, rate_limit: { rate: 100, interval_ms: 1000 } }],
    };
    const h = composeHandlers(new PolicyEngine(policy, { stateStore: store, onerror: () => {} }));
    expect(tag(await h.onEvent!(bash("ls"), {} as never))).toBe("allow");
    await own.stop();
    const closed = await h.onEvent!(bash("ls"), {} as never);
    expect(closed).toMatchObject({ decision: "block" });
    expect((closed as { reason: string }).reason).toMatch(/^policy state store unavailable: /);
    await own.start();
    // Reconnection is the client's own (backoff): wait for it, then decisions flow again.
    await expect.poll(() => store.stats().ready, { timeout: 60_000, interval: 20 }).toBe(true);
    expect(tag(await h.onEvent!(bash("ls"), {} as never))).toBe("allow");
    expect(store.stats().scriptLoads).toBeGreaterThanOrEqual(2); // loaded again for the restarted server
    expect(statuses).toContain("down");
    expect(errors.length).toBeGreaterThan(0);
    await store.close();
    await own.dispose();
  });

  it("ping(): the server answers (with the round trip's time), or says why not; never the password", async () => {
    const own = await startRedis({ password: "ping-s3cret" });
    const store = new RedisStateStore({ url: own.url, password: "ping-s3cret", reconnect: { minDelayMs: 20, maxDelayMs: 100 } });
    expect(await store.ready(30_000)).toBe(true);
    const up = await store.ping();
    expect(up).toEqual({ ok: true, latencyMs: expect.any(Number) as unknown });
    await own.stop();
    await expect.poll(async () => (await store.ping()).ok, { timeout: 60_000, interval: 20 }).toBe(false);
    const down = await store.ping();
    expect(down).toEqual({ ok: false, error: expect.stringContaining(`127.0.0.1:${own.port}`) as unknown });
    expect(JSON.stringify(down)).not.toContain("ping-s3cret");
    await own.start();
    await expect.poll(async () => (await store.ping()).ok, { timeout: 60_000, interval: 20 }).toBe(true);
    await store.close();
    expect(await store.ping()).toEqual({ ok: false, error: "the state store is closed" });
    await own.dispose();
  });

  it("fails closed when Redis answers too slowly", async () => {
    const store = new RedisStateStore({ url: redis.url, commandTimeoutMs: 100, keyPrefix: "slow:" });
    expect(await store.ready(30_000)).toBe(true);
    const policy = {
      version: 1 as const,
      rules: [{ id: "r", events: "pre_action" as const, rate_limit: { rate: 100, interval_ms: 1000 } }],
    };
    const h = composeHandlers(new PolicyEngine(policy, { stateStore: store, onerror: () => {} }));
    expect(tag(await h.onEvent!(bash("ls"), {} as never))).toBe("allow");
    // Another connection pauses every client's writes (for up to 60 s, ended by resume()): the step is not answered in time.
    const resume = await pauseWrites(redis.url, 60_000);
    const d = await h.onEvent!(bash("ls"), {} as never);
    expect(d).toMatchObject({ decision: "block", reason: expect.stringMatching(/within 100 ms/) as unknown });
    await resume();
    await store.close();
  });

  it("never puts the password in errors; redacts it from URLs", async () => {
    const own = await startRedis({ password: "s3cret-pass" });
    const errors: Error[] = [];
    const wrong = new RedisStateStore({
      url: own.url,
      password: "wrong-s3cret",
      onerror: (e) => errors.push(e),
      reconnect: { minDelayMs: 1000 },
    });
    expect(await wrong.ready(300)).toBe(false);
    const failure = await wrong.step(step({})).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PolicyStateError);
    for (const e of [...errors, failure as Error]) expect(String(e.message)).not.toContain("wrong-s3cret");
    await wrong.close();
    const right = new RedisStateStore({ url: own.url, password: "s3cret-pass" });
    expect(await right.ready(30_000)).toBe(true);
    expect((await right.step(step({}))).failed).toBe(-1);
    await right.close();
    expect(redactRedisUrl("redis://user:pw@host:6379/2")).toBe("redis://user:***@host:6379/2");
    expect(() => new RedisStateStore({ url: "http://x" })).toThrow(/scheme must be redis: or rediss:/);
    await own.dispose();
  });
});

/** Pauses every other client's writes for `ms` (CLIENT PAUSE); returns a function that waits for the end. */
async function pauseWrites(url: string, ms: number): Promise<() => Promise<void>> {
  const { createClient } = await import("@redis/client");
  const c = createClient({ url });
  c.on("error", () => {});
  await c.connect();
  await c.sendCommand(["CLIENT", "PAUSE", String(ms), "WRITE"]);
  const until = Date.now() + ms;
  return async () => {
    await c.sendCommand(["CLIENT", "UNPAUSE"]);
    await c.close();
    // Ended by UNPAUSE, not by running out.
    expect(Date.now()).toBeLessThan(until);
  };
}

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RedisActionStream } from "@ahp/state-redis";
import { redisSkipReason, runRedis, startRedis, type RedisProcess } from "@ahp/state-redis/testing";

if (!runRedis) console.warn(redisSkipReason);
// The waits below allow up to 60 s each on a busy machine; a test holds several.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });

/** Polls `check` until it holds (no fixed sleeps: the machine may be loaded). */
async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function tail(stream: RedisActionStream) {
  const seen: string[] = [];
  let connects = 0;
  const stop = stream.subscribe({ entries: (e) => seen.push(...e), connected: () => connects++ });
  return { seen, connects: () => connects, stop };
}

describe.runIf(runRedis)("RedisActionStream (a real redis-server)", () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis({ password: "stream-pass-1" });
  });
  afterAll(async () => {
    await redis?.dispose();
  });

  it("delivers the entries of every replica to every replica in one order", async () => {
    const key = "t1:actions";
    const streams = [0, 1, 2].map(() => new RedisActionStream({ url: redis.url, password: "stream-pass-1", key }));
    const tails = streams.map(tail);
    await until(() => tails.every((t) => t.connects() === 1), "three tails");
    await Promise.all(
      streams.map(async (s, i) => {
        for (let n = 0; n < 20; n++) await s.publish([`r${i}-${n}a`, `r${i}-${n}b`]);
      }),
    );
    await until(() => tails.every((t) => t.seen.length === 120), "120 entries everywhere");
    expect(tails[1]!.seen).toEqual(tails[0]!.seen);
    expect(tails[2]!.seen).toEqual(tails[0]!.seen);
    // Each replica's own entries keep their order.
    for (let i = 0; i < 3; i++) {
      const own = tails[0]!.seen.filter((e) => e.startsWith(`r${i}-`));
      expect(own).toEqual(Array.from({ length: 20 }, (_, n) => [`r${i}-${n}a`, `r${i}-${n}b`]).flat());
    }
    await Promise.all(streams.map((s) => s.close()));
  });

  it("trims to about maxLen entries", async () => {
    const key = "t2:actions";
    const s = new RedisActionStream({ url: redis.url, password: "stream-pass-1", key, maxLen: 100 });
    expect(await s.ready(30_000)).toBe(true);
    for (let n = 0; n < 20; n++) await s.publish(Array.from({ length: 50 }, (_, i) => `e${n}-${i}`));
    await s.close();
    const { createClient } = await import("@redis/client");
    const c = createClient({ url: redis.url, password: "stream-pass-1" });
    await c.connect();
    const len = Number(await c.sendCommand(["XLEN", key]));
    await c.close();
    expect(len).toBeLessThan(1000);
    expect(len).toBeGreaterThanOrEqual(100);
  });

  it("fails appends at once while Redis is down, resumes tailing (and says so) when it is back", async () => {
    const key = "t3:actions";
    const errors: Error[] = [];
    const s = new RedisActionStream({
      url: redis.url,
      password: "stream-pass-1",
      key,
      reconnect: { minDelayMs: 20, maxDelayMs: 200 },
      onerror: (e) => errors.push(e),
    });
    const t = tail(s);
    await until(() => t.connects() === 1, "tail");
    await s.publish(["before"]);
    await until(() => t.seen.includes("before"), "before");
    await redis.stop();
    await until(() => !s.connected, "disconnected");
    await expect(s.publish(["lost"])).rejects.toThrow(/Redis redis:\/\/127\.0\.0\.1:\d+\/?: /);
    expect(errors.every((e) => !e.message.includes("stream-pass-1"))).toBe(true);
    await redis.start();
    // An append right after the restart, possibly before the tail is back: resuming after the last entry read still delivers it.
    await until(() => s.connected, "reconnected", 60_000);
    await s.publish(["early"]);
    await until(() => t.connects() === 2, "tail resumed", 60_000);
    await s.publish(["after"]);
    await until(() => t.seen.includes("after"), "after");
    expect(t.seen.indexOf("early")).toBeGreaterThan(t.seen.indexOf("before"));
    expect(t.seen).not.toContain("lost");
    expect(s.stats()).toMatchObject({ appendFailures: 1, connected: true });
    await s.close();
  });

  it("close() lets appends already asked for land (a stopping replica's goodbye is not lost), then refuses new ones", async () => {
    const key = "t4:actions";
    const reader = new RedisActionStream({ url: redis.url, password: "stream-pass-1", key });
    const t = tail(reader);
    await until(() => t.connects() === 1, "tail");
    const s = new RedisActionStream({ url: redis.url, password: "stream-pass-1", key });
    expect(await s.ready(30_000)).toBe(true);
    const appended = Promise.all([s.publish(["last-1", "last-2"]), s.publish(["bye"])]);
    await s.close();
    await appended;
    await expect(s.publish(["after close"])).rejects.toThrow(/closed/);
    await until(() => t.seen.length === 3, "the appends asked for before close");
    expect(t.seen).toEqual(["last-1", "last-2", "bye"]);
    expect(s.stats()).toMatchObject({ appended: 3, appendFailures: 1, connected: false });
    await reader.close();
  });

  it("a subscriber that stops gets nothing more; a second subscriber is refused", async () => {
    const key = "t5:actions";
    const s = new RedisActionStream({ url: redis.url, password: "stream-pass-1", key });
    const t = tail(s);
    expect(() => s.subscribe({ entries: () => undefined, connected: () => undefined })).toThrow(/already has a subscriber/);
    await until(() => t.connects() === 1, "tail");
    await s.publish(["one"]);
    await until(() => t.seen.includes("one"), "one");
    t.stop();
    await s.publish(["two"]);
    // A second stream on the same key sees "two": it was appended, the stopped subscriber just did not get it.
    const other = new RedisActionStream({ url: redis.url, password: "stream-pass-1", key });
    const o = tail(other);
    await until(() => o.connects() === 1, "other tail");
    await other.publish(["three"]);
    await until(() => o.seen.includes("three"), "three");
    expect(t.seen).toEqual(["one"]);
    await Promise.all([s.close(), other.close()]);
  });
});

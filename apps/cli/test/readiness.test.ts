/**
 * `harness.readiness()` (what `GET /readyz` serves) with each dependency down and back: an audit
 * sink that fails and recovers, a real redis-server stopped and started again, a policy reload that
 * fails (the previous policy stays in force, and readiness says so) and then succeeds.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AhpClient, createLinkedPair } from "@ahp/core";
import { AuditKey, MemoryAuditSink, type AuditSink } from "@ahp/audit";
import { createLogger } from "@ahp/observability";
import { DEFAULT_POLICY } from "@ahp/policy";
import { redisSkipReason, runRedis, startRedis, type RedisProcess } from "@ahp/state-redis/testing";
import { createHarness, type Harness, type HarnessReadiness } from "../src/harness.js";

if (!runRedis) console.warn(redisSkipReason);

const log = createLogger({ level: "silent" });
const key = AuditKey.fromBytes(randomBytes(32));
const harnesses: Harness[] = [];
const clients: AhpClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await Promise.allSettled(harnesses.splice(0).map((h) => h.close()));
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-readiness-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Asks `readiness()` until `done` holds for its answer (60 s at most), and returns that answer. */
async function readinessUntil(harness: Harness, done: (r: HarnessReadiness) => boolean): Promise<HarnessReadiness> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await harness.readiness();
    if (done(r)) return r;
    if (Date.now() > deadline) throw new Error(`readiness never reached the condition; last: ${JSON.stringify(r)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function agent(harness: Harness): Promise<AhpClient> {
  const [agentSide, harnessSide] = createLinkedPair();
  await harness.server.connect(harnessSide);
  const client = new AhpClient({ timeoutMs: 30_000 });
  await client.connect(agentSide);
  clients.push(client);
  return client;
}

/** A memory sink whose writes fail while `failing` is set. */
function failingSink() {
  const memory = new MemoryAuditSink();
  let failing = false;
  const sink: AuditSink = {
    open: () => memory.open(),
    append: (r) => memory.append(r),
    appendBatch: async (records) => {
      if (failing) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      await memory.appendBatch(records);
    },
    close: () => memory.close(),
  };
  return { sink, memory, fail: (on: boolean) => (failing = on) };
}

describe("harness.readiness()", () => {
  it("without an audit log or shared state: ready, each check says why", async () => {
    const harness = await createHarness({ log });
    harnesses.push(harness);
    expect(await harness.readiness()).toEqual({
      ready: true,
      checks: {
        policy: { ok: true, detail: expect.stringMatching(/rules\)$/) as unknown },
        audit: { ok: true, detail: "no audit log" },
        state: { ok: true, detail: "in this process's memory" },
      },
    });
  });

  it("an audit sink that fails: not ready (audit check down) until a write succeeds again", async () => {
    const held = failingSink();
    const harness = await createHarness({ log, audit: { file: "memory", key, sink: held.sink } });
    harnesses.push(harness);
    const client = await agent(harness);
    expect((await harness.readiness()).ready).toBe(true);
    held.fail(true);
    // The write fails: the call is answered fail-closed and the log is unavailable.
    expect(await client.send("pre_action", { action_type: "tool_call", tool_name: "bash", arguments: { command: "ls" } })).toMatchObject({
      decision: "block",
    });
    const down = await readinessUntil(harness, (r) => !r.ready);
    expect(down.checks.audit).toEqual({ ok: false, detail: expect.stringContaining("cannot be written") as unknown });
    expect(down.checks.policy!.ok).toBe(true);
    held.fail(false);
    // The log retries its incident record by itself; once stored, the sink counts as writable again.
    const up = await readinessUntil(harness, (r) => r.ready);
    expect(up.checks.audit).toEqual({ ok: true, detail: "writable" });
    // Nothing was sent in between: the harness's own pinned record told the log it can write again.
    const records = held.memory
      .text()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { kind: string; data?: { incident?: string } });
    expect(records.filter((r) => r.kind === "incident").map((r) => r.data?.incident)).toEqual(["not_ready", "unavailable"]);
  }, 90_000);

  it("a policy reload that fails keeps the harness ready on the previous policy and says so; a good reload clears it", async () => {
    const file = join(dir, "policy.json");
    await writeFile(file, JSON.stringify({ ...DEFAULT_POLICY, name: "first" }));
    const harness = await createHarness({ log, policyFile: file });
    harnesses.push(harness);
    expect((await harness.readiness()).checks.policy).toEqual({ ok: true, detail: expect.stringMatching(/^first \(/) as unknown });
    await writeFile(file, "{ this is not a policy");
    const failed = await readinessUntil(harness, (r) => /reload failed/.test(r.checks.policy?.detail ?? ""));
    expect(failed.ready).toBe(true);
    expect(failed.checks.policy!.detail).toMatch(/the previous policy stays in force/);
    expect(harness.engine.policy.name).toBe("first");
    await writeFile(file, JSON.stringify({ ...DEFAULT_POLICY, name: "second" }));
    const again = await readinessUntil(harness, (r) => /^second \(/.test(r.checks.policy?.detail ?? ""));
    expect(again.ready).toBe(true);
  }, 150_000);

  it("a closed harness is not ready", async () => {
    const harness = await createHarness({ log });
    await harness.close();
    expect(await harness.readiness()).toMatchObject({ ready: false, checks: { harness: { ok: false, detail: "stopping" } } });
  });
});

describe.runIf(runRedis)("harness.readiness() with a real redis-server", () => {
  let redis: RedisProcess;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.dispose();
  });

  it("Redis stopped: not ready (state check down); started again: ready without a restart", async () => {
    const harness = await createHarness({ log, state: { url: redis.url } });
    harnesses.push(harness);
    const up = await readinessUntil(harness, (r) => r.ready);
    expect(up.checks.state).toEqual({ ok: true, detail: expect.stringMatching(/^reachable \(\d+\.\d ms\)$/) as unknown });
    await redis.stop();
    const down = await readinessUntil(harness, (r) => !r.ready);
    expect(down.checks.state).toEqual({ ok: false, detail: expect.stringContaining("unreachable") as unknown });
    expect(down.checks.policy!.ok).toBe(true);
    expect(down.checks.audit!.ok).toBe(true);
    await redis.start();
    const back = await readinessUntil(harness, (r) => r.ready);
    expect(back.checks.state!.ok).toBe(true);
  }, 150_000);
});

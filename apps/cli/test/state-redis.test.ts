/**
 * Three `ahp serve` replicas (child processes) sharing one real redis-server through
 * `--state redis://…`: limits and quotas hold across them, Redis failures fail closed and heal
 * without a restart, and a replica killed under load takes only its own requests with it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { AhpClient } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";
import { redisSkipReason, runRedis, startRedis, type RedisProcess } from "@ahp/state-redis/testing";

const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
// Replicas start as processes and Redis restarts: each wait below is bounded at up to 60 s.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 });
if (!runRedis) console.warn(redisSkipReason);

interface Replica {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function replica(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Replica> {
  const child = spawn(process.execPath, [BIN, "serve", "--http", "127.0.0.1:0", ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...env },
  });
  running.push(child);
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      for (const line of stderr.split("\n")) {
        if (!line.includes('"listening"')) continue;
        const entry = JSON.parse(line) as { msg?: string; transport?: string; url?: string };
        if (entry.msg === "listening" && entry.transport === "http" && entry.url !== undefined) resolve(entry.url);
      }
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  // With --state, decisions fail closed until the store is connected: wait for it (bounded) before any agent comes.
  if (args.includes("--state")) {
    const end = Date.now() + 60_000;
    while (!stderr.includes('"msg":"state store connected"')) {
      if (Date.now() > end) throw new Error(`the replica never connected to Redis: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  return { child, url, stderr: () => stderr, exited };
}

async function agent(url: string, sessionId: string): Promise<AhpClient> {
  const client = new AhpClient({ sessionId, agentId: `agent-${sessionId}`, timeoutMs: 10_000 });
  await client.connect(new HttpClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

const bash = (client: AhpClient, command = "ls") =>
  client.send("pre_action", { action_type: "tool_call", tool_name: "bash", arguments: { command } }) as Promise<{
    decision: string;
    reason?: string;
    retry_after_ms?: number;
  }>;

const running: ChildProcess[] = [];
const clients: AhpClient[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  for (const child of running.splice(0)) child.kill("SIGKILL");
});

describe.runIf(runRedis)("ahp serve --state redis:// (three replicas, one real redis-server)", () => {
  let redis: RedisProcess;
  let dir: string;
  let prefix = 0;
  beforeAll(async () => {
    redis = await startRedis({ password: "replica-pass-123" });
    dir = await mkdtemp(join(tmpdir(), "ahp-state-"));
    await writeFile(join(dir, "redis.pass"), "replica-pass-123\n", { mode: 0o600 });
  });
  afterAll(async () => {
    await redis?.dispose();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function replicas(policy: string, n = 3): Promise<Replica[]> {
    const file = join(dir, `policy-${++prefix}.yaml`);
    await writeFile(file, policy);
    const args = [
      "--policy",
      file,
      "--state",
      redis.url,
      "--state-password-file",
      join(dir, "redis.pass"),
      "--state-prefix",
      `t${prefix}:`,
    ];
    return Promise.all(Array.from({ length: n }, () => replica(args)));
  }

  it("a rate limit holds exactly across three replicas, refill included", async () => {
    const rs = await replicas(
      [
        "version: 1",
        "rules:",
        "  - id: global-rate",
        "    events: pre_action",
        "    rate_limit: { scope: global, rate: 1, interval_ms: 2000, burst: 30 }",
        "",
      ].join("\n"),
    );
    const agents = await Promise.all(rs.flatMap((r, i) => [0, 1, 2].map((j) => agent(r.url, `s${i}-${j}`))));
    const sent = Date.now();
    const decisions = await Promise.all(Array.from({ length: 90 }, (_, k) => bash(agents[k % agents.length]!)));
    // The burst of 30, plus one token per 2 s the 90 calls took (none on an idle machine; a busy one may take seconds).
    const refilled = Math.floor((Date.now() - sent) / 2000);
    const allowed = decisions.filter((d) => d.decision === "allow").length;
    expect(allowed).toBeGreaterThanOrEqual(30);
    expect(allowed).toBeLessThanOrEqual(30 + refilled);
    const deferred = decisions.filter((d) => d.decision === "defer");
    expect(deferred).toHaveLength(90 - allowed);
    // Wait for the next token, then exactly one of three concurrent requests on three replicas gets it.
    const wait = Math.max(...deferred.map((d) => d.retry_after_ms ?? 0));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(2000);
    await new Promise((resolve) => setTimeout(resolve, wait + 50));
    const next = await Promise.all([bash(agents[0]!), bash(agents[3]!), bash(agents[6]!)]);
    // At least the one token that came in; all told never more than the burst plus one per 2 s since
    // the first call (on an idle machine: exactly 30 + 1).
    const nextAllowed = next.filter((d) => d.decision === "allow").length;
    expect(nextAllowed).toBeGreaterThanOrEqual(1);
    expect(allowed + nextAllowed).toBeLessThanOrEqual(30 + Math.floor((Date.now() - sent) / 2000));
    for (const r of rs) expect(r.stderr()).not.toContain("replica-pass-123");
  });

  it("a quota consumed on one replica is enforced on the others", async () => {
    const [a, b, c] = await replicas(
      [
        "version: 1",
        "rules:",
        "  - id: action-quota",
        "    events: pre_action",
        "    match: { session: { actions: { gte: 4 } } }",
        "    action: { decision: block, reason: session action quota spent }",
        "",
      ].join("\n"),
    );
    const onA = await agent(a!.url, "shared-session");
    for (let i = 0; i < 4; i++) expect((await bash(onA)).decision).toBe("allow");
    const onB = await agent(b!.url, "shared-session");
    expect(await bash(onB)).toMatchObject({ decision: "block", reason: "session action quota spent" });
    const otherOnC = await agent(c!.url, "another-session");
    expect((await bash(otherOnC)).decision).toBe("allow");
  });

  it("Redis down: decisions that need it fail closed with the cause in the reason and a metric; Redis back: they flow again", async () => {
    const own = await startRedis();
    const file = join(dir, "rate.yaml");
    await writeFile(file, "version: 1\nrules:\n  - id: r\n    events: pre_action\n    rate_limit: { rate: 1000, interval_ms: 1000 }\n");
    const r = await replica(["--policy", file, "--state", own.url]);
    const client = await agent(r.url, "s");
    expect((await bash(client)).decision).toBe("allow");
    await own.stop();
    const closed = await bash(client);
    expect(closed.decision).toBe("block");
    expect(closed.reason).toMatch(/^policy state store unavailable: /);
    const metrics = await (await fetch(r.url.replace(/\/ahp$/, "/metrics"))).text();
    expect(metrics).toMatch(/^ahp_state_store_failures_total(\{[^}]*\})? [1-9]/m);
    expect(metrics).toMatch(/^ahp_state_store_up(\{[^}]*\})? 0/m);
    await own.start();
    await expect.poll(async () => (await bash(client)).decision, { timeout: 60_000, interval: 100 }).toBe("allow");
    expect(r.stderr()).toContain("state store unreachable");
    expect(r.child.exitCode).toBeNull();
    await own.dispose();
  });

  it("a replica killed with SIGKILL under load: its pending requests fail at once with the cause, the others keep serving, every answered decision is in some replica's audit chain", async () => {
    const policy = join(dir, "kill.yaml");
    await writeFile(
      policy,
      "version: 1\nrules:\n  - id: r\n    events: pre_action\n    rate_limit: { rate: 100000, interval_ms: 1000, burst: 100000 }\n",
    );
    const key = join(dir, "audit.key");
    await writeFile(key, "ab".repeat(32), { mode: 0o600 });
    const logs = [0, 1, 2].map((i) => join(dir, `replica-${i}.audit.log`));
    const common = ["--policy", policy, "--state", redis.url, "--state-password-file", join(dir, "redis.pass"), "--state-prefix", "kill:"];
    const rs = await Promise.all(
      logs.map((log, i) =>
        replica([...common, "--audit", log, "--audit-key-file", key, "--audit-payloads", "--audit-replica-id", `replica-${i}`]),
      ),
    );
    const agents = await Promise.all(rs.map((r, i) => agent(r.url, `load-${i}`)));
    const outcomes: { replica: number; ok: boolean; id: string; error?: string }[] = [];
    let stop = false;
    let seq = 0;
    const loops = agents.map(async (client, i) => {
      while (!stop) {
        const ids = Array.from({ length: 8 }, () => `call-${i}-${seq++}`);
        const batch = await Promise.allSettled(ids.map((id) => bash(client, `echo ${id}`)));
        batch.forEach((o, k) =>
          outcomes.push(
            o.status === "fulfilled"
              ? { replica: i, ok: true, id: ids[k]! }
              : { replica: i, ok: false, id: ids[k]!, error: String(o.reason) },
          ),
        );
        if (i === 1 && batch.some((o) => o.status === "rejected")) break;
      }
    });
    await expect.poll(() => outcomes.filter((o) => o.replica === 1 && o.ok).length, { timeout: 60_000 }).toBeGreaterThan(50);
    rs[1]!.child.kill("SIGKILL");
    await rs[1]!.exited;
    // The killed replica's agent sees its calls fail (not hang): bounded generously for a busy machine.
    await expect.poll(() => outcomes.some((o) => o.replica === 1 && !o.ok), { timeout: 30_000 }).toBe(true);
    const served = outcomes.filter((o) => o.replica !== 1).length;
    await expect.poll(() => outcomes.filter((o) => o.replica !== 1).length, { timeout: 60_000 }).toBeGreaterThan(served + 50);
    stop = true;
    await Promise.all(loops);
    const failures = outcomes.filter((o) => !o.ok);
    expect(failures.every((o) => o.replica === 1)).toBe(true);
    expect(failures[0]!.error).toMatch(/ECONNREFUSED|ECONNRESET|socket|closed|terminated|fetch failed/i);
    // Stop the survivors cleanly, then: each chain verifies on its own, and every decision an agent
    // received is recorded in one of them (matched by id, not by count).
    for (const i of [0, 2]) rs[i]!.child.kill("SIGTERM");
    await Promise.all([rs[0]!.exited, rs[2]!.exited]);
    const recorded = new Set<string>();
    for (const log of logs) {
      for (const line of (await readFile(log, "utf8")).split("\n")) {
        const m = /echo (call-\d+-\d+)/.exec(line);
        if (m) recorded.add(m[1]!);
      }
    }
    const missing = outcomes.filter((o) => o.ok && !recorded.has(o.id)).map((o) => o.id);
    expect(missing).toEqual([]);
    const verify = spawn(process.execPath, [BIN, "audit", "verify", ...logs, "--key-file", key], { stdio: ["ignore", "pipe", "pipe"] });
    let report = "";
    verify.stdout.on("data", (c: Buffer) => (report += c.toString()));
    verify.stderr.on("data", (c: Buffer) => (report += c.toString()));
    const verified = await new Promise<number | null>((resolve) => verify.once("exit", resolve));
    for (const i of [0, 1, 2]) expect(report).toMatch(new RegExp(`replica-${i}\\.audit\\.log: OK.*replica replica-${i}`));
    expect(verified).toBe(0);
  });

  it("refuses a bad --state and a password flag without it, before starting anything", async () => {
    const bad = spawn(process.execPath, [BIN, "serve", "--http", "127.0.0.1:0", "--state", "http://x"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    bad.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => bad.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(err).toContain("--state must be redis://HOST:PORT[/DB], rediss://… or memory");
  });
});

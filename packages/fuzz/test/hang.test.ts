/**
 * A handler that never returns. `ahp serve` cannot be given one, so this test composes the same
 * harness in process (built-in default policy, metrics, audit log, fail-closed handler
 * failures) with one addition: events for the tool `hang` fall through to a handler that never
 * settles. Served on a real Unix socket listener with a 500 ms handler timeout and
 * `maxInFlight` 64: every hung request is answered with the fail-closed decision at the timeout,
 * the handler's signal is aborted, and an agent on another connection keeps its p99.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAuditLog, toAuditKey, verifyAuditLog } from "@ahp/audit";
import { AhpServer, type AhpServerHandlers } from "@ahp/core";
import { createAhpMetrics, withMetrics } from "@ahp/observability";
import { DEFAULT_POLICY, PolicyEngine, composeHandlers } from "@ahp/policy";
import { listenUnix } from "@ahp/transport-unix";
import { expect, it } from "vitest";
import { goodAgent, preAction, StreamRpc } from "../src/index.js";
import { withAudit } from "@ahp/audit";

it("a handler that never returns: each call is answered with the fail-closed decision at the timeout, the agent next door keeps its p99", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ahp-fuzz-hang-"));
  const key = toAuditKey(randomBytes(32));
  const audit = await openAuditLog({ path: join(dir, "audit.log"), key });
  const engine = new PolicyEngine(DEFAULT_POLICY);
  let hung = 0;
  let aborted = 0;
  const policy = composeHandlers(engine, {
    onEvent: (event, ctx) => {
      if ((event.payload as { tool_name?: unknown } | undefined)?.tool_name !== "hang") return engine.fallback(event.event_type) as never;
      hung++;
      ctx.signal.addEventListener("abort", () => aborted++, { once: true });
      return new Promise<never>(() => undefined);
    },
  });
  const metrics = createAhpMetrics();
  const handlers: AhpServerHandlers = withAudit(withMetrics(policy, metrics), audit);
  const errors: Error[] = [];
  const server = new AhpServer({
    harnessInfo: { name: "ahp-harness" },
    config: { timeout_ms: 500, batch_size: 100, max_depth: 10 },
    handlerFailure: "decision",
    handlers,
  });
  const listener = await listenUnix(server, { path: join(dir, "ahp.sock"), maxInFlight: 64, onerror: (e) => errors.push(e) });
  try {
    const bad = await StreamRpc.unix(listener.path);
    const good = await StreamRpc.unix(listener.path);
    const stop = new AbortController();
    const agent = goodAgent(good, stop.signal);
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => {
        const event = preAction("sleep infinity", `hang-${i % 7}`);
        (event.payload as Record<string, unknown>).tool_name = "hang";
        return bad.call("ahp/event", event, 30_000);
      }),
    );
    const elapsed = performance.now() - started;
    stop.abort();
    const { latencies, errors: agentErrors } = await agent;
    console.log(`handler that never returns: 300 hung calls answered in ${elapsed.toFixed(0)} ms; good agent ${latencies.summary()}`);
    expect(agentErrors).toEqual([]);
    expect(latencies.count).toBeGreaterThan(20);
    for (const a of answers) {
      const result = a.result as { decision?: unknown; reason?: unknown };
      expect(result.decision).toBe("block");
      expect(String(result.reason)).toMatch(/Timeout after 500ms/);
    }
    // 300 calls, at most 64 handled at a time, each cut at 500 ms: at least five rounds.
    expect(elapsed).toBeGreaterThanOrEqual(4 * 500);
    expect(hung).toBe(300);
    expect(aborted).toBe(300);
    expect(errors.map((e) => e.message)).toContainEqual(expect.stringMatching(/64 requests in flight on one connection/));
    await bad.close();
    await good.close();
  } finally {
    await listener.close();
    await server.close({ graceMs: 0 });
    await audit.close();
    const report = await verifyAuditLog(join(dir, "audit.log"), key);
    expect(report.ok).toBe(true);
    await rm(dir, { recursive: true, force: true });
  }
});

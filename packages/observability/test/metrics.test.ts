import { AhpClient, AhpServer, createLinkedPair } from "@ahp/core";
import { register as globalRegister } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { annotate } from "@ahp/core";
import { createAhpMetrics, trackConnections, withMetrics } from "../src/index.js";
import { parseExposition, valueOf } from "./helpers.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("AhpMetrics through a real AhpServer", () => {
  it("counts a scripted session: events by type and decision, latency, failures, in-flight, agents", async () => {
    const metrics = createAhpMetrics();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const server = new AhpServer({
      handlerTimeoutMs: 2000,
      handlers: withMetrics(
        {
          onEvent: async (event) => {
            const tool = (event.payload as { tool_name?: string } | null)?.tool_name;
            if (tool === "rm") return { decision: "block", reason: "no", metadata: { rule: "shell.rm" } };
            if (tool === "boom") throw new Error("handler crashed");
            if (tool === "slow") {
              entered();
              await gate;
            }
            return { decision: "allow" };
          },
          onNotification: () => undefined,
          onQuery: () => ({ answer: 42 }),
          typed: {
            confirmation: (_p, event) => {
              annotate(event, { ruleId: "confirm.auto" });
              return { decision: "approve" };
            },
          },
        },
        metrics,
      ),
    });
    const stop = trackConnections(server, metrics);
    closers.push(
      async () => stop(),
      () => server.close(),
    );
    const [agentSide, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    const client = new AhpClient();
    await client.connect(agentSide);
    closers.push(() => client.close());

    let samples = parseExposition(await metrics.metrics());
    expect(valueOf(samples, "ahp_connected_agents")).toBe(1);

    await client.send("pre_action", { tool_name: "ls" });
    await client.send("pre_action", { tool_name: "ls" });
    await client.send("pre_action", { tool_name: "rm" });
    await expect(client.send("pre_action", { tool_name: "boom" })).rejects.toMatchObject({ code: -32603 });
    await client.send("confirmation", { session_id: "s", confirmation_type: "user_confirm", message: "ok?" });
    await client.query("approval_check", null);
    const base = { session_id: "s", agent_id: "a", timestamp: "t", depth: 0 };
    await client.batch([
      { ...base, event_type: "pre_prompt", payload: { tool_name: "rm" } },
      { ...base, event_type: "post_action", payload: {} },
    ]);
    const slow = client.send("pre_action", { tool_name: "slow" });
    await inside;
    samples = parseExposition(await metrics.metrics());
    expect(valueOf(samples, "ahp_inflight_requests")).toBe(1);
    release();
    await slow;
    await client.send("session_end", {});
    await client.send("pre_action", { tool_name: "ls" });
    // The notification gets no answer: wait (event-loop turns, no timers) until it was counted.
    for (let turn = 0; turn < 1000; turn++) {
      samples = parseExposition(await metrics.metrics());
      if (valueOf(samples, "ahp_events_total", { event_type: "session_end", decision: "none" }) !== undefined) break;
      await new Promise((r) => setImmediate(r));
    }
    expect(valueOf(samples, "ahp_events_total", { event_type: "pre_action", decision: "allow" })).toBe(4); // ls, ls, slow, ls
    expect(valueOf(samples, "ahp_events_total", { event_type: "pre_action", decision: "block" })).toBe(1);
    expect(valueOf(samples, "ahp_events_total", { event_type: "pre_action", decision: "error" })).toBe(1);
    expect(valueOf(samples, "ahp_events_total", { event_type: "pre_prompt", decision: "block" })).toBe(1);
    expect(valueOf(samples, "ahp_events_total", { event_type: "post_action", decision: "allow" })).toBe(1);
    expect(valueOf(samples, "ahp_events_total", { event_type: "confirmation", decision: "approve" })).toBe(1);
    expect(valueOf(samples, "ahp_events_total", { event_type: "query", decision: "answer" })).toBe(1);
    expect(valueOf(samples, "ahp_events_total", { event_type: "session_end", decision: "none" })).toBe(1);
    expect(valueOf(samples, "ahp_handler_failures_total", { event_type: "pre_action" })).toBe(1);
    expect(valueOf(samples, "ahp_inflight_requests")).toBe(0);
    // Histogram: 4 allow + 1 block + 1 error for pre_action; cumulative buckets end at +Inf == count.
    expect(valueOf(samples, "ahp_decision_latency_seconds_count", { event_type: "pre_action" })).toBe(6);
    expect(valueOf(samples, "ahp_decision_latency_seconds_bucket", { event_type: "pre_action", le: "+Inf" })).toBe(6);
    expect(valueOf(samples, "ahp_decision_latency_seconds_count", { event_type: "session_end" })).toBeUndefined(); // notifications are not timed
    const buckets = samples
      .filter((s) => s.name === "ahp_decision_latency_seconds_bucket" && s.labels.event_type === "pre_action")
      .map((s) => s.labels.le);
    expect(buckets).toEqual([
      "0.0001",
      "0.00025",
      "0.0005",
      "0.001",
      "0.0025",
      "0.005",
      "0.01",
      "0.025",
      "0.05",
      "0.1",
      "0.25",
      "0.5",
      "1",
      "2.5",
      "5",
      "10",
      "+Inf",
    ]);
    expect(valueOf(samples, "ahp_decision_latency_seconds_sum", { event_type: "pre_action" })).toBeGreaterThan(0);
    expect(valueOf(samples, "ahp_decision_latency_seconds_count", { event_type: "post_action" })).toBe(1); // batch element

    await client.close();
    await new Promise((r) => setImmediate(r));
    expect(valueOf(parseExposition(await metrics.metrics()), "ahp_connected_agents")).toBe(0);
  });

  it("audit log health: failures by kind, unrecorded calls by outcome, availability", async () => {
    const metrics = createAhpMetrics();
    expect(await metrics.metrics()).not.toMatch(/ahp_audit_failures_total\{/);
    metrics.setAuditAvailable(true);
    let samples = parseExposition(await metrics.metrics());
    expect(valueOf(samples, "ahp_audit_available", {})).toBe(1);
    expect(valueOf(samples, "ahp_audit_failures_total", { kind: "write" })).toBe(0);
    expect(valueOf(samples, "ahp_audit_unrecorded_total", { outcome: "failed_closed" })).toBe(0);
    metrics.recordAuditFailure("write");
    metrics.recordAuditFailure("write");
    metrics.recordAuditFailure("file_replaced");
    metrics.recordAuditUnrecorded("failed_closed");
    samples = parseExposition(await metrics.metrics());
    expect(valueOf(samples, "ahp_audit_available", {})).toBe(0);
    expect(valueOf(samples, "ahp_audit_failures_total", { kind: "write" })).toBe(2);
    expect(valueOf(samples, "ahp_audit_failures_total", { kind: "file_replaced" })).toBe(1);
    expect(valueOf(samples, "ahp_audit_unrecorded_total", { outcome: "failed_closed" })).toBe(1);
    metrics.setAuditAvailable(true);
    expect(valueOf(parseExposition(await metrics.metrics()), "ahp_audit_available", {})).toBe(1);
  });

  it("policy reloads, manual connection hooks, private registry, default labels", async () => {
    const metrics = createAhpMetrics({ defaultLabels: { harness: "test-1" } });
    metrics.recordPolicyReload(true);
    metrics.recordPolicyReload(true);
    metrics.recordPolicyReload(false);
    metrics.connectionOpened();
    metrics.connectionOpened();
    metrics.connectionClosed();
    metrics.connectionClosed();
    metrics.connectionClosed(); // never below zero
    metrics.connectionOpened();
    const samples = parseExposition(await metrics.metrics());
    expect(valueOf(samples, "ahp_policy_reloads_total", { result: "success" })).toBe(2);
    expect(valueOf(samples, "ahp_policy_reloads_total", { result: "failure" })).toBe(1);
    expect(valueOf(samples, "ahp_connected_agents", { harness: "test-1" })).toBe(1);
    expect(await globalRegister.metrics()).not.toContain("ahp_");
    // Two instances do not collide (each has its own registry).
    expect(() => createAhpMetrics()).not.toThrow();
  });

  it("bounds the decision label and leaves handler results untouched", async () => {
    const metrics = createAhpMetrics({ prefix: "x_" });
    const handlers = withMetrics({ onEvent: () => ({ decision: "weird" }) as never }, metrics);
    const ctx = {
      signal: new AbortController().signal,
      connection: { id: 1, info: { transport: "memory" }, signal: new AbortController().signal },
      requestId: "1",
    };
    const event = { event_type: "pre_action" as const, session_id: "s", agent_id: "a", timestamp: "t", depth: 0, payload: null };
    expect(await handlers.onEvent!(event, ctx)).toEqual({ decision: "weird" });
    expect(valueOf(parseExposition(await metrics.metrics()), "x_events_total", { decision: "other" })).toBe(1);
  });
});

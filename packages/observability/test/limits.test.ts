import { AhpLocalError, limitError } from "@ahp/core";
import { describe, expect, it } from "vitest";
import { createAhpMetrics, createLogger, limitReporter } from "../src/index.js";
import { parseExposition, valueOf } from "./helpers.js";

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, stream: { write: (chunk: string) => lines.push(JSON.parse(chunk) as Record<string, unknown>) } };
}

describe("limitReporter", () => {
  it("logs and counts a limit report once, even when it reaches two callbacks, and leaves other errors alone", async () => {
    const metrics = createAhpMetrics();
    const out = capture();
    const report = limitReporter({ metrics, logger: createLogger({ stream: out.stream }) });
    const error = limitError({ transport: "unix", limit: "max_in_flight", value: 2, action: "paused_reading", remote: "/run/ahp.sock" });

    expect(report(error)?.limit).toBe("max_in_flight");
    expect(report(error)?.limit).toBe("max_in_flight");
    expect(report(new AhpLocalError("TRANSPORT_ERROR", "other"))).toBeUndefined();
    expect(report(new Error("plain"))).toBeUndefined();

    const samples = parseExposition(await metrics.metrics());
    expect(valueOf(samples, "ahp_limit_rejections_total", { transport: "unix", limit: "max_in_flight" })).toBe(1);
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatchObject({
      level: "warn",
      msg: "limit",
      transport: "unix",
      limit: "max_in_flight",
      value: 2,
      action: "paused_reading",
      remote: "/run/ahp.sock",
      count: 1,
    });
  });

  it("writes a 5,000-report burst as two lines per limit with counts, and counts every report in the metrics", async () => {
    const metrics = createAhpMetrics();
    const out = capture();
    let clock = 1_000;
    const report = limitReporter({ metrics, logger: createLogger({ stream: out.stream }), intervalMs: 10_000, now: () => clock });
    for (let i = 0; i < 5_000; i++) {
      report(
        limitError({ transport: "ws", limit: "max_connections", value: 64, action: "refused_503", remote: `127.0.0.1:${1000 + (i % 7)}` }),
      );
      if (i % 1_000 === 0) report(limitError({ transport: "unix", limit: "max_message_bytes", value: 8, action: "closed" }));
    }
    // One line at once per limit; the rest waits for the end of the interval.
    expect(out.lines.map((l) => [l.transport, l.limit, l.count])).toEqual([
      ["ws", "max_connections", 1],
      ["unix", "max_message_bytes", 1],
    ]);
    report.flush();
    expect(out.lines).toHaveLength(4);
    const ws = out.lines.find((l) => l.transport === "ws" && l.aggregated === true);
    expect(ws).toMatchObject({
      msg: "limit",
      limit: "max_connections",
      value: 64,
      action: "refused_503",
      count: 4_999,
      interval_ms: 10_000,
    });
    expect((ws!.remotes as string[]).length).toBe(5);
    expect(out.lines.find((l) => l.transport === "unix" && l.aggregated === true)).toMatchObject({ count: 4 });
    const samples = parseExposition(await metrics.metrics());
    expect(valueOf(samples, "ahp_limit_rejections_total", { transport: "ws", limit: "max_connections" })).toBe(5_000);
    expect(valueOf(samples, "ahp_limit_rejections_total", { transport: "unix", limit: "max_message_bytes" })).toBe(5);
    // A report after the interval opens a new one: logged at once again.
    clock += 10_000;
    report(limitError({ transport: "ws", limit: "max_connections", value: 64, action: "refused_503" }));
    expect(out.lines).toHaveLength(5);
    expect(out.lines[4]).toMatchObject({ transport: "ws", count: 1 });
    report.flush();
    expect(out.lines).toHaveLength(5);
  });

  it("writes the aggregated line by itself when the interval ends", async () => {
    const out = capture();
    const report = limitReporter({ logger: createLogger({ stream: out.stream }), intervalMs: 50 });
    for (let i = 0; i < 3; i++) report(limitError({ transport: "http", limit: "max_connections", value: 2, action: "closed_idle" }));
    expect(out.lines).toHaveLength(1);
    const deadline = Date.now() + 30_000;
    while (out.lines.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(out.lines[1]).toMatchObject({ transport: "http", limit: "max_connections", count: 2, aggregated: true });
  });
});

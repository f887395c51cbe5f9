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
    });
  });
});

/**
 * The synchronous notification path of the harness `ahp acp-proxy` embeds
 * (`createHarness({ syncNotifications })`): the metrics count every report as the full
 * middleware path does (the path itself is tested in @ahp/core).
 */
import { PassThrough } from "node:stream";
import { AhpClient, createLinkedPair, type AhpEvent } from "@ahp/core";
import { createLogger } from "@ahp/observability";
import { describe, expect, it } from "vitest";
import { createHarness } from "../src/harness.js";

const lifecycle = (n: number): AhpEvent => ({
  event_type: "run_lifecycle",
  session_id: `s${n % 3}`,
  agent_id: "a",
  timestamp: "2026-01-01T00:00:00Z",
  depth: 0,
  payload: {
    run_id: `r${n}`,
    session_id: `s${n % 3}`,
    status: n % 2 === 0 ? "executing" : "completed",
    updated_at: "2026-01-01T00:00:00Z",
  },
});

describe("createHarness({ syncNotifications })", () => {
  async function countsAfterReports(syncNotifications: boolean): Promise<string[]> {
    const harness = await createHarness({ log: createLogger({ stream: new PassThrough(), level: "silent" }), syncNotifications });
    const [agentSide, harnessSide] = createLinkedPair();
    await harness.server.connect(harnessSide);
    const client = new AhpClient();
    await client.connect(agentSide);
    for (let n = 0; n < 7; n++) await client.notify(lifecycle(n));
    await client.notify({ ...lifecycle(7), event_type: "heartbeat", payload: { uptime_ms: 1, total_events_processed: 7 } });
    // All eight handled and observed before the connection closes (a close while a report is
    // still in flight is another case).
    const counted = (text: string) => [...text.matchAll(/^ahp_events_total\{.*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
    let text = await harness.metrics.metrics();
    // Wait for the condition with a generous wall-clock deadline, never a count of event-loop turns.
    const deadline = performance.now() + 60_000;
    while (counted(text) < 8 && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
      text = await harness.metrics.metrics();
    }
    await client.close();
    await harness.close();
    return text.split("\n").filter((l) => l.startsWith("ahp_events_total") || l.startsWith("ahp_handler_failures_total"));
  }

  it("counts every report in the metrics exactly as the full middleware path does", async () => {
    const fast = await countsAfterReports(true);
    const full = await countsAfterReports(false);
    expect(fast).toEqual(full);
    expect(fast.join("\n")).toMatch(/ahp_events_total\{[^}]*event_type="run_lifecycle"[^}]*decision="none"[^}]*\} 7/);
    expect(fast.join("\n")).toMatch(/ahp_events_total\{[^}]*event_type="heartbeat"[^}]*\} 1/);
  });
});

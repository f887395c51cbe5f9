/**
 * The synchronous notification path of the harness `ahp acp-proxy` embeds: a notification whose
 * handler returned is answered at once, and the middleware (metrics, timeout log) still sees
 * every call; promise-returning and throwing handlers take the full middleware path.
 */
import { PassThrough } from "node:stream";
import { AhpClient, createLinkedPair, type AhpEvent, type AhpHandlerContext, type HandlerCall, type HandlerMiddleware } from "@ahp/core";
import { createLogger } from "@ahp/observability";
import { describe, expect, it } from "vitest";
import { createHarness } from "../src/harness.js";
import { applyMiddlewareSyncNotifications } from "../src/sync-notifications.js";

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

const ctx = (): AhpHandlerContext => ({ signal: new AbortController().signal }) as unknown as AhpHandlerContext;

/** A middleware that records each call and how its `next` settled. */
function recorder() {
  const seen: { call: HandlerCall; settled: string }[] = [];
  const middleware: HandlerMiddleware = async (call, next) => {
    const entry = { call, settled: "pending" };
    seen.push(entry);
    try {
      const value = await next();
      entry.settled = `ok ${String(value)}`;
      return value;
    } catch (error) {
      entry.settled = `error ${(error as Error).message}`;
      throw error;
    }
  };
  return { seen, middleware };
}

describe("applyMiddlewareSyncNotifications", () => {
  it("answers a notification whose handler returned at once, and the middleware sees it after", async () => {
    const { seen, middleware } = recorder();
    const handled: string[] = [];
    const out = applyMiddlewareSyncNotifications({ onNotification: (e) => void handled.push(e.event_type) }, middleware, (e) => {
      throw e;
    });
    const answer = out.onNotification!(lifecycle(1), ctx());
    expect(answer).toBeUndefined();
    expect(handled).toEqual(["run_lifecycle"]);
    await new Promise((r) => setImmediate(r));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.call).toMatchObject({
      kind: "notification",
      form: "notification",
      eventType: "run_lifecycle",
      sessionId: "s1",
      agentId: "a",
    });
    expect(seen[0]!.settled).toBe("ok undefined");
  });

  it("sends a handler that returns a promise through the full middleware path", async () => {
    const { seen, middleware } = recorder();
    let release!: () => void;
    const out = applyMiddlewareSyncNotifications({ onNotification: () => new Promise<void>((r) => (release = r)) }, middleware, (e) => {
      throw e;
    });
    const answer = out.onNotification!(lifecycle(2), ctx());
    expect(answer).toBeInstanceOf(Promise);
    await new Promise((r) => setImmediate(r));
    expect(seen.map((s) => s.settled)).toEqual(["pending"]);
    release();
    await answer;
    expect(seen.map((s) => s.settled)).toEqual(["ok undefined"]);
  });

  it("passes a handler's throw to the server and the middleware", async () => {
    const { seen, middleware } = recorder();
    const out = applyMiddlewareSyncNotifications(
      {
        onNotification: () => {
          throw new Error("broken handler");
        },
      },
      middleware,
      (e) => {
        throw e;
      },
    );
    await expect(out.onNotification!(lifecycle(3), ctx())).rejects.toThrow("broken handler");
    expect(seen.map((s) => s.settled)).toEqual(["error broken handler"]);
  });

  it("reports a middleware failure on the synchronous path to onerror", async () => {
    const errors: string[] = [];
    const out = applyMiddlewareSyncNotifications(
      { onNotification: () => undefined },
      () => Promise.reject(new Error("observer broke")),
      (e) => errors.push(e.message),
    );
    expect(out.onNotification!(lifecycle(4), ctx())).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    expect(errors).toEqual(["observer broke"]);
  });
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
    for (let i = 0; i < 10_000 && counted(text) < 8; i++) {
      await new Promise((r) => setImmediate(r));
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

/**
 * `applyHandlerMiddleware`'s `syncNotifications`: a notification whose handler returned is
 * answered at once and the middleware still sees every call; promise-returning and throwing
 * handlers take the full middleware path.
 */
import { describe, expect, it } from "vitest";
import { until } from "./wait.js";
import { applyHandlerMiddleware, type AhpEvent, type AhpHandlerContext, type HandlerCall, type HandlerMiddleware } from "../src/index.js";

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

const sync = {
  syncNotifications: true,
  onObserverError: (e: Error) => {
    throw e;
  },
};

describe("applyHandlerMiddleware({ syncNotifications })", () => {
  it("answers a notification whose handler returned at once, and the middleware sees it after", async () => {
    const { seen, middleware } = recorder();
    const handled: string[] = [];
    const out = applyHandlerMiddleware({ onNotification: (e) => void handled.push(e.event_type) }, middleware, sync);
    const answer = out.onNotification!(lifecycle(1), ctx());
    expect(answer).toBeUndefined();
    expect(handled).toEqual(["run_lifecycle"]);
    await until(() => seen[0]?.settled === "ok undefined");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.call).toMatchObject({
      kind: "notification",
      form: "notification",
      eventType: "run_lifecycle",
      sessionId: "s1",
      agentId: "a",
    });
    expect(seen[0]!.settled).toBe("ok undefined");
    // Without the option the same handler's answer is a promise (the full path).
    const plain = applyHandlerMiddleware({ onNotification: () => undefined }, (_call, next) => next());
    expect(plain.onNotification!(lifecycle(1), ctx())).toBeInstanceOf(Promise);
  });

  it("sends a handler that returns a promise through the full middleware path", async () => {
    const { seen, middleware } = recorder();
    let release!: () => void;
    const out = applyHandlerMiddleware({ onNotification: () => new Promise<void>((r) => (release = r)) }, middleware, sync);
    const answer = out.onNotification!(lifecycle(2), ctx());
    expect(answer).toBeInstanceOf(Promise);
    // The middleware has the call; its next() cannot settle before the handler's promise does.
    await until(() => seen.length === 1);
    expect(seen.map((s) => s.settled)).toEqual(["pending"]);
    release();
    await answer;
    expect(seen.map((s) => s.settled)).toEqual(["ok undefined"]);
  });

  it("passes a handler's throw to the server and the middleware", async () => {
    const { seen, middleware } = recorder();
    const out = applyHandlerMiddleware(
      {
        onNotification: () => {
          throw new Error("broken handler");
        },
      },
      middleware,
      sync,
    );
    await expect(out.onNotification!(lifecycle(3), ctx())).rejects.toThrow("broken handler");
    expect(seen.map((s) => s.settled)).toEqual(["error broken handler"]);
  });

  it("reports a middleware failure on the synchronous path to onerror", async () => {
    const errors: string[] = [];
    const out = applyHandlerMiddleware({ onNotification: () => undefined }, () => Promise.reject(new Error("observer broke")), {
      syncNotifications: true,
      onObserverError: (e) => errors.push(e.message),
    });
    expect(out.onNotification!(lifecycle(4), ctx())).toBeUndefined();
    await until(() => errors.length > 0);
    expect(errors).toEqual(["observer broke"]);
  });
});

import type { AhpEvent, AhpHandlerContext } from "../src/index.js";
import { describe, expect, it } from "vitest";
import {
  annotate,
  applyHandlerMiddleware,
  composeMiddleware,
  findRuleId,
  observeHandlers,
  readAnnotation,
  type HandlerCall,
  type HandlerMiddleware,
} from "../src/index.js";

const event = (type: AhpEvent["event_type"] = "pre_action"): AhpEvent => ({
  event_type: type,
  session_id: "s",
  agent_id: "a",
  timestamp: "t",
  depth: 0,
  payload: null,
});
const ctx = (extra: Partial<AhpHandlerContext> = {}): AhpHandlerContext => ({
  signal: new AbortController().signal,
  connection: { id: 1, info: { transport: "memory" }, signal: new AbortController().signal },
  requestId: "r-1",
  ...extra,
});

describe("handler middleware shape", () => {
  it("runs middlewares outermost first and passes results and failures through unchanged", async () => {
    const order: string[] = [];
    const tag =
      (name: string): HandlerMiddleware =>
      async (call, next) => {
        order.push(`${name}>${call.kind}:${call.form}`);
        try {
          return await next();
        } finally {
          order.push(`${name}<`);
        }
      };
    const failure = new Error("nope");
    const handlers = applyHandlerMiddleware(
      { onEvent: (e) => (e.event_type === "pre_prompt" ? Promise.reject(failure) : { decision: "allow" }) },
      composeMiddleware(tag("outer"), tag("inner")),
    );
    expect(await handlers.onEvent!(event(), ctx())).toEqual({ decision: "allow" });
    await expect(handlers.onEvent!(event("pre_prompt"), ctx({ batch: { index: 0, size: 1 } }))).rejects.toBe(failure);
    expect(order).toEqual([
      "outer>event:request",
      "inner>event:request",
      "inner<",
      "outer<",
      "outer>event:batch",
      "inner>event:batch",
      "inner<",
      "outer<",
    ]);
  });

  it("keeps absent handlers absent, wraps only present typed handlers, observes notifications and handshakes", () => {
    const wrapped = applyHandlerMiddleware({ typed: { idle: () => ({ decision: "allow" }) } }, (_c, next) => next());
    expect(wrapped.onEvent).toBeUndefined();
    expect(wrapped.onQuery).toBeUndefined();
    expect(Object.keys(wrapped.typed ?? {})).toEqual(["idle"]);
    expect(typeof wrapped.onNotification).toBe("function");
    expect(typeof wrapped.onHandshake).toBe("function");
    const bare = applyHandlerMiddleware({}, (_c, next) => next(), { observeMissing: false });
    expect(bare.onNotification).toBeUndefined();
    expect(bare.onHandshake).toBeUndefined();
  });

  it("next() settles when the call's signal aborts, even if the handler never does", async () => {
    const controller = new AbortController();
    const seen: unknown[] = [];
    const handlers = applyHandlerMiddleware({ onEvent: () => new Promise(() => undefined) }, async (_call, next) => {
      try {
        return await next();
      } catch (error) {
        seen.push(error);
        throw error;
      }
    });
    const pending = handlers.onEvent!(event(), ctx({ signal: controller.signal }));
    controller.abort(new Error("Timeout after 5ms"));
    await expect(pending).rejects.toThrow("Timeout after 5ms");
    expect(seen).toHaveLength(1);
  });

  it("an observer that throws never affects the handler", async () => {
    const errors: Error[] = [];
    const handlers = applyHandlerMiddleware(
      { onEvent: () => ({ decision: "allow" }) },
      observeHandlers({
        start: () => {
          throw new Error("start broke");
        },
        end: () => {
          throw new Error("end broke");
        },
        onerror: (e) => errors.push(e),
      }),
    );
    expect(await handlers.onEvent!(event(), ctx())).toEqual({ decision: "allow" });
    expect(errors.map((e) => e.message)).toEqual(["start broke", "end broke"]);
  });

  it("finds rule ids: annotation first, then metadata, then reason text", () => {
    const e = event();
    expect(findRuleId({ target: e, result: { decision: "block", reason: "x", metadata: { rule: "from-meta" } } })).toBe("from-meta");
    expect(findRuleId({ result: { decision: "defer", retry_after_ms: 5, reason: "slow down (rule: rate.burst)" } })).toBe("rate.burst");
    expect(findRuleId({ result: { decision: "escalate", reason: "needs approval [rule git.push-main]" } })).toBe("git.push-main");
    expect(findRuleId({ result: { decision: "escalate", reason: "the rule of thumb" } })).toBeUndefined();
    expect(findRuleId({ result: { decision: "defer", reason: "rule=x.y" }, reasonPattern: false })).toBeUndefined();
    annotate(e, { ruleId: "annotated" });
    annotate(e, { latencyNs: 5n });
    expect(readAnnotation(e)).toEqual({ ruleId: "annotated", latencyNs: 5n });
    expect(findRuleId({ target: e, result: { decision: "block", reason: "x", metadata: { rule: "from-meta" } } })).toBe("annotated");
    expect(JSON.stringify(e)).not.toContain("annotated"); // never reaches JSON or the wire
    // The annotation is shared through the registry symbol, not through this module.
    expect((e as unknown as Record<symbol, unknown>)[Symbol.for("@ahp/decision-annotation")]).toMatchObject({ ruleId: "annotated" });
  });

  it("passes the call description to the middleware", async () => {
    const calls: HandlerCall[] = [];
    const handlers = applyHandlerMiddleware({ onQuery: () => ({ answer: 1 }) }, (call, next) => {
      calls.push(call);
      return next();
    });
    const query = { session_id: "s", agent_id: "a", query_type: "approval_check", payload: null };
    await handlers.onQuery!(query, ctx());
    expect(calls[0]).toMatchObject({
      kind: "query",
      form: "request",
      eventType: "query",
      sessionId: "s",
      agentId: "a",
      query,
      target: query,
    });
  });
});

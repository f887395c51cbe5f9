/**
 * Behaviour beyond the numbered checklist that every transport must get right: pipelining and
 * out-of-order answers (§17.85), large and tricky messages, cancellation, timeouts, closing,
 * notification order; plus the HTTP-only [T] items 86–88.
 */
import { AhpClient, AhpLocalError } from "@ahp/core";
import { expect } from "vitest";
import { notification, request, wireEvent } from "../fixtures.js";
import type { ConformanceHarness } from "../types.js";
import { isRecord } from "../wire.js";
import type { SuiteEnv } from "./env.js";
import { clientLog, expectError, expectResult, frameJson, rawExchange, sendUnanswered } from "./expect.js";

const TRICKY =
  'line1\nline2\r\nline3\ttab "quoted" back\\slash / \u2028 LS \u2029 PS é ü ß 中文 日本語 한국어 😀🎉 \u0000 nul \u001f unit \u007f del \ud800 lone';

/**
 * Attach this as soon as the call is made: over a real transport the call may fail while the
 * test is still awaiting something else, and an unobserved rejection is reported by vitest.
 */
async function settleError(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

export function registerExtraChecks(env: SuiteEnv, h: () => ConformanceHarness): void {
  env.item(85, "pipelined requests are answered out of order and matched by id (100 concurrent, scripted delays)", async () => {
    const s = env.session("i85");
    const wire = await env.wire(h());
    const n = 100;
    // Earlier requests wait longer: a harness that answers in arrival order fails this check.
    const delay = (i: number) => ((n - 1 - i) % 5) * 20;
    const requests = Array.from({ length: n }, (_, i) =>
      request(
        wire.id("c"),
        "ahp/event",
        wireEvent("pre_action", { script: { decision: { decision: "block", reason: `r${i}` }, delay_ms: delay(i) } }, s),
      ),
    );
    const mark = wire.mark();
    const responses = await Promise.all(requests.map((r) => wire.call(r)));
    responses.forEach((response, i) =>
      expect(expectResult(response, requests[i]!.id)).toStrictEqual({ decision: "block", reason: `r${i}` }),
    );
    const arrival = wire
      .since(mark)
      .filter((m) => isRecord(m) && "result" in m)
      .map((m) => (m as { id: string }).id);
    expect(arrival).toHaveLength(n);
    expect(new Set(arrival).size).toBe(n);
    expect(arrival, "answers arrive in completion order, not request order").not.toEqual(requests.map((r) => r.id));
    const client = await env.client(h());
    const decisions = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        client.send("pre_action", { script: { decision: { decision: "block", reason: `c${i}` }, delay_ms: delay(i) } }),
      ),
    );
    decisions.forEach((decision, i) => expect(decision).toEqual({ decision: "block", reason: `c${i}` }));
  });

  env.extra("concurrency", "requests, notifications, queries and batches interleaved on one connection all complete", async () => {
    const client = await env.client(h());
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 25; i++) {
      work.push(client.send("pre_action", { script: { decision: { decision: "escalate", reason: `e${i}` }, delay_ms: (i % 3) * 10 } }));
      work.push(client.send("post_action", { n: i }));
      work.push(client.query("approval_check", { i }));
      work.push(
        client.batch([
          { event_type: "pre_prompt", session_id: client.sessionId, agent_id: client.agentId, timestamp: "t", depth: 0, payload: { i } },
        ]),
      );
    }
    const results = await Promise.all(work);
    for (let i = 0; i < 25; i++) {
      expect(results[i * 4]).toEqual({ decision: "escalate", reason: `e${i}` });
      expect(results[i * 4 + 1]).toEqual({ decision: "allow" });
      expect(results[i * 4 + 2]).toEqual({ answer: { query_type: "approval_check", payload: { i } } });
      expect(results[i * 4 + 3]).toEqual([{ decision: "allow" }]);
    }
    const records = await clientLog(env, client, { min_count: 1 + 25 * 4 });
    expect(records.filter((r) => r.handler === "notification")).toHaveLength(25);
  });

  env.extra("large-message", "a 4 MiB message travels both ways intact", async () => {
    const client = await env.client(h());
    const blob = "0123456789abcdef".repeat((4 * 1024 * 1024) / 16);
    const decision = (await client.send("pre_action", { blob, script: { echo: true } })) as {
      decision: string;
      modified_payload?: { blob: string };
    };
    expect(decision.decision).toBe("allow");
    expect(decision.modified_payload?.blob.length).toBe(blob.length);
    expect(decision.modified_payload?.blob === blob).toBe(true);
    // The connection is still fine afterwards.
    expect(await client.send("pre_action", {})).toEqual({ decision: "allow" });
  });

  env.extra(
    "string-escapes",
    "strings with \\n, \\r, non-ASCII, U+2028/U+2029, emoji and control characters survive unchanged",
    async (ctx) => {
      const client = await env.client(h());
      const payload = { text: TRICKY, [TRICKY]: [TRICKY], nested: { deep: TRICKY } };
      const decision = (await client.send("pre_action", { ...payload, script: { echo: true } })) as { modified_payload?: unknown };
      expect(decision.modified_payload).toStrictEqual(payload);
      const records = await clientLog(env, client);
      const event = records.find((r) => r.handler === "event")?.event;
      expect((event?.payload as { text: string }).text).toBe(TRICKY);
      if (env.kind === "stream" && h().connectRaw !== undefined) {
        // The raw text carries U+2028/U+2029 unescaped: a line splitter must not split there.
        const raw = await env.raw(h(), ctx);
        const s = env.session("escapes");
        const line = JSON.stringify(
          request("u2028", "ahp/event", wireEvent("pre_action", { text: "a\u2028b\u2029c", script: { echo: true } }, s)),
        );
        expect(line).toContain("\u2028");
        const result = expectResult(frameJson(await rawExchange(env, raw, line)), "u2028");
        expect(result).toStrictEqual({ decision: "allow", modified_payload: { text: "a\u2028b\u2029c" } });
      }
    },
  );

  env.extra("cancellation", "a call cancelled through its AbortSignal rejects at once with ABORTED; the client stays usable", async () => {
    const client = await env.client(h());
    const controller = new AbortController();
    const pending = settleError(client.send("pre_action", { script: { delay_ms: 3000 } }, { signal: controller.signal }));
    await clientLog(env, client, { handler: "event", min_count: 1, settle: false });
    const reason = new Error("user cancelled");
    const started = Date.now();
    controller.abort(reason);
    const error = await pending;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(AhpLocalError.isInstance(error), String(error)).toBe(true);
    expect((error as AhpLocalError).code).toBe("ABORTED");
    expect((error as AhpLocalError).cause).toBe(reason);
    const already = AbortSignal.abort(new Error("too late"));
    const refused = await settleError(client.send("pre_action", {}, { signal: already }));
    expect((refused as AhpLocalError).code).toBe("ABORTED");
    expect(await client.send("pre_action", {})).toEqual({ decision: "allow" });
  });

  env.extra("client-timeout", "no answer within the call's timeout -> TIMEOUT (Timeout after <n>ms); the client stays usable", async () => {
    const client = await env.client(h());
    const started = Date.now();
    const error = await settleError(client.send("pre_action", { script: { delay_ms: 3000 } }, { timeoutMs: 150 }));
    const elapsed = Date.now() - started;
    expect(AhpLocalError.isInstance(error), String(error)).toBe(true);
    expect((error as AhpLocalError).code).toBe("TIMEOUT");
    expect((error as AhpLocalError).message).toBe("Timeout after 150ms");
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(2500);
    expect(await client.send("pre_action", {})).toEqual({ decision: "allow" });
  });

  env.extra("close-pending", "closing the client rejects pending calls at once with CONNECTION_CLOSED, not after the timeout", async () => {
    const client = await env.client(h(), { timeoutMs: 10_000 });
    const pending = settleError(client.send("pre_action", { script: { delay_ms: 5000 } }));
    const query = settleError(client.query("slow", { script: { delay_ms: 5000 } }));
    await clientLog(env, client, { handler: "query", min_count: 1, settle: false });
    const started = Date.now();
    // Pending calls fail at once, even while the transport is still closing (a child's grace period).
    const closing = client.close();
    const [eventError, queryError] = await Promise.all([pending, query]);
    expect(Date.now() - started).toBeLessThan(1000);
    await closing;
    for (const error of [eventError, queryError]) {
      expect(AhpLocalError.isInstance(error), String(error)).toBe(true);
      expect((error as AhpLocalError).code).toBe("CONNECTION_CLOSED");
    }
    const after = await settleError(client.send("pre_action", {}));
    expect((after as AhpLocalError).code).toBe("CONNECTION_CLOSED");
    expect(await client.closed).toBeUndefined();
  });

  env.extra("peer-death", "when the harness goes away, pending calls fail promptly with the transport's cause, not a timeout", async () => {
    const harness = await env.factory({});
    let harnessClosed: Promise<void> | undefined;
    const closeHarness = () => (harnessClosed ??= harness.close());
    env.defer(closeHarness);
    const client = new AhpClient({ timeoutMs: 10_000 });
    env.defer(() => client.close());
    await client.connect(await harness.connect());
    const pending = settleError(client.send("pre_action", { script: { delay_ms: 8000 } }));
    await clientLog(env, client, { handler: "event", min_count: 1, settle: false });
    const started = Date.now();
    const closing = closeHarness();
    const error = await pending;
    expect(Date.now() - started).toBeLessThan(5000);
    await closing;
    expect(AhpLocalError.isInstance(error), String(error)).toBe(true);
    expect((error as AhpLocalError).code).not.toBe("TIMEOUT");
    expect((error as AhpLocalError).message.length).toBeGreaterThan(0);
  });

  env.extra("notification-order", "notifications reach the handler one at a time, in arrival order per session", async () => {
    const s = env.session("order");
    const wire = await env.wire(h());
    const delays = [60, 30, 15, 5, 0];
    for (const [n, delay_ms] of delays.entries()) {
      await wire.send(notification("ahp/event", wireEvent("post_action", { n, script: { delay_ms } }, s)));
    }
    const records = await wire.log(s, { min_count: delays.length });
    expect(records.map((r) => (r.event?.payload as { n: number }).n)).toEqual([0, 1, 2, 3, 4]);
    for (let i = 1; i < records.length; i++) {
      expect(records[i]!.seq, `notification ${i} starts after ${i - 1} finished`).toBeGreaterThan(records[i - 1]!.done!);
    }
    if (env.kind === "stream") {
      // Another session is not held up behind a slow one.
      const slow = env.session("order-slow");
      const fast = env.session("order-fast");
      await wire.send(notification("ahp/event", wireEvent("post_action", { script: { delay_ms: 300 } }, slow)));
      await wire.send(notification("ahp/event", wireEvent("post_action", {}, fast)));
      const [fastRecord] = await wire.log(fast, { min_count: 1 });
      const [slowRecord] = await wire.log(slow, { min_count: 1 });
      expect(fastRecord!.done, "the other session finished while the slow one ran").toBeLessThan(slowRecord!.done!);
    }
  });

  env.extra("jsonrpc-array", "a top-level JSON array (JSON-RPC batch) is not processed (§3.7)", async (ctx) => {
    const s = env.session("array");
    const wire = await env.wire(h());
    const batch = [
      request("arr-1", "ahp/event", wireEvent("pre_action", {}, s)),
      notification("ahp/event", wireEvent("post_action", {}, s)),
    ];
    if (env.kind === "stream") {
      await sendUnanswered(env, h(), wire, s, batch, "ignored");
    } else {
      const raw = await env.raw(h(), ctx);
      const frame = await rawExchange(env, raw, JSON.stringify(batch));
      if ((env.options.httpInvalidMessage ?? "reference") === "reference") {
        expect(frame?.status).toBe(200);
        expectError(frameJson(frame), "", -32600, "Invalid JSON-RPC message");
      } else expect(frame?.status).toBe(204);
    }
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(
    86,
    "HTTP: a POSTed request gets status 200 and a JSON body, also for JSON-RPC errors",
    async (ctx) => {
      const s = env.session("i86");
      const raw = await env.raw(h(), ctx);
      const ok = await rawExchange(env, raw, JSON.stringify(request("h86-1", "ahp/event", wireEvent("pre_action", {}, s))));
      expect(ok?.status).toBe(200);
      expect(expectResult(frameJson(ok), "h86-1")).toStrictEqual({ decision: "allow" });
      const nope = await rawExchange(env, raw, JSON.stringify(request("h86-2", "ahp/nope", {})));
      expect(nope?.status).toBe(200);
      expectError(frameJson(nope), "h86-2", -32601, "Method not found");
      const invalid = await rawExchange(
        env,
        raw,
        JSON.stringify(request("h86-3", "ahp/event", wireEvent("pre_action", {}, s, { depth: 11 }))),
      );
      expect(invalid?.status).toBe(200);
      expectError(frameJson(invalid), "h86-3", -32602, { prefix: "Invalid event:" });
    },
    { only: "http" },
  );

  env.item(
    87,
    "HTTP: a successfully handled notification gets 204 with an empty body",
    async (ctx) => {
      const s = env.session("i87");
      const raw = await env.raw(h(), ctx);
      for (const message of [notification("ahp/event", wireEvent("post_action", {}, s)), notification("ahp/nope", {})]) {
        const frame = await rawExchange(env, raw, JSON.stringify(message));
        expect(frame?.status).toBe(204);
        expect(frame?.text).toBe("");
      }
      const wire = await env.wire(h());
      expect((await wire.log(s, { min_count: 1 })).map((r) => r.handler)).toEqual(["notification"]);
    },
    { only: "http" },
  );

  env.item(
    88,
    `HTTP: [Q] a rejected notification gets ${env.options.httpRejectedNotification === "204" ? "204 (the JSON-RPC alternative)" : '200 with id "" and -32603 (reference)'}`,
    async (ctx) => {
      const s = env.session("i88");
      const raw = await env.raw(h(), ctx);
      for (const message of [
        notification("ahp/event", wireEvent("pre_action", {}, s)),
        notification("ahp/event", wireEvent("run_lifecycle", {}, s)),
        notification("ahp/event", wireEvent("post_action", {}, s, { depth: 11 })),
      ]) {
        const frame = await rawExchange(env, raw, JSON.stringify(message));
        if (env.options.httpRejectedNotification === "204") {
          expect(frame?.status).toBe(204);
          expect(frame?.text).toBe("");
        } else {
          expect(frame?.status).toBe(200);
          expectError(frameJson(frame), "", -32603, { prefix: "Handler error:" });
        }
      }
      const wire = await env.wire(h());
      expect(await wire.log(s)).toEqual([]);
    },
    { only: "http" },
  );
}

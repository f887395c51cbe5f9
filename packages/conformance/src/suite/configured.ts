/**
 * Checks that need a harness configured differently from the default: §17 items 18, 30, 49, 52
 * and the extras for handshake gating, handler timeouts, fail-closed decisions and v1 compatibility.
 */
import { SPECIALIZED_EVENT_TYPES, type EventType } from "@ahp/core";
import { describe, expect } from "vitest";
import { handshakeParams, notification, queryParams, request, validPayload, wireEvent } from "../fixtures.js";
import { CONFORMANCE_TYPED_DEFAULTS } from "../server.js";
import type { SuiteEnv } from "./env.js";
import { clientLog, expectError, expectResult, sendUnanswered } from "./expect.js";
import { NOT_SUPPORTED } from "./events.js";

export function registerConfiguredChecks(env: SuiteEnv): void {
  describe("harness with harnessConfig {batch_size: 3} (no timeout_ms, no max_depth)", () => {
    const h = env.useHarness({ harnessConfig: { batch_size: 3 } });

    env.item(18, 'a config with only batch_size set is advertised as {"batch_size":n}', async () => {
      const s = env.session("i18");
      const wire = await env.wire(h());
      const id = wire.id("hs");
      const result = expectResult(await wire.call(request(id, "ahp/handshake", handshakeParams(s))), id) as Record<string, unknown>;
      expect(result.config).toStrictEqual({ batch_size: 3 });
      const client = await env.client(h());
      expect(client.harnessConfig).toEqual({ batch_size: 3 });
    });

    env.item(30, "with no max_depth configured any u32 depth is accepted", async () => {
      const s = env.session("i30");
      const wire = await env.wire(h());
      for (const depth of [11, 1000, 4294967295]) {
        const id = wire.id("e");
        expect(expectResult(await wire.call(request(id, "ahp/event", wireEvent("pre_action", {}, s, { depth }))), id)).toStrictEqual({
          decision: "allow",
        });
      }
      const id = wire.id("e");
      expectError(await wire.call(request(id, "ahp/event", wireEvent("pre_action", {}, s, { depth: 4294967296 }))), id, -32602, {
        prefix: "Invalid params:",
      });
    });

    env.item(56, "a configured batch_size of 3 refuses a batch of 4 and accepts 3", async () => {
      const s = env.session("i56b");
      const wire = await env.wire(h());
      const events = Array.from({ length: 4 }, () => wireEvent("pre_action", {}, s));
      const id = wire.id("b");
      expectError(await wire.call(request(id, "ahp/batch", { events })), id, -32602, "Batch size 4 exceeds configured limit 3");
      const id2 = wire.id("b");
      expect(expectResult(await wire.call(request(id2, "ahp/batch", { events: events.slice(1) })), id2)).toStrictEqual({
        decisions: [{ decision: "allow" }, { decision: "allow" }, { decision: "allow" }],
      });
    });
  });

  describe("harness with typedHandlers: true", () => {
    const h = env.useHarness({ typedHandlers: true });

    env.item(
      49,
      "a typed handler's decision is returned in its typed shape (intent_detection allow with detected_intent and confidence)",
      async () => {
        const s = env.session("i49");
        const wire = await env.wire(h());
        const id = wire.id("e");
        const result = expectResult(
          await wire.call(request(id, "ahp/event", wireEvent("intent_detection", validPayload("intent_detection", s), s))),
          id,
        );
        expect(result).toStrictEqual({ decision: "allow", detected_intent: "conformance", confidence: 0.9 });
        const scripted = {
          decision: "allow",
          detected_intent: "code_review",
          confidence: 0.82,
          target_hints: { target_type: "file", target_name: "src/server.ts" },
        };
        const id2 = wire.id("e");
        const metadata = { script: { decision: scripted } };
        expect(
          expectResult(
            await wire.call(request(id2, "ahp/event", wireEvent("intent_detection", validPayload("intent_detection", s), s, { metadata }))),
            id2,
          ),
        ).toStrictEqual(scripted);
        const client = await env.client(h());
        const typed = await client.send("intent_detection", { session_id: client.sessionId, prompt: "review", workspace: "/w" });
        expect(typed).toEqual({ decision: "allow", detected_intent: "conformance", confidence: 0.9 });
        const records = await wire.log(s);
        expect(records.map((r) => [r.handler, r.event_type])).toEqual([
          ["typed", "intent_detection"],
          ["typed", "intent_detection"],
        ]);
      },
    );

    env.extra(
      "typed-scripts",
      "all 8 typed handlers answer their typed decision; metadata.script drives them; payloads are still validated",
      async () => {
        const s = env.session("typed");
        const wire = await env.wire(h());
        for (const type of SPECIALIZED_EVENT_TYPES) {
          const id = wire.id(type);
          const result = expectResult(await wire.call(request(id, "ahp/event", wireEvent(type, validPayload(type, s), s))), id);
          expect(result, type).toStrictEqual(CONFORMANCE_TYPED_DEFAULTS[type as keyof typeof CONFORMANCE_TYPED_DEFAULTS]);
        }
        const scripted: Array<[EventType, unknown]> = [
          ["idle", { decision: "allow" }],
          ["context_perception", { decision: "refine", refined_intent: null, refined_target: null, scope_hints: [] }],
          ["memory_recall", { decision: "block", reason: "private" }],
          ["planning", { decision: "allow", selected_strategy: { custom: "mine" } }],
          ["reasoning", { decision: "block", reason: "no" }],
          ["rate_limit", { decision: "retry", retry_after_ms: 1300 }],
          ["confirmation", { decision: "reject", reason: "too risky" }],
          ["intent_detection", { decision: "block", reason: "fall back" }],
        ];
        for (const [type, decision] of scripted) {
          const id = wire.id(type);
          const event = wireEvent(type, validPayload(type, s), s, { metadata: { script: { decision } } });
          expect(expectResult(await wire.call(request(id, "ahp/event", event)), id), type).toStrictEqual(decision);
        }
        // A decision of the wrong type is refused by the server's result validation.
        const id = wire.id("wrong");
        const wrong = wireEvent("confirmation", validPayload("confirmation", s), s, {
          metadata: { script: { decision: { decision: "allow" } } },
        });
        expectError(await wire.call(request(id, "ahp/event", wrong)), id, -32603, { prefix: "Handler error: Invalid decision" });
        // The typed payload is decoded before the handler runs.
        const id2 = wire.id("bad");
        expectError(await wire.call(request(id2, "ahp/event", wireEvent("planning", { session_id: s }, s))), id2, -32603, {
          prefix: "Handler error: Serialization error:",
        });
        const records = await wire.log(s);
        expect(records).toHaveLength(8 + scripted.length + 1);
        expect(records.every((r) => r.handler === "typed" && r.via === "request")).toBe(true);
      },
    );
  });

  describe("harness with queryHandler: false", () => {
    const h = env.useHarness({ queryHandler: false });

    env.item(52, "ahp/query without a query handler -> -32603 Handler error: Capability not supported: Query not supported", async () => {
      const s = env.session("i52");
      const wire = await env.wire(h());
      const id = wire.id("q");
      expectError(
        await wire.call(request(id, "ahp/query", queryParams(s, "approval_check", { question: "?" }))),
        id,
        -32603,
        "Handler error: Capability not supported: Query not supported",
      );
      // The default typed points are unaffected.
      const id2 = wire.id("e");
      expectError(
        await wire.call(request(id2, "ahp/event", wireEvent("planning", validPayload("planning", s), s))),
        id2,
        -32603,
        NOT_SUPPORTED.planning!,
      );
    });
  });

  describe("harness with requireHandshake: true", () => {
    const h = env.useHarness({ requireHandshake: true });
    const gated = "Handshake must complete before sending AHP operations";

    env.extra(
      "handshake-gating",
      "events, queries and batches before the handshake -> -32001; notifications dropped; all fine afterwards",
      async () => {
        const s = env.session("gate");
        const wire = await env.wire(h(), { fresh: true });
        const calls = [
          request(wire.id("e"), "ahp/event", wireEvent("pre_action", {}, s)),
          request(wire.id("q"), "ahp/query", queryParams(s, "approval_check", {})),
          request(wire.id("b"), "ahp/batch", { events: [wireEvent("pre_action", {}, s)] }),
        ];
        for (const call of calls) expectError(await wire.call(call), call.id, -32001, gated);
        // A notification before the handshake never reaches the handler.
        await wire.send(notification("ahp/event", wireEvent("post_action", { n: 1 }, s)));
        const hs = wire.id("hs");
        expectResult(await wire.call(request(hs, "ahp/handshake", handshakeParams(s))), hs);
        await sendUnanswered(env, h(), wire, s, notification("ahp/event", wireEvent("post_action", { n: 2 }, s)), "accepted");
        const id = wire.id("e");
        expect(expectResult(await wire.call(request(id, "ahp/event", wireEvent("pre_action", {}, s))), id)).toStrictEqual({
          decision: "allow",
        });
        const records = await wire.log(s);
        expect(
          records.map((r) => [r.handler, r.handler === "notification" ? (r.event?.payload as { n: number }).n : r.request_id]),
        ).toEqual([
          ["handshake", hs],
          ["notification", 2],
          ["event", id],
        ]);
        // Our client always handshakes first.
        const client = await env.client(h());
        expect(await client.send("pre_action", {})).toEqual({ decision: "allow" });
      },
    );

    env.extra("handshake-gating", "gating is per connection: a second connection is not handshaken by the first", async () => {
      const s = env.session("gate2");
      const first = await env.wire(h(), { fresh: true });
      const hs = first.id("hs");
      expectResult(await first.call(request(hs, "ahp/handshake", handshakeParams(s))), hs);
      const second = await env.wire(h(), { fresh: true });
      const id = second.id("e");
      expectError(await second.call(request(id, "ahp/event", wireEvent("pre_action", {}, s))), id, -32001, gated);
    });
  });

  describe("harness with handlerTimeoutMs: 200", () => {
    const h = env.useHarness({ handlerTimeoutMs: 200 });

    env.extra(
      "handler-timeout",
      "a handler slower than handlerTimeoutMs -> -32603 Handler error: Timeout after 200ms, promptly",
      async () => {
        const s = env.session("htimeout");
        const wire = await env.wire(h());
        const id = wire.id("e");
        const started = Date.now();
        const response = await wire.call(request(id, "ahp/event", wireEvent("pre_action", { script: { delay_ms: 10_000 } }, s)));
        expectError(response, id, -32603, "Handler error: Timeout after 200ms");
        expect(Date.now() - started).toBeLessThan(5_000);
        const bid = wire.id("b");
        const batch = { events: [wireEvent("pre_action", {}, s), wireEvent("pre_action", { script: { delay_ms: 10_000 } }, s)] };
        expect(expectResult(await wire.call(request(bid, "ahp/batch", batch)), bid)).toStrictEqual({
          decisions: [{ decision: "allow" }, { decision: "block", reason: "Handler error: Timeout after 200ms" }],
        });
        const qid = wire.id("q");
        expectError(
          await wire.call(request(qid, "ahp/query", queryParams(s, "slow", { script: { delay_ms: 10_000 } }))),
          qid,
          -32603,
          "Handler error: Timeout after 200ms",
        );
        const records = await wire.log(s);
        expect(records.map((r) => r.outcome)).toEqual(["error", "ok", "error", "error"]);
      },
    );
  });

  describe('harness with handlerFailure: "decision" and typed handlers', () => {
    const h = env.useHarness({ handlerFailure: "decision", typedHandlers: true });

    env.extra("fail-closed", "a failing handler is answered with the fail-closed decision of its event type", async () => {
      const s = env.session("failclosed");
      const wire = await env.wire(h());
      const id = wire.id("e");
      const generic = expectResult(
        await wire.call(request(id, "ahp/event", wireEvent("pre_action", { script: { throw: "boom" } }, s))),
        id,
      );
      expect(generic).toStrictEqual({ decision: "block", reason: "Handler error: boom" });
      const expected: Array<[EventType, unknown]> = [
        ["confirmation", { decision: "reject", reason: "Handler error: boom" }],
        ["idle", { decision: "defer", reason: "Handler error: boom" }],
        ["rate_limit", { decision: "skip", reason: "Handler error: boom" }],
        ["planning", { decision: "block", reason: "Handler error: boom" }],
        ["intent_detection", { decision: "block", reason: "Handler error: boom" }],
      ];
      for (const [type, decision] of expected) {
        const tid = wire.id(type);
        const event = wireEvent(type, validPayload(type, s), s, { metadata: { script: { throw: "boom" } } });
        expect(expectResult(await wire.call(request(tid, "ahp/event", event)), tid), type).toStrictEqual(decision);
      }
      // Queries have no decision to fall back to.
      const qid = wire.id("q");
      expectError(
        await wire.call(request(qid, "ahp/query", queryParams(s, "x", { script: { throw: "boom" } }))),
        qid,
        -32603,
        "Handler error: boom",
      );
      const client = await env.client(h());
      expect(
        await client.send(
          "confirmation",
          { session_id: "s", confirmation_type: "user_confirm", message: "ok?" },
          { metadata: { script: { throw: "down" } } },
        ),
      ).toEqual({
        decision: "reject",
        reason: "Handler error: down",
      });
    });
  });

  describe("harness with compatV1: true", () => {
    const h = env.useHarness({ compatV1: true });

    env.extra(
      "v1-compat",
      "a v1 harness/event pre_tool_use gets a decision plus action; post_tool_use reaches the notification handler",
      async () => {
        const s = env.session("v1");
        const wire = await env.wire(h());
        const v1 = (event_type: string, payload: unknown) => ({ event_type, payload, meta: { depth: 0 } });
        const allow = expectResult(
          await wire.call(request(1, "harness/event", v1("pre_tool_use", { session_id: s, tool_name: "bash" }))),
          1,
        );
        expect(allow).toStrictEqual({ decision: "allow", action: "continue" });
        const blockScript = { session_id: s, tool_name: "bash", script: { decision: { decision: "block", reason: "no rm" } } };
        expect(expectResult(await wire.call(request(2, "harness/event", v1("pre_tool_use", blockScript))), 2)).toStrictEqual({
          decision: "block",
          reason: "no rm",
          action: "block",
        });
        const deferScript = { session_id: s, script: { decision: { decision: "defer", retry_after_ms: 500 } } };
        expect(expectResult(await wire.call(request("v1-3", "harness/event", v1("pre_prompt", deferScript))), "v1-3")).toMatchObject({
          decision: "defer",
          action: "retry",
        });
        expectError(await wire.call(request(4, "harness/event", v1("unknown_v1_event", {}))), 4, -32602, { prefix: "Invalid params:" });
        await sendUnanswered(
          env,
          h(),
          wire,
          s,
          notification("harness/event", v1("post_tool_use", { session_id: s, tool_name: "bash" })),
          "accepted",
        );
        const records = await wire.log(s, { min_count: 4 });
        expect(records.map((r) => [r.handler, r.event_type, r.event?.metadata])).toEqual([
          ["event", "pre_action", { ahp_v1_event_type: "pre_tool_use" }],
          ["event", "pre_action", { ahp_v1_event_type: "pre_tool_use" }],
          ["event", "pre_prompt", { ahp_v1_event_type: "pre_prompt" }],
          ["notification", "post_action", { ahp_v1_event_type: "post_tool_use" }],
        ]);
        // 2.4 traffic is unaffected.
        const client = await env.client(h());
        expect(await client.send("pre_action", {})).toEqual({ decision: "allow" });
        expect(await clientLog(env, client)).toHaveLength(2);
      },
    );
  });
}

/**
 * §17 items 65–82 [C]: our AhpClient against a fake harness that the test plays at the message
 * level on an in-memory linked pair, answering with crafted responses.
 */
import {
  AhpClient,
  AhpError,
  AhpLocalError,
  EVENT_TYPES,
  EVENT_TABLE,
  createLinkedPair,
  type AhpClientOptions,
  type AhpEventInput,
  type EventType,
} from "@ahp/core";
import { describe, expect, vi } from "vitest";
import { validPayload } from "../fixtures.js";
import { CONFORMANCE_TYPED_DEFAULTS } from "../server.js";
import { isRecord, WireClient, type WireMessage } from "../wire.js";
import type { SuiteEnv } from "./env.js";

const GATED = "Handshake must complete before sending AHP operations";
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/;

const HANDSHAKE_RESULT = {
  protocol_version: "2.4",
  harness_info: { name: "fake", version: "0.0.0", capabilities: [] },
  config: { timeout_ms: 10000, batch_size: 100, max_depth: 10 },
};

/** The test plays the harness: it sees every message the client writes and answers by hand. */
class FakeHarness {
  /** What the client reported through `onerror` (unmatched responses, ...). */
  readonly errors: Error[];
  readonly wire: WireClient;
  readonly client: AhpClient;
  #cursor = 0;

  private constructor(wire: WireClient, client: AhpClient, errors: Error[]) {
    this.wire = wire;
    this.client = client;
    this.errors = errors;
  }

  static async open(env: SuiteEnv, options: AhpClientOptions = {}): Promise<FakeHarness> {
    const [agentSide, harnessSide] = createLinkedPair();
    const wire = await WireClient.open(harnessSide, { timeoutMs: env.timeoutMs });
    const errors: Error[] = [];
    const client = new AhpClient({ timeoutMs: 2000, onerror: (error) => errors.push(error), ...options });
    const fake = new FakeHarness(wire, client, errors);
    env.defer(async () => {
      await client.close();
      await wire.close();
    });
    await client.connect(agentSide, { handshake: false });
    return fake;
  }

  /** The next message the client writes that `next` has not returned yet. */
  async next(description = "a message from the client"): Promise<WireMessage> {
    const from = this.#cursor;
    const message = (await this.wire.waitFor(() => true, description, { from }).promise) as WireMessage;
    this.#cursor = this.wire.received.indexOf(message, from) + 1;
    return message;
  }

  reply(message: unknown): Promise<void> {
    return this.wire.send(message);
  }

  respond(to: WireMessage, result: unknown): Promise<void> {
    return this.reply({ jsonrpc: "2.0", id: to.id, result });
  }

  /** Runs the client's handshake and answers it with `result`. */
  async handshake(result: unknown = HANDSHAKE_RESULT): Promise<void> {
    const pending = this.client.handshake(["pre_action"]);
    const message = await this.next("the handshake");
    await this.respond(message, result);
    await pending;
  }
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: Error) => error,
  );
}

const fullEvent = (client: AhpClient, type: EventType, payload: unknown = {}): AhpEventInput => ({
  event_type: type,
  session_id: client.sessionId,
  agent_id: client.agentId,
  timestamp: "2026-06-01T10:15:00Z",
  depth: 0,
  payload,
});

export function registerClientChecks(env: SuiteEnv): void {
  describe("agent [C]: AhpClient against a fake harness on an in-memory pair", () => {
    env.item(65, "before a successful handshake, event, query and batch calls fail with the gating error and write nothing", async () => {
      const fake = await FakeHarness.open(env);
      const c = fake.client;
      const attempts: Array<Promise<unknown>> = [
        c.send("pre_action", {}),
        c.send("post_action", {}),
        c.event(fullEvent(c, "pre_prompt")),
        c.notify(fullEvent(c, "session_start")),
        c.query("approval_check", {}),
        c.batch([fullEvent(c, "pre_action")]),
      ];
      for (const attempt of attempts) {
        const error = await failure(attempt);
        expect(error.message).toContain(GATED);
        expect(AhpLocalError.isInstance(error) && error.code).toBe("HANDSHAKE_REQUIRED");
      }
      expect(c.isHandshaken).toBe(false);
      // The first thing the harness ever sees is the handshake.
      const pending = c.handshake();
      const first = await fake.next();
      expect(first.method).toBe("ahp/handshake");
      expect(fake.wire.received).toHaveLength(1);
      await fake.respond(first, HANDSHAKE_RESULT);
      await pending;
    });

    env.item(66, "a failed handshake (error response) leaves the client unhandshaken; a retry may succeed", async () => {
      const fake = await FakeHarness.open(env);
      const c = fake.client;
      const attempt = c.handshake();
      const message = await fake.next();
      await fake.reply({ jsonrpc: "2.0", id: message.id, error: { code: -32000, message: "Unsupported protocol version: 2.4" } });
      const error = await failure(attempt);
      expect(error.message).toBe("Handshake failed: Unsupported protocol version: 2.4");
      expect(c.isHandshaken).toBe(false);
      expect((await failure(c.send("pre_action", {}))).message).toContain(GATED);
      await fake.handshake();
      expect(c.isHandshaken).toBe(true);
      const sent = c.send("pre_action", {});
      await fake.respond(await fake.next(), { decision: "allow" });
      expect(await sent).toEqual({ decision: "allow" });
    });

    env.item(
      67,
      'handshake params carry protocol_version "2.4", agent_info{framework,version,capabilities}, session_id, agent_id',
      async () => {
        const fake = await FakeHarness.open(env, { agentInfo: { framework: "my-agent", version: "0.3.0" } });
        const c = fake.client;
        const pending = c.handshake(["pre_action", "post_action"]);
        const message = await fake.next();
        expect(message).toMatchObject({ jsonrpc: "2.0", method: "ahp/handshake" });
        expect(message.params).toStrictEqual({
          protocol_version: "2.4",
          agent_info: { framework: "my-agent", version: "0.3.0", capabilities: ["pre_action", "post_action"] },
          session_id: c.sessionId,
          agent_id: c.agentId,
        });
        expect(c.sessionId).toMatch(UUID_V4);
        expect(c.agentId).toMatch(UUID_V4);
        await fake.respond(message, HANDSHAKE_RESULT);
        await pending;
      },
    );

    env.item(68, "every request id is a string, unique among in-flight requests (UUID v4)", async () => {
      const fake = await FakeHarness.open(env);
      const c = fake.client;
      const handshake = c.handshake();
      const hs = await fake.next();
      await fake.respond(hs, HANDSHAKE_RESULT);
      await handshake;
      const n = 50;
      const calls = [
        ...Array.from({ length: n - 2 }, () => c.send("pre_action", {})),
        c.query("approval_check", null),
        c.batch([fullEvent(c, "pre_action")]),
      ];
      const requests: WireMessage[] = [];
      for (let i = 0; i < n; i++) requests.push(await fake.next());
      const ids = [hs.id, ...requests.map((r) => r.id)];
      for (const id of ids) {
        expect(typeof id).toBe("string");
        expect(id).toMatch(UUID_V4);
      }
      expect(new Set(ids).size).toBe(ids.length);
      // Answer in reverse order: the client matches by id.
      for (const r of [...requests].reverse()) {
        const result =
          r.method === "ahp/query"
            ? { answer: null }
            : r.method === "ahp/batch"
              ? { decisions: [{ decision: "allow" }] }
              : { decision: "allow" };
        await fake.respond(r, result);
      }
      await Promise.all(calls);
    });

    env.item(69, 'a response with jsonrpc other than "2.0" -> error containing invalid JSON-RPC version', async () => {
      const fake = await FakeHarness.open(env);
      const attempt = fake.client.handshake();
      const hs = await fake.next();
      await fake.reply({ jsonrpc: "1.0", id: hs.id, result: HANDSHAKE_RESULT });
      expect((await failure(attempt)).message).toBe("Protocol error: Handshake failed: invalid JSON-RPC version 1.0");
      expect(fake.client.isHandshaken).toBe(false);
      await fake.handshake();
      const sent = fake.client.send("pre_action", {});
      const ev = await fake.next();
      await fake.reply({ id: ev.id, result: { decision: "allow" } });
      expect((await failure(sent)).message).toContain("invalid JSON-RPC version");
    });

    env.item(71, "an error response -> error <Op> failed: <message>", async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      const c = fake.client;
      const cases: Array<[string, Promise<unknown>]> = [
        ["Event", c.send("pre_action", {})],
        ["Query", c.query("approval_check", {})],
        ["Batch", c.batch([fullEvent(c, "pre_action")])],
      ];
      for (const [op, call] of cases) {
        const message = await fake.next();
        await fake.reply({ jsonrpc: "2.0", id: message.id, error: { code: -32603, message: "Handler error: boom" } });
        const error = await failure(call);
        expect(error.message).toBe(`${op} failed: Handler error: boom`);
        expect(AhpError.isInstance(error) && error.code).toBe(-32603);
      }
    });

    env.item(72, 'a response without result, or with "result": null -> error containing missing result', async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      for (const response of [{}, { result: null }]) {
        const call = fake.client.send("pre_action", {});
        const message = await fake.next();
        await fake.reply({ jsonrpc: "2.0", id: message.id, ...response });
        expect((await failure(call)).message).toBe("Protocol error: Event failed: missing result");
      }
      const query = fake.client.query("q", {});
      await fake.reply({ jsonrpc: "2.0", id: (await fake.next()).id, result: null });
      expect((await failure(query)).message).toContain("missing result");
    });

    env.item(73, "blocking event types are sent as requests, non-blocking ones as notifications (no id member)", async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      const c = fake.client;
      for (const type of EVENT_TYPES) {
        const info = EVENT_TABLE[type];
        const call = c.send(type, validPayload(type, c.sessionId));
        const message = await fake.next(`the ${type} event`);
        expect(message.method).toBe("ahp/event");
        expect((message.params as { event_type: string }).event_type).toBe(type);
        if (info.blocking) {
          expect(typeof message.id, `${type} is a request`).toBe("string");
          const answer = info.specialized
            ? CONFORMANCE_TYPED_DEFAULTS[type as keyof typeof CONFORMANCE_TYPED_DEFAULTS]
            : { decision: "allow" };
          await fake.respond(message, answer);
          expect(await call).toEqual(answer);
        } else {
          expect(message, `${type} is a notification`).not.toHaveProperty("id");
          expect(await call).toEqual({ decision: "allow" });
        }
      }
    });

    env.item(74, 'sending a non-blocking event returns a synthetic {"decision":"allow"} without waiting for the harness', async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      const c = fake.client;
      // The fake harness never answers anything here.
      const never = new Promise<"waited">((resolve) => {
        const timer = setTimeout(() => resolve("waited"), 1000);
        env.defer(() => clearTimeout(timer));
      });
      expect(await Promise.race([c.send("post_action", { exit_code: 0 }), never])).toEqual({ decision: "allow" });
      expect(await Promise.race([c.event(fullEvent(c, "session_end", { duration_ms: 5 })), never])).toEqual({ decision: "allow" });
      expect((await fake.next()).params).toMatchObject({ event_type: "post_action" });
      expect((await fake.next()).params).toMatchObject({ event_type: "session_end" });
    });

    env.item(
      75,
      "a batch containing a specialized, query or handshake event is refused locally with cannot be batched; nothing sent",
      async () => {
        const fake = await FakeHarness.open(env);
        await fake.handshake();
        const c = fake.client;
        const before = fake.wire.received.length;
        for (const type of ["idle", "planning", "intent_detection", "query", "handshake"] as EventType[]) {
          const error = await failure(c.batch([fullEvent(c, "pre_action"), fullEvent(c, type, validPayload(type))]));
          expect(error.message).toBe(
            `Protocol error: Batch failed: event type ${type} cannot be batched because it does not return a generic Decision`,
          );
        }
        const probe = c.send("pre_action", { probe: true });
        const next = await fake.next();
        expect(fake.wire.received.length, "only the probe was written").toBe(before + 1);
        expect((next.params as { payload: unknown }).payload).toEqual({ probe: true });
        await fake.respond(next, { decision: "allow" });
        await probe;
      },
    );

    env.item(76, "a batch answer with fewer or more decisions than events -> error containing decision count mismatch", async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      const c = fake.client;
      for (const count of [1, 3, 0]) {
        const call = c.batch([fullEvent(c, "pre_action"), fullEvent(c, "post_action")]);
        const message = await fake.next();
        await fake.respond(message, { decisions: Array.from({ length: count }, () => ({ decision: "allow" })) });
        expect((await failure(call)).message).toBe(`Protocol error: Batch failed: decision count mismatch, expected 2, got ${count}`);
      }
    });

    env.item(77, "the full-event API sends session_id, agent_id, depth, timestamp, context and metadata exactly as given", async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      const c = fake.client;
      const base = {
        session_id: "another-session",
        agent_id: "sub-agent-7",
        timestamp: "2026-06-01T12:34:56.123456789+00:00",
        depth: 3,
        context: {
          recent_facts: [{ content: "uses pnpm", source: "lockfile", confidence: 0.9 }],
          session_stats: { total_actions: 4, total_tokens: 1200, duration_ms: 5000, error_count: 0 },
          current_task: "fix the build",
          capabilities: { endpoint: "http://127.0.0.1:1" },
        },
        metadata: { trace_id: "abc", nested: { n: 1 } },
      };
      const blocking = { ...base, event_type: "pre_action" as const, payload: { tool_name: "bash", arguments: { command: "ls" } } };
      const call = c.event(blocking);
      const request = await fake.next();
      expect(request.params).toStrictEqual(blocking);
      await fake.respond(request, { decision: "allow" });
      await call;
      const nonBlocking = { ...base, event_type: "post_action" as const, payload: { exit_code: 0 } };
      await c.event(nonBlocking);
      expect((await fake.next()).params).toStrictEqual(nonBlocking);
      const batch = c.batch([blocking, nonBlocking]);
      const batchRequest = await fake.next();
      expect(batchRequest.params).toStrictEqual({ events: [blocking, nonBlocking] });
      await fake.respond(batchRequest, { decisions: [{ decision: "allow" }, { decision: "allow" }] });
      await batch;
    });

    env.item(
      78,
      "the simple API fills in the client's ids, depth 0, a current RFC 3339 UTC timestamp, and omits context/metadata",
      async () => {
        const fake = await FakeHarness.open(env);
        await fake.handshake();
        const c = fake.client;
        const before = Date.now();
        const call = c.send("pre_action", { tool_name: "bash" });
        const message = await fake.next();
        const params = message.params as Record<string, unknown>;
        expect(Object.keys(params).sort()).toEqual(["agent_id", "depth", "event_type", "payload", "session_id", "timestamp"]);
        expect(params).toMatchObject({
          event_type: "pre_action",
          session_id: c.sessionId,
          agent_id: c.agentId,
          depth: 0,
          payload: { tool_name: "bash" },
        });
        expect(params.timestamp).toMatch(RFC3339_UTC);
        const at = Date.parse(params.timestamp as string);
        expect(at).toBeGreaterThanOrEqual(before - 1000);
        expect(at).toBeLessThanOrEqual(Date.now() + 1000);
        await fake.respond(message, { decision: "allow" });
        await call;
        const query = c.query("approval_check", { q: 1 });
        const q = await fake.next();
        expect(q.params).toStrictEqual({ session_id: c.sessionId, agent_id: c.agentId, query_type: "approval_check", payload: { q: 1 } });
        await fake.respond(q, { answer: "yes" });
        expect(await query).toEqual({ answer: "yes" });
      },
    );

    env.item(79, "no answer within the timeout -> timeout error; a response arriving later is discarded", async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      const c = fake.client;
      const started = Date.now();
      const call = c.send("pre_action", {}, { timeoutMs: 100 });
      const message = await fake.next();
      const error = await failure(call);
      expect(Date.now() - started).toBeGreaterThanOrEqual(90);
      expect(AhpLocalError.isInstance(error) && error.code).toBe("TIMEOUT");
      expect(error.message).toBe("Timeout after 100ms");
      // The late answer is dropped (reported through onerror) and does not disturb the next call.
      const errorsBefore = fake.errors.length;
      await fake.respond(message, { decision: "block", reason: "late" });
      const next = c.send("pre_action", {});
      const nextMessage = await fake.next();
      await fake.respond(nextMessage, { decision: "allow" });
      expect(await next).toEqual({ decision: "allow" });
      expect(fake.errors.slice(errorsBefore).map((e) => e.message)).toEqual([
        `response with unknown id ${JSON.stringify(message.id)} ignored`,
      ]);
    });

    env.item(79, "the default timeout is 10000 ms", async () => {
      const fake = await FakeHarness.open(env, { timeoutMs: undefined });
      await fake.handshake();
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      try {
        let outcome: unknown = "pending";
        const call = fake.client.send("pre_action", {}).then(
          (value) => (outcome = value),
          (error: unknown) => (outcome = error),
        );
        await fake.next();
        await vi.advanceTimersByTimeAsync(9_990);
        expect(outcome).toBe("pending");
        await vi.advanceTimersByTimeAsync(20);
        await call;
        expect(AhpLocalError.isInstance(outcome) && outcome.code).toBe("TIMEOUT");
        expect((outcome as Error).message).toBe("Timeout after 10000ms");
      } finally {
        vi.useRealTimers();
      }
    });

    env.item(80, '[Q] a handshake answer with protocol_version "2.0" is accepted', async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake({ ...HANDSHAKE_RESULT, protocol_version: "2.0" });
      expect(fake.client.isHandshaken).toBe(true);
      expect(fake.client.handshakeResponse?.protocol_version).toBe("2.0");
    });

    env.item(81, 'a generic Decision {"decision":"defer","retry_after_ms":1300.5} is rejected as undecodable', async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      const c = fake.client;
      const bad = { decision: "defer", retry_after_ms: 1300.5 };
      const call = c.send("pre_action", {});
      await fake.respond(await fake.next(), bad);
      const error = await failure(call);
      expect(AhpLocalError.isInstance(error) && error.code).toBe("INVALID_RESPONSE");
      expect(error.message).toMatch(/^Serialization error: /);
      const batch = c.batch([fullEvent(c, "pre_action")]);
      await fake.respond(await fake.next(), { decisions: [bad] });
      expect((await failure(batch)).message).toMatch(/^Serialization error: /);
      const ok = c.send("pre_action", {});
      await fake.respond(await fake.next(), { decision: "defer", retry_after_ms: 1300 });
      expect(await ok).toEqual({ decision: "defer", retry_after_ms: 1300 });
    });

    env.item(82, "a confidence of 0.8999999761581421 decodes and equals 0.9 within 1e-6", async () => {
      const fake = await FakeHarness.open(env);
      await fake.handshake();
      const c = fake.client;
      const call = c.send("intent_detection", { session_id: c.sessionId, prompt: "review", workspace: "/w" });
      await fake.respond(await fake.next(), { confidence: 0.8999999761581421, decision: "allow", detected_intent: "code" });
      const decision = await call;
      expect(decision.decision).toBe("allow");
      expect(Math.abs((decision as { confidence: number }).confidence - 0.9)).toBeLessThan(1e-6);
      const perception = c.send("context_perception", validPayload("context_perception", c.sessionId) as never);
      const widened = {
        decision: "allow",
        injected_context: {
          facts: [{ confidence: 0.8999999761581421, content: "workspace uses Rust", source: "index" }],
          file_contents: [{ path: "src/lib.rs", relevance_score: 0.699999988079071, snippet: "pub mod server;" }],
        },
      };
      await fake.respond(await fake.next(), widened);
      const result = (await perception) as typeof widened;
      expect(Math.abs(result.injected_context.facts[0]!.confidence - 0.9)).toBeLessThan(1e-6);
      expect(Math.abs(result.injected_context.file_contents[0]!.relevance_score - 0.7)).toBeLessThan(1e-6);
    });

    env.extra("close-pending", "a connection that dies rejects every pending call at once with the real cause", async () => {
      const [agentSide, harnessSide] = createLinkedPair();
      const wire = await WireClient.open(harnessSide);
      const client = new AhpClient({ timeoutMs: 10_000 });
      env.defer(async () => {
        await client.close();
        await wire.close();
      });
      const connecting = client.connect(agentSide);
      const hs = (await wire.waitFor(isRecord, "the handshake").promise) as WireMessage;
      await wire.send({ jsonrpc: "2.0", id: hs.id, result: HANDSHAKE_RESULT });
      await connecting;
      const calls = [client.send("pre_action", {}), client.query("q", {}), client.batch([fullEvent(client, "pre_action")])];
      await wire.waitFor(() => wire.received.length >= 4, "the three calls", { from: 0 }).promise;
      const cause = new Error("link down");
      const started = Date.now();
      harnessSide.fail(cause);
      for (const call of calls) {
        const error = await failure(call);
        expect(AhpLocalError.isInstance(error) && error.code).toBe("CONNECTION_CLOSED");
        expect(error.cause).toBe(cause);
        expect(error.message).toBe("Connection closed: link down");
      }
      expect(Date.now() - started).toBeLessThan(500);
      expect(await client.closed).toBe(cause);
    });

    env.extra(
      "client-timeout",
      "§12.7 stream form of §17.70: a response with another id is dropped and reported; the call times out",
      async () => {
        const fake = await FakeHarness.open(env);
        await fake.handshake();
        const call = fake.client.send("pre_action", {}, { timeoutMs: 150 });
        const message = await fake.next();
        await fake.reply({ jsonrpc: "2.0", id: `${String(message.id)}-other`, result: { decision: "block", reason: "not yours" } });
        const error = await failure(call);
        expect(AhpLocalError.isInstance(error) && error.code).toBe("TIMEOUT");
        expect(fake.errors.map((e) => e.message)).toContain(
          `response with unknown id ${JSON.stringify(`${String(message.id)}-other`)} ignored`,
        );
      },
    );
  });
}

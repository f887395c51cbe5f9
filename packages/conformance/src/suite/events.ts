/** §17 items 20–50: events, depth, run contracts, typed defaults, handler failures. */
import { AhpError, NON_BLOCKING_EVENT_TYPES, type EventType } from "@ahp/core";
import { expect } from "vitest";
import { FIXED_TIMESTAMP, notification, request, validPayload, wireEvent } from "../fixtures.js";
import type { ConformanceHarness } from "../types.js";
import type { SuiteEnv } from "./env.js";
import { clientLog, expectError, expectResult, sendUnanswered } from "./expect.js";

const DEPTH_11 = "Invalid event: Protocol error: Event depth 11 exceeds configured max depth 10";

/** §7.9, verbatim. */
export const NOT_SUPPORTED: Readonly<Record<string, string>> = {
  context_perception: "Handler error: Capability not supported: Context perception not supported",
  memory_recall: "Handler error: Capability not supported: Memory recall not supported",
  planning: "Handler error: Capability not supported: Planning not supported",
  reasoning: "Handler error: Capability not supported: Reasoning not supported",
  rate_limit: "Handler error: Capability not supported: Rate limit decisions not supported",
  confirmation: "Handler error: Capability not supported: Confirmation not supported",
  intent_detection: "Handler error: Capability not supported: Intent detection not supported",
};

export function registerEventChecks(env: SuiteEnv, h: () => ConformanceHarness): void {
  const eventRequest = (id: string, type: string, payload: unknown, s: string, overrides = {}) =>
    request(id, "ahp/event", wireEvent(type, payload, s, overrides));
  const eventNote = (type: string, payload: unknown, s: string, overrides = {}) =>
    notification("ahp/event", wireEvent(type, payload, s, overrides));

  env.item(20, "pre_action request -> a generic Decision (default allow; every scripted variant round-trips)", async () => {
    const s = env.session("i20");
    const wire = await env.wire(h());
    const id = wire.id("e");
    const event = wireEvent("pre_action", validPayload("pre_action"), s);
    expect(expectResult(await wire.call(request(id, "ahp/event", event)), id)).toStrictEqual({ decision: "allow" });
    const decisions = [
      { decision: "block", reason: "destructive command", metadata: { policy: "security" } },
      { decision: "modify", modified_payload: { tool_name: "bash", arguments: { command: "ls" } } },
      { decision: "modify", modified_payload: null },
      { decision: "defer", retry_after_ms: 1800, reason: "rate limiting" },
      { decision: "escalate", reason: "needs approval", escalation_target: "oncall" },
      { decision: "allow", modified_payload: { command: "ls -la" }, metadata: { rewritten: true } },
    ];
    for (const decision of decisions) {
      const did = wire.id("e");
      const result = expectResult(await wire.call(eventRequest(did, "pre_action", { script: { decision } }, s)), did);
      expect(result).toStrictEqual(decision);
    }
    const records = await wire.log(s);
    expect(records).toHaveLength(1 + decisions.length);
    expect(records[0]).toMatchObject({ handler: "event", via: "request", event_type: "pre_action", request_id: id, session_id: s });
    expect(records[0]!.event).toEqual(event);
    const client = await env.client(h());
    const block = { decision: "block", reason: "no" };
    expect(await client.send("pre_action", { script: { decision: block } })).toEqual(block);
  });

  env.item(21, "pre_prompt request -> a generic Decision", async () => {
    const s = env.session("i21");
    const wire = await env.wire(h());
    const id = wire.id("e");
    expect(expectResult(await wire.call(eventRequest(id, "pre_prompt", validPayload("pre_prompt"), s)), id)).toStrictEqual({
      decision: "allow",
    });
    const modify = { decision: "modify", modified_payload: { prompt: "redacted" } };
    const id2 = wire.id("e");
    expect(expectResult(await wire.call(eventRequest(id2, "pre_prompt", { script: { decision: modify } }, s)), id2)).toStrictEqual(modify);
    const client = await env.client(h());
    expect(await client.send("pre_prompt", { prompt: "hi" })).toEqual({ decision: "allow" });
  });

  env.item(
    22,
    "each of the 10 non-blocking types sent as a request -> -32602 Fire-and-forget event <type> must be sent as a notification",
    async () => {
      const s = env.session("i22");
      const wire = await env.wire(h());
      expect(NON_BLOCKING_EVENT_TYPES).toHaveLength(10);
      for (const type of NON_BLOCKING_EVENT_TYPES) {
        const id = wire.id(type);
        const response = await wire.call(eventRequest(id, type, validPayload(type, s), s));
        expectError(response, id, -32602, `Fire-and-forget event ${type} must be sent as a notification`);
      }
      expect(await wire.log(s), "no handler ran").toEqual([]);
    },
  );

  env.item(23, "pre_action sent as a notification: handler not invoked, nothing sent back", async () => {
    const s = env.session("i23");
    const wire = await env.wire(h());
    const reason = { contains: ["Blocking event pre_action must be sent as a request"] };
    await sendUnanswered(env, h(), wire, s, eventNote("pre_action", validPayload("pre_action"), s), "rejected", reason);
    await sendUnanswered(env, h(), wire, s, eventNote("idle", validPayload("idle"), s), "rejected", {
      contains: ["Blocking event idle must be sent as a request"],
    });
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(24, "event_type pre_tool_use in a request -> -32602 Invalid params: unknown variant", async () => {
    const s = env.session("i24");
    const wire = await env.wire(h());
    for (const type of ["pre_tool_use", "Pre_Action", "PRE_ACTION"]) {
      const id = wire.id("e");
      expectError(await wire.call(eventRequest(id, type, {}, s)), id, -32602, { prefix: "Invalid params:", contains: ["unknown variant"] });
    }
  });

  env.item(25, "an event missing timestamp (or payload) -> -32602 Invalid params: naming the member", async () => {
    const s = env.session("i25");
    const wire = await env.wire(h());
    for (const missing of ["timestamp", "payload", "session_id", "agent_id", "depth", "event_type"]) {
      const event = wireEvent("pre_action", {}, s);
      delete event[missing];
      const id = wire.id("e");
      expectError(await wire.call(request(id, "ahp/event", event)), id, -32602, { prefix: "Invalid params:", contains: [missing] });
    }
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(26, '"payload": null is accepted for a generic event', async () => {
    const s = env.session("i26");
    const wire = await env.wire(h());
    const id = wire.id("e");
    expect(expectResult(await wire.call(eventRequest(id, "pre_action", null, s)), id)).toStrictEqual({ decision: "allow" });
    const records = await wire.log(s);
    expect(records).toHaveLength(1);
    expect(records[0]!.event).toHaveProperty("payload", null);
  });

  env.item(27, "depth equal to max_depth (10) is accepted", async () => {
    const s = env.session("i27");
    const wire = await env.wire(h());
    await sendUnanswered(env, h(), wire, s, eventNote("post_action", {}, s, { depth: 10 }), "accepted");
    const id = wire.id("e");
    expect(expectResult(await wire.call(eventRequest(id, "pre_action", {}, s, { depth: 10 })), id)).toStrictEqual({ decision: "allow" });
    const bid = wire.id("b");
    const batch = request(bid, "ahp/batch", { events: [wireEvent("pre_action", {}, s, { depth: 10 })] });
    expect(expectResult(await wire.call(batch), bid)).toStrictEqual({ decisions: [{ decision: "allow" }] });
    const records = await wire.log(s, { min_count: 3 });
    expect(records.map((r) => [r.via, r.event?.depth])).toEqual([
      ["notification", 10],
      ["request", 10],
      ["batch", 10],
    ]);
  });

  env.item(28, "depth max_depth + 1 -> -32602 ... exceeds configured max depth 10", async () => {
    const s = env.session("i28");
    const wire = await env.wire(h());
    const id = wire.id("e");
    expectError(await wire.call(eventRequest(id, "pre_action", {}, s, { depth: 11 })), id, -32602, DEPTH_11);
    await sendUnanswered(env, h(), wire, s, eventNote("post_action", {}, s, { depth: 11 }), "rejected", {
      contains: ["exceeds configured max depth 10"],
    });
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(29, "depth -1 or 1.5 -> -32602 Invalid params:", async () => {
    const s = env.session("i29");
    const wire = await env.wire(h());
    for (const depth of [-1, 1.5, "1", null, 4294967296]) {
      const id = wire.id("e");
      expectError(await wire.call(eventRequest(id, "pre_action", {}, s, { depth })), id, -32602, { prefix: "Invalid params:" });
    }
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(31, "an over-deep post_action request reports the depth error, not the notification error", async () => {
    const s = env.session("i31");
    const wire = await env.wire(h());
    const id = wire.id("e");
    expectError(await wire.call(eventRequest(id, "post_action", {}, s, { depth: 11 })), id, -32602, DEPTH_11);
  });

  env.item(32, "an over-deep run_lifecycle request with an empty payload reports the depth error", async () => {
    const s = env.session("i32");
    const wire = await env.wire(h());
    const id = wire.id("e");
    expectError(await wire.call(eventRequest(id, "run_lifecycle", {}, s, { depth: 11 })), id, -32602, DEPTH_11);
  });

  env.item(33, "a run_lifecycle request with an empty payload -> -32602 Invalid event: ... run_id", async () => {
    const s = env.session("i33");
    const wire = await env.wire(h());
    const id = wire.id("e");
    expectError(await wire.call(eventRequest(id, "run_lifecycle", {}, s)), id, -32602, {
      prefix: "Invalid event: Serialization error:",
      contains: ["run_id"],
    });
    const id2 = wire.id("e");
    expectError(
      await wire.call(eventRequest(id2, "task_list", { run_id: "r", session_id: s, updated_at: FIXED_TIMESTAMP }, s)),
      id2,
      -32602,
      {
        prefix: "Invalid event: Serialization error:",
        contains: ["tasks"],
      },
    );
  });

  env.item(34, "a valid run_lifecycle request -> -32602 ... must be sent as a notification", async () => {
    const s = env.session("i34");
    const wire = await env.wire(h());
    for (const type of ["run_lifecycle", "task_list", "verification"] as const) {
      const id = wire.id("e");
      expectError(
        await wire.call(eventRequest(id, type, validPayload(type, s), s)),
        id,
        -32602,
        `Fire-and-forget event ${type} must be sent as a notification`,
      );
    }
  });

  env.item(35, "a valid run_lifecycle notification reaches the notification handler once", async () => {
    const s = env.session("i35");
    const wire = await env.wire(h());
    const event = wireEvent("run_lifecycle", validPayload("run_lifecycle", s), s);
    await sendUnanswered(env, h(), wire, s, notification("ahp/event", event), "accepted");
    const records = await wire.log(s, { min_count: 1 });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ handler: "notification", via: "notification", event_type: "run_lifecycle", session_id: s });
    expect(records[0]).not.toHaveProperty("request_id");
    expect(records[0]!.event).toEqual(event);
    const client = await env.client(h());
    const payload = { run_id: "run-2", session_id: client.sessionId, status: "completed" as const, updated_at: FIXED_TIMESTAMP };
    expect(await client.send("run_lifecycle", payload)).toEqual({ decision: "allow" });
    const mine = (await clientLog(env, client, { min_count: 1 })).filter((r) => r.handler === "notification");
    expect(mine.map((r) => r.event?.payload)).toEqual([payload]);
  });

  env.item(36, "a run_lifecycle notification missing updated_at or run_id is dropped (handler not invoked)", async () => {
    const s = env.session("i36");
    const wire = await env.wire(h());
    for (const missing of ["updated_at", "run_id", "status", "session_id"]) {
      const payload = validPayload("run_lifecycle", s) as Record<string, unknown>;
      delete payload[missing];
      await sendUnanswered(env, h(), wire, s, eventNote("run_lifecycle", payload, s), "rejected", { contains: [missing] });
    }
    await sendUnanswered(
      env,
      h(),
      wire,
      s,
      eventNote("run_lifecycle", { ...(validPayload("run_lifecycle", s) as object), status: "Running" }, s),
      "rejected",
    );
    expect(await wire.log(s)).toEqual([]);
  });

  const taskList = (s: string, tasks: unknown) => ({
    run_id: "run-1",
    session_id: s,
    updated_at: FIXED_TIMESTAMP,
    ...(tasks === undefined ? {} : { tasks }),
  });
  const task = (extra: Record<string, unknown>) => ({ id: "t1", title: "Patch the parser", status: "pending", ...extra });

  env.item(37, 'a task_list notification without tasks is dropped; with "tasks": [] it is accepted', async () => {
    const s = env.session("i37");
    const wire = await env.wire(h());
    await sendUnanswered(env, h(), wire, s, eventNote("task_list", taskList(s, undefined), s), "rejected", { contains: ["tasks"] });
    await sendUnanswered(env, h(), wire, s, eventNote("task_list", taskList(s, null), s), "rejected", { contains: ["tasks"] });
    await sendUnanswered(env, h(), wire, s, eventNote("task_list", taskList(s, []), s), "accepted");
    const records = await wire.log(s, { min_count: 1 });
    expect(records.map((r) => r.event?.payload)).toEqual([taskList(s, [])]);
  });

  env.item(38, 'a task with "depends_on": null is rejected; with depends_on omitted it is accepted', async () => {
    const s = env.session("i38");
    const wire = await env.wire(h());
    await sendUnanswered(env, h(), wire, s, eventNote("task_list", taskList(s, [task({ depends_on: null })]), s), "rejected", {
      contains: ["depends_on"],
    });
    for (const member of ["evidence", "artifacts"]) {
      await sendUnanswered(env, h(), wire, s, eventNote("task_list", taskList(s, [task({ [member]: null })]), s), "rejected", {
        contains: [member],
      });
    }
    await sendUnanswered(env, h(), wire, s, eventNote("task_list", taskList(s, [task({})]), s), "accepted");
    const records = await wire.log(s, { min_count: 1 });
    expect(records).toHaveLength(1);
    expect(records[0]!.event?.payload).toEqual(taskList(s, [task({})]));
  });

  env.item(39, "task status in_progress is accepted; InProgress is rejected", async () => {
    const s = env.session("i39");
    const wire = await env.wire(h());
    await sendUnanswered(env, h(), wire, s, eventNote("task_list", taskList(s, [task({ status: "InProgress" })]), s), "rejected", {
      contains: ["InProgress"],
    });
    await sendUnanswered(env, h(), wire, s, eventNote("task_list", taskList(s, [task({ status: "in_progress" })]), s), "accepted");
    expect(await wire.log(s, { min_count: 1 })).toHaveLength(1);
  });

  const verification = (s: string, extra: Record<string, unknown>) => ({
    run_id: "run-1",
    session_id: s,
    status: "passed",
    updated_at: FIXED_TIMESTAMP,
    ...extra,
  });

  env.item(40, "verification status needs_review is accepted; NeedsReview is rejected", async () => {
    const s = env.session("i40");
    const wire = await env.wire(h());
    await sendUnanswered(env, h(), wire, s, eventNote("verification", verification(s, { status: "NeedsReview" }), s), "rejected", {
      contains: ["NeedsReview"],
    });
    const badCheck = { checks: [{ id: "c1", subject: "lint", status: "NeedsReview" }] };
    await sendUnanswered(env, h(), wire, s, eventNote("verification", verification(s, badCheck), s), "rejected", {
      contains: ["NeedsReview"],
    });
    await sendUnanswered(env, h(), wire, s, eventNote("verification", verification(s, { status: "needs_review" }), s), "accepted");
    const goodCheck = { checks: [{ id: "c1", subject: "lint", status: "needs_review" }] };
    await sendUnanswered(env, h(), wire, s, eventNote("verification", verification(s, goodCheck), s), "accepted");
    const records = await wire.log(s, { min_count: 2 });
    expect(records.map((r) => (r.event?.payload as { status: string }).status)).toEqual(["needs_review", "passed"]);
  });

  env.item(41, "verification without checks and residual_risks is accepted (payload handed over unchanged)", async () => {
    const s = env.session("i41");
    const wire = await env.wire(h());
    const payload = verification(s, {});
    await sendUnanswered(env, h(), wire, s, eventNote("verification", payload, s), "accepted");
    const records = await wire.log(s, { min_count: 1 });
    expect(records).toHaveLength(1);
    expect(records[0]!.event?.payload).toStrictEqual(payload);
  });

  env.item(42, "a post_action notification with an arbitrary payload (e.g. {}) reaches the notification handler", async () => {
    const s = env.session("i42");
    const payloads: unknown[] = [{}, "free text", [1, 2, 3], null, { tool_name: "shell", exit_code: 0, extra: { nested: true } }];
    const wire = await env.wire(h());
    for (const payload of payloads) await sendUnanswered(env, h(), wire, s, eventNote("post_action", payload, s), "accepted");
    const records = await wire.log(s, { min_count: payloads.length });
    expect(records.map((r) => [r.handler, r.event?.payload])).toEqual(payloads.map((p) => ["notification", p]));
  });

  env.item(43, "a malformed context (session_stats lacking total_tokens) -> -32602 Invalid params:", async () => {
    const s = env.session("i43");
    const wire = await env.wire(h());
    const bad = [
      { session_stats: { total_actions: 1, duration_ms: 5, error_count: 0 } },
      { session_stats: { total_actions: 1, total_tokens: 2147483648, duration_ms: 5, error_count: 0 } },
      { recent_facts: [{ content: "x", source: "y" }] },
      "not a context",
    ];
    for (const context of bad) {
      const id = wire.id("e");
      expectError(await wire.call(eventRequest(id, "pre_action", {}, s, { context })), id, -32602, { prefix: "Invalid params:" });
    }
    const good = {
      session_stats: { total_actions: 1, total_tokens: 2147483647, duration_ms: 5, error_count: 0 },
      recent_facts: [{ content: "uses pnpm", source: "lockfile", confidence: 0.8999999761581421 }],
      memory_summary: { memory_type: "episodic", total_items: 3, recent_topics: ["build"] },
      current_task: "fix the build",
      capabilities: { endpoint: "http://127.0.0.1:1" },
    };
    const id = wire.id("e");
    expect(expectResult(await wire.call(eventRequest(id, "pre_action", {}, s, { context: good })), id)).toStrictEqual({
      decision: "allow",
    });
    const records = await wire.log(s);
    expect(records).toHaveLength(1);
    expect(records[0]!.event?.context).toEqual(good);
  });

  env.item(44, "handshake and query event types sent via ahp/event are answered by the generic handler", async () => {
    const s = env.session("i44");
    const wire = await env.wire(h());
    for (const type of ["handshake", "query"]) {
      const id = wire.id(type);
      expect(expectResult(await wire.call(eventRequest(id, type, {}, s)), id)).toStrictEqual({ decision: "allow" });
    }
    const block = { decision: "block", reason: "queries go through ahp/query" };
    const id = wire.id("q");
    expect(expectResult(await wire.call(eventRequest(id, "query", { script: { decision: block } }, s)), id)).toStrictEqual(block);
    const records = await wire.log(s);
    expect(records.map((r) => [r.handler, r.event_type])).toEqual([
      ["event", "handshake"],
      ["event", "query"],
      ["event", "query"],
    ]);
    const client = await env.client(h());
    expect(await client.send("query", {})).toEqual({ decision: "allow" });
  });

  env.item(45, 'an idle request with a valid payload and no idle handler -> {"decision":"allow"}', async () => {
    const s = env.session("i45");
    const wire = await env.wire(h());
    const id = wire.id("e");
    expect(expectResult(await wire.call(eventRequest(id, "idle", validPayload("idle"), s)), id)).toStrictEqual({ decision: "allow" });
    expect(await wire.log(s), "no handler is installed").toEqual([]);
    const client = await env.client(h());
    expect(await client.send("idle", { idle_duration_ms: 1000, idle_reason: "waiting" })).toEqual({ decision: "allow" });
  });

  env.item(46, "an idle request without idle_duration_ms -> -32603 Handler error:", async () => {
    const s = env.session("i46");
    const wire = await env.wire(h());
    const id = wire.id("e");
    expectError(await wire.call(eventRequest(id, "idle", { idle_reason: "no input" }, s)), id, -32603, {
      prefix: "Handler error: Serialization error:",
      contains: ["idle_duration_ms"],
    });
    const id2 = wire.id("e");
    expectError(await wire.call(eventRequest(id2, "idle", { idle_duration_ms: 1.5, idle_reason: "x" }, s)), id2, -32603, {
      prefix: "Handler error:",
    });
  });

  env.item(
    47,
    "context_perception without a handler -> -32603 Handler error: Capability not supported: Context perception not supported",
    async () => {
      const s = env.session("i47");
      const wire = await env.wire(h());
      const id = wire.id("e");
      const response = await wire.call(eventRequest(id, "context_perception", validPayload("context_perception", s), s));
      expectError(response, id, -32603, NOT_SUPPORTED.context_perception!);
    },
  );

  env.item(
    48,
    "memory_recall, planning, reasoning, rate_limit, confirmation, intent_detection without handlers -> their §7.9 errors",
    async () => {
      const s = env.session("i48");
      const wire = await env.wire(h());
      for (const type of ["memory_recall", "planning", "reasoning", "rate_limit", "confirmation", "intent_detection"] as EventType[]) {
        const id = wire.id(type);
        expectError(await wire.call(eventRequest(id, type, validPayload(type, s), s)), id, -32603, NOT_SUPPORTED[type]!);
      }
      expect(await wire.log(s)).toEqual([]);
    },
  );

  env.item(50, "a generic handler failure on a single event -> -32603 Handler error:", async () => {
    const s = env.session("i50");
    const wire = await env.wire(h());
    for (const type of ["pre_action", "pre_prompt"]) {
      const id = wire.id(type);
      expectError(
        await wire.call(eventRequest(id, type, { script: { throw: "scripted failure" } }, s)),
        id,
        -32603,
        "Handler error: scripted failure",
      );
    }
    const records = await wire.log(s);
    expect(records.map((r) => r.outcome)).toEqual(["error", "error"]);
    const client = await env.client(h());
    const failure = await client.send("pre_action", { script: { throw: "boom" } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(AhpError.isInstance(failure), String(failure)).toBe(true);
    expect((failure as AhpError).code).toBe(-32603);
    expect((failure as AhpError).message).toBe("Event failed: Handler error: boom");
  });
}

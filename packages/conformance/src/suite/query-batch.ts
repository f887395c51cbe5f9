/** §17 items 51–64: ahp/query and ahp/batch. */
import { SPECIALIZED_EVENT_TYPES, type EventType } from "@ahp/core";
import { expect } from "vitest";
import { FIXED_TIMESTAMP, queryParams, request, validPayload, wireEvent } from "../fixtures.js";
import type { ConformanceHarness } from "../types.js";
import type { SuiteEnv } from "./env.js";
import { clientLog, expectError, expectResult } from "./expect.js";

const notBatchable = (type: string) => `Event type ${type} cannot be batched because it does not return a generic Decision`;

export function registerQueryAndBatchChecks(env: SuiteEnv, h: () => ConformanceHarness): void {
  env.item(51, "ahp/query with all four members reaches the query handler; the result has answer", async () => {
    const s = env.session("i51");
    const wire = await env.wire(h());
    const params = queryParams(s, "approval_check", { question: "May I wipe the build cache?", path: "build/" });
    const id = wire.id("q");
    const result = expectResult(await wire.call(request(id, "ahp/query", params)), id);
    expect(result).toStrictEqual({ answer: { query_type: "approval_check", payload: params.payload } });
    const scripted = { answer: "no", reason: "cache is shared with another run", alternatives: ["clean only stale entries"] };
    const id2 = wire.id("q");
    const result2 = expectResult(
      await wire.call(request(id2, "ahp/query", queryParams(s, "approval_check", { script: { response: scripted } }))),
      id2,
    );
    expect(result2).toStrictEqual(scripted);
    const id3 = wire.id("q");
    expect(expectResult(await wire.call(request(id3, "ahp/query", queryParams(s, "anything", null))), id3)).toStrictEqual({
      answer: { query_type: "anything", payload: null },
    });
    const records = await wire.log(s);
    expect(records.map((r) => [r.handler, r.via, r.request_id])).toEqual([
      ["query", "request", id],
      ["query", "request", id2],
      ["query", "request", id3],
    ]);
    expect(records[0]!.query).toEqual(params);
    const client = await env.client(h());
    const answer = await client.query("approval_check", { script: { response: scripted } });
    expect(answer).toEqual(scripted);
  });

  env.item(53, "ahp/query missing query_type -> -32602 Invalid params:", async () => {
    const s = env.session("i53");
    const wire = await env.wire(h());
    for (const missing of ["query_type", "payload", "session_id", "agent_id"]) {
      const params = queryParams(s, "approval_check", {});
      delete params[missing];
      const id = wire.id("q");
      expectError(await wire.call(request(id, "ahp/query", params)), id, -32602, { prefix: "Invalid params:", contains: [missing] });
    }
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(54, 'ahp/batch with "events": [] -> {"decisions":[]}', async () => {
    const wire = await env.wire(h());
    const id = wire.id("b");
    expect(expectResult(await wire.call(request(id, "ahp/batch", { events: [] })), id)).toStrictEqual({ decisions: [] });
    const client = await env.client(h());
    expect(await client.batch([])).toEqual([]);
  });

  env.item(55, "a batch of N batchable events -> exactly N decisions in submission order", async () => {
    const s = env.session("i55");
    const wire = await env.wire(h());
    const types: EventType[] = ["pre_action", "pre_prompt", "post_action", "session_start", "error", "pre_action"];
    // Later elements finish first: the order of the answer must still be the order of submission.
    const decisions = types.map((_, i) =>
      i % 2 === 0 ? { decision: "block", reason: `slot ${i}` } : { decision: "defer", retry_after_ms: 100 * i, reason: `slot ${i}` },
    );
    const events = types.map((type, i) => wireEvent(type, { script: { decision: decisions[i], delay_ms: (types.length - i) * 15 } }, s));
    const id = wire.id("b");
    expect(expectResult(await wire.call(request(id, "ahp/batch", { events })), id)).toStrictEqual({ decisions });
    const records = await wire.log(s);
    expect(records.map((r) => [r.via, r.batch_index, r.batch_size, r.request_id, r.event_type])).toEqual(
      types.map((type, i) => ["batch", i, types.length, id, type]),
    );
    const client = await env.client(h());
    const answer = await client.batch(events.map((e) => ({ ...e, session_id: client.sessionId })) as never);
    expect(answer).toEqual(decisions);
  });

  env.item(
    56,
    "a batch of 101 events with the default config -> -32602 Batch size 101 exceeds configured limit 100, no handler call",
    async () => {
      const s = env.session("i56");
      const wire = await env.wire(h());
      const events = Array.from({ length: 101 }, () => wireEvent("pre_action", {}, s));
      const id = wire.id("b");
      expectError(await wire.call(request(id, "ahp/batch", { events })), id, -32602, "Batch size 101 exceeds configured limit 100");
      expect(await wire.log(s)).toEqual([]);
      const id2 = wire.id("b");
      const full = expectResult(await wire.call(request(id2, "ahp/batch", { events: events.slice(1) })), id2) as { decisions: unknown[] };
      expect(full.decisions).toHaveLength(100);
    },
  );

  env.item(57, "a batch containing idle (or any specialized event) -> -32602 ... cannot be batched", async () => {
    const s = env.session("i57");
    const wire = await env.wire(h());
    expect(SPECIALIZED_EVENT_TYPES).toHaveLength(8);
    for (const type of SPECIALIZED_EVENT_TYPES) {
      const events = [wireEvent("pre_action", {}, s), wireEvent(type, validPayload(type, s), s)];
      const id = wire.id(type);
      expectError(await wire.call(request(id, "ahp/batch", { events })), id, -32602, notBatchable(type));
    }
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(58, "a batch containing a query or handshake event -> -32602 ... cannot be batched ...", async () => {
    const s = env.session("i58");
    const wire = await env.wire(h());
    for (const type of ["query", "handshake"]) {
      const id = wire.id(type);
      expectError(await wire.call(request(id, "ahp/batch", { events: [wireEvent(type, {}, s)] })), id, -32602, notBatchable(type));
    }
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(59, "a batch with post_action, heartbeat and a valid run_lifecycle is accepted; each gets a generic Decision", async () => {
    const s = env.session("i59");
    const wire = await env.wire(h());
    const types = ["post_action", "heartbeat", "run_lifecycle", "task_list", "verification", "success"] as const;
    const events = types.map((type) => wireEvent(type, validPayload(type, s), s));
    const id = wire.id("b");
    expect(expectResult(await wire.call(request(id, "ahp/batch", { events })), id)).toStrictEqual({
      decisions: types.map(() => ({ decision: "allow" })),
    });
    const records = await wire.log(s);
    // Inside a batch the generic handler answers them, not the notification handler.
    expect(records.map((r) => [r.handler, r.via, r.event_type])).toEqual(types.map((t) => ["event", "batch", t]));
  });

  env.item(60, 'a handler failure for one batch element -> {"decision":"block","reason":"Handler error: …"} for it only', async () => {
    const s = env.session("i60");
    const wire = await env.wire(h());
    const modify = { decision: "modify", modified_payload: { command: "ls" } };
    const events = [
      wireEvent("pre_action", {}, s),
      wireEvent("pre_action", { script: { throw: "scripted failure" } }, s),
      wireEvent("post_action", { script: { decision: modify } }, s),
    ];
    const id = wire.id("b");
    const result = expectResult(await wire.call(request(id, "ahp/batch", { events })), id);
    expect(result).toStrictEqual({
      decisions: [{ decision: "allow" }, { decision: "block", reason: "Handler error: scripted failure" }, modify],
    });
    const records = await wire.log(s);
    expect(records.map((r) => r.outcome)).toEqual(["ok", "error", "ok"]);
  });

  env.item(61, "one over-deep element fails the whole batch with -32602 Invalid event:", async () => {
    const s = env.session("i61");
    const wire = await env.wire(h());
    const events = [wireEvent("pre_action", {}, s), wireEvent("pre_action", {}, s, { depth: 11 })];
    const id = wire.id("b");
    expectError(await wire.call(request(id, "ahp/batch", { events })), id, -32602, {
      prefix: "Invalid event:",
      contains: ["exceeds configured max depth 10"],
    });
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(62, "one invalid task_list element fails the whole batch with -32602 Invalid event:", async () => {
    const s = env.session("i62");
    const wire = await env.wire(h());
    const badTasks = {
      run_id: "run-1",
      session_id: s,
      updated_at: FIXED_TIMESTAMP,
      tasks: [{ id: "t1", title: "x", status: "InProgress" }],
    };
    for (const bad of [badTasks, { run_id: "run-1", session_id: s, updated_at: FIXED_TIMESTAMP }]) {
      const events = [wireEvent("pre_action", {}, s), wireEvent("task_list", bad, s)];
      const id = wire.id("b");
      expectError(await wire.call(request(id, "ahp/batch", { events })), id, -32602, { prefix: "Invalid event:" });
    }
    expect(await wire.log(s)).toEqual([]);
  });

  env.item(63, "[Q] events before an invalid batch element are not handled (Recommended §11.5: validate first)", async () => {
    const s = env.session("i63");
    const wire = await env.wire(h());
    const events = [
      wireEvent("pre_action", {}, s),
      wireEvent("post_action", {}, s),
      wireEvent("pre_prompt", {}, s),
      wireEvent("run_lifecycle", {}, s),
    ];
    const id = wire.id("b");
    expectError(await wire.call(request(id, "ahp/batch", { events })), id, -32602, { prefix: "Invalid event:", contains: ["run_id"] });
    const client = await env.client(h());
    const failed = await client
      .batch([
        {
          event_type: "pre_action",
          session_id: client.sessionId,
          agent_id: client.agentId,
          timestamp: FIXED_TIMESTAMP,
          depth: 0,
          payload: {},
        },
        {
          event_type: "task_list",
          session_id: client.sessionId,
          agent_id: client.agentId,
          timestamp: FIXED_TIMESTAMP,
          depth: 0,
          payload: {},
        },
      ])
      .then(
        () => "resolved",
        (error: Error) => error.message,
      );
    expect(failed).toMatch(/^Batch failed: Invalid event:/);
    expect(await wire.log(s), "no handler ran for the elements before the invalid one").toEqual([]);
    expect(await clientLog(env, client, { handler: "event" })).toEqual([]);
  });

  env.item(64, "ahp/batch params without events -> -32602 Invalid params:", async () => {
    const wire = await env.wire(h());
    for (const params of [{}, { events: null }, { events: "pre_action" }, { events: [{ event_type: "pre_action" }] }, null]) {
      const id = wire.id("b");
      expectError(await wire.call(request(id, "ahp/batch", params)), id, -32602, { prefix: "Invalid params:" });
    }
  });
}

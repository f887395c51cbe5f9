/** §17 items 1–19: JSON-RPC envelope, framing and handshake. */
import { expect } from "vitest";
import { handshakeParams, notification, queryParams, request, validPayload, wireEvent } from "../fixtures.js";
import type { ConformanceHarness } from "../types.js";
import { isRecord } from "../wire.js";
import type { SuiteEnv } from "./env.js";
import { expectError, expectRawSilence, expectResult, frameJson, rawExchange, responsesTo, sendUnanswered } from "./expect.js";

const DEFAULT_CAPABILITIES = ["pre_action", "post_action", "pre_prompt", "query", "batch", "run_lifecycle", "task_list", "verification"];

export function registerEnvelopeChecks(env: SuiteEnv, h: () => ConformanceHarness): void {
  env.item(1, "a request (string id) gets exactly one response with that id and jsonrpc 2.0", async () => {
    const s = env.session("i1");
    const wire = await env.wire(h());
    const requests = [
      request(wire.id("hs"), "ahp/handshake", handshakeParams(s)),
      request(wire.id("ev"), "ahp/event", wireEvent("pre_action", validPayload("pre_action"), s)),
      request(wire.id("qu"), "ahp/query", queryParams(s, "approval_check", { question: "May I?" })),
      request(wire.id("ba"), "ahp/batch", { events: [wireEvent("pre_prompt", {}, s)] }),
      request(wire.id("er"), "ahp/nope", {}),
    ];
    const start = wire.mark();
    for (const message of requests) {
      const response = await wire.call(message);
      expect(response.jsonrpc).toBe("2.0");
      expect(response.id).toBe(message.id);
    }
    // Once the harness answered a later query on this connection, any duplicate would have arrived.
    await wire.log(s);
    for (const message of requests) expect(responsesTo(wire, message.id, start), `responses to ${message.id}`).toHaveLength(1);
  });

  env.item(2, 'a response never carries both result and error, and never "result": null', async () => {
    const s = env.session("i2");
    const wire = await env.wire(h());
    const ev = (payload: unknown) => wireEvent("pre_action", payload, s);
    const cases: Array<Record<string, unknown> & { id: string }> = [
      request(wire.id("ok"), "ahp/event", ev({})),
      request(wire.id("null"), "ahp/event", ev({ script: { result: null } })),
      request(wire.id("notdecision"), "ahp/event", ev({ script: { result: { verdict: "fine" } } })),
      request(wire.id("throw"), "ahp/event", ev({ script: { throw: "scripted failure" } })),
      request(wire.id("qnull"), "ahp/query", queryParams(s, "approval_check", { script: { result: null } })),
      request(wire.id("qanswer"), "ahp/query", queryParams(s, "approval_check", { script: { response: { answer: null } } })),
      request(wire.id("hs"), "ahp/handshake", handshakeParams(s, { protocol_version: "3.0" })),
      request(wire.id("batch"), "ahp/batch", { events: [] }),
      request(wire.id("nope"), "ahp/nope", {}),
    ];
    const responses = await Promise.all(cases.map((c) => wire.call(c)));
    for (const response of responses) {
      const hasResult = "result" in response;
      const hasError = "error" in response;
      expect(hasResult !== hasError, `exactly one of result/error in ${JSON.stringify(response)}`).toBe(true);
      if (hasResult) expect(response.result, JSON.stringify(response)).not.toBeNull();
    }
    // A handler returning null (or a non-decision) is refused by the server, not sent as a result.
    expectError(responses[1], cases[1]!.id, -32603, { prefix: "Handler error:" });
    expectError(responses[2], cases[2]!.id, -32603, { prefix: "Handler error:" });
    expectError(responses[4], cases[4]!.id, -32603, { prefix: "Handler error:" });
    // An answer that is null inside a result object is fine.
    expect(expectResult(responses[5], cases[5]!.id)).toEqual({ answer: null });
  });

  env.item(3, "unknown request method ahp/nope -> -32601 Method not found", async () => {
    const wire = await env.wire(h());
    for (const method of ["ahp/nope", "ahp/control", "AHP/EVENT", "rpc.discover"]) {
      const id = wire.id("m");
      expectError(await wire.call(request(id, method, {})), id, -32601, "Method not found");
    }
  });

  env.item(4, "request method harness/event (v1) -> -32601", async () => {
    const wire = await env.wire(h());
    const params = { event_type: "pre_tool_use", payload: { tool_name: "bash" }, meta: { depth: 0 } };
    const id = wire.id("v1");
    expectError(await wire.call(request(id, "harness/event", params)), id, -32601, "Method not found");
  });

  env.item(5, "a notification whose method is not ahp/event produces no output and does not stop the server", async () => {
    const s = env.session("i5");
    const wire = await env.wire(h());
    await sendUnanswered(env, h(), wire, s, notification("ahp/handshake", handshakeParams(s)), "ignored");
    await sendUnanswered(env, h(), wire, s, notification("ahp/query", queryParams(s, "approval_check", {})), "ignored");
    await sendUnanswered(env, h(), wire, s, notification("ahp/nope", {}), "ignored");
    const id = wire.id("after");
    const result = expectResult(await wire.call(request(id, "ahp/handshake", handshakeParams(s))), id);
    expect(result).toMatchObject({ protocol_version: "2.4" });
    const records = await wire.log(s);
    expect(records.map((r) => [r.handler, r.request_id])).toEqual([["handshake", id]]);
  });

  env.item(6, "[Q] a request with a numeric id is answered with the numeric id echoed (Recommended §3.4)", async () => {
    const s = env.session("i6");
    const wire = await env.wire(h());
    expect(expectResult(await wire.call(request(7, "ahp/event", wireEvent("pre_action", {}, s))), 7)).toEqual({ decision: "allow" });
    expect(expectResult(await wire.call(request(0, "ahp/handshake", handshakeParams(s))), 0)).toMatchObject({ protocol_version: "2.4" });
    expectError(await wire.call(request(42, "ahp/nope", {})), 42, -32601, "Method not found");
    const records = await wire.log(s);
    expect(records.filter((r) => r.handler === "event").map((r) => r.request_id)).toEqual([7]);
  });

  env.item(
    7,
    "a message without params: with an id -> -32600 Invalid JSON-RPC message with that id; without an id -> nothing",
    async (ctx) => {
      const s = env.session("i7");
      const wire = await env.wire(h());
      const id = wire.id("np");
      expectError(await wire.call({ jsonrpc: "2.0", id, method: "ahp/event" }), id, -32600, "Invalid JSON-RPC message");
      expectError(await wire.call({ jsonrpc: "2.0", id: 99, method: "ahp/handshake" }), 99, -32600, "Invalid JSON-RPC message");
      const withoutId = { jsonrpc: "2.0", method: "ahp/event" };
      if (env.kind === "stream") {
        await sendUnanswered(env, h(), wire, s, withoutId, "ignored");
      } else {
        const raw = await env.raw(h(), ctx);
        const frame = await rawExchange(env, raw, JSON.stringify(withoutId));
        if ((env.options.httpInvalidMessage ?? "reference") === "reference") {
          expect(frame?.status).toBe(200);
          expectError(frameJson(frame), "", -32600, "Invalid JSON-RPC message");
        } else {
          expect(frame?.status).toBe(204);
          expect(frame?.text).toBe("");
        }
      }
      expect(await wire.log(s)).toEqual([]);
    },
  );

  env.item(8, "an unparseable frame is answered -32700 (id null) and the next valid request is answered", async (ctx) => {
    const raw = await env.raw(h(), ctx);
    const s = env.session("i8");
    const valid = (id: string) => JSON.stringify(request(id, "ahp/event", wireEvent("pre_action", {}, s)));
    const framing = env.framing(raw);
    const broken = '{"jsonrpc":"2.0","id":"broken-1","method":"ahp/event","params":{';
    const first = await rawExchange(env, raw, broken);
    if (framing === "http") expect(first?.status).toBe(env.options.httpParseErrorStatus ?? 400);
    expectError(frameJson(first, "the parse error"), null, -32700, { prefix: "Parse error" });
    const second = await rawExchange(env, raw, valid("after-broken"));
    if (framing === "http") expect(second?.status).toBe(200);
    expect(expectResult(frameJson(second, "the next answer"), "after-broken")).toEqual({ decision: "allow" });
    if (framing === "ndjson") {
      // Two lines in one write: the broken one first.
      await raw.send(`this is not JSON\n${valid("after-text")}`);
      expectError(frameJson(await raw.next(env.timeoutMs)), null, -32700, { prefix: "Parse error" });
      expectResult(frameJson(await raw.next(env.timeoutMs)), "after-text");
    }
  });

  env.item(9, "blank lines, surrounding whitespace and \\r\\n line endings are tolerated", async (ctx) => {
    const raw = await env.raw(h(), ctx);
    const s = env.session("i9");
    const req = (id: string) => JSON.stringify(request(id, "ahp/event", wireEvent("pre_action", {}, s)));
    const framing = env.framing(raw);
    if (framing === "ndjson") {
      // Blank lines (also "\r" only and whitespace only), then a request padded with spaces and ending "\r\n".
      await raw.send(`\n   \n\r\n\t \r\n  ${req("ws-1")} \t\r`);
      expectResult(frameJson(await raw.next(env.timeoutMs), "the answer to ws-1"), "ws-1");
      await raw.send(`${req("crlf-1")}\r\n${req("crlf-2")}\r`);
      const ids = [frameJson(await raw.next(env.timeoutMs)).id, frameJson(await raw.next(env.timeoutMs)).id];
      expect(ids.sort()).toEqual(["crlf-1", "crlf-2"]);
      // Nothing was sent back for the blank lines.
      await expectRawSilence(env, raw, s);
    } else {
      const frame = await rawExchange(env, raw, `\r\n  ${req("ws-1")}  \r\n`);
      if (framing === "http") expect(frame?.status).toBe(200);
      expectResult(frameJson(frame, "the answer to ws-1"), "ws-1");
    }
  });

  env.item(
    10,
    '[Q] a request with "jsonrpc":"1.0" (or any value but "2.0") -> -32600 Invalid JSON-RPC message with its id, no handler call (the reference does not check the value)',
    async () => {
      const s = env.session("i10");
      const wire = await env.wire(h());
      for (const version of ["1.0", "2", "2.00", ""]) {
        const id = wire.id("v10");
        const response = await wire.call({ jsonrpc: version, id, method: "ahp/event", params: wireEvent("pre_action", {}, s) });
        expectError(response, id, -32600, "Invalid JSON-RPC message");
      }
      const withoutVersion = wire.id("v10");
      expectError(
        await wire.call({ id: withoutVersion, method: "ahp/event", params: wireEvent("pre_action", {}, s) }),
        withoutVersion,
        -32600,
        "Invalid JSON-RPC message",
      );
      expect(await wire.log(s)).toEqual([]);
    },
  );

  env.extra(
    "large-id",
    "an integer id past 2^53 is echoed as the JSON text it was sent as (2^70 as 1180591620717411303424), in results, errors and ahp/batch",
    async (ctx) => {
      const raw = await env.raw(h(), ctx);
      const s = env.session("large-id");
      const event = JSON.stringify(wireEvent("pre_action", {}, s));
      const cases: Array<[string, string]> = [
        ["1180591620717411303424", `"method":"ahp/event","params":${event}`],
        ["-9007199254740993", '"method":"ahp/nope","params":{}'],
        ["9007199254740993", `"method":"ahp/batch","params":{"events":[${event}]}`],
        ["18446744073709551617", `"method":"ahp/event","params":${event}`],
      ];
      for (const [id, rest] of cases) {
        const frame = await rawExchange(env, raw, `{"jsonrpc":"2.0","id":${id},${rest}}`);
        expect(frame, `the answer to id ${id}`).toBeDefined();
        // The id's own text, not the rounded number JSON.parse makes of it (1.1805916207174113e+21).
        expect(frame!.text).toMatch(new RegExp(`^\\{"jsonrpc":"2\\.0","id":${id}[,}]`));
      }
      // A refused envelope still echoes the id exactly.
      const refused = await rawExchange(env, raw, `{"jsonrpc":"1.0","id":1180591620717411303424,"method":"ahp/event","params":${event}}`);
      expect(refused?.text).toMatch(/^\{"jsonrpc":"2\.0","id":1180591620717411303424,"error":\{"code":-32600,/);
    },
  );

  env.item(11, 'handshake "2.4" succeeds with protocol_version, harness_info{name,version,capabilities} and config', async () => {
    const s = env.session("i11");
    const client = await env.client(h(), {}, { capabilities: ["pre_action", "post_action"] });
    const answer = client.handshakeResponse!;
    expect(answer.protocol_version).toBe("2.4");
    expect(typeof answer.harness_info.name).toBe("string");
    expect(typeof answer.harness_info.version).toBe("string");
    expect(Array.isArray(answer.harness_info.capabilities)).toBe(true);
    expect(answer.config).toBeTypeOf("object");
    const wire = await env.wire(h());
    const id = wire.id("hs");
    const result = expectResult(await wire.call(request(id, "ahp/handshake", handshakeParams(s))), id) as Record<string, unknown>;
    expect(result.protocol_version).toBe("2.4");
    expect(result.harness_info).toMatchObject({ name: expect.any(String), version: expect.any(String), capabilities: expect.any(Array) });
    expect(isRecord(result.config)).toBe(true);
    const records = await wire.log(s);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ handler: "handshake", via: "request", request_id: id, handshake: handshakeParams(s) });
  });

  env.item(12, 'handshake "2.0", "2" and "2.99" (and "2.x.y") succeed; the answer is always "2.4"', async () => {
    const s = env.session("i12");
    const wire = await env.wire(h());
    for (const version of ["2.0", "2", "2.99", "2.x.y", "2.4.0"]) {
      const id = wire.id("hs");
      const result = expectResult(await wire.call(request(id, "ahp/handshake", handshakeParams(s, { protocol_version: version }))), id);
      expect(result, `answer to ${version}`).toMatchObject({ protocol_version: "2.4" });
    }
  });

  env.item(13, 'handshake "3.0" -> -32000 Unsupported protocol version: 3.0', async () => {
    const s = env.session("i13");
    const wire = await env.wire(h());
    const id = wire.id("hs");
    const response = await wire.call(request(id, "ahp/handshake", handshakeParams(s, { protocol_version: "3.0" })));
    expectError(response, id, -32000, "Unsupported protocol version: 3.0");
    expect(await wire.log(s), "the handshake handler is not called").toEqual([]);
  });

  env.item(14, 'handshake "1.9", "", "02.4" (and " 2.4", "v2.4", "1.0") -> -32000', async () => {
    const s = env.session("i14");
    const wire = await env.wire(h());
    for (const version of ["1.9", "", "02.4", " 2.4", "v2.4", "1.0", "22.0"]) {
      const id = wire.id("hs");
      const response = await wire.call(request(id, "ahp/handshake", handshakeParams(s, { protocol_version: version })));
      expectError(response, id, -32000, `Unsupported protocol version: ${version}`);
    }
  });

  env.item(15, "handshake without agent_info.capabilities -> -32602 Invalid params: naming capabilities", async () => {
    const s = env.session("i15");
    const wire = await env.wire(h());
    const id = wire.id("hs");
    const params = handshakeParams(s, { agent_info: { framework: "x", version: "1" } });
    expectError(await wire.call(request(id, "ahp/handshake", params)), id, -32602, {
      prefix: "Invalid params:",
      contains: ["capabilities"],
    });
  });

  env.item(16, "handshake without session_id or agent_id -> -32602 Invalid params:", async () => {
    const s = env.session("i16");
    const wire = await env.wire(h());
    for (const missing of ["session_id", "agent_id", "protocol_version", "agent_info"]) {
      const params = handshakeParams(s);
      delete params[missing];
      const id = wire.id("hs");
      expectError(await wire.call(request(id, "ahp/handshake", params)), id, -32602, { prefix: "Invalid params:", contains: [missing] });
    }
    const id = wire.id("hs");
    expectError(await wire.call(request(id, "ahp/handshake", null)), id, -32602, { prefix: "Invalid params:" });
  });

  env.item(
    17,
    "the default harness answers ahp-server 2.4.0, the 8 default capabilities, the default config and no session_token",
    async () => {
      const s = env.session("i17");
      const wire = await env.wire(h());
      const id = wire.id("hs");
      const result = expectResult(await wire.call(request(id, "ahp/handshake", handshakeParams(s))), id);
      expect(result).toStrictEqual({
        protocol_version: "2.4",
        harness_info: { name: "ahp-server", version: "2.4.0", capabilities: DEFAULT_CAPABILITIES },
        config: { timeout_ms: 10000, batch_size: 100, max_depth: 10 },
      });
    },
  );

  env.item(19, "an ahp/event request is processed without any prior handshake", async () => {
    const s = env.session("i19");
    const wire = await env.wire(h(), { fresh: true });
    const id = wire.id("first");
    expect(expectResult(await wire.call(request(id, "ahp/event", wireEvent("pre_action", validPayload("pre_action"), s))), id)).toEqual({
      decision: "allow",
    });
    const records = await wire.log(s);
    expect(records.map((r) => r.handler)).toEqual(["event"]);
  });
}

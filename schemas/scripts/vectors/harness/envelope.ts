/** JSON-RPC envelope: classification of messages, ids, methods, unknown members (spec §3, §4.5; §17 items 1–10). */
import {
  ALLOW,
  ALIVE_ID,
  aliveRequest,
  aliveResponse,
  area,
  err,
  event,
  eventRequest,
  handshakeParams,
  json,
  notification,
  ok,
  queryParams,
  request,
  text,
} from "../dsl.js";
import { HANDSHAKE_RESULT } from "./handshake.js";

const { cases, simple } = area("envelope");

simple("one-response-per-request", {
  title: "Each request of every method gets exactly one response, with its id and jsonrpc 2.0",
  checklist: [1, 2],
  spec: ["§3.3", "§3.4"],
  send: [
    json(request("r-handshake", "ahp/handshake", handshakeParams())),
    eventRequest("r-event", "pre_action", { tool_name: "shell", arguments: { command: "npm test" } }),
    json(request("r-query", "ahp/query", queryParams())),
    json(request("r-batch", "ahp/batch", { events: [event("pre_prompt", { prompt: "hi" })] })),
    json(request("r-nope", "ahp/nope", {})),
  ],
  expect: [
    ok("r-handshake", HANDSHAKE_RESULT),
    ok("r-event", ALLOW),
    err("r-query", -32603, "Handler error: Capability not supported: Query not supported"),
    ok("r-batch", { decisions: [ALLOW] }),
    err("r-nope", -32601, "Method not found"),
  ],
});

simple("unknown-method", {
  title: "Unknown request methods get -32601 Method not found (names are case-sensitive; ahp/control does not exist in 2.4)",
  checklist: [3],
  spec: ["§4.5", "§15.2"],
  send: [
    json(request("m-1", "ahp/nope", {})),
    json(request("m-2", "ahp/control", { action: "pause" })),
    json(request("m-3", "AHP/EVENT", event("pre_action", {}))),
    json(request("m-4", "rpc.discover", {})),
  ],
  expect: [
    err("m-1", -32601, "Method not found"),
    err("m-2", -32601, "Method not found"),
    err("m-3", -32601, "Method not found"),
    err("m-4", -32601, "Method not found"),
  ],
});

simple("v1-method", {
  title: "The AHP 1.x method harness/event gets -32601",
  checklist: [4],
  spec: ["§4.5", "§15.1"],
  send: [json(request("v1-1", "harness/event", { event_type: "pre_tool_use", payload: { tool_name: "bash" }, meta: { depth: 0 } }))],
  expect: [err("v1-1", -32601, "Method not found")],
});

simple("notification-other-method", {
  title: "Notifications of other methods than ahp/event produce no output and do not stop the harness",
  checklist: [5],
  spec: ["§3.2", "§11.3"],
  send: [
    json(notification("ahp/handshake", handshakeParams())),
    json(notification("ahp/query", queryParams())),
    json(notification("ahp/batch", { events: [] })),
    json(notification("ahp/nope", {})),
    aliveRequest(),
  ],
  expect: [aliveResponse()],
});

simple("numeric-id", {
  title: "A request with a numeric id: the reference treats it as a notification; recommended: answered with the number echoed",
  checklist: [6],
  spec: ["§3.4", "§14"],
  send: [
    json(request(7, "ahp/event", event("pre_action", { tool_name: "shell" }))),
    json(request(0, "ahp/handshake", handshakeParams())),
    json(request(42, "ahp/nope", {})),
    aliveRequest(),
  ],
  outcomes: [
    {
      name: "recommended",
      note: "§3.4 Recommended server: integer ids are accepted and echoed verbatim",
      expect: [ok(7, ALLOW), ok(0, HANDSHAKE_RESULT), err(42, -32601, "Method not found"), aliveResponse()],
    },
    {
      name: "reference",
      note: "§3.4 reference: a non-string id makes the message a notification; a blocking event as a notification is dropped, other methods are ignored",
      expect: [aliveResponse()],
    },
  ],
});

simple("null-id", {
  title: 'A message with "id": null is a notification: a handshake or a blocking event gets no answer',
  checklist: [5, 23],
  spec: ["§3.4"],
  send: [
    json({ jsonrpc: "2.0", id: null, method: "ahp/handshake", params: handshakeParams() }),
    json({ jsonrpc: "2.0", id: null, method: "ahp/event", params: event("pre_action", {}) }),
    aliveRequest(),
  ],
  expect: [aliveResponse()],
});

simple("missing-params-with-id", {
  title: "A message without params that carries an id: no answer on stdio (spec), or -32600 with that id (JSON-RPC 2.0)",
  checklist: [7],
  spec: ["§3.1", "§3.4", "§11.3"],
  send: [
    json({ jsonrpc: "2.0", id: "np-1", method: "ahp/event" }),
    json({ jsonrpc: "2.0", id: "np-2", method: "ahp/handshake" }),
    aliveRequest(),
  ],
  outcomes: [
    {
      name: "reference",
      note: "§17.7: a message without params is neither request nor notification and is dropped on stdio",
      expect: [aliveResponse()],
    },
    {
      name: "json-rpc",
      note: "JSON-RPC 2.0 §5: an invalid request whose id can be read is answered -32600 Invalid JSON-RPC message with that id (this implementation; a reference agent never sends such a message)",
      expect: [err("np-1", -32600, "Invalid JSON-RPC message"), err("np-2", -32600, "Invalid JSON-RPC message"), aliveResponse()],
    },
  ],
});

simple("missing-params-without-id", {
  title: "A message without params and without id gets no answer",
  checklist: [7],
  spec: ["§3.4", "§11.3"],
  send: [json({ jsonrpc: "2.0", method: "ahp/event" }), json({ jsonrpc: "2.0", method: "ahp/handshake" }), aliveRequest()],
  expect: [aliveResponse()],
});

simple("not-a-message", {
  title: "JSON values that are neither request nor notification (no method, no jsonrpc, a response, a string, a number, {}) get no answer",
  spec: ["§3.4", "§11.3"],
  send: [
    json({}),
    json("ahp/event"),
    json(42),
    json(null),
    json({ jsonrpc: "2.0", id: "resp-1", result: { decision: "allow" } }),
    json({ jsonrpc: "2.0", id: "resp-2", error: { code: -32603, message: "x" } }),
    aliveRequest(),
  ],
  expect: [aliveResponse()],
});

simple("invalid-envelope-with-id", {
  title:
    "A message with an id but no jsonrpc member, or a method that is not a string: dropped (spec) or -32600 with the id (JSON-RPC 2.0)",
  spec: ["§3.4", "§11.3"],
  send: [
    json({ id: "inv-1", method: "ahp/event", params: event("pre_action", {}) }),
    json({ jsonrpc: "2.0", id: "inv-2", method: 7, params: {} }),
    aliveRequest(),
  ],
  outcomes: [
    { name: "reference", note: "§3.4: neither request nor notification, dropped on stdio", expect: [aliveResponse()] },
    {
      name: "json-rpc",
      note: "JSON-RPC 2.0 §5: -32600 Invalid JSON-RPC message with the id that could be read (this implementation)",
      expect: [err("inv-1", -32600, "Invalid JSON-RPC message"), err("inv-2", -32600, "Invalid JSON-RPC message"), aliveResponse()],
    },
  ],
});

simple("top-level-array", {
  title: "A JSON-RPC batch array is not supported: no answer, nothing processed",
  spec: ["§3.7"],
  send: [
    json([request("arr-1", "ahp/event", event("pre_action", { tool_name: "shell" })), request("arr-2", "ahp/nope", {})]),
    aliveRequest(),
  ],
  expect: [aliveResponse()],
});

simple("jsonrpc-1.0", {
  title: 'A request with "jsonrpc": "1.0" is processed normally by the reference (the value is not checked)',
  checklist: [10],
  spec: ["§3.1", "§14"],
  send: [json({ jsonrpc: "1.0", id: "v10", method: "ahp/event", params: event("pre_action", { tool_name: "shell" }) })],
  outcomes: [
    { name: "reference", note: "§3.1: the reference server does not check the jsonrpc value", expect: [ok("v10", ALLOW)] },
    {
      name: "json-rpc",
      note: "a strict JSON-RPC 2.0 server refuses the version with -32600 and the id (this implementation)",
      expect: [err("v10", -32600, { prefix: "Invalid" })],
    },
  ],
});

simple("large-integer-id", {
  title: "An integer id past 2^53 is echoed as the JSON number it was sent as, digit for digit (2^70 + 1, -(2^53 + 1))",
  checklist: [6],
  spec: ["§3.4", "§3.9"],
  send: [
    text(
      `{"jsonrpc":"2.0","id":1180591620717411303425,"method":"ahp/event","params":${JSON.stringify(event("pre_action", { tool_name: "shell" }))}}`,
    ),
    text('{"jsonrpc":"2.0","id":-9007199254740993,"method":"ahp/nope","params":{}}'),
    text(
      `{"jsonrpc":"2.0","id":18446744073709551617,"method":"ahp/batch","params":{"events":[${JSON.stringify(event("pre_prompt", { prompt: "hi" }))}]}}`,
    ),
    aliveRequest(),
  ],
  outcomes: [
    {
      name: "recommended",
      note: "§3.4 Recommended server: integer ids are echoed verbatim, also those a double cannot hold (this implementation)",
      expect: [
        ok(1180591620717411303425n, ALLOW),
        err(-9007199254740993n, -32601, "Method not found"),
        ok(18446744073709551617n, { decisions: [ALLOW] }),
        aliveResponse(),
      ],
    },
    {
      name: "reference",
      note: "§3.4 reference: a non-string id makes the message a notification; nothing is answered",
      expect: [aliveResponse()],
    },
  ],
});

simple("unknown-members", {
  title: "Unknown members are ignored in the envelope, the event, the payload and the handshake",
  spec: ["§3.5"],
  send: [
    json({
      ...request("u-1", "ahp/event", { ...event("pre_action", { tool_name: "blocked_tool", extra: 1 }), trace: "t-1" }),
      extension: { x: 1 },
    }),
    json(
      request("u-2", "ahp/handshake", {
        ...handshakeParams(),
        agent_info: { framework: "f", version: "1", capabilities: [], extra: true },
        future: 1,
      }),
    ),
  ],
  expect: [
    ok("u-1", { decision: "block", reason: "blocked by the vector profile", metadata: { rule: "block-tool" } }),
    ok("u-2", HANDSHAKE_RESULT),
  ],
});

simple("string-ids", {
  title: "Any string is a valid id and is echoed exactly (empty, UUID, unicode, escapes)",
  checklist: [1],
  spec: ["§3.4"],
  send: [
    eventRequest("", "pre_action", {}),
    eventRequest("6f1c2a7e-0b7d-4c11-9a51-2f4f5f8b9e10", "pre_action", {}),
    eventRequest('ïd ✓ "quoted" \\ back', "pre_action", {}),
    eventRequest("0", "pre_action", {}),
  ],
  expect: [ok("", ALLOW), ok("6f1c2a7e-0b7d-4c11-9a51-2f4f5f8b9e10", ALLOW), ok('ïd ✓ "quoted" \\ back', ALLOW), ok("0", ALLOW)],
});

simple("keeps-reading-after-errors", {
  title: "After error responses and ignored lines the harness keeps reading and answering",
  checklist: [5, 8],
  spec: ["§11.3", "§13.1"],
  send: [
    json(request("k-1", "ahp/nope", {})),
    json({ jsonrpc: "2.0", method: "ahp/event", params: event("pre_tool_use", {}) }),
    json(request("k-2", "ahp/event", event("post_action", {}))),
    text("{}"),
    aliveRequest(),
  ],
  expect: [
    err("k-1", -32601, "Method not found"),
    err("k-2", -32602, "Fire-and-forget event post_action must be sent as a notification"),
    aliveResponse(),
  ],
});

export { ALIVE_ID };
export default cases;

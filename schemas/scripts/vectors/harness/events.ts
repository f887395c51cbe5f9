/** ahp/event: every event type as request and as notification, the event envelope, depth, the generic decisions (spec §4.2, §5, §6, §11.3; §17 items 19–31, 42–44). */
import { EVENT_TABLE, EVENT_TYPES, type EventType } from "../../../../packages/core/src/index.js";
import { validPayload } from "../../../../packages/conformance/src/fixtures.js";
import {
  ALLOW,
  SESSION,
  aliveRequest,
  aliveResponse,
  area,
  err,
  event,
  eventNotification,
  eventRequest,
  json,
  ok,
  request,
} from "../dsl.js";
import { MAX_DEPTH, genericDecision, typedDecision } from "../profile.js";

const { cases, simple, add } = area("events");

const fireAndForget = (type: string) => `Fire-and-forget event ${type} must be sent as a notification`;
const depthError = (d: number) => `Invalid event: Protocol error: Event depth ${d} exceeds configured max depth ${MAX_DEPTH}`;

/** What the profile answers to a specialized event with the suite's valid payload (each matches a table row, idle gets its default). */
const TYPED_ANSWER: Record<string, unknown> = {
  idle: ALLOW,
  context_perception: typedDecision("perception-locate"),
  memory_recall: typedDecision("memory-build-flags"),
  planning: typedDecision("planning-parser"),
  reasoning: typedDecision("reasoning-re-act"),
  rate_limit: typedDecision("rate-tokens"),
  confirmation: typedDecision("confirm-safety"),
  intent_detection: { ...typedDecision("intent-review"), confidence: { $approx: 0.82 } },
};

const GROUPS = [
  ["generic", "the generic blocking types", (t: EventType) => EVENT_TABLE[t].blocking && !EVENT_TABLE[t].specialized],
  ["specialized", "the 8 specialized points", (t: EventType) => EVENT_TABLE[t].specialized],
  ["non-blocking", "the 10 non-blocking types", (t: EventType) => !EVENT_TABLE[t].blocking],
] as const;

// ---------------------------------------------------------------- every type as a request

for (const [group, label, member] of GROUPS) {
  const types = EVENT_TYPES.filter(member);
  const expected = types.map((type) => {
    const id = `req-${type}`;
    if (!EVENT_TABLE[type].blocking) return err(id, -32602, fireAndForget(type));
    return ok(id, EVENT_TABLE[type].specialized ? TYPED_ANSWER[type] : ALLOW);
  });
  simple(`as-request.${group}`, {
    title:
      group === "non-blocking"
        ? `Each of ${label} sent as a request (valid payload) -> -32602 Fire-and-forget event <type> must be sent as a notification`
        : group === "specialized"
          ? `Each of ${label} sent as a request (valid payload) -> its typed decision`
          : `Each of ${label} (pre_action, pre_prompt, handshake, query) sent as a request -> a generic Decision`,
    checklist: group === "non-blocking" ? [22] : group === "specialized" ? [45, 49] : [20, 21, 44],
    spec: ["§4.2", "§5.1", "§11.3"],
    send: types.map((type) => eventRequest(`req-${type}`, type, validPayload(type, SESSION))),
    expect: expected,
  });
}

// ---------------------------------------------------------------- every type as a notification

for (const [group, label, member] of GROUPS) {
  const types = EVENT_TYPES.filter(member);
  const blocking = group !== "non-blocking";
  simple(`as-notification.${group}`, {
    title: blocking
      ? `Each of ${label} sent as a notification is rejected without an answer; the harness keeps reading`
      : `Each of ${label} sent as a notification (valid payload) is accepted without an answer`,
    checklist: group === "generic" ? [23] : group === "non-blocking" ? [35, 42] : [],
    spec: ["§4.2", "§11.3", "§13.1"],
    send: [...types.map((type) => eventNotification(type, validPayload(type, SESSION))), aliveRequest()],
    expect: [aliveResponse()],
  });
}

// ---------------------------------------------------------------- the generic decision table

simple("decision.allow-default", {
  title: 'pre_action and pre_prompt without a table row -> {"decision":"allow"}; payloads are free-form',
  checklist: [20, 21, 26],
  spec: ["§6", "§9"],
  send: [
    eventRequest("d-1", "pre_action", { action_type: "tool_call", tool_name: "bash", arguments: { command: "ls" } }),
    eventRequest("d-2", "pre_prompt", { prompt: "Summarise the diff", message_count: 3 }),
    eventRequest("d-3", "pre_action", "free text"),
    eventRequest("d-4", "pre_action", [1, 2, 3]),
    eventRequest("d-5", "pre_action", null),
  ],
  expect: ["d-1", "d-2", "d-3", "d-4", "d-5"].map((id) => ok(id, ALLOW)),
});

simple("decision.block", {
  title: "block: reason and metadata",
  checklist: [20],
  spec: ["§6"],
  send: [eventRequest("d-block", "pre_action", { tool_name: "blocked_tool", arguments: { command: "rm -rf /" } })],
  expect: [ok("d-block", genericDecision("blocked_tool"))],
});

simple("decision.modify", {
  title: "modify: modified_payload replaces the payload",
  checklist: [20],
  spec: ["§6"],
  send: [eventRequest("d-modify", "pre_action", { tool_name: "modify_tool", arguments: { command: "make deploy" } })],
  expect: [
    ok("d-modify", {
      decision: "modify",
      modified_payload: { tool_name: "modify_tool", arguments: { command: "make deploy", dry_run: true } },
      metadata: { rule: "modify-tool" },
    }),
  ],
});

simple("decision.allow-with-modified-payload", {
  title: "allow with modified_payload (here: the payload itself)",
  checklist: [20],
  spec: ["§6"],
  send: [eventRequest("d-echo", "pre_action", { tool_name: "echo_tool", arguments: { path: "src/a.ts" } })],
  expect: [
    ok("d-echo", {
      decision: "allow",
      modified_payload: { tool_name: "echo_tool", arguments: { path: "src/a.ts" } },
      metadata: { rule: "echo-tool" },
    }),
  ],
});

simple("decision.defer", {
  title: "defer: retry_after_ms (an integer) and reason",
  checklist: [20],
  spec: ["§6"],
  send: [eventRequest("d-defer", "pre_action", { tool_name: "defer_tool" })],
  expect: [ok("d-defer", genericDecision("defer_tool"))],
});

simple("decision.escalate", {
  title: "escalate: reason and escalation_target",
  checklist: [20],
  spec: ["§6"],
  send: [eventRequest("d-escalate", "pre_action", { tool_name: "escalate_tool" })],
  expect: [ok("d-escalate", genericDecision("escalate_tool"))],
});

simple("decision.pre-prompt", {
  title: "pre_prompt gets every generic decision too",
  checklist: [21],
  spec: ["§6"],
  send: [
    eventRequest("p-block", "pre_prompt", { tool_name: "blocked_tool", prompt: "x" }),
    eventRequest("p-defer", "pre_prompt", { tool_name: "defer_tool", prompt: "x" }),
    eventRequest("p-escalate", "pre_prompt", { tool_name: "escalate_tool", prompt: "x" }),
  ],
  expect: [
    ok("p-block", genericDecision("blocked_tool")),
    ok("p-defer", genericDecision("defer_tool")),
    ok("p-escalate", genericDecision("escalate_tool")),
  ],
});

simple("decision.handshake-and-query-events", {
  title: "handshake and query event types sent through ahp/event are answered by the generic handler",
  checklist: [44],
  spec: ["§5.1", "§11.4", "§14"],
  send: [
    eventRequest("hq-1", "handshake", {}),
    eventRequest("hq-2", "query", { question: "may I?" }),
    eventRequest("hq-3", "query", { tool_name: "blocked_tool" }),
    eventRequest("hq-4", "handshake", { tool_name: "escalate_tool" }),
  ],
  expect: [ok("hq-1", ALLOW), ok("hq-2", ALLOW), ok("hq-3", genericDecision("blocked_tool")), ok("hq-4", genericDecision("escalate_tool"))],
});

add("decision.stateful", {
  title: "A decision may depend on earlier events of the session: the second once_tool is deferred",
  checklist: [20],
  spec: ["§6", "§11.7"],
  steps: [
    { send: [eventRequest("once-1", "pre_action", { tool_name: "once_tool" })], expect: [ok("once-1", ALLOW)] },
    {
      send: [eventRequest("once-2", "pre_action", { tool_name: "once_tool" })],
      expect: [
        ok("once-2", { decision: "defer", retry_after_ms: { $type: "integer" }, reason: "only once per session [rule: once-tool]" }),
      ],
    },
  ],
});

// ---------------------------------------------------------------- the event envelope

simple("unknown-event-type", {
  title: "An unknown or wrongly cased event_type (v1 pre_tool_use, Pre_Action) -> -32602 Invalid params: unknown variant",
  checklist: [24],
  spec: ["§5.1"],
  send: [eventRequest("t-1", "pre_tool_use", {}), eventRequest("t-2", "Pre_Action", {}), eventRequest("t-3", "PRE_ACTION", {})],
  expect: [
    err("t-1", -32602, { prefix: "Invalid params:", contains: ["unknown variant", "pre_tool_use"] }),
    err("t-2", -32602, { prefix: "Invalid params:", contains: ["unknown variant", "Pre_Action"] }),
    err("t-3", -32602, { prefix: "Invalid params:", contains: ["unknown variant", "PRE_ACTION"] }),
  ],
});

const members = ["timestamp", "payload", "session_id", "agent_id", "depth", "event_type"];
simple("missing-members", {
  title: "An event without timestamp, payload, session_id, agent_id, depth or event_type -> -32602 Invalid params: naming the member",
  checklist: [25],
  spec: ["§5"],
  send: members.map((m) => {
    const e = event("pre_action", {});
    delete e[m];
    return json(request(`miss-${m}`, "ahp/event", e));
  }),
  expect: members.map((m) => err(`miss-${m}`, -32602, { prefix: "Invalid params:", contains: [m] })),
});

simple("wrong-member-types", {
  title:
    "Members of the wrong JSON type (timestamp number, session_id null, metadata not an object, params not an object) -> -32602 Invalid params:",
  checklist: [25],
  spec: ["§5", "§3.8"],
  send: [
    json(request("wt-1", "ahp/event", { ...event("pre_action", {}), timestamp: 1780000000 })),
    json(request("wt-2", "ahp/event", { ...event("pre_action", {}), session_id: null })),
    eventRequest("wt-3", "pre_action", {}, { metadata: "trace-1" }),
    json(request("wt-4", "ahp/event", null)),
    json(request("wt-5", "ahp/event", "pre_action")),
  ],
  expect: [
    err("wt-1", -32602, { prefix: "Invalid params:", contains: ["timestamp"] }),
    err("wt-2", -32602, { prefix: "Invalid params:", contains: ["session_id"] }),
    err("wt-3", -32602, { prefix: "Invalid params:", contains: ["metadata"] }),
    err("wt-4", -32602, { prefix: "Invalid params:" }),
    err("wt-5", -32602, { prefix: "Invalid params:" }),
  ],
});

simple("payload-null", {
  title: '"payload": null is accepted for generic events; session_id and agent_id need not match the handshake; timestamp is free text',
  checklist: [26],
  spec: ["§5", "§11.1"],
  send: [
    eventRequest("pn-1", "pre_action", null),
    eventRequest("pn-2", "pre_prompt", null, { session: "never-handshaken" }),
    json(request("pn-3", "ahp/event", { ...event("pre_action", null), timestamp: "yesterday" })),
  ],
  expect: [ok("pn-1", ALLOW), ok("pn-2", ALLOW), ok("pn-3", ALLOW)],
});

const goodContext = {
  session_stats: { total_actions: 1, total_tokens: 2147483647, duration_ms: 5, error_count: 0 },
  recent_facts: [{ content: "uses pnpm", source: "lockfile", confidence: 0.8999999761581421 }],
  memory_summary: { memory_type: "episodic", total_items: 3, recent_topics: ["build"] },
  current_task: "fix the build",
  capabilities: { endpoint: "http://127.0.0.1:1" },
};
simple("context", {
  title:
    "A well-formed context is accepted; a malformed one (session_stats without total_tokens, total_tokens above i32, a fact without confidence, not an object) -> -32602 Invalid params:",
  checklist: [43],
  spec: ["§5.2"],
  send: [
    eventRequest("ctx-ok", "pre_action", {}, { context: goodContext }),
    eventRequest("ctx-empty", "pre_action", {}, { context: {} }),
    eventRequest("ctx-1", "pre_action", {}, { context: { session_stats: { total_actions: 1, duration_ms: 5, error_count: 0 } } }),
    eventRequest(
      "ctx-2",
      "pre_action",
      {},
      { context: { session_stats: { total_actions: 1, total_tokens: 2147483648, duration_ms: 5, error_count: 0 } } },
    ),
    eventRequest("ctx-3", "pre_action", {}, { context: { recent_facts: [{ content: "x", source: "y" }] } }),
    eventRequest("ctx-4", "pre_action", {}, { context: "not a context" }),
  ],
  expect: [
    ok("ctx-ok", ALLOW),
    ok("ctx-empty", ALLOW),
    err("ctx-1", -32602, { prefix: "Invalid params:", contains: ["total_tokens"] }),
    err("ctx-2", -32602, { prefix: "Invalid params:", contains: ["total_tokens"] }),
    err("ctx-3", -32602, { prefix: "Invalid params:", contains: ["confidence"] }),
    err("ctx-4", -32602, { prefix: "Invalid params:", contains: ["context"] }),
  ],
});

// ---------------------------------------------------------------- depth

simple("depth.at-limit", {
  title: `depth equal to max_depth (${MAX_DEPTH}) is accepted`,
  checklist: [27],
  spec: ["§11.3"],
  send: [eventRequest("dp-10", "pre_action", {}, { depth: MAX_DEPTH }), eventRequest("dp-0", "pre_action", {}, { depth: 0 })],
  expect: [ok("dp-10", ALLOW), ok("dp-0", ALLOW)],
});

simple("depth.over-limit", {
  title: `depth max_depth + 1 and the largest u32 -> -32602 Invalid event: Protocol error: Event depth <d> exceeds configured max depth ${MAX_DEPTH}`,
  checklist: [28],
  spec: ["§11.3", "§11.6"],
  send: [
    eventRequest("dp-11", "pre_action", {}, { depth: MAX_DEPTH + 1 }),
    eventRequest("dp-max", "pre_prompt", {}, { depth: 4294967295 }),
  ],
  expect: [err("dp-11", -32602, depthError(MAX_DEPTH + 1)), err("dp-max", -32602, depthError(4294967295))],
});

const badDepths: Array<[string, unknown]> = [
  ["negative", -1],
  ["fraction", 1.5],
  ["string", "1"],
  ["null", null],
  ["above-u32", 4294967296],
];
simple("depth.not-u32", {
  title: 'depth -1, 1.5, "1", null or 4294967296 (not a u32) -> -32602 Invalid params:',
  checklist: [29],
  spec: ["§0", "§5", "§3.9"],
  send: badDepths.map(([name, depth]) => eventRequest(`dp-${name}`, "pre_action", {}, { depth })),
  expect: badDepths.map(([name]) => err(`dp-${name}`, -32602, { prefix: "Invalid params:" })),
});

simple("depth.checked-before-form", {
  title: "An over-deep post_action or idle request reports the depth error, not the form or payload error",
  checklist: [31],
  spec: ["§11.3"],
  send: [
    eventRequest("dp-post", "post_action", {}, { depth: MAX_DEPTH + 1 }),
    eventRequest("dp-idle", "idle", { idle_reason: "missing duration" }, { depth: MAX_DEPTH + 1 }),
  ],
  expect: [err("dp-post", -32602, depthError(MAX_DEPTH + 1)), err("dp-idle", -32602, depthError(MAX_DEPTH + 1))],
});

simple("depth.notification", {
  title: "An over-deep notification is dropped without an answer",
  checklist: [28],
  spec: ["§11.3"],
  send: [
    eventNotification("post_action", {}, { depth: MAX_DEPTH + 1 }),
    eventNotification("session_end", {}, { depth: 99 }),
    aliveRequest(),
  ],
  expect: [aliveResponse()],
});

export default cases;

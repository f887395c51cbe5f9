/** ahp/batch (spec §4.4, §11.5; §17 items 54–64). */
import { SPECIALIZED_EVENT_TYPES } from "../../../../packages/core/src/index.js";
import { validPayload } from "../../../../packages/conformance/src/fixtures.js";
import { ALLOW, SESSION, TS, area, err, event, eventRequest, json, ok, request } from "../dsl.js";
import { BATCH_SIZE, MAX_DEPTH, genericDecision } from "../profile.js";

const { cases, simple, add } = area("batch");

const batch = (id: string, events: unknown) => json(request(id, "ahp/batch", { events }));
const notBatchable = (type: string) => `Event type ${type} cannot be batched because it does not return a generic Decision`;

simple("empty", {
  title: 'An empty batch -> {"decisions":[]}',
  checklist: [54],
  spec: ["§4.4", "§11.5"],
  send: [batch("b-empty", [])],
  expect: [ok("b-empty", { decisions: [] })],
});

const mixed: Array<[string, string, unknown]> = [
  ["pre_action", "blocked_tool", genericDecision("blocked_tool")],
  ["pre_prompt", "shell", ALLOW],
  ["post_action", "defer_tool", genericDecision("defer_tool")],
  ["session_start", "shell", ALLOW],
  ["error", "escalate_tool", genericDecision("escalate_tool")],
  ["pre_action", "modify_tool", null],
  ["post_response", "blocked_tool", genericDecision("blocked_tool")],
];
simple("order", {
  title: "A batch of N batchable events -> exactly N generic decisions, in submission order",
  checklist: [55],
  spec: ["§4.4", "§11.5"],
  send: [
    batch(
      "b-order",
      mixed.map(([type, tool]) => event(type, { tool_name: tool, arguments: { n: 1 } })),
    ),
  ],
  expect: [
    ok("b-order", {
      decisions: mixed.map(([, , d]) =>
        d === null
          ? {
              decision: "modify",
              modified_payload: { tool_name: "modify_tool", arguments: { n: 1, dry_run: true } },
              metadata: { rule: "modify-tool" },
            }
          : d,
      ),
    }),
  ],
});

simple("spec-example", {
  title: "The specification's batch example",
  checklist: [55],
  spec: ["§4.4"],
  send: [
    batch("b-1", [
      {
        event_type: "pre_action",
        session_id: "s",
        agent_id: "a",
        timestamp: "2026-06-01T10:16:00Z",
        depth: 0,
        payload: { arguments: { command: "ls" } },
      },
      {
        event_type: "pre_action",
        session_id: "s",
        agent_id: "a",
        timestamp: "2026-06-01T10:16:00Z",
        depth: 0,
        payload: { tool_name: "blocked_tool", arguments: { command: "rm -rf /" } },
      },
    ]),
  ],
  expect: [ok("b-1", { decisions: [ALLOW, genericDecision("blocked_tool")] })],
});

simple("size-limit", {
  title: `A batch of ${BATCH_SIZE + 1} events -> -32602 Batch size ${BATCH_SIZE + 1} exceeds configured limit ${BATCH_SIZE}; ${BATCH_SIZE} events are answered`,
  checklist: [56],
  spec: ["§11.5"],
  send: [
    batch(
      "b-101",
      Array.from({ length: BATCH_SIZE + 1 }, () => event("pre_action", { tool_name: "shell" })),
    ),
    batch(
      "b-100",
      Array.from({ length: BATCH_SIZE }, (_, i) => event("pre_action", { tool_name: i === 99 ? "blocked_tool" : "shell" })),
    ),
  ],
  expect: [
    err("b-101", -32602, `Batch size ${BATCH_SIZE + 1} exceeds configured limit ${BATCH_SIZE}`),
    ok("b-100", { decisions: Array.from({ length: BATCH_SIZE }, (_, i) => (i === 99 ? genericDecision("blocked_tool") : ALLOW)) }),
  ],
});

simple("specialized-refused", {
  title:
    "A batch containing any specialized event (idle, …) -> -32602 Event type <type> cannot be batched because it does not return a generic Decision",
  checklist: [57],
  spec: ["§5.1", "§11.5"],
  send: SPECIALIZED_EVENT_TYPES.map((type) => batch(`b-${type}`, [event("pre_action", {}), event(type, validPayload(type, SESSION))])),
  expect: SPECIALIZED_EVENT_TYPES.map((type) => err(`b-${type}`, -32602, notBatchable(type))),
});

simple("query-handshake-refused", {
  title: "A batch containing a query or handshake event -> -32602 … cannot be batched …",
  checklist: [58],
  spec: ["§5.1", "§11.5"],
  send: [batch("b-query", [event("query", {})]), batch("b-handshake", [event("pre_prompt", {}), event("handshake", {})])],
  expect: [err("b-query", -32602, notBatchable("query")), err("b-handshake", -32602, notBatchable("handshake"))],
});

const nonBlocking = [
  "post_action",
  "heartbeat",
  "run_lifecycle",
  "task_list",
  "verification",
  "success",
  "post_response",
  "session_start",
  "session_end",
  "error",
] as const;
simple("non-blocking-accepted", {
  title:
    "post_action, heartbeat, valid run contracts and the other non-blocking types are accepted in a batch; each gets a generic Decision",
  checklist: [59],
  spec: ["§11.5", "§14"],
  send: [
    batch(
      "b-nb",
      nonBlocking.map((type) => event(type, validPayload(type, SESSION))),
    ),
  ],
  expect: [ok("b-nb", { decisions: nonBlocking.map(() => ALLOW) })],
});

simple("over-deep-element", {
  title: "One over-deep element fails the whole batch with -32602 Invalid event: … exceeds configured max depth",
  checklist: [61],
  spec: ["§11.5"],
  send: [batch("b-deep", [event("pre_action", {}), event("pre_action", {}, { depth: MAX_DEPTH + 1 })])],
  expect: [err("b-deep", -32602, `Invalid event: Protocol error: Event depth ${MAX_DEPTH + 1} exceeds configured max depth ${MAX_DEPTH}`)],
});

const badTasks = { run_id: "run-1", session_id: SESSION, updated_at: TS, tasks: [{ id: "t1", title: "x", status: "InProgress" }] };
simple("invalid-contract-element", {
  title: "One invalid task_list (or empty run_lifecycle) element fails the whole batch with -32602 Invalid event:",
  checklist: [62],
  spec: ["§11.5"],
  send: [
    batch("b-tasks", [event("pre_action", {}), event("task_list", badTasks)]),
    batch("b-tasks-missing", [event("task_list", { run_id: "run-1", session_id: SESSION, updated_at: TS })]),
    batch("b-run", [event("pre_action", {}), event("post_action", {}), event("run_lifecycle", {})]),
  ],
  expect: [
    err("b-tasks", -32602, { prefix: "Invalid event:", contains: ["InProgress"] }),
    err("b-tasks-missing", -32602, { prefix: "Invalid event:", contains: ["tasks"] }),
    err("b-run", -32602, { prefix: "Invalid event:", contains: ["run_id"] }),
  ],
});

add("side-effects-of-rejected-batch", {
  title: "Events before an invalid element: the reference has handled them (the once_tool event counts); recommended: nothing handled",
  checklist: [63],
  spec: ["§11.5", "§14"],
  steps: [
    {
      send: [batch("b-rejected", [event("pre_action", { tool_name: "once_tool" }), event("idle", validPayload("idle", SESSION))])],
      expect: [err("b-rejected", -32602, notBatchable("idle"))],
    },
    { send: [eventRequest("after-rejected", "pre_action", { tool_name: "once_tool" })] },
  ],
  outcomes: [
    {
      name: "recommended",
      note: "§11.5 Recommended: every element is validated before any is handled, so the rejected batch left no trace",
      expect: [ok("after-rejected", ALLOW)],
    },
    {
      name: "reference",
      note: "§11.5 reference quirk: validation is interleaved with handling; the first element was handled before the idle element was refused",
      expect: [
        ok("after-rejected", {
          decision: "defer",
          retry_after_ms: { $type: "integer" },
          reason: "only once per session [rule: once-tool]",
        }),
      ],
    },
  ],
});

add("elements-are-handled", {
  title: "An accepted batch handles its elements: a once_tool event in a batch counts for the session",
  checklist: [55],
  spec: ["§11.5"],
  steps: [
    { send: [batch("b-once", [event("pre_action", { tool_name: "once_tool" })])], expect: [ok("b-once", { decisions: [ALLOW] })] },
    {
      send: [eventRequest("after-batch", "pre_action", { tool_name: "once_tool" })],
      expect: [
        ok("after-batch", { decision: "defer", retry_after_ms: { $type: "integer" }, reason: "only once per session [rule: once-tool]" }),
      ],
    },
  ],
});

simple("bad-params", {
  title: "ahp/batch params without events, events null or a string, or an element that is not an event -> -32602 Invalid params:",
  checklist: [64],
  spec: ["§4.4", "§11.5"],
  send: [
    json(request("bp-1", "ahp/batch", {})),
    json(request("bp-2", "ahp/batch", { events: null })),
    json(request("bp-3", "ahp/batch", { events: "pre_action" })),
    json(request("bp-4", "ahp/batch", { events: [{ event_type: "pre_action" }] })),
    json(request("bp-5", "ahp/batch", null)),
    json(request("bp-6", "ahp/batch", { events: [event("pre_tool_use", {})] })),
  ],
  expect: [
    err("bp-1", -32602, { prefix: "Invalid params:", contains: ["events"] }),
    err("bp-2", -32602, { prefix: "Invalid params:", contains: ["events"] }),
    err("bp-3", -32602, { prefix: "Invalid params:", contains: ["events"] }),
    err("bp-4", -32602, { prefix: "Invalid params:" }),
    err("bp-5", -32602, { prefix: "Invalid params:" }),
    err("bp-6", -32602, { prefix: "Invalid params:", contains: ["unknown variant"] }),
  ],
});

export default cases;

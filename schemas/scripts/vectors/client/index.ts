/**
 * Client vectors (spec §12; §17 items 65–82, 84, 85): what a compliant client writes for API
 * calls and how it treats the harness's answers. The client under test talks to a scripted
 * harness over a stdio-like line transport; `reply` and `reply_text` are what that harness writes.
 */
import type { ClientCase, ClientStep } from "../format.js";

const TS = "2026-06-01T10:15:00Z";
const SESSION = "sess-c";
const AGENT = "agent-c";

const HANDSHAKE_RESULT = {
  protocol_version: "2.4",
  harness_info: { name: "vector-harness", version: "1.0.0", capabilities: ["pre_action"] },
  config: { max_depth: 10, batch_size: 100, timeout_ms: 10000 },
};

/** A full event as a caller gives it to the full-event API. */
const fullEvent = (type: string, payload: unknown, extra: Record<string, unknown> = {}) => ({
  event_type: type,
  session_id: SESSION,
  agent_id: AGENT,
  timestamp: TS,
  depth: 0,
  payload,
  ...extra,
});

/** The next request the client writes: a string id captured as `name`, the method and params. */
const sentRequest = (name: string, method: string, params: unknown) => ({
  expect_sent: { jsonrpc: "2.0", id: { $type: "string", $capture: name }, method, params },
});
const reply = (name: string, body: Record<string, unknown>): ClientStep => ({ reply: { jsonrpc: "2.0", id: { $same: name }, ...body } });
const call = (as: string, c: Extract<ClientStep, { call: unknown }>["call"]): ClientStep => ({ call: c, as });
const returns = (as: string, value: unknown): ClientStep => ({ expect_returns: { call: as, value } });
const fails = (as: string, ...contains: string[]): ClientStep => ({ expect_fails: { call: as, contains } });

const cases: ClientCase[] = [];
const add = (c: Omit<ClientCase, "area" | "id"> & { id: string }, area: string) => cases.push({ ...c, id: `${area}/${c.id}`, area });
const calls = (c: Omit<ClientCase, "area" | "id"> & { id: string }) => add(c, "calls");
const answers = (c: Omit<ClientCase, "area" | "id"> & { id: string }) => add(c, "answers");

// ---------------------------------------------------------------- what the client writes

calls({
  id: "handshake-params",
  title: "handshake(capabilities) writes ahp/handshake with protocol_version 2.4, agent_info and the client's session and agent ids",
  checklist: [67, 68],
  spec: ["§4.1", "§12.1", "§12.2"],
  handshaken: false,
  steps: [
    call("h", { op: "handshake", capabilities: ["pre_action", "post_action"] }),
    sentRequest("h-id", "ahp/handshake", {
      protocol_version: "2.4",
      agent_info: { framework: { $type: "string" }, version: { $type: "string" }, capabilities: ["pre_action", "post_action"] },
      session_id: { $type: "string", $capture: "session" },
      agent_id: { $type: "string", $capture: "agent" },
    }),
    reply("h-id", { result: HANDSHAKE_RESULT }),
    returns("h", { protocol_version: "2.4", harness_info: HANDSHAKE_RESULT.harness_info, $extra: true }),
    call("e", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    sentRequest("e-id", "ahp/event", {
      event_type: "pre_action",
      session_id: { $same: "session" },
      agent_id: { $same: "agent" },
      timestamp: { $format: "rfc3339" },
      depth: 0,
      payload: { tool_name: "shell", $extra: true },
    }),
    { expect_distinct: ["h-id", "e-id"] },
    reply("e-id", { result: { decision: "allow" } }),
    returns("e", { decision: "allow", $extra: true }),
  ],
});

calls({
  id: "gating-before-handshake",
  title: "Before a successful handshake, event, notification, query and batch calls fail locally and write nothing",
  checklist: [65],
  spec: ["§12.2"],
  handshaken: false,
  steps: [
    call("e", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    fails("e", "Handshake must complete before sending AHP operations"),
    call("n", { op: "send", event_type: "post_action", payload: {} }),
    fails("n", "Handshake must complete before sending AHP operations"),
    call("q", { op: "query", query_type: "approval_check", payload: null }),
    fails("q", "Handshake must complete before sending AHP operations"),
    call("b", { op: "batch", events: [fullEvent("pre_action", { tool_name: "shell" })] }),
    fails("b", "Handshake must complete before sending AHP operations"),
    { expect_nothing_sent: true },
  ],
});

calls({
  id: "failed-handshake-retry",
  title: "A handshake answered with an error fails with `Handshake failed: <message>`, leaves the client unhandshaken, and may be retried",
  checklist: [66, 71],
  spec: ["§12.2", "§12.7"],
  handshaken: false,
  steps: [
    call("h1", { op: "handshake", capabilities: [] }),
    sentRequest("h1-id", "ahp/handshake", { $extra: true, protocol_version: "2.4" }),
    reply("h1-id", { error: { code: -32000, message: "Unsupported protocol version: 2.4" } }),
    fails("h1", "Handshake failed", "Unsupported protocol version: 2.4"),
    call("e", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    fails("e", "Handshake must complete before sending AHP operations"),
    { expect_nothing_sent: true },
    call("h2", { op: "handshake", capabilities: [] }),
    sentRequest("h2-id", "ahp/handshake", { $extra: true, protocol_version: "2.4" }),
    reply("h2-id", { result: HANDSHAKE_RESULT }),
    returns("h2", { protocol_version: "2.4", $extra: true }),
  ],
});

calls({
  id: "blocking-is-request-non-blocking-is-notification",
  title:
    "A blocking event is a request with a string id; a non-blocking one a notification without id that returns {decision: allow} without waiting",
  checklist: [68, 73, 74, 78],
  spec: ["§3.2", "§12.3"],
  handshaken: true,
  steps: [
    call("n", { op: "send", event_type: "post_action", payload: {} }),
    {
      expect_sent: {
        jsonrpc: "2.0",
        method: "ahp/event",
        params: {
          event_type: "post_action",
          session_id: { $type: "string" },
          agent_id: { $type: "string" },
          timestamp: { $format: "rfc3339" },
          depth: 0,
          payload: { $extra: true },
        },
      },
    },
    returns("n", { decision: "allow" }),
    call("a", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    call("b", { op: "send", event_type: "pre_action", payload: { tool_name: "git" } }),
    sentRequest("a-id", "ahp/event", { event_type: "pre_action", $extra: true }),
    sentRequest("b-id", "ahp/event", { event_type: "pre_action", $extra: true }),
    { expect_distinct: ["a-id", "b-id"] },
    { expect_pending: "a" },
    // Out of order: the client matches responses by id.
    reply("b-id", { result: { decision: "block", reason: "no git" } }),
    reply("a-id", { result: { decision: "allow" } }),
    returns("b", { decision: "block", reason: "no git", $extra: true }),
    returns("a", { decision: "allow", $extra: true }),
  ],
});

calls({
  id: "full-event-as-given",
  title: "The full-event API sends session_id, agent_id, depth, timestamp, context and metadata exactly as given",
  checklist: [77],
  spec: ["§12.4"],
  handshaken: true,
  steps: [
    call("e", {
      op: "event",
      event: fullEvent("pre_action", { tool_name: "shell" }, { depth: 2, context: { cwd: "/srv" }, metadata: { trace: "t-1" } }),
    }),
    sentRequest("e-id", "ahp/event", {
      event_type: "pre_action",
      session_id: SESSION,
      agent_id: AGENT,
      timestamp: TS,
      depth: 2,
      payload: { tool_name: "shell" },
      context: { cwd: "/srv" },
      metadata: { trace: "t-1" },
    }),
    reply("e-id", { result: { decision: "allow" } }),
    returns("e", { decision: "allow", $extra: true }),
  ],
});

calls({
  id: "query-params",
  title: "query(type, payload) writes ahp/query with the client's ids, query_type and payload",
  checklist: [68],
  spec: ["§4.3", "§12.5"],
  handshaken: true,
  steps: [
    call("q", { op: "query", query_type: "approval_check", payload: { question: "May I?" } }),
    sentRequest("q-id", "ahp/query", {
      session_id: { $type: "string" },
      agent_id: { $type: "string" },
      query_type: "approval_check",
      payload: { question: "May I?" },
    }),
    reply("q-id", { result: { answer: "yes" } }),
    returns("q", { answer: "yes", $extra: true }),
  ],
});

calls({
  id: "batch-refuses-unbatchable",
  title: "A batch containing a specialized, query or handshake event is refused locally with `cannot be batched`; nothing is written",
  checklist: [75],
  spec: ["§12.6"],
  handshaken: true,
  steps: [
    call("b1", { op: "batch", events: [fullEvent("pre_action", { tool_name: "shell" }), fullEvent("idle", {})] }),
    fails("b1", "cannot be batched"),
    call("b2", { op: "batch", events: [fullEvent("query", {})] }),
    fails("b2", "cannot be batched"),
    call("b3", { op: "batch", events: [fullEvent("handshake", {})] }),
    fails("b3", "cannot be batched"),
    { expect_nothing_sent: true },
  ],
});

calls({
  id: "batch-params",
  title: "batch(events) writes ahp/batch with the events in order and returns one decision per event",
  checklist: [68],
  spec: ["§4.4", "§12.6"],
  handshaken: true,
  steps: [
    call("b", { op: "batch", events: [fullEvent("pre_action", { tool_name: "shell" }), fullEvent("post_action", {})] }),
    sentRequest("b-id", "ahp/batch", { events: [fullEvent("pre_action", { tool_name: "shell" }), fullEvent("post_action", {})] }),
    reply("b-id", { result: { decisions: [{ decision: "block", reason: "no" }, { decision: "allow" }] } }),
    returns("b", [
      { decision: "block", reason: "no", $extra: true },
      { decision: "allow", $extra: true },
    ]),
  ],
});

// ---------------------------------------------------------------- how the client treats answers

answers({
  id: "error-response",
  title: "An error response fails the call with `Event failed: <message>`",
  checklist: [71],
  spec: ["§12.7"],
  handshaken: true,
  steps: [
    call("e", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    sentRequest("e-id", "ahp/event", { $extra: true, event_type: "pre_action" }),
    reply("e-id", { error: { code: -32602, message: "Invalid event: depth 11 exceeds max_depth 10" } }),
    fails("e", "Event failed: Invalid event: depth 11 exceeds max_depth 10"),
  ],
});

answers({
  id: "wrong-jsonrpc-version",
  title: 'A response whose jsonrpc is not "2.0" fails the call with `invalid JSON-RPC version`',
  checklist: [69],
  spec: ["§12.7"],
  handshaken: true,
  steps: [
    call("e", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    sentRequest("e-id", "ahp/event", { $extra: true, event_type: "pre_action" }),
    { reply: { jsonrpc: "1.0", id: { $same: "e-id" }, result: { decision: "allow" } } },
    fails("e", "invalid JSON-RPC version"),
  ],
});

answers({
  id: "missing-result",
  title: 'A response without result, or with "result": null, fails the call with `missing result`',
  checklist: [72],
  spec: ["§3.3", "§12.7"],
  handshaken: true,
  steps: [
    call("a", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    sentRequest("a-id", "ahp/event", { $extra: true, event_type: "pre_action" }),
    reply("a-id", { result: null }),
    fails("a", "missing result"),
    call("q", { op: "query", query_type: "approval_check", payload: null }),
    sentRequest("q-id", "ahp/query", { $extra: true, query_type: "approval_check" }),
    reply("q-id", {}),
    fails("q", "missing result"),
  ],
});

answers({
  id: "undecodable-result",
  title: "A result that is not the expected type (an unknown decision, a fractional retry_after_ms) fails the call as undecodable",
  checklist: [81],
  spec: ["§5.1", "§12.7"],
  handshaken: true,
  steps: [
    call("a", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    sentRequest("a-id", "ahp/event", { $extra: true, event_type: "pre_action" }),
    reply("a-id", { result: { decision: "frobnicate" } }),
    fails("a", "Serialization error"),
    call("b", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    sentRequest("b-id", "ahp/event", { $extra: true, event_type: "pre_action" }),
    reply("b-id", { result: { decision: "defer", retry_after_ms: 1300.5 } }),
    fails("b", "Serialization error"),
  ],
});

answers({
  id: "confidence-f32",
  title: "An intent_detection confidence of 0.8999999761581421 (an f32 widened) decodes and equals 0.9 within 1e-6",
  checklist: [82],
  spec: ["§5.1", "§6"],
  handshaken: true,
  steps: [
    call("a", {
      op: "send",
      event_type: "intent_detection",
      payload: { session_id: SESSION, prompt: "review src/server.ts", workspace: "/w" },
    }),
    sentRequest("a-id", "ahp/event", { $extra: true, event_type: "intent_detection" }),
    reply("a-id", { result: { decision: "allow", detected_intent: "code_review", confidence: 0.8999999761581421 } }),
    returns("a", { decision: "allow", detected_intent: "code_review", confidence: { $approx: 0.9, $tolerance: 1e-6 }, $extra: true }),
  ],
});

answers({
  id: "batch-count-mismatch",
  title: "A batch answer with fewer or more decisions than events fails with `decision count mismatch`",
  checklist: [76],
  spec: ["§12.6"],
  handshaken: true,
  steps: [
    call("b1", { op: "batch", events: [fullEvent("pre_action", { tool_name: "shell" }), fullEvent("post_action", {})] }),
    sentRequest("b1-id", "ahp/batch", { $extra: true }),
    reply("b1-id", { result: { decisions: [{ decision: "allow" }] } }),
    fails("b1", "decision count mismatch", "expected 2, got 1"),
    call("b2", { op: "batch", events: [fullEvent("post_action", {})] }),
    sentRequest("b2-id", "ahp/batch", { $extra: true }),
    reply("b2-id", { result: { decisions: [{ decision: "allow" }, { decision: "allow" }] } }),
    fails("b2", "decision count mismatch", "expected 1, got 2"),
  ],
});

answers({
  id: "ignores-noise-and-unknown-ids",
  title: "On stdio the client ignores non-JSON lines and responses with unknown ids; the call completes with its own response",
  checklist: [84],
  spec: ["§3.1", "§12.7"],
  handshaken: true,
  steps: [
    call("a", { op: "send", event_type: "pre_action", payload: { tool_name: "shell" } }),
    sentRequest("a-id", "ahp/event", { $extra: true, event_type: "pre_action" }),
    { reply_text: "starting harness (a log line on stdout)" },
    { reply: { jsonrpc: "2.0", id: "not-a-pending-id", result: { decision: "block", reason: "not for you" } } },
    { expect_pending: "a" },
    reply("a-id", { result: { decision: "allow" } }),
    returns("a", { decision: "allow", $extra: true }),
  ],
});

answers({
  id: "version-2.0-accepted",
  title: 'A handshake answer with protocol_version "2.0" is accepted',
  checklist: [80],
  spec: ["§2", "§12.2"],
  handshaken: false,
  steps: [
    call("h", { op: "handshake", capabilities: [] }),
    sentRequest("h-id", "ahp/handshake", { $extra: true, protocol_version: "2.4" }),
    reply("h-id", { result: { ...HANDSHAKE_RESULT, protocol_version: "2.0" } }),
    returns("h", { protocol_version: "2.0", $extra: true }),
  ],
});

answers({
  id: "version-3.0-answer",
  title:
    'A handshake answer with protocol_version "3.0": the reference accepts it unchecked; a recommended client refuses a different major',
  checklist: [],
  spec: ["§2", "§12.2"],
  handshaken: false,
  steps: [
    call("h", { op: "handshake", capabilities: [] }),
    sentRequest("h-id", "ahp/handshake", { $extra: true, protocol_version: "2.4" }),
    reply("h-id", { result: { ...HANDSHAKE_RESULT, protocol_version: "3.0" } }),
  ],
  branches: [
    {
      name: "reference",
      note: "The reference decodes the answer but does not compare the version.",
      steps: [returns("h", { protocol_version: "3.0", $extra: true })],
    },
    {
      name: "recommended",
      note: "A recommended client does not talk to a harness of another major: the handshake fails naming the version.",
      steps: [fails("h", "3.0")],
    },
  ],
});

export default cases;

/**
 * The 93 items of the spec's conformance checklist (§17), with where each one is automated.
 * Item texts are quoted verbatim from the specification.
 */

/** `suite`: automated by `describeConformance` for every transport; `suite-http`: by the suite when `kind` is `http`; `transport`: in the named transport package. */
export type ChecklistCoverage = "suite" | "suite-http" | "transport";

export interface ChecklistItem {
  n: number;
  tags: readonly ("S" | "C" | "T" | "Q")[];
  text: string;
  where: ChecklistCoverage;
  /** How the suite checks it, or which package does and why. */
  how: string;
}

export const CHECKLIST: readonly ChecklistItem[] = [
  {
    n: 1,
    tags: ["S"],
    text: 'A request (string id, method, params) receives exactly one response whose `id` equals the request id and whose `jsonrpc` is `"2.0"`.',
    where: "suite",
    how: "wire",
  },
  {
    n: 2,
    tags: ["S"],
    text: 'A response never contains both `result` and `error`, and never `"result": null`.',
    where: "suite",
    how: "wire",
  },
  { n: 3, tags: ["S"], text: "Unknown request method `ahp/nope` → `-32601` with message `Method not found`.", where: "suite", how: "wire" },
  { n: 4, tags: ["S"], text: "Request method `harness/event` (v1) → `-32601`.", where: "suite", how: "wire" },
  {
    n: 5,
    tags: ["S"],
    text: "Notification whose method is not `ahp/event` (e.g. `ahp/handshake` without id) produces no output and does not stop the server.",
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 6,
    tags: ["S", "Q"],
    text: "Request with numeric `id` is not answered as a request by the reference (treated as notification); recommended: answered with the numeric id echoed (§3.4).",
    where: "suite",
    how: "wire",
  },
  {
    n: 7,
    tags: ["S"],
    text: 'Message without `params` gets no response on stdio/WebSocket and `-32600 Invalid JSON-RPC message` (id `""`) over HTTP.',
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 8,
    tags: ["S"],
    text: "Unparseable line on stdio is skipped; the next valid request on the following line is answered.",
    where: "suite",
    how: "raw",
  },
  {
    n: 9,
    tags: ["S"],
    text: "Blank lines and surrounding whitespace / `\\r\\n` line endings are tolerated on stdio.",
    where: "suite",
    how: "raw",
  },
  {
    n: 10,
    tags: ["S", "Q"],
    text: 'A request with `"jsonrpc":"1.0"` is processed normally by the reference (value not checked).',
    where: "suite",
    how: "wire",
  },
  {
    n: 11,
    tags: ["S"],
    text: 'Handshake with `protocol_version` `"2.4"` succeeds; result has `protocol_version` `"2.4"`, `harness_info{name,version,capabilities}` and `config`.',
    where: "suite",
    how: "wire + AhpClient",
  },
  { n: 12, tags: ["S"], text: 'Handshake with `"2.0"`, `"2"` and `"2.99"` succeeds.', where: "suite", how: "wire" },
  {
    n: 13,
    tags: ["S"],
    text: 'Handshake with `"3.0"` → `-32000` message `Unsupported protocol version: 3.0`.',
    where: "suite",
    how: "wire",
  },
  { n: 14, tags: ["S"], text: 'Handshake with `"1.9"`, `""` or `"02.4"` → `-32000`.', where: "suite", how: "wire" },
  {
    n: 15,
    tags: ["S"],
    text: "Handshake without `agent_info.capabilities` → `-32602`, message starts with `Invalid params:` and mentions `capabilities`.",
    where: "suite",
    how: "wire",
  },
  { n: 16, tags: ["S"], text: "Handshake without `session_id` or `agent_id` → `-32602 Invalid params:`.", where: "suite", how: "wire" },
  {
    n: 17,
    tags: ["S"],
    text: 'Default harness answers `name` `ahp-server`, `version` `2.4.0`, the 8 default capabilities in order, `config` `{"timeout_ms":10000,"batch_size":100,"max_depth":10}`, and no `session_token`.',
    where: "suite",
    how: "wire",
  },
  {
    n: 18,
    tags: ["S"],
    text: 'A config with only `batch_size` set is advertised as `{"batch_size":n}` (unset limits omitted).',
    where: "suite",
    how: "wire + AhpClient",
  },
  { n: 19, tags: ["S"], text: "An `ahp/event` request is processed without any prior handshake.", where: "suite", how: "wire" },
  {
    n: 20,
    tags: ["S"],
    text: "`pre_action` request → result is a generic Decision object carrying a `decision` member.",
    where: "suite",
    how: "wire + AhpClient",
  },
  { n: 21, tags: ["S"], text: "`pre_prompt` request → generic Decision.", where: "suite", how: "wire + AhpClient" },
  {
    n: 22,
    tags: ["S"],
    text: "Each of the 10 non-blocking types sent as a request with a valid payload → `-32602 Fire-and-forget event <type> must be sent as a notification`.",
    where: "suite",
    how: "wire",
  },
  {
    n: 23,
    tags: ["S"],
    text: "`pre_action` sent as a notification: handler not invoked, nothing sent back on stdio/WebSocket.",
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 24,
    tags: ["S"],
    text: "`event_type` `pre_tool_use` in a request → `-32602 Invalid params:` mentioning `unknown variant`.",
    where: "suite",
    how: "wire",
  },
  {
    n: 25,
    tags: ["S"],
    text: "Event missing `timestamp` (or `payload`) → `-32602 Invalid params:` naming the member.",
    where: "suite",
    how: "wire",
  },
  { n: 26, tags: ["S"], text: '`"payload": null` is accepted for a generic event.', where: "suite", how: "wire" },
  { n: 27, tags: ["S"], text: "`depth` equal to `max_depth` is accepted.", where: "suite", how: "wire; on HTTP also raw (status codes)" },
  {
    n: 28,
    tags: ["S"],
    text: "`depth` = `max_depth + 1` → `-32602`, message contains `exceeds configured max depth <max_depth>`.",
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  { n: 29, tags: ["S"], text: "`depth` `-1` or `1.5` → `-32602 Invalid params:`.", where: "suite", how: "wire" },
  { n: 30, tags: ["S"], text: "With no `max_depth` configured, any u32 depth is accepted.", where: "suite", how: "wire" },
  {
    n: 31,
    tags: ["S"],
    text: "Over-deep `post_action` request reports the depth error, not the notification error.",
    where: "suite",
    how: "wire",
  },
  {
    n: 32,
    tags: ["S"],
    text: "Over-deep `run_lifecycle` request with an empty payload reports the depth error.",
    where: "suite",
    how: "wire",
  },
  {
    n: 33,
    tags: ["S"],
    text: "`run_lifecycle` request with an empty payload → `-32602` message starting `Invalid event:` and mentioning `run_id`.",
    where: "suite",
    how: "wire",
  },
  { n: 34, tags: ["S"], text: "Valid `run_lifecycle` request → `-32602 … must be sent as a notification`.", where: "suite", how: "wire" },
  {
    n: 35,
    tags: ["S"],
    text: "Valid `run_lifecycle` notification reaches the notification handler once.",
    where: "suite",
    how: "wire + AhpClient; on HTTP also raw (status codes)",
  },
  {
    n: 36,
    tags: ["S"],
    text: "`run_lifecycle` notification missing `updated_at` or `run_id` is dropped (handler not invoked).",
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 37,
    tags: ["S"],
    text: '`task_list` notification without `tasks` is dropped; with `"tasks": []` it is accepted.',
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 38,
    tags: ["S"],
    text: 'A task with `"depends_on": null` is rejected; the same task with `depends_on` omitted is accepted.',
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 39,
    tags: ["S"],
    text: "Task status `in_progress` accepted; `InProgress` rejected.",
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 40,
    tags: ["S"],
    text: "Verification status `needs_review` accepted; `NeedsReview` rejected.",
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 41,
    tags: ["S"],
    text: "`verification` without `checks` and `residual_risks` is accepted.",
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 42,
    tags: ["S"],
    text: "`post_action` notification with an arbitrary payload (e.g. `{}`) reaches the notification handler.",
    where: "suite",
    how: "wire; on HTTP also raw (status codes)",
  },
  {
    n: 43,
    tags: ["S"],
    text: "Malformed `context` (`session_stats` lacking `total_tokens`) → `-32602 Invalid params:`.",
    where: "suite",
    how: "wire",
  },
  {
    n: 44,
    tags: ["S"],
    text: "`handshake` and `query` event types sent via `ahp/event` request are answered by the generic handler with a generic Decision.",
    where: "suite",
    how: "wire + AhpClient",
  },
  {
    n: 45,
    tags: ["S"],
    text: '`idle` request with a valid payload and no idle handler → result `{"decision":"allow"}`.',
    where: "suite",
    how: "wire + AhpClient",
  },
  {
    n: 46,
    tags: ["S"],
    text: "`idle` request without `idle_duration_ms` → `-32603`, message starts `Handler error:`.",
    where: "suite",
    how: "wire",
  },
  {
    n: 47,
    tags: ["S"],
    text: "`context_perception` request without a handler → `-32603 Handler error: Capability not supported: Context perception not supported`.",
    where: "suite",
    how: "wire",
  },
  {
    n: 48,
    tags: ["S"],
    text: "Same default errors for `memory_recall`, `planning`, `reasoning`, `rate_limit`, `confirmation`, `intent_detection` (texts in §7.9).",
    where: "suite",
    how: "wire",
  },
  {
    n: 49,
    tags: ["S"],
    text: "A typed handler's decision is returned as its typed shape (e.g. `intent_detection` allow carries `detected_intent` and `confidence`).",
    where: "suite",
    how: "wire + AhpClient",
  },
  {
    n: 50,
    tags: ["S"],
    text: "Generic handler failure on a single event → `-32603`, message starts `Handler error:`.",
    where: "suite",
    how: "wire + AhpClient",
  },
  {
    n: 51,
    tags: ["S"],
    text: "`ahp/query` with all four members reaches the query handler; result has `answer`.",
    where: "suite",
    how: "wire + AhpClient",
  },
  {
    n: 52,
    tags: ["S"],
    text: "`ahp/query` without a query handler → `-32603 Handler error: Capability not supported: Query not supported`.",
    where: "suite",
    how: "wire",
  },
  { n: 53, tags: ["S"], text: "`ahp/query` missing `query_type` → `-32602 Invalid params:`.", where: "suite", how: "wire" },
  { n: 54, tags: ["S"], text: '`ahp/batch` with `"events": []` → `{"decisions":[]}`.', where: "suite", how: "wire + AhpClient" },
  {
    n: 55,
    tags: ["S"],
    text: "Batch of N batchable events → exactly N decisions in submission order.",
    where: "suite",
    how: "wire + AhpClient",
  },
  {
    n: 56,
    tags: ["S"],
    text: "Batch of 101 events with default config → `-32602 Batch size 101 exceeds configured limit 100`, no handler call.",
    where: "suite",
    how: "wire",
  },
  {
    n: 57,
    tags: ["S"],
    text: "Batch containing an `idle` (or any specialized) event → `-32602`, message contains `cannot be batched`.",
    where: "suite",
    how: "wire",
  },
  {
    n: 58,
    tags: ["S"],
    text: "Batch containing a `query` or `handshake` event → `-32602 … cannot be batched …`.",
    where: "suite",
    how: "wire",
  },
  {
    n: 59,
    tags: ["S"],
    text: "Batch containing `post_action`, `heartbeat` and a valid `run_lifecycle` is accepted; each gets a generic Decision.",
    where: "suite",
    how: "wire",
  },
  {
    n: 60,
    tags: ["S"],
    text: 'Handler failure for one batch element → that element is `{"decision":"block","reason":"Handler error: …"}` without `metadata`; the others are unaffected.',
    where: "suite",
    how: "wire",
  },
  { n: 61, tags: ["S"], text: "One over-deep element fails the whole batch with `-32602 Invalid event:`.", where: "suite", how: "wire" },
  {
    n: 62,
    tags: ["S"],
    text: "One invalid `task_list` element fails the whole batch with `-32602 Invalid event:`.",
    where: "suite",
    how: "wire",
  },
  {
    n: 63,
    tags: ["S", "Q"],
    text: "Events before an invalid batch element: reference has already handled them; recommended: none handled (§11.5).",
    where: "suite",
    how: "wire + AhpClient",
  },
  { n: 64, tags: ["S"], text: "`ahp/batch` params without `events` → `-32602 Invalid params:`.", where: "suite", how: "wire" },
  {
    n: 65,
    tags: ["C"],
    text: "Before a successful handshake, event, query and batch calls fail with `Handshake must complete before sending AHP operations` and write nothing to the transport.",
    where: "suite",
    how: "fake harness",
  },
  { n: 66, tags: ["C"], text: "A failed handshake (error response) leaves the client unhandshaken.", where: "suite", how: "fake harness" },
  {
    n: 67,
    tags: ["C"],
    text: 'Handshake params carry `protocol_version` `"2.4"`, `agent_info{framework,version,capabilities}`, `session_id`, `agent_id`.',
    where: "suite",
    how: "fake harness",
  },
  {
    n: 68,
    tags: ["C"],
    text: "Every request id is a string, unique among in-flight requests (UUID v4 in the reference).",
    where: "suite",
    how: "fake harness",
  },
  {
    n: 69,
    tags: ["C"],
    text: 'Response with `jsonrpc` ≠ `"2.0"` → error containing `invalid JSON-RPC version`.',
    where: "suite",
    how: "fake harness",
  },
  {
    n: 70,
    tags: ["C"],
    text: "Response with a different id (HTTP) → error containing `response id mismatch`.",
    where: "transport",
    how: "@ahp/transport-http: the mismatch only surfaces over HTTP (stream transports drop the response; that form is checked here as an extra)",
  },
  { n: 71, tags: ["C"], text: "Error response → error `<Op> failed: <message>`.", where: "suite", how: "fake harness" },
  {
    n: 72,
    tags: ["C"],
    text: 'Response without `result`, or with `"result": null` → error containing `missing result`.',
    where: "suite",
    how: "fake harness",
  },
  {
    n: 73,
    tags: ["C"],
    text: "Blocking event types are sent as requests, non-blocking ones as notifications (no `id` member).",
    where: "suite",
    how: "fake harness",
  },
  {
    n: 74,
    tags: ["C"],
    text: 'Sending a non-blocking event returns a synthetic `{"decision":"allow"}` without waiting for the harness.',
    where: "suite",
    how: "fake harness",
  },
  {
    n: 75,
    tags: ["C"],
    text: "Batch containing a specialized, `query` or `handshake` event is refused locally with `cannot be batched`; nothing sent.",
    where: "suite",
    how: "fake harness",
  },
  {
    n: 76,
    tags: ["C"],
    text: "Batch answer with fewer or more decisions than events → error containing `decision count mismatch`.",
    where: "suite",
    how: "fake harness",
  },
  {
    n: 77,
    tags: ["C"],
    text: "Full-event API sends `session_id`, `agent_id`, `depth`, `timestamp`, `context` and `metadata` exactly as given.",
    where: "suite",
    how: "fake harness",
  },
  {
    n: 78,
    tags: ["C"],
    text: "Simple API fills in the client's ids, `depth` 0, a current RFC 3339 UTC timestamp, and omits `context`/`metadata`.",
    where: "suite",
    how: "fake harness",
  },
  {
    n: 79,
    tags: ["C"],
    text: "No answer within `timeout_ms` (default 10000) → timeout error; a response arriving later is discarded.",
    where: "suite",
    how: "fake harness",
  },
  { n: 80, tags: ["C", "Q"], text: 'A handshake answer with `protocol_version` `"2.0"` is accepted.', where: "suite", how: "fake harness" },
  {
    n: 81,
    tags: ["C"],
    text: 'A generic Decision `{"decision":"defer","retry_after_ms":1300.5}` is rejected as undecodable.',
    where: "suite",
    how: "fake harness",
  },
  {
    n: 82,
    tags: ["C"],
    text: "A `confidence` of `0.8999999761581421` decodes and compares equal to 0.9 within 1e-6.",
    where: "suite",
    how: "fake harness",
  },
  {
    n: 83,
    tags: ["T"],
    text: "stdio: every message written is one line ending in `\\n`; harness stdout carries only JSON-RPC responses; logs go to stderr.",
    where: "transport",
    how: "@ahp/transport-stdio: line framing and stdout hygiene of a real child",
  },
  {
    n: 84,
    tags: ["T"],
    text: "stdio agent ignores non-JSON stdout lines and responses with unknown ids.",
    where: "transport",
    how: "@ahp/transport-stdio: non-JSON stdout lines of a real child",
  },
  {
    n: 85,
    tags: ["T"],
    text: "stdio agent matches out-of-order responses to pipelined requests by id.",
    where: "suite",
    how: "AhpClient + wire: 100 concurrent requests with scripted delays, matched by id (runs on every transport)",
  },
  {
    n: 86,
    tags: ["T"],
    text: "HTTP: a request POSTed to `/ahp` gets status 200 and a JSON body, also for JSON-RPC errors.",
    where: "suite-http",
    how: "raw (HTTP kind only)",
  },
  {
    n: 87,
    tags: ["T"],
    text: "HTTP: a successfully handled notification gets 204 with an empty body.",
    where: "suite-http",
    how: "raw (HTTP kind only)",
  },
  {
    n: 88,
    tags: ["T", "Q"],
    text: 'HTTP: a rejected notification gets 200 with `id` `""` and `-32603` (reference); recommended alternative 204.',
    where: "suite-http",
    how: "raw (HTTP kind only; `httpRejectedNotification`)",
  },
  {
    n: 89,
    tags: ["T"],
    text: "HTTP: the agent sends `Content-Type: application/json`, `X-API-Key: <key>` for API-key auth and `Authorization: Bearer <token>` for bearer auth.",
    where: "transport",
    how: "@ahp/transport-http: request headers are only visible to an HTTP server",
  },
  {
    n: 90,
    tags: ["T"],
    text: "HTTP: a non-2xx status on a request becomes a transport error containing the status.",
    where: "transport",
    how: "@ahp/transport-http: needs a server answering non-2xx statuses",
  },
  {
    n: 91,
    tags: ["T"],
    text: "WebSocket: the agent appends `api_key=<key>` or `token=<token>` (form-encoded) to the URL query, preserving existing parameters.",
    where: "transport",
    how: "@ahp/transport-ws: URL construction of the WebSocket client",
  },
  {
    n: 92,
    tags: ["T"],
    text: "WebSocket: every message is a single text frame; binary frames are ignored; Ping is answered with Pong.",
    where: "transport",
    how: "@ahp/transport-ws: frame types and ping/pong",
  },
  {
    n: 93,
    tags: ["T"],
    text: "Unix socket: framing identical to stdio (NDJSON, responses matched by id).",
    where: "transport",
    how: "@ahp/transport-unix: runs this suite over its socket (NDJSON raw channel)",
  },
];

/** Items automated by this suite (for any transport kind, or only for HTTP). */
export const SUITE_ITEMS: readonly number[] = CHECKLIST.filter((i) => i.where !== "transport").map((i) => i.n);

const WHERE_LABEL: Record<ChecklistCoverage, string> = {
  suite: "automated here",
  "suite-http": "automated here (HTTP kind only)",
  transport: "transport package",
};

/** The count line for the README. */
export function renderChecklistCount(): string {
  const here = CHECKLIST.filter((i) => i.where === "suite").length;
  const http = CHECKLIST.filter((i) => i.where === "suite-http").length;
  const transport = CHECKLIST.filter((i) => i.where === "transport").length;
  return (
    `**${here + http} of ${CHECKLIST.length} checklist items are automated by this suite**: ${here} run for every transport, ` +
    `${http} only when a transport runs the suite with \`kind: "http"\`. The other ${transport} belong to transport packages (see the table).`
  );
}

/** The README table of all checklist items. */
export function renderChecklistTable(): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|");
  const rows = CHECKLIST.map(
    (i) => `| ${i.n} | ${i.tags.map((t) => `[${t}]`).join("")} | ${cell(i.text)} | ${WHERE_LABEL[i.where]} | ${cell(i.how)} |`,
  );
  return ["| # | tags | item (spec §17, verbatim) | where | how |", "| --- | --- | --- | --- | --- |", ...rows].join("\n");
}

/**
 * Run contracts: run_lifecycle, task_list, verification (spec §8, §11.3; §17 items 32–41).
 * Over stdio a notification is never answered, accepted or not; what a harness decided is seen
 * by sending the same payload as a request: a payload that decodes gets "must be sent as a
 * notification", one that does not gets "Invalid event: Serialization error:".
 */
import { validPayload } from "../../../../packages/conformance/src/fixtures.js";
import { SESSION, TS, aliveRequest, aliveResponse, area, err, eventNotification, eventRequest } from "../dsl.js";
import { MAX_DEPTH } from "../profile.js";

const { cases, simple } = area("run-contracts");

const INVALID = "Invalid event: Serialization error:";
const accepted = (type: string) => `Fire-and-forget event ${type} must be sent as a notification`;

const run = (extra: Record<string, unknown> = {}) => ({
  run_id: "run-1",
  session_id: SESSION,
  status: "executing",
  updated_at: TS,
  ...extra,
});
const tasks = (list: unknown, extra: Record<string, unknown> = {}) => ({
  run_id: "run-1",
  session_id: SESSION,
  updated_at: TS,
  ...(list === undefined ? {} : { tasks: list }),
  ...extra,
});
const task = (extra: Record<string, unknown> = {}) => ({ id: "t1", title: "Patch the parser", status: "pending", ...extra });
const verification = (extra: Record<string, unknown> = {}) => ({
  run_id: "run-1",
  session_id: SESSION,
  status: "passed",
  updated_at: TS,
  ...extra,
});
const without = (o: Record<string, unknown>, key: string) => {
  const copy = { ...o };
  delete copy[key];
  return copy;
};

simple("run_lifecycle.empty-payload-request", {
  title: "A run_lifecycle request with an empty payload -> -32602 Invalid event: Serialization error: naming run_id",
  checklist: [33],
  spec: ["§8.1", "§11.3"],
  send: [eventRequest("rl-empty", "run_lifecycle", {})],
  expect: [err("rl-empty", -32602, { prefix: INVALID, contains: ["run_id"] })],
});

simple("run_lifecycle.over-deep-request", {
  title: "An over-deep run_lifecycle request with an empty payload reports the depth error",
  checklist: [32],
  spec: ["§11.3"],
  send: [eventRequest("rl-deep", "run_lifecycle", {}, { depth: MAX_DEPTH + 1 })],
  expect: [err("rl-deep", -32602, `Invalid event: Protocol error: Event depth ${MAX_DEPTH + 1} exceeds configured max depth ${MAX_DEPTH}`)],
});

simple("valid-requests", {
  title: "Valid run_lifecycle, task_list and verification requests -> -32602 … must be sent as a notification",
  checklist: [34],
  spec: ["§8", "§11.3"],
  send: (["run_lifecycle", "task_list", "verification"] as const).map((t) => eventRequest(`valid-${t}`, t, validPayload(t, SESSION))),
  expect: (["run_lifecycle", "task_list", "verification"] as const).map((t) => err(`valid-${t}`, -32602, accepted(t))),
});

simple("run_lifecycle.notifications", {
  title: "run_lifecycle notifications, valid or not (missing updated_at or run_id, unknown status), get no answer",
  checklist: [35, 36],
  spec: ["§8.1", "§11.3"],
  send: [
    eventNotification("run_lifecycle", run({ status: "completed", result_summary: "done", started_at: TS })),
    eventNotification("run_lifecycle", without(run(), "updated_at")),
    eventNotification("run_lifecycle", without(run(), "run_id")),
    eventNotification("run_lifecycle", run({ status: "Running" })),
    aliveRequest(),
  ],
  expect: [aliveResponse()],
});

const statuses = ["created", "planning", "executing", "verifying", "completed", "failed", "cancelled"];
simple("run_lifecycle.shape", {
  title:
    "run_lifecycle payloads as requests: every RunStatus decodes; missing updated_at, run_id, status or session_id, or an unknown status, does not",
  checklist: [36],
  spec: ["§8.1", "§8.5"],
  send: [
    ...statuses.map((s) => eventRequest(`rls-${s}`, "run_lifecycle", run({ status: s }))),
    ...["updated_at", "run_id", "status", "session_id"].map((m) => eventRequest(`rls-no-${m}`, "run_lifecycle", without(run(), m))),
    eventRequest("rls-Running", "run_lifecycle", run({ status: "Running" })),
    eventRequest("rls-prompt-null", "run_lifecycle", run({ prompt: null, error: null, metadata: null })),
  ],
  expect: [
    ...statuses.map((s) => err(`rls-${s}`, -32602, accepted("run_lifecycle"))),
    ...["updated_at", "run_id", "status", "session_id"].map((m) => err(`rls-no-${m}`, -32602, { prefix: INVALID, contains: [m] })),
    err("rls-Running", -32602, { prefix: INVALID, contains: ["Running"] }),
    err("rls-prompt-null", -32602, accepted("run_lifecycle")),
  ],
});

simple("task_list.tasks", {
  title: "task_list without tasks, or with tasks null, does not decode; with tasks [] it does",
  checklist: [37],
  spec: ["§8.2"],
  send: [
    eventRequest("tl-none", "task_list", tasks(undefined)),
    eventRequest("tl-null", "task_list", tasks(null)),
    eventRequest("tl-empty", "task_list", tasks([])),
  ],
  expect: [
    err("tl-none", -32602, { prefix: INVALID, contains: ["tasks"] }),
    err("tl-null", -32602, { prefix: INVALID, contains: ["tasks"] }),
    err("tl-empty", -32602, accepted("task_list")),
  ],
});

simple("task_list.list0-members", {
  title: 'A task with "depends_on": null (or evidence/artifacts null) does not decode; the same task with them omitted does',
  checklist: [38],
  spec: ["§0", "§8.2", "§14"],
  send: [
    eventRequest("tl-deps-null", "task_list", tasks([task({ depends_on: null })])),
    eventRequest("tl-evidence-null", "task_list", tasks([task({ evidence: null })])),
    eventRequest("tl-artifacts-null", "task_list", tasks([task({ artifacts: null })])),
    eventRequest("tl-omitted", "task_list", tasks([task()])),
    eventRequest("tl-full", "task_list", validPayload("task_list", SESSION)),
  ],
  expect: [
    err("tl-deps-null", -32602, { prefix: INVALID, contains: ["depends_on"] }),
    err("tl-evidence-null", -32602, { prefix: INVALID, contains: ["evidence"] }),
    err("tl-artifacts-null", -32602, { prefix: INVALID, contains: ["artifacts"] }),
    err("tl-omitted", -32602, accepted("task_list")),
    err("tl-full", -32602, accepted("task_list")),
  ],
});

simple("task_list.status", {
  title: "Task status in_progress decodes; InProgress does not",
  checklist: [39],
  spec: ["§8.2"],
  send: [
    eventRequest("ts-ok", "task_list", tasks([task({ status: "in_progress" })])),
    eventRequest("ts-bad", "task_list", tasks([task({ status: "InProgress" })])),
  ],
  expect: [err("ts-ok", -32602, accepted("task_list")), err("ts-bad", -32602, { prefix: INVALID, contains: ["InProgress"] })],
});

simple("task_list.notifications", {
  title: "task_list notifications, valid or not, get no answer",
  checklist: [37, 38, 39],
  spec: ["§8.2", "§11.3"],
  send: [
    eventNotification("task_list", tasks([])),
    eventNotification("task_list", tasks(undefined)),
    eventNotification("task_list", tasks([task({ depends_on: null })])),
    eventNotification("task_list", tasks([task({ status: "InProgress" })])),
    aliveRequest(),
  ],
  expect: [aliveResponse()],
});

simple("verification.status", {
  title: "Verification status needs_review decodes (also in a check); NeedsReview does not",
  checklist: [40],
  spec: ["§8.3"],
  send: [
    eventRequest("vs-ok", "verification", verification({ status: "needs_review" })),
    eventRequest("vs-check-ok", "verification", verification({ checks: [{ id: "c1", subject: "lint", status: "needs_review" }] })),
    eventRequest("vs-bad", "verification", verification({ status: "NeedsReview" })),
    eventRequest("vs-check-bad", "verification", verification({ checks: [{ id: "c1", subject: "lint", status: "NeedsReview" }] })),
  ],
  expect: [
    err("vs-ok", -32602, accepted("verification")),
    err("vs-check-ok", -32602, accepted("verification")),
    err("vs-bad", -32602, { prefix: INVALID, contains: ["NeedsReview"] }),
    err("vs-check-bad", -32602, { prefix: INVALID, contains: ["NeedsReview"] }),
  ],
});

simple("verification.list0", {
  title: "verification without checks and residual_risks decodes; with checks null it does not",
  checklist: [41],
  spec: ["§8.3"],
  send: [eventRequest("vl-none", "verification", verification()), eventRequest("vl-null", "verification", verification({ checks: null }))],
  expect: [err("vl-none", -32602, accepted("verification")), err("vl-null", -32602, { prefix: INVALID, contains: ["checks"] })],
});

simple("verification.notifications", {
  title: "verification notifications, valid or not, get no answer",
  checklist: [40, 41],
  spec: ["§8.3", "§11.3"],
  send: [
    eventNotification("verification", verification()),
    eventNotification("verification", verification({ status: "NeedsReview" })),
    eventNotification(
      "verification",
      verification({ residual_risks: ["flaky e2e"], checks: [{ id: "c", subject: "s", status: "passed" }] }),
    ),
    aliveRequest(),
  ],
  expect: [aliveResponse()],
});

simple("shared-types", {
  title: "EvidenceRef and ArtifactRef: size_bytes must be a non-negative integer; kind and summary are required",
  spec: ["§8.4"],
  send: [
    eventRequest(
      "sh-ok",
      "task_list",
      tasks([
        task({
          artifacts: [{ id: "a1", size_bytes: 1024, sha256: "ab" }],
          evidence: [{ kind: "log", summary: "ok", artifact: { id: "a1" } }],
        }),
      ]),
    ),
    eventRequest("sh-size", "task_list", tasks([task({ artifacts: [{ id: "a1", size_bytes: -1 }] })])),
    eventRequest("sh-evidence", "task_list", tasks([task({ evidence: [{ kind: "log" }] })])),
  ],
  expect: [
    err("sh-ok", -32602, accepted("task_list")),
    err("sh-size", -32602, { prefix: INVALID, contains: ["size_bytes"] }),
    err("sh-evidence", -32602, { prefix: INVALID, contains: ["summary"] }),
  ],
});

export default cases;

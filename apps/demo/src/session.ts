/**
 * The demo agent: a coding agent fixing a failing parser test, supervised over AHP. It sends
 * what a real agent sends at each control point and enforces every decision:
 * allow -> run, modify -> run with the harness's payload, block -> skip and report,
 * defer -> wait `retry_after_ms` and retry, escalate -> ask a human (the demo has none, so the
 * action is not run).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { AhpClient, type AhpEventInput, type Decision, type EventType, type Transport } from "@ahp/core";

export interface TimelineEntry {
  step: number;
  eventType: EventType | "handshake";
  detail: string;
  /** Decision kind, or `notified` for a non-blocking event, `ok` for the handshake. */
  outcome: string;
  reason?: string;
  rule?: string;
  /** What the agent did about it. */
  enforcement?: string;
  latencyMs: number;
}

export interface SessionResult {
  entries: TimelineEntry[];
  sessionId: string;
  harness: string;
}

interface Workspace {
  root: string;
  runId: string;
}

const ruleOf = (d: Decision): string | undefined => {
  const meta = "metadata" in d ? d.metadata : undefined;
  if (typeof meta?.rule === "string") return meta.rule;
  const reason = "reason" in d ? d.reason : undefined;
  return typeof reason === "string" ? /(?:^|\[)rule: ([^\]\s]+)\]?$/.exec(reason)?.[1] : undefined;
};
/** The reason without the policy's rule marker (`… [rule: id]`, or just `rule: id`). */
const reasonOf = (d: Decision): string | undefined => {
  if (!("reason" in d) || typeof d.reason !== "string") return undefined;
  const text = d.reason.replace(/\s*\[rule: [^\]]+\]$/, "").replace(/^rule: \S+$/, "");
  return text === "" ? undefined : text;
};

export async function runSession(transport: Transport, onEntry: (e: TimelineEntry) => void): Promise<SessionResult> {
  const client = new AhpClient({ agentInfo: { framework: "ahp-demo-agent", version: "0.1.0" }, timeoutMs: 10_000 });
  const entries: TimelineEntry[] = [];
  let step = 0;
  const record = (e: Omit<TimelineEntry, "step">) => {
    const entry = { step: ++step, ...e };
    entries.push(entry);
    onEntry(entry);
  };
  const ws: Workspace = { root: "/workspace/parser-lib", runId: `run-${client.sessionId.slice(0, 8)}` };
  const now = () => new Date().toISOString();

  const t0 = performance.now();
  const hello = await client.connect(transport, {
    capabilities: ["pre_action", "post_action", "pre_prompt", "run_lifecycle", "task_list", "verification"],
  });
  const harness = `${hello?.harness_info.name} ${hello?.harness_info.version} (AHP ${hello?.protocol_version})`;
  record({ eventType: "handshake", detail: harness, outcome: "ok", latencyMs: performance.now() - t0 });

  const notify = async (type: EventType, payload: unknown, detail: string) => {
    const t = performance.now();
    await client.send(type, payload);
    record({ eventType: type, detail, outcome: "notified", latencyMs: performance.now() - t });
  };

  /** Sends a blocking event and enforces the decision; returns whether the action may run (and with what payload). */
  const decide = async (type: EventType, payload: Record<string, unknown>, detail: string): Promise<{ run: boolean; payload: unknown }> => {
    for (let attempt = 1; ; attempt++) {
      const t = performance.now();
      const d = (await client.send(type, payload)) as Decision;
      const latencyMs = performance.now() - t;
      const base = { eventType: type, detail: attempt > 1 ? `${detail} (attempt ${attempt})` : detail, outcome: d.decision, latencyMs };
      const rule = ruleOf(d);
      const reason = reasonOf(d);
      const info = { ...(rule === undefined ? {} : { rule }), ...(reason === undefined ? {} : { reason }) };
      switch (d.decision) {
        case "allow":
          record({ ...base, ...info, enforcement: "run" });
          return { run: true, payload: d.modified_payload ?? payload };
        case "modify":
          record({
            ...base,
            ...info,
            reason: reason ?? describeModification(payload, d.modified_payload),
            enforcement: "run with the harness's payload",
          });
          return { run: true, payload: d.modified_payload };
        case "block":
          record({ ...base, ...info, enforcement: "not run" });
          return { run: false, payload };
        case "escalate":
          record({ ...base, ...info, enforcement: `asked ${d.escalation_target ?? "a human"}: no approval in the demo, not run` });
          return { run: false, payload };
        case "defer": {
          if (attempt >= 4) {
            record({ ...base, ...info, enforcement: "gave up after 3 retries" });
            return { run: false, payload };
          }
          record({ ...base, ...info, enforcement: `wait ${d.retry_after_ms} ms, retry` });
          await sleep(d.retry_after_ms);
          continue;
        }
      }
    }
  };

  const tool = async (toolName: string, args: Record<string, unknown>, detail: string, result?: { exit_code: number; output: string }) => {
    const { run, payload } = await decide(
      "pre_action",
      { action_type: "tool_call", tool_name: toolName, arguments: args, working_directory: ws.root },
      detail,
    );
    if (run && result !== undefined) {
      await notify(
        "post_action",
        { ...(payload as object), result: { ...result, duration_ms: 40 } },
        `${detail} -> exit ${result.exit_code}`,
      );
    }
    return run;
  };

  const tasks = [
    { id: "t1", title: "Reproduce the failing parser test", status: "pending" },
    { id: "t2", title: "Fix empty-input handling in the parser", status: "pending", depends_on: ["t1"] },
    { id: "t3", title: "Run the full test suite", status: "pending", depends_on: ["t2"] },
  ];
  const taskList = (statuses: string[]) =>
    notify(
      "task_list",
      { run_id: ws.runId, session_id: client.sessionId, updated_at: now(), tasks: tasks.map((t, i) => ({ ...t, status: statuses[i] })) },
      `tasks: ${statuses.join(", ")}`,
    );
  const lifecycle = (status: string, extra: Record<string, unknown> = {}) =>
    notify("run_lifecycle", { run_id: ws.runId, session_id: client.sessionId, status, updated_at: now(), ...extra }, `run ${status}`);

  await notify(
    "session_start",
    { session_id: client.sessionId, model_provider: "example", model_name: "coder-1" },
    "model example/coder-1",
  );
  await lifecycle("created", { prompt: "The parser crashes on empty input; fix it.", started_at: now() });
  await lifecycle("planning");
  await taskList(["pending", "pending", "pending"]);

  // The user pasted a credential into the prompt: the harness redacts it before the model sees it.
  const leaked = ["AKIA", "Z3X9QW7EXAMPLE42"].join("");
  await decide(
    "pre_prompt",
    { prompt: `Fix the parser crash. My deploy key is ${leaked}, in case the tests need S3.`, message_count: 1 },
    "user prompt with an AWS access key",
  );

  await lifecycle("executing");
  await taskList(["in_progress", "pending", "pending"]);
  await tool("read_file", { path: "src/parser.ts" }, "read_file src/parser.ts", { exit_code: 0, output: "export function parse(…)" });
  await tool("bash", { command: "npm test -- parser" }, "bash: npm test -- parser", {
    exit_code: 1,
    output: "TypeError: cannot read 'kind' of undefined",
  });
  await taskList(["completed", "in_progress", "pending"]);
  await tool("edit_file", { path: "src/parser.ts", old: "tokens[0].kind", new: "tokens[0]?.kind" }, "edit_file src/parser.ts", {
    exit_code: 0,
    output: "1 edit",
  });
  // A hallucinated clean-up: blocked.
  await tool("bash", { command: "rm -rf / --no-preserve-root" }, "bash: rm -rf / --no-preserve-root");
  // A dependency from an unknown registry: escalated to a human.
  await tool("bash", { command: "npm install left-pad --registry http://registry.example.net" }, "bash: npm install … --registry http://…");
  // Three quick look-ups: the third one is rate-limited and retried after the deferral.
  for (const page of ["rfc8259", "rfc7159", "rfc4627"]) {
    await tool("web_fetch", { url: `https://www.rfc-editor.org/rfc/${page}` }, `web_fetch ${page}`, { exit_code: 0, output: "200 OK" });
  }
  await tool("bash", { command: "git push origin main" }, "bash: git push origin main");
  await tool("bash", { command: "npm test" }, "bash: npm test", { exit_code: 0, output: "42 passing" });
  await taskList(["completed", "completed", "completed"]);
  await lifecycle("verifying");
  await notify(
    "verification",
    {
      run_id: ws.runId,
      session_id: client.sessionId,
      status: "passed",
      updated_at: now(),
      checks: [
        { id: "c1", subject: "parser tests", status: "passed", command: "npm test", evidence: [{ kind: "log", summary: "42 passing" }] },
      ],
      residual_risks: ["The escalated dependency was not installed."],
    },
    "verification passed (1 check)",
  );
  await lifecycle("completed", { result_summary: "Empty input no longer crashes the parser." });
  await notify("session_end", { session_id: client.sessionId, duration_ms: Math.round(performance.now() - t0) }, "session end");
  await client.close();
  return { entries, sessionId: client.sessionId, harness };
}

function describeModification(before: unknown, after: unknown): string {
  const a = JSON.stringify(before) ?? "";
  const b = JSON.stringify(after) ?? "";
  const marker = /\[REDACTED:[a-z_]+\]/.exec(b);
  return marker !== null && !a.includes(marker[0]) ? `payload rewritten: ${marker[0]}` : "payload rewritten";
}

export type { AhpEventInput };

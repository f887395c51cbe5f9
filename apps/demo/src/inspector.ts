/**
 * `pnpm demo --inspector`: the demo agent on an embedded harness with the Agent Host port on.
 * Prints the inspector's URL (with a fresh approver token), then plays a coding-agent session
 * whose `npm install` from an unknown registry the default policy escalates: the agent waits
 * until a person approves, denies or edits it in the inspector, or until the approval timeout,
 * when the harness blocks it (fail closed).
 */
import { randomBytes } from "node:crypto";
import { AgentHost, listenAgentHost, type AgentHostListener } from "@ahp/agent-host";
import { createHarness } from "@ahp/cli/harness";
import { AhpClient, createLinkedPair, type Decision, type EventType } from "@ahp/core";
import { inspectorAssetsDir, whoamiRoute } from "@ahp/inspector/server";
import { createLogger } from "@ahp/observability";
import { DEMO_POLICY } from "./policy.js";
import { createStyle, pad } from "./style.js";

export const NPM_INSTALL_COMMAND = "npm install left-pad --registry http://registry.example.net";

export interface InspectorDemoOptions {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  color?: boolean;
  /** How long the escalated `npm install` waits for a person (ms). Default 300 000. */
  approvalTimeoutMs?: number;
  /** Agent Host port on 127.0.0.1. Default 0 (a free port). */
  port?: number;
  /** Called (and awaited) once the inspector is reachable, before the agent starts (tests act as the approver). */
  onReady?: (info: { inspectorUrl: string; agentHostUrl: string; token: string }) => void | Promise<void>;
}

export interface InspectorDemoResult {
  /** What the agent received for the escalated `npm install`. */
  npmInstall: Decision;
  decisions: Array<{ detail: string; decision: string }>;
}

export async function runInspectorDemo(options: InspectorDemoOptions): Promise<InspectorDemoResult> {
  const s = createStyle(options.out, options.env, options.color);
  const out = (line = "") => options.out.write(`${line}\n`);
  const approvalTimeoutMs = options.approvalTimeoutMs ?? 300_000;
  const token = randomBytes(18).toString("base64url");
  const log = createLogger({ stream: options.err, level: "warn", bindings: { component: "demo-harness" } });
  // As `ahp serve --agent-host` does: the advertised timeout covers the hold, the policy keeps its own bound.
  const advertised = Math.max(10_000, approvalTimeoutMs + 2000);
  const agentHost = new AgentHost({ approvalTimeoutMs, harnessTimeoutMs: advertised, innerTimeoutMs: 10_000, editable: true });
  const harness = await createHarness({
    log,
    name: "ahp-demo-harness",
    policy: DEMO_POLICY,
    agentHost,
    config: { timeout_ms: advertised },
  });
  let listener: AgentHostListener | undefined;
  const [agentSide, harnessSide] = createLinkedPair();
  try {
    listener = await listenAgentHost(agentHost, {
      tokens: [{ token, principal: "you", role: "approver" }],
      port: options.port ?? 0,
      staticDir: { dir: inspectorAssetsDir },
      routes: [whoamiRoute([{ token, principal: "you", role: "approver" }])],
    });
    const inspectorUrl = `${listener.httpUrl}inspector/?token=${token}`;
    out(s.bold("AHP 2.4 demo with the inspector: a coding agent supervised by a harness, and you approve"));
    out(`${s.dim("inspector:")} ${inspectorUrl}`);
    out(s.dim("           (open it in a browser; the token in it lets you approve, keep it to yourself)"));
    out("");
    await options.onReady?.({ inspectorUrl, agentHostUrl: listener.url, token });
    await harness.server.connect(harnessSide);
    return await playSession(agentSide, { out, s, inspectorUrl, approvalTimeoutMs });
  } finally {
    await harness.server.whenIdle(5000);
    await listener?.close();
    await harness.close();
  }
}

interface Ctx {
  out: (line?: string) => void;
  s: ReturnType<typeof createStyle>;
  inspectorUrl: string;
  approvalTimeoutMs: number;
}

async function playSession(transport: Parameters<AhpClient["connect"]>[0], ctx: Ctx): Promise<InspectorDemoResult> {
  const { out, s } = ctx;
  // The agent waits as long as the harness holds the escalation (plus a margin), not its usual 10 s.
  const client = new AhpClient({ agentInfo: { framework: "ahp-demo-agent", version: "0.1.0" }, timeoutMs: ctx.approvalTimeoutMs + 10_000 });
  await client.connect(transport, { capabilities: ["pre_action", "post_action", "run_lifecycle", "task_list", "verification"] });
  const runId = `run-${client.sessionId.slice(0, 8)}`;
  const now = () => new Date().toISOString();
  const decisions: InspectorDemoResult["decisions"] = [];
  const colour: Record<string, keyof typeof s> = { allow: "green", modify: "cyan", block: "red", escalate: "magenta", defer: "yellow" };
  const notify = (type: EventType, payload: Record<string, unknown>) => client.send(type, payload);
  const tool = async (toolName: string, args: Record<string, unknown>, detail: string, result?: string) => {
    const d: Decision = await client.send("pre_action", {
      action_type: "tool_call",
      tool_name: toolName,
      arguments: args,
      working_directory: "/workspace/parser-lib",
    });
    decisions.push({ detail, decision: d.decision });
    const reason = "reason" in d && typeof d.reason === "string" ? s.dim(d.reason) : "";
    const by = "metadata" in d && typeof d.metadata?.approved_by === "string" ? s.dim(`(by ${d.metadata.approved_by})`) : "";
    out(`  ${pad(detail, 46)} ${pad(s[colour[d.decision] ?? "bold"](d.decision), 9)} ${[reason, by].filter(Boolean).join(" ")}`);
    const runs = d.decision === "allow" || d.decision === "modify";
    if (runs && result !== undefined) {
      const payload = d.decision === "modify" ? d.modified_payload : { action_type: "tool_call", tool_name: toolName, arguments: args };
      await notify("post_action", { ...(payload as object), result: { exit_code: 0, output: result, duration_ms: 40 } });
    }
    return d;
  };
  const tasks = ["Reproduce the failing parser test", "Fix empty-input handling", "Install the test helper", "Run the full test suite"];
  const taskList = (statuses: string[]) =>
    notify("task_list", {
      run_id: runId,
      session_id: client.sessionId,
      updated_at: now(),
      tasks: tasks.map((title, i) => ({ id: `t${i + 1}`, title, status: statuses[i] })),
    });
  const lifecycle = (status: string, extra: Record<string, unknown> = {}) =>
    notify("run_lifecycle", { run_id: runId, session_id: client.sessionId, status, updated_at: now(), ...extra });

  await notify("session_start", { session_id: client.sessionId, model_provider: "example", model_name: "coder-1" });
  await lifecycle("created", { prompt: "The parser crashes on empty input; fix it.", started_at: now() });
  await lifecycle("executing");
  await taskList(["in_progress", "pending", "pending", "pending"]);
  await tool("read_file", { path: "src/parser.ts" }, "read_file src/parser.ts", "export function parse(…)");
  await tool("edit_file", { path: "src/parser.ts", old: "tokens[0].kind", new: "tokens[0]?.kind" }, "edit_file src/parser.ts", "1 edit");
  await taskList(["completed", "completed", "in_progress", "pending"]);

  const seconds = Math.round(ctx.approvalTimeoutMs / 1000);
  out("");
  out(s.magenta(`  The agent asks to run: ${NPM_INSTALL_COMMAND}`));
  out(`  The policy escalates it. Approve, deny or edit it in the inspector: ${ctx.inspectorUrl}`);
  out(s.dim(`  Waiting up to ${seconds} s for you; after that the harness blocks it (fail closed). Ctrl-C stops the demo.`));
  const npmInstall = await tool("bash", { command: NPM_INSTALL_COMMAND }, "bash: npm install … --registry http://…", "added 1 package");
  out("");

  await tool("bash", { command: "npm test" }, "bash: npm test", "42 passing");
  const installed = npmInstall.decision === "allow" || npmInstall.decision === "modify";
  await taskList(["completed", "completed", installed ? "completed" : "cancelled", "completed"]);
  await lifecycle("verifying");
  await notify("verification", {
    run_id: runId,
    session_id: client.sessionId,
    status: "passed",
    updated_at: now(),
    checks: [
      { id: "c1", subject: "parser tests", status: "passed", command: "npm test", evidence: [{ kind: "log", summary: "42 passing" }] },
    ],
    residual_risks: installed ? [] : ["The escalated dependency was not installed."],
  });
  await lifecycle("completed", { result_summary: "Empty input no longer crashes the parser." });
  await notify("session_end", { session_id: client.sessionId, duration_ms: 1 });
  await client.close();
  out(s.bold(`The agent received ${npmInstall.decision} for the npm install.`));
  return { npmInstall, decisions };
}

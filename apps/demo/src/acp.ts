/**
 * `pnpm demo --scenario acp`: a stock ACP client and a stock ACP agent (both plain
 * `@agentclientprotocol/sdk` apps) talk through the suspend/resume bridge. The agent wants to run
 * `npm install` from an unknown registry; the harness (the built-in default policy plus an
 * operator's approval desk) escalates it, so the bridge parks the session. The operator approves,
 * fires the escalation event, the session resumes warm with the approval as input, and the next
 * turn runs the install. The timeline shows every ACP and AHP message class in order.
 */
import { agent, client, type AnyMessage, type Stream } from "@agentclientprotocol/sdk";
import { AhpClient, AhpServer, createLinkedPair, type AhpEvent, type AhpServerHandlers } from "@ahp/core";
import { createAcpBridge, MemorySuspensionStore, META } from "@ahp/acp-bridge";
import { composeHandlers, DEFAULT_POLICY, PolicyEngine } from "@ahp/policy";
import { createStyle, pad, type Style } from "./style.js";

export interface AcpDemoOptions {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  color?: boolean;
}

export interface AcpTimelineEntry {
  step: number;
  /** `ACP client→bridge`, `ACP bridge→client`, `ACP bridge→agent`, `ACP agent→bridge`, `AHP bridge→harness`, `operator`. */
  channel: string;
  /** The message class: a method, `resp:<method>`, `update:<kind>`, `lifecycle:<event>`, an AHP event type. */
  kind: string;
  detail: string;
}

export interface AcpDemoResult {
  entries: AcpTimelineEntry[];
  /** Stop reasons of the two turns. */
  stopReasons: string[];
  handle: string;
  resumed: Record<string, unknown>;
  /** The text the agent streamed in the resumed turn. */
  resumedTurnText: string;
}

const INSTALL = "npm install left-pad --registry http://registry.example.net";

/** Wire tap: records every message written on a stream pair, labelled by direction. */
/** The fields of a JSON-RPC message the timeline reads (one view for requests, notifications and responses). */
interface WireMessage {
  id?: string | number | null;
  method?: string;
  params?: { update?: WireUpdate; prompt?: { text?: string }[] };
  result?: { stopReason?: string; _meta?: Record<string, { handle?: string } | undefined> };
  error?: { code: number; data?: { reason?: string } };
}

interface WireUpdate {
  sessionUpdate?: string;
  content?: { text?: string };
  title?: string;
  status?: string;
  _meta?: Record<string, LifecycleMeta | undefined>;
}

/** The bridge's lifecycle notice in an update's `_meta`. */
interface LifecycleMeta {
  event: string;
  handle: string;
  cause?: string;
  reason?: string;
}

/** The payload fields the timeline shows (an action, a lifecycle status, a state). */
interface PayloadView {
  action_type?: string;
  arguments?: { command?: string };
  status?: string;
  current_state?: string;
}

function tap(record: (channel: string, msg: WireMessage) => void, names: [string, string]): { a: Stream; b: Stream } {
  const t = (channel: string) =>
    new TransformStream<AnyMessage, AnyMessage>({
      transform(chunk, controller) {
        record(channel, chunk as WireMessage);
        controller.enqueue(chunk);
      },
    });
  const ab = t(names[0]);
  const ba = t(names[1]);
  return { a: { writable: ab.writable, readable: ba.readable }, b: { writable: ba.writable, readable: ab.readable } };
}

/** The stock agent: says what it will do, asks permission to install, installs when allowed. */
function codingAgent() {
  let n = 0;
  const cancelled = new Set<string>();
  return agent({ name: "demo-coding-agent" })
    .onRequest("initialize", () => ({
      protocolVersion: 1,
      agentInfo: { name: "demo-coding-agent", version: "1.0.0" },
      agentCapabilities: { loadSession: false, sessionCapabilities: { resume: {} } },
    }))
    .onRequest("session/new", () => ({ sessionId: `agent-session-${++n}` }))
    .onRequest("session/resume", () => ({}))
    .onNotification("session/cancel", ({ params }) => {
      cancelled.add(params.sessionId);
    })
    .onRequest("session/prompt", async ({ params, client: editor }) => {
      const sessionId = params.sessionId;
      cancelled.delete(sessionId);
      const say = (text: string) =>
        editor.notify("session/update", { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } });
      const lead = params.prompt[0]?.type === "text" ? params.prompt[0].text : "";
      if (lead.startsWith("Resume input:")) await say("Approval received; running the install now. ");
      else await say("The parser needs left-pad; installing it. ");
      await editor.notify("session/update", {
        sessionId,
        update: {
          sessionUpdate: "tool_call",
          toolCallId: "install",
          title: INSTALL,
          kind: "execute",
          status: "pending",
          rawInput: { command: INSTALL },
        },
      });
      const permission = await editor.request("session/request_permission", {
        sessionId,
        toolCall: { toolCallId: "install", title: INSTALL, kind: "execute", rawInput: { command: INSTALL } },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      });
      for (let i = 0; i < 5 && !cancelled.has(sessionId); i++) await new Promise((r) => setImmediate(r));
      if (permission.outcome.outcome !== "selected" || permission.outcome.optionId !== "allow" || cancelled.has(sessionId))
        return { stopReason: "cancelled" as const };
      await editor.notify("session/update", {
        sessionId,
        update: { sessionUpdate: "tool_call_update", toolCallId: "install", status: "completed" },
      });
      await say("Installed left-pad; the parser tests pass.");
      return { stopReason: "end_turn" as const };
    });
}

export async function runAcpDemo(options: AcpDemoOptions): Promise<AcpDemoResult> {
  const s: Style = createStyle(options.out, options.env, options.color);
  const out = (line = "") => options.out.write(`${line}\n`);
  const entries: AcpTimelineEntry[] = [];
  const push = (channel: string, kind: string, detail = "") => {
    const e = { step: entries.length + 1, channel, kind, detail };
    entries.push(e);
    out(`${pad(String(e.step), 3)} ${pad(s.dim(channel), 20)} ${pad(colour(s, kind), 34)} ${detail}`);
  };

  // The harness: the built-in default policy, plus the operator's approvals of escalated events.
  const approvals = new Set<string>();
  let escalatedEventId = "";
  const policy = composeHandlers(new PolicyEngine(DEFAULT_POLICY));
  const describeEvent = (e: AhpEvent): string => {
    const p = e.payload as PayloadView | undefined;
    return p?.action_type
      ? `${p.action_type}${p.arguments?.command ? ` ${p.arguments.command}` : ""}`
      : p?.status
        ? `status ${p.status}`
        : (p?.current_state ?? "");
  };
  const handlers: AhpServerHandlers = {
    onEvent: async (event, ctx) => {
      const id = event.metadata?.acp_event_id;
      const decision =
        typeof id === "string" && approvals.has(id)
          ? { decision: "allow" as const, metadata: { approved_by: "operator" } }
          : await policy.onEvent!(event, ctx);
      const d = decision as { decision: string; reason?: string };
      if (d.decision === "escalate" && typeof id === "string") escalatedEventId = id;
      push("AHP bridge→harness", event.event_type, `${describeEvent(event)} → ${d.decision}${d.reason ? ` (${d.reason})` : ""}`);
      return decision;
    },
    onNotification: (event) => {
      push("AHP bridge→harness", event.event_type, describeEvent(event));
    },
  };
  const server = new AhpServer({ harnessInfo: { name: "ahp-demo-harness", version: "0.1.0" }, handlers });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const ahp = new AhpClient({ agentInfo: { framework: "ahp-acp-bridge", version: "0.1.0" } });
  await ahp.connect(agentSide);

  const methods = new Map<string, string>();
  const record = (channel: string, m: WireMessage) => {
    const key = `${channel}:${String(m.id)}`;
    if (typeof m.method === "string") {
      if (m.id !== undefined) methods.set(`${reverse(channel)}:${String(m.id)}`, m.method);
      if (m.method === "session/update") {
        const u = m.params?.update ?? {};
        const life = u._meta?.[META.lifecycle];
        if (life)
          return push(
            channel,
            `lifecycle:${life.event}`,
            `${life.handle}${life.cause ? ` cause ${life.cause}` : ""}${life.reason ? ` (${life.reason})` : ""}`,
          );
        return push(channel, `update:${u.sessionUpdate}`, u.content?.text ?? u.title ?? u.status ?? "");
      }
      return push(
        channel,
        m.method,
        m.method === "session/prompt" ? JSON.stringify((m.params?.prompt ?? []).map((b: { text?: string }) => b.text)).slice(0, 70) : "",
      );
    }
    const method = methods.get(key) ?? "?";
    const r = m.result ?? {};
    const detail = m.error
      ? `error ${m.error.code} ${m.error.data?.reason ?? ""}`
      : r.stopReason
        ? `stopReason ${r.stopReason}${r._meta?.[META.suspend]?.handle ? ` + ${META.suspend}` : ""}`
        : "";
    push(channel, m.error ? `error:${method}` : `resp:${method}`, detail);
  };
  const upstream = tap(record, ["ACP client→bridge", "ACP bridge→client"]);
  const downstream = tap(record, ["ACP bridge→agent", "ACP agent→bridge"]);
  codingAgent().connect(downstream.b);
  const bridge = await createAcpBridge({ agent: downstream.a, harness: ahp, store: new MemorySuspensionStore(), harnessPollMs: 0 });
  bridge.connect(upstream.b);
  let turnText = "";
  const editor = client({ name: "demo-editor" })
    .onNotification("session/update", ({ params }) => {
      const u = params.update as { sessionUpdate: string; content?: { text?: string } };
      if (u.sessionUpdate === "agent_message_chunk" && u.content?.text) turnText += u.content.text;
    })
    .onRequest("session/request_permission", () => ({ outcome: { outcome: "selected", optionId: "allow" } }))
    .connect(upstream.a);

  out(s.bold("ACP suspend/resume demo: a stock client and a stock agent through the bridge, supervised by a harness"));
  out(s.dim(`${pad("#", 3)} ${pad("channel", 20)} ${pad("message", 34)} detail`));
  const ctx = editor.agent;
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await ctx.request("session/new", { cwd: "/home/dev/parser", mcpServers: [] });
  const first = await ctx.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text: "Fix the parser; add left-pad if you need it." }],
  });
  await settle();
  const handle = bridge.handleOf(sessionId) ?? "";
  const escalation = entries.find((e) => e.kind === "pre_action" && e.detail.includes("escalate"));
  const eventId = escalatedEventId;
  push("operator", "approve", `the operator approves ${INSTALL} (escalation ${eventId || "?"})`);
  approvals.add(eventId);
  await bridge.fireEvent(`harness.escalation.${eventId}`, { approved: true, by: "operator", note: "registry.example.net is our mirror" });
  await settle();
  turnText = "";
  const second = await ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "Carry on." }] });
  await settle();
  const resumedEntry = entries.find((e) => e.kind === "lifecycle:resumed");
  out("");
  out(s.bold("Summary"));
  out(`  first turn   ${first.stopReason} (parked: ${handle}, ${escalation ? "escalated by the default policy" : "?"})`);
  out(`  resumed      ${resumedEntry?.detail ?? "no"}`);
  out(`  second turn  ${second.stopReason}: ${turnText.trim()}`);
  editor.close();
  await bridge.close();
  await ahp.close();
  await server.close();
  return {
    entries,
    stopReasons: [first.stopReason, second.stopReason],
    handle,
    resumed: { detail: resumedEntry?.detail },
    resumedTurnText: turnText,
  };
}

const reverse = (channel: string) =>
  ({
    "ACP client→bridge": "ACP bridge→client",
    "ACP bridge→client": "ACP client→bridge",
    "ACP bridge→agent": "ACP agent→bridge",
    "ACP agent→bridge": "ACP bridge→agent",
  })[channel] ?? channel;

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

function colour(s: Style, kind: string): string {
  if (kind.startsWith("lifecycle:")) return s.magenta(kind);
  if (kind.startsWith("error:")) return s.red(kind);
  if (kind.startsWith("resp:")) return s.green(kind);
  if (kind.startsWith("update:")) return s.dim(kind);
  if (kind === "approve") return s.yellow(kind);
  if (/^[a-z_]+$/.test(kind)) return s.cyan(kind);
  return s.bold(kind);
}

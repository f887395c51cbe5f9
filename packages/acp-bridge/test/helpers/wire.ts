/** In-memory ACP streams whose traffic is captured in write order (§9). */
import { PassThrough } from "node:stream";
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";

export interface WireEntry {
  /** Who wrote it. */
  from: "client" | "agent";
  msg: Record<string, unknown>;
}

export interface TappedPair {
  /** Give to the client app: `clientApp.connect(clientSide)`. */
  clientSide: Stream;
  /** Give to the agent app (or to `bridge.connect`). */
  agentSide: Stream;
  log: WireEntry[];
}

export function tappedPair(log: WireEntry[] = []): TappedPair {
  const tap = (from: WireEntry["from"]) =>
    new TransformStream<AnyMessage, AnyMessage>({
      transform(chunk, controller) {
        log.push({ from, msg: structuredClone(chunk) });
        controller.enqueue(chunk);
      },
    });
  const c2a = tap("client");
  const a2c = tap("agent");
  return {
    clientSide: { writable: c2a.writable, readable: a2c.readable },
    agentSide: { writable: a2c.writable, readable: c2a.readable },
    log,
  };
}

type Msg = Record<string, any>;

/** A short label per message: `prompt`, `resp:prompt`, `update:tool_call_update`, `lifecycle:suspended`, ... */
export function label(entry: WireEntry, methodsById: Map<string, string>): string {
  const m = entry.msg as Msg;
  const key = `${entry.from === "client" ? "agent" : "client"}:${String(m.id)}`;
  if (typeof m.method === "string") {
    if (m.id !== undefined) methodsById.set(`${entry.from}:${String(m.id)}`, m.method);
    if (m.method === "session/update") {
      const u = m.params?.update ?? {};
      const life = u._meta?.["ahpHarness/lifecycle"];
      if (u.sessionUpdate === "session_info_update" && life) return `lifecycle:${life.event}`;
      return `update:${u.sessionUpdate}${u.toolCallId ? `(${u.toolCallId}${u.status ? `:${u.status}` : ""})` : ""}`;
    }
    return m.method;
  }
  const method = methodsById.get(key) ?? "?";
  return m.error ? `err:${method}` : `resp:${method}`;
}

/** Labels of the whole log (both directions). */
export function labels(log: WireEntry[], filter?: (l: string) => boolean): string[] {
  const ids = new Map<string, string>();
  const out = log.map((e) => label(e, ids));
  return filter ? out.filter(filter) : out;
}

/** Position of the first label matching, or -1. */
export const indexOf = (ls: string[], l: string | RegExp): number => ls.findIndex((x) => (typeof l === "string" ? x === l : l.test(x)));

/** Every session/update the agent side sent. */
export function updates(log: WireEntry[]): Msg[] {
  return log
    .filter((e) => e.from === "agent" && (e.msg as Msg).method === "session/update")
    .map((e) => (e.msg as Msg).params.update as Msg);
}

export function lifecycleEvents(log: WireEntry[]): Msg[] {
  return updates(log)
    .map((u) => u._meta?.["ahpHarness/lifecycle"] as Msg | undefined)
    .filter((x): x is Msg => x !== undefined && x !== null);
}

/** No custom sessionUpdate or stopReason reached the client (§8 preamble). */
export function assertStockSafe(log: WireEntry[]): string[] {
  const problems: string[] = [];
  const standard = new Set([
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
  ]);
  const stops = new Set(["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]);
  for (const e of log) {
    if (e.from !== "agent") continue;
    const m = e.msg as Msg;
    if (m.method === "session/update" && !standard.has(m.params?.update?.sessionUpdate))
      problems.push(`custom update ${m.params?.update?.sessionUpdate}`);
    if (m.result && typeof m.result === "object" && "stopReason" in m.result && !stops.has(m.result.stopReason))
      problems.push(`custom stopReason ${m.result.stopReason}`);
  }
  return problems;
}

/**
 * Node streams between a client and the bridge (the way `ahp acp-proxy` serves stdio), with the
 * bytes of both directions captured line by line as they are written.
 */
export function tappedNodePair(log: WireEntry[] = []): { up: PassThrough; down: PassThrough; log: WireEntry[] } {
  const up = new PassThrough();
  const down = new PassThrough();
  const tap = (from: WireEntry["from"], s: PassThrough) => {
    let carry = "";
    s.on("data", (chunk: Buffer) => {
      const text = carry + chunk.toString("utf8");
      const parts = text.split("\n");
      carry = parts.pop() ?? "";
      for (const line of parts) if (line.trim() !== "") log.push({ from, msg: JSON.parse(line) as Record<string, unknown> });
    });
  };
  tap("client", up);
  tap("agent", down);
  return { up, down, log };
}

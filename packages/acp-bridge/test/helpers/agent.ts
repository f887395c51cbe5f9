/**
 * A stock SDK agent double (§9): implements `session/resume`, `session/load`, `session/cancel`
 * and streams tool calls on a script the test controls. Records every request it receives.
 */
import { agent, type AgentApp, type AgentContext, type PromptRequest, type StopReason } from "@agentclientprotocol/sdk";
import { deferred } from "@ahp/conformance";

export interface TurnContext {
  sessionId: string;
  prompt: PromptRequest;
  client: AgentContext;
  signal: AbortSignal;
  cancelled(): boolean;
  /** Resolves when `session/cancel` arrives for this session. */
  whenCancelled: Promise<void>;
  text(t: string): Promise<void>;
  update(u: Record<string, unknown>): Promise<void>;
  /** Announces a tool call (pending), dispatches it (in_progress), waits for `until`, completes it. */
  tool(id: string, until?: Promise<unknown>): Promise<void>;
  /**
   * The next model call, which a real model round trip would make after any queued message. With
   * `cancelComing` the test expects a cancel first: waits for it (failing after a generous deadline);
   * otherwise a short window in which a stray cancel would arrive.
   */
  think(cancelComing?: boolean): Promise<void>;
}

export type TurnScript = (t: TurnContext) => Promise<StopReason>;

export interface AgentDoubleOptions {
  resume?: boolean;
  load?: boolean;
  close?: boolean;
  delete?: boolean;
  /** `agentCapabilities._meta["ahpHarness/suspend"]` of an aware agent. */
  descriptor?: Record<string, unknown>;
  turn?: TurnScript;
  /** Extra handlers (e.g. the tunnel suspend of an aware agent). */
  extend?: (app: AgentApp, double: AgentDouble) => void;
}

export interface AgentDouble {
  app: AgentApp;
  /** Every request and notification received: method and params as parsed. */
  calls: Array<{ method: string; params: any }>;
  /** Per session: the updates sent (the transcript replayed on load). */
  history: Map<string, Array<Record<string, unknown>>>;
  cancels: Set<string>;
  /** Signals a turn in progress; `turnStarted.get(sessionId)` resolves when the next turn starts. */
  nextTurn(): Promise<TurnContext>;
}

export function agentDouble(options: AgentDoubleOptions = {}): AgentDouble {
  const calls: AgentDouble["calls"] = [];
  const history = new Map<string, Array<Record<string, unknown>>>();
  const cancels = new Set<string>();
  const cancelWaiters = new Map<string, () => void>();
  let turnWaiter = deferred<TurnContext>();
  let n = 0;
  const turn: TurnScript =
    options.turn ??
    (async (t) => {
      await t.text("hello");
      return "end_turn";
    });
  const app = agent({ name: "stock-agent-double" })
    .onRequest("initialize", ({ params }) => {
      calls.push({ method: "initialize", params });
      const sessionCapabilities: Record<string, unknown> = {};
      if (options.resume !== false) sessionCapabilities.resume = {};
      if (options.close !== false) sessionCapabilities.close = {};
      if (options.delete) sessionCapabilities.delete = {};
      return {
        protocolVersion: 1,
        agentInfo: { name: "stock-agent-double", version: "1.0.0" },
        agentCapabilities: {
          loadSession: options.load !== false,
          sessionCapabilities,
          ...(options.descriptor ? { _meta: { "ahpHarness/suspend": options.descriptor } } : {}),
        },
      };
    })
    .onRequest("session/new", ({ params }) => {
      calls.push({ method: "session/new", params });
      const sessionId = `s${++n}`;
      history.set(sessionId, []);
      return { sessionId };
    })
    .onRequest("session/resume", ({ params }) => {
      calls.push({ method: "session/resume", params });
      if (!history.has(params.sessionId)) history.set(params.sessionId, []);
      return {};
    })
    .onRequest("session/load", async ({ params, client }) => {
      calls.push({ method: "session/load", params });
      for (const update of history.get(params.sessionId) ?? [])
        await client.notify("session/update", { sessionId: params.sessionId, update } as never);
      return {};
    })
    .onRequest("session/close", ({ params }) => {
      calls.push({ method: "session/close", params });
      return {};
    })
    .onRequest("session/delete", ({ params }) => {
      calls.push({ method: "session/delete", params });
      history.delete(params.sessionId);
      return {};
    })
    .onNotification("session/cancel", ({ params }) => {
      calls.push({ method: "session/cancel", params });
      cancels.add(params.sessionId);
      cancelWaiters.get(params.sessionId)?.();
    })
    .onRequest("session/prompt", async ({ params, client, signal }) => {
      calls.push({ method: "session/prompt", params });
      cancels.delete(params.sessionId);
      const sessionId = params.sessionId;
      const log = history.get(sessionId) ?? [];
      history.set(sessionId, log);
      const whenCancelled = new Promise<void>((resolve) => cancelWaiters.set(sessionId, resolve));
      const send = async (update: Record<string, unknown>) => {
        log.push(update);
        await client.notify("session/update", { sessionId, update } as never);
      };
      for (const block of params.prompt) if (block.type === "text") log.push({ sessionUpdate: "user_message_chunk", content: block });
      const ctx: TurnContext = {
        sessionId,
        prompt: params,
        client,
        signal,
        cancelled: () => cancels.has(sessionId),
        whenCancelled,
        text: (t) => send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } }),
        update: send,
        think: async (cancelComing = false) => {
          if (!cancelComing) return new Promise<void>((r) => setTimeout(r, 20));
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error("no session/cancel reached the agent within 60 s")), 60_000);
          });
          await Promise.race([whenCancelled, late]).finally(() => clearTimeout(timer));
        },
        tool: async (id, until) => {
          await send({ sessionUpdate: "tool_call", toolCallId: id, title: `tool ${id}`, kind: "execute", status: "pending" });
          await send({ sessionUpdate: "tool_call_update", toolCallId: id, status: "in_progress" });
          if (until !== undefined) await until;
          await send({ sessionUpdate: "tool_call_update", toolCallId: id, status: "completed" });
        },
      };
      const current = turnWaiter;
      turnWaiter = deferred<TurnContext>();
      current.resolve(ctx);
      const stopReason = await turn(ctx);
      return { stopReason: ctx.cancelled() ? "cancelled" : stopReason };
    });
  const double: AgentDouble = { app, calls, history, cancels, nextTurn: () => turnWaiter.promise };
  options.extend?.(app, double);
  return double;
}

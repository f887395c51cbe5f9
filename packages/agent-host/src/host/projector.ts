/**
 * The projector (spec §8): turns harness events and the decisions the harness produced into
 * Agent Host actions, in a fixed order, synchronously per event. For blocking events it returns
 * the decision to hand back to the agent — the one the policy produced, or, for an escalation
 * held for a human, a promise of the human's (or the fail-closed) decision.
 */
import type { AhpEvent, ConfirmationDecisionInput, DecisionInput, HandshakeRequest } from "@ahp/core";
import { META } from "../wire/constants.js";
import type { ChatState, Meta, StateAction } from "../wire/types.js";
import { ALREADY_RESOLVED, cancelReason, type ApprovalBroker, type DecidedInfo } from "./approvals.js";
import { holdBudget, parseClientWait, type ClientWait } from "./hold-wait.js";
import { commitChat, nowIso, setChatMeta, type ChatRecord, type SessionRecord, type ToolRecord } from "./model.js";
import { isPerCallAgent, type Sessions } from "./sessions.js";
import {
  asObject,
  compactJson,
  confirmationOptions,
  DEFAULT_LABELS,
  displayNameOf,
  intentionOf,
  invocationMessageOf,
  suppliedToolCallId,
  toolInputOf,
  toolNameOf,
  toolResultOf,
  truncate,
  type ApprovalLabels,
} from "./tool-calls.js";

export interface ProjectorOptions {
  /** Whether escalations of this event wait for a human (§9.1). Default: always. */
  humanGate: (event: AhpEvent) => boolean;
  /** Humans may edit arguments before approving (then an approval may become `modify`). */
  editable: boolean;
  /** How long a held request may wait, in ms; 0 or less disables holding. */
  holdBudgetMs: () => number;
  labels?: ApprovalLabels;
  onDecided?: (info: DecidedInfo) => void;
  /** A malformed `metadata.ahp_wait` was ignored (ADR 0145). */
  onignored?: (problem: string, event: AhpEvent) => void;
  touched: (session: SessionRecord) => void;
}

const ACTIVITY_LABELS: Record<string, string> = {
  intent_detection: "Detecting intent",
  context_perception: "Perceiving context",
  memory_recall: "Recalling memory",
  planning: "Planning",
};

const RUN_ACTIVITY: Record<string, string> = { planning: "Planning", executing: "Executing", verifying: "Verifying" };
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export class Projector {
  constructor(
    readonly sessions: Sessions,
    readonly broker: ApprovalBroker,
    readonly options: ProjectorOptions,
  ) {}

  get store() {
    return this.sessions.store;
  }

  #chat(session: SessionRecord, chat: ChatRecord, action: StateAction): void {
    commitChat(this.store, session, chat, action);
  }

  #notice(session: SessionRecord, chat: ChatRecord, text: string, meta?: Meta): void {
    const turnId = this.sessions.ensureTurn(session, chat);
    this.#chat(session, chat, {
      type: "chat/responsePart",
      turnId,
      part: { kind: "systemNotification", content: text, ...(meta === undefined ? {} : { _meta: meta }) },
    });
  }

  #activity(session: SessionRecord, chat: ChatRecord, activity: string | undefined): void {
    if (this.store.get<ChatState>(chat.uri)?.activity === activity) return;
    this.#chat(session, chat, activity === undefined ? { type: "chat/activityChanged" } : { type: "chat/activityChanged", activity });
  }

  /** `ahp/handshake` of an agent connection. */
  handshake(request: HandshakeRequest, connectionId: number): void {
    const capabilities = [...request.agent_info.capabilities];
    this.sessions.identify(connectionId, {
      key: JSON.stringify([request.agent_info.framework, request.session_id, request.agent_id]),
      perCall: isPerCallAgent(capabilities),
      sessionId: request.session_id,
    });
    const { session } = this.sessions.resolve(
      request.session_id,
      request.agent_id,
      0,
      connectionId,
      { framework: request.agent_info.framework, version: request.agent_info.version, capabilities },
      true,
    );
    this.options.touched(session);
  }

  /** A non-blocking event (or one that needs no decision handling). */
  notify(event: AhpEvent, connectionId: number): void {
    const { session, chat } = this.sessions.resolve(
      event.session_id,
      event.agent_id,
      event.depth,
      connectionId,
      undefined,
      event.event_type === "session_start",
    );
    const p = asObject(event.payload);
    switch (event.event_type) {
      case "session_start":
        session.cancelling = undefined;
        this.store.commit(session.uri, { type: "session/activityChanged", activity: "Started" });
        break;
      case "session_end":
        this.sessions.endSession(session, "complete", "The session ended before a decision");
        break;
      case "run_lifecycle":
        this.#run(session, chat, p);
        break;
      case "post_action":
        this.#postAction(session, chat, event);
        break;
      case "post_response":
        this.#postResponse(session, chat, p);
        break;
      case "task_list": {
        const tasks = Array.isArray(p.tasks) ? (p.tasks as unknown[]) : [];
        setChatMeta(this.store, session, META.taskList, chat.uri, { runId: p.run_id, updatedAt: p.updated_at, tasks });
        if (chat.turnId !== undefined) {
          const done = tasks.filter((t) => asObject(t).status === "completed").length;
          this.#activity(session, chat, `${done}/${tasks.length} tasks`);
        }
        break;
      }
      case "verification":
        this.#verification(session, chat, p);
        break;
      case "error":
        this.#notice(
          session,
          chat,
          `Error: ${truncate(str(p.message) ?? str(p.error) ?? compactJson(event.payload) ?? "unknown error", 4096)}`,
        );
        break;
      default:
        break;
    }
    this.options.touched(session);
  }

  #run(session: SessionRecord, chat: ChatRecord, p: Record<string, unknown>): void {
    const runId = str(p.run_id) ?? "run";
    const status = String(p.status);
    const starting = status === "created" || status === "planning" || status === "executing";
    if (starting && chat.turnId !== runId) {
      if (chat.turnId !== undefined) this.sessions.endTurn(session, chat, "complete");
      session.cancelling = undefined;
      this.sessions.startTurn(
        session,
        chat,
        runId,
        str(p.prompt) ?? `(run ${runId})`,
        chat.depth === 0 ? "user" : "agent",
        false,
        str(p.started_at),
      );
    }
    setChatMeta(this.store, session, META.run, chat.uri, {
      runId,
      status,
      ...(str(p.prompt) === undefined ? {} : { prompt: p.prompt }),
      ...(str(p.started_at) === undefined ? {} : { startedAt: p.started_at }),
      updatedAt: p.updated_at ?? nowIso(this.store),
    });
    if (chat.turnId !== runId) return;
    const label = RUN_ACTIVITY[status];
    if (label !== undefined) this.#activity(session, chat, label);
    else if (status === "completed") this.sessions.endTurn(session, chat, "complete");
    else if (status === "cancelled") this.sessions.endTurn(session, chat, "cancelled");
    else if (status === "failed")
      this.sessions.endTurn(session, chat, "error", { errorType: "run_failed", message: str(p.error) ?? "The run failed" });
  }

  #postAction(session: SessionRecord, chat: ChatRecord, event: AhpEvent): void {
    const toolName = toolNameOf(event.payload);
    const id = suppliedToolCallId(event.payload, event.metadata);
    let tool: ToolRecord | undefined;
    const state = this.store.get<ChatState>(chat.uri);
    if (id !== undefined) tool = chat.tools.get(id);
    else
      for (const t of chat.tools.values())
        if (t.toolName === toolName && isRunning(state, t)) {
          tool = t;
          break;
        } // oldest first: Map keeps insertion order
    if (tool === undefined || !isRunning(state, tool)) {
      // No match: synthesize start + ready (not-needed) in the current (or an implicit) turn.
      const turnId = this.sessions.ensureTurn(session, chat);
      const toolCallId = id !== undefined && !chat.tools.has(id) ? id : `tc-${++chat.toolCounter}`;
      tool = { toolCallId, toolName, turnId, payload: event.payload };
      chat.tools.set(toolCallId, tool);
      this.#start(session, chat, tool);
      this.#chat(session, chat, {
        type: "chat/toolCallReady",
        turnId,
        toolCallId,
        invocationMessage: invocationMessageOf(toolName, asObject(event.payload).arguments),
        toolInput: toolInputOf(asObject(event.payload).arguments),
        confirmed: "not-needed",
      });
    }
    const meta = tool.pendingMeta;
    tool.pendingMeta = undefined;
    this.#chat(session, chat, {
      type: "chat/toolCallComplete",
      turnId: tool.turnId,
      toolCallId: tool.toolCallId,
      result: toolResultOf(tool.toolName, event.payload),
      ...(meta === undefined ? {} : { _meta: meta }),
    });
    chat.tools.delete(tool.toolCallId);
  }

  #postResponse(session: SessionRecord, chat: ChatRecord, p: Record<string, unknown>): void {
    const text = str(p.response) ?? str(p.text) ?? str(p.content) ?? str(p.output) ?? str(p.message);
    const reasoning = str(p.reasoning) ?? str(p.thinking);
    const usageIn = asObject(p.usage);
    const usage: Record<string, unknown> = {};
    const num = (...values: unknown[]) => values.find((v) => typeof v === "number" && Number.isFinite(v));
    const input = num(usageIn.input_tokens, usageIn.prompt_tokens, p.input_tokens);
    const output = num(usageIn.output_tokens, usageIn.completion_tokens, p.output_tokens);
    const cache = num(usageIn.cache_read_tokens, p.cache_read_tokens);
    if (input !== undefined) usage.inputTokens = input;
    if (output !== undefined) usage.outputTokens = output;
    if (cache !== undefined) usage.cacheReadTokens = cache;
    const model = str(usageIn.model) ?? str(p.model);
    if (model !== undefined && Object.keys(usage).length > 0) usage.model = model;
    if (text === undefined && reasoning === undefined && Object.keys(usage).length === 0) return;
    const turnId = this.sessions.ensureTurn(session, chat);
    if (reasoning !== undefined)
      this.#chat(session, chat, {
        type: "chat/responsePart",
        turnId,
        part: { kind: "reasoning", id: `part-${++chat.partCounter}`, content: truncate(reasoning) },
      });
    if (text !== undefined)
      this.#chat(session, chat, {
        type: "chat/responsePart",
        turnId,
        part: { kind: "markdown", id: `part-${++chat.partCounter}`, content: truncate(text) },
      });
    if (Object.keys(usage).length > 0) this.#chat(session, chat, { type: "chat/usage", turnId, usage });
  }

  #verification(session: SessionRecord, chat: ChatRecord, p: Record<string, unknown>): void {
    setChatMeta(this.store, session, META.verification, chat.uri, {
      runId: p.run_id,
      status: p.status,
      checks: p.checks ?? [],
      residualRisks: p.residual_risks ?? [],
      updatedAt: p.updated_at,
    });
    const status = String(p.status);
    if (chat.turnId === undefined || !["passed", "failed", "needs_review"].includes(status)) return;
    const checks = Array.isArray(p.checks) ? p.checks.map(asObject) : [];
    const lines = [`Verification ${status.replace("_", " ")}`];
    for (const c of checks)
      lines.push(`- ${String(c.subject ?? c.id)}: ${String(c.status)}${str(c.message) === undefined ? "" : ` (${String(c.message)})`}`);
    const risks = Array.isArray(p.residual_risks) ? p.residual_risks.map(String) : [];
    if (risks.length > 0) lines.push(`Residual risks: ${risks.join("; ")}`);
    this.#notice(session, chat, truncate(lines.join("\n"), 8192));
  }

  #start(session: SessionRecord, chat: ChatRecord, tool: ToolRecord): void {
    const intention = intentionOf(tool.payload);
    this.#chat(session, chat, {
      type: "chat/toolCallStart",
      turnId: tool.turnId,
      toolCallId: tool.toolCallId,
      toolName: tool.toolName,
      displayName: displayNameOf(tool.toolName),
      ...(intention === undefined ? {} : { intention }),
    });
  }

  /**
   * A blocking event and the decision the inner handlers produced (`failure` when they threw).
   * Returns the decision for the agent, possibly a promise when a human has to answer.
   */
  decide(event: AhpEvent, decision: unknown, failure: unknown, connectionId: number, signal?: () => AbortSignal): unknown {
    if (event.event_type === "pre_action") return this.#preAction(event, decision as DecisionInput, connectionId, signal);
    if (event.event_type === "pre_prompt") return this.#prePrompt(event, decision as DecisionInput, connectionId);
    if (event.event_type === "confirmation") return this.#confirmation(event, decision, failure, connectionId, signal);
    const { session, chat } = this.sessions.resolve(event.session_id, event.agent_id, event.depth, connectionId);
    const p = asObject(event.payload);
    switch (event.event_type) {
      case "idle":
        if (chat.turnId !== undefined && chat.implicit) this.sessions.endTurn(session, chat, "complete");
        break;
      case "rate_limit":
        this.#notice(session, chat, `Rate limited (${str(p.limit_type) ?? "limit"}), retry in ${Number(p.retry_after_ms ?? 0)} ms`);
        break;
      case "reasoning": {
        const text = str(p.problem_statement) ?? str(p.reasoning) ?? str(p.text);
        if (text !== undefined) {
          const turnId = this.sessions.ensureTurn(session, chat);
          this.#chat(session, chat, {
            type: "chat/responsePart",
            turnId,
            part: { kind: "reasoning", id: `part-${++chat.partCounter}`, content: truncate(text) },
          });
        }
        break;
      }
      default: {
        const label = ACTIVITY_LABELS[event.event_type];
        if (label !== undefined) this.#activity(session, chat, label);
        else if (failure === undefined && decision === undefined) this.notify(event, connectionId);
      }
    }
    this.options.touched(session);
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the inner handler's own error unchanged
    if (failure !== undefined) throw failure;
    return decision;
  }

  #prePrompt(event: AhpEvent, decision: DecisionInput, connectionId: number): DecisionInput {
    const { session, chat } = this.sessions.resolve(event.session_id, event.agent_id, event.depth, connectionId);
    const prompt = str(asObject(event.payload).prompt);
    this.sessions.ensureTurn(session, chat, prompt === undefined ? undefined : truncate(prompt, 4096));
    let out = decision;
    if (session.cancelling !== undefined) out = { decision: "block", reason: session.cancelling };
    const meta = { [META.decision]: decisionMeta(out, "policy") };
    if (out.decision === "allow") this.#activity(session, chat, "Thinking");
    else if (out.decision === "modify") this.#notice(session, chat, "Prompt modified by harness policy", meta);
    else if (out.decision === "block") this.#notice(session, chat, `Prompt blocked: ${out.reason}`, meta);
    else if (out.decision === "defer") this.#notice(session, chat, `Prompt deferred for ${out.retry_after_ms} ms`, meta);
    else if (out.decision === "escalate") this.#notice(session, chat, `Prompt escalated: ${out.reason}`, meta);
    this.options.onDecided?.({
      session,
      chat,
      ...(chat.turnId === undefined ? {} : { turnId: chat.turnId }),
      eventType: "pre_prompt",
      decision: out.decision,
      decidedBy: "policy",
    });
    this.options.touched(session);
    return out;
  }

  #preAction(
    event: AhpEvent,
    decision: DecisionInput,
    connectionId: number,
    signal?: () => AbortSignal,
  ): DecisionInput | Promise<DecisionInput> {
    const { session, chat } = this.sessions.resolve(event.session_id, event.agent_id, event.depth, connectionId);
    const turnId = this.sessions.ensureTurn(session, chat);
    const supplied = suppliedToolCallId(event.payload, event.metadata);
    const toolCallId = supplied !== undefined && !chat.tools.has(supplied) ? supplied : `tc-${++chat.toolCounter}`;
    const toolName = toolNameOf(event.payload);
    const tool: ToolRecord = { toolCallId, toolName, turnId, payload: event.payload };
    chat.tools.set(toolCallId, tool);
    this.#start(session, chat, tool);
    const args = asObject(event.payload).arguments;
    const ready: StateAction = {
      type: "chat/toolCallReady",
      turnId,
      toolCallId,
      invocationMessage: invocationMessageOf(toolName, args),
      toolInput: toolInputOf(args),
    };
    let out: DecisionInput = session.cancelling !== undefined ? { decision: "block", reason: session.cancelling } : decision;
    let decidedBy: DecidedInfo["decidedBy"] = "policy";
    const rule = out.decision === "escalate" ? session.rules.find((r) => r.tool === toolName) : undefined;
    if (rule !== undefined) {
      // `reason` is an extra member of `allow` (ignored by agents), kept by the audit record (ADR 0162).
      out = {
        decision: "allow",
        reason: `Approved by ${rule.createdBy}'s rule for this session`,
        metadata: { approved_by: rule.createdBy, rule: `allow-session:${toolName}` },
      } as DecisionInput;
      decidedBy = "human";
      this.#chat(session, chat, {
        ...ready,
        confirmed: "setting",
        _meta: {
          [META.decision]: { decision: "allow", rules: [`allow-session:${toolName}`], decidedBy: "human", approver: rule.createdBy },
        },
      });
      this.#toolDecided(session, chat, turnId, toolCallId, out.decision, decidedBy);
      return out;
    }
    switch (out.decision) {
      case "allow":
        // Added last, as a spread copy would: the action's fields keep their order.
        ready.confirmed = "not-needed";
        this.#chat(session, chat, ready);
        break;
      case "modify": {
        const modified = asObject(out.modified_payload);
        this.#chat(session, chat, {
          ...ready,
          toolInput: toolInputOf(modified.arguments ?? out.modified_payload),
          confirmed: "not-needed",
          _meta: { [META.decision]: decisionMeta(out, "policy") },
        });
        break;
      }
      case "block":
      case "defer": {
        this.#chat(session, chat, ready);
        const reasonMessage = out.decision === "block" ? out.reason : `Deferred by harness; retry in ${out.retry_after_ms} ms`;
        this.#chat(session, chat, {
          type: "chat/toolCallConfirmed",
          turnId,
          toolCallId,
          approved: false,
          reason: out.decision === "block" ? "denied" : "skipped",
          reasonMessage,
          _meta: { [META.decision]: decisionMeta(out, "policy") },
        });
        break;
      }
      case "escalate": {
        const hostBudget = this.options.holdBudgetMs();
        if (this.options.humanGate(event) && hostBudget > 0) {
          const wait = this.#clientWait(event);
          const budget = holdBudget(hostBudget, wait);
          const target = out.escalation_target ?? undefined;
          const labels = this.options.labels ?? DEFAULT_LABELS;
          const options = confirmationOptions(toolName, labels);
          this.#chat(session, chat, {
            ...ready,
            confirmationTitle: labels.title(displayNameOf(toolName)),
            editable: this.options.editable,
            options,
            _meta: {
              [META.decision]: {
                ...decisionMeta(out, "policy"),
                waiting: true,
                deadline: new Date(this.store.clock() + budget).toISOString(),
                ...(target === undefined || target === "" ? {} : { escalationTarget: target }),
              },
            },
          });
          this.options.touched(session);
          return this.broker.holdTool(session, chat, tool, this.options.editable, options, budget, signal, {
            ...(wait === undefined ? {} : { wait }),
            ...(target === undefined || target === "" ? {} : { target }),
            why: out.reason,
          });
        }
        this.#chat(session, chat, ready);
        this.#chat(session, chat, {
          type: "chat/toolCallConfirmed",
          turnId,
          toolCallId,
          approved: false,
          reason: "skipped",
          reasonMessage: `Escalated: ${out.reason}`,
          _meta: { [META.decision]: decisionMeta(out, "policy") },
        });
        break;
      }
    }
    this.#toolDecided(session, chat, turnId, toolCallId, out.decision, decidedBy);
    return out;
  }

  #toolDecided(
    session: SessionRecord,
    chat: ChatRecord,
    turnId: string,
    toolCallId: string,
    decision: DecisionInput["decision"],
    decidedBy: DecidedInfo["decidedBy"],
  ): void {
    this.options.onDecided?.({ session, chat, turnId, toolCallId, eventType: "pre_action", decision, decidedBy });
    this.options.touched(session);
  }

  #confirmation(event: AhpEvent, decision: unknown, failure: unknown, connectionId: number, signal?: () => AbortSignal): unknown {
    const d = decision as ConfirmationDecisionInput | undefined;
    const wantsHuman = failure !== undefined || d?.decision === "escalate";
    const hostBudget = this.options.holdBudgetMs();
    if (!wantsHuman || !this.options.humanGate(event) || hostBudget <= 0) {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the inner handler's own error unchanged
      if (failure !== undefined) throw failure;
      return decision;
    }
    const { session, chat } = this.sessions.resolve(event.session_id, event.agent_id, event.depth, connectionId);
    const turnId = this.sessions.ensureTurn(session, chat);
    const wait = this.#clientWait(event);
    return this.broker.holdInput(session, chat, turnId, event.payload, holdBudget(hostBudget, wait), signal, {
      ...(wait === undefined ? {} : { wait }),
    });
  }

  /** The client's own limit from `metadata.ahp_wait`; a malformed one is reported and ignored. */
  #clientWait(event: AhpEvent): ClientWait | undefined {
    const { wait, problem } = parseClientWait(event.metadata);
    if (problem !== undefined) this.options.onignored?.(problem, event);
    return wait;
  }

  /**
   * An operator cancels the active turn. Before the client's `chat/turnCancelled` is committed
   * (`commit`), every held request of the session resolves `block` recording who cancelled it;
   * afterwards the session blocks until a new run.
   */
  cancelled(session: SessionRecord, chat: ChatRecord, principal: string, commit: () => void): void {
    session.cancelling = cancelReason(principal);
    this.broker.cancelSession(session, principal);
    commit();
    this.sessions.turnEnded(session, chat);
    this.options.touched(session);
  }
}

/** Whether `tool` is a running call of the active turn (searched from the newest part: it is nearly always one of the latest). */
function isRunning(state: ChatState | undefined, tool: ToolRecord): boolean {
  const turn = state?.activeTurn;
  if (turn === undefined || turn.id !== tool.turnId) return false;
  const parts = turn.responseParts;
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    if (part.kind !== "toolCall") continue;
    const call = (part as { toolCall: { toolCallId: string; status: string } }).toolCall;
    if (call.toolCallId === tool.toolCallId && call.status === "running") return true;
  }
  return false;
}

function decisionMeta(decision: DecisionInput, by: DecidedInfo["decidedBy"]): Record<string, unknown> {
  const meta: Record<string, unknown> = { decision: decision.decision, decidedBy: by };
  if ("reason" in decision && typeof decision.reason === "string") meta.reason = decision.reason;
  const rule = "metadata" in decision ? asObject(decision.metadata).rule : undefined;
  if (typeof rule === "string") meta.rules = [rule];
  return meta;
}

export { ALREADY_RESOLVED };

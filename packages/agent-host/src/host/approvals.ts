/**
 * The approval broker (spec §9): holds harness requests that wait for a human, validates client
 * answers, resolves every held request exactly once, and fails closed on timeout, agent
 * disconnect, session end, turn end and cancel. Each resolution commits the actions that
 * describe it before the decision is released to the agent (§7.3).
 */
import type { ConfirmationDecisionInput, DecisionInput } from "@ahp/core";
import { META } from "../wire/constants.js";
import type { ActionOrigin, ChatInputRequest, ChatState, ConfirmationOption, StateAction, ToolCallState } from "../wire/types.js";
import { addRule, commitChat, nowIso, type ChatRecord, type SessionRecord, type ToolRecord } from "./model.js";
import type { Scheduler } from "./scheduler.js";
import type { Sessions } from "./sessions.js";
import type { ChannelStore } from "./store.js";
import { asObject } from "./tool-calls.js";
import { seconds, type ClientWait, type HoldOutcome } from "./hold-wait.js";

/**
 * What a client may do (spec §3): a `viewer` watches, an `approver` also answers tool approvals and
 * input requests, an `operator` also cancels runs and disposes ended sessions.
 */
export type Role = "viewer" | "approver" | "operator";
export const ROLE_RANK: Record<Role, number> = { viewer: 0, approver: 1, operator: 2 };

/** Who dispatched a client action. */
export interface Dispatcher {
  clientId: string;
  principal: string;
  role: Role;
}

/**
 * One harness decision as the adapter saw it settled (by the `policy`, a `human` or a `timeout`), with
 * its session, chat, turn, tool call and event type. The approval broker and projector report it to their
 * `onDecided` hook, which feeds the telemetry channel (spec §11).
 */
export interface DecidedInfo {
  session: SessionRecord;
  chat: ChatRecord;
  turnId?: string;
  toolCallId?: string;
  eventType: string;
  decision: string;
  decidedBy: "policy" | "human" | "timeout";
}

/**
 * A held request as approvers should hear of it (notifications, harness log): when it starts to
 * wait (`held`) and how it ended (`resolved`). Carries no client credentials.
 */
export interface ApprovalEvent {
  phase: "held" | "resolved";
  /** The held request's id (`<chat uri>#<tool call or request id>`). */
  id: string;
  kind: "tool" | "input";
  sessionId: string;
  sessionUri: string;
  agentId: string;
  /** Tool name, or "confirmation". */
  subject: string;
  /** What the policy said when it escalated (or the confirmation's message). */
  why?: string;
  /** Who the policy escalated to (`escalation_target`), when it said. */
  target?: string;
  /** When the hold ends on its own (ISO 8601). */
  deadline: string;
  /** On `resolved`: the decision the agent got, what happened, who decided, and why. */
  decision?: string;
  outcome?: HoldOutcome;
  approver?: string;
  reason?: string;
}

/** What the broker knows of a hold besides its budget: the client's own limit, the policy's target and reason. */
export interface HoldContext {
  wait?: ClientWait;
  target?: string;
  why?: string;
}

interface HeldBase {
  id: string;
  session: SessionRecord;
  chat: ChatRecord;
  turnId: string;
  timer: unknown;
  budgetMs: number;
  context: HoldContext;
  deadline: string;
}
interface HeldTool extends HeldBase {
  kind: "tool";
  tool: ToolRecord;
  editable: boolean;
  options: ConfirmationOption[];
  settle: (decision: DecisionInput) => void;
}
interface HeldInput extends HeldBase {
  kind: "input";
  requestId: string;
  settle: (decision: ConfirmationDecisionInput) => void;
}
type Held = HeldTool | HeldInput;

export interface ApprovalOptions {
  /** Decision when a held tool approval times out or its agent is gone. Default `block` (fail closed). */
  timeoutDecision: "block" | "escalate";
  onDecided?: (info: DecidedInfo) => void;
  /** A hold started or ended (notifications, log lines). Never on the decision path: errors are swallowed. */
  onapproval?: (event: ApprovalEvent) => void;
  touched: (session: SessionRecord) => void;
}

export const ALREADY_RESOLVED = "already resolved";
export const CANCEL_REASON = "Run cancelled from an Agent Host client";

/** The reason of the decisions that follow an operator's cancel: the specification's words and who cancelled (ADR 0162). */
export const cancelReason = (principal: string): string => `${CANCEL_REASON} by ${principal}`;

/** A reason a person typed, followed by who gave it (ADR 0162): `not now (denied by bob)`. */
const typedReason = (typed: string, verb: string, principal: string): string => `${typed} (${verb} by ${principal})`;

/**
 * A decision with the reason the audit log records (ADR 0162). AHP 2.4 has no `reason` on
 * `allow` or on `approve`/`escalate` of a confirmation: there it is an extra member, which
 * receivers ignore (AHP spec §3.5) and the audit record keeps.
 */
function withReason<T extends DecisionInput | ConfirmationDecisionInput>(decision: T, reason: string): T {
  const out: T = { ...decision, reason };
  return out;
}

export class ApprovalBroker {
  readonly #held = new Map<string, Held>();

  constructor(
    readonly store: ChannelStore,
    readonly sessions: Sessions,
    readonly scheduler: Scheduler,
    readonly options: ApprovalOptions,
  ) {}

  get size(): number {
    return this.#held.size;
  }

  /** Holds a `pre_action` escalation: the tool call is already pending; adds the `toolConfirmation` entry. */
  holdTool(
    session: SessionRecord,
    chat: ChatRecord,
    tool: ToolRecord,
    editable: boolean,
    options: ConfirmationOption[],
    budgetMs: number,
    signal?: () => AbortSignal,
    context: HoldContext = {},
  ): Promise<DecisionInput> {
    const id = `${chat.uri}#${tool.toolCallId}`;
    const toolCall = findToolCall(this.store.get<ChatState>(chat.uri), tool.toolCallId);
    this.store.commit(session.uri, {
      type: "session/inputNeededSet",
      request: { kind: "toolConfirmation", id, chat: chat.uri, turnId: tool.turnId, ...(toolCall === undefined ? {} : { toolCall }) },
    });
    this.options.touched(session);
    return new Promise<DecisionInput>((settle) => {
      const held: HeldTool = {
        kind: "tool",
        id,
        session,
        chat,
        turnId: tool.turnId,
        tool,
        editable,
        options,
        settle,
        budgetMs,
        timer: undefined,
        context,
        deadline: this.#deadline(budgetMs),
      };
      held.timer = this.scheduler.setTimeout(() => this.#timedOut(held), budgetMs);
      this.#held.set(id, held);
      this.#announce(held, { phase: "held" });
      this.#watch(held, signal);
    });
  }

  /** The agent's request was given up (connection closed, harness timeout): fail closed at once. */
  #watch(held: Held, signalOf: (() => AbortSignal) | undefined): void {
    if (signalOf === undefined) return;
    const signal = signalOf();
    const onAbort = () => this.#fail(held, "The agent is gone", "timeout", undefined, undefined, "agent-gone");
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  }

  /** Holds a `confirmation` event as a chat input request (§9.2). */
  holdInput(
    session: SessionRecord,
    chat: ChatRecord,
    turnId: string,
    payload: unknown,
    budgetMs: number,
    signal?: () => AbortSignal,
    context: HoldContext = {},
  ): Promise<ConfirmationDecisionInput> {
    const p = asObject(payload);
    const message = typeof p.message === "string" ? p.message : "Confirmation requested";
    const extra = Array.isArray(p.options) && p.options.length > 0 ? ` (options: ${p.options.map(String).join(", ")})` : "";
    const requestId = `cf-${++chat.requestCounter}`;
    const request: ChatInputRequest = {
      id: requestId,
      message: message + extra,
      questions: [
        {
          kind: "single-select",
          id: "decision",
          message: message + extra,
          required: true,
          options: [
            { id: "approve", label: "Approve" },
            { id: "reject", label: "Reject" },
          ],
        },
        { kind: "text", id: "reason", message: "Reason (optional)", required: false },
      ],
    };
    commitChat(this.store, session, chat, { type: "chat/inputRequested", request });
    const id = `${chat.uri}#${requestId}`;
    this.store.commit(session.uri, { type: "session/inputNeededSet", request: { kind: "chatInput", id, chat: chat.uri, request } });
    this.options.touched(session);
    return new Promise<ConfirmationDecisionInput>((settle) => {
      const held: HeldInput = {
        kind: "input",
        id,
        session,
        chat,
        turnId,
        requestId,
        settle,
        budgetMs,
        timer: undefined,
        context: { why: message, ...context },
        deadline: this.#deadline(budgetMs),
      };
      held.timer = this.scheduler.setTimeout(() => this.#timedOut(held), budgetMs);
      this.#held.set(id, held);
      this.#announce(held, { phase: "held" });
      this.#watch(held, signal);
    });
  }

  /** A client's `chat/toolCallConfirmed` (§9.1). Returns a rejection reason, or undefined once committed and resolved. */
  answerTool(chatUri: string, action: StateAction, origin: ActionOrigin, who: Dispatcher): string | undefined {
    const a = action as Record<string, unknown>;
    const state = this.store.get<ChatState>(chatUri);
    if (state?.activeTurn === undefined || state.activeTurn.id !== a.turnId) return "no such tool call in the active turn";
    const toolCall = findToolCall(state, a.toolCallId);
    if (toolCall === undefined) return "no such tool call in the active turn";
    const held = this.#held.get(`${chatUri}#${String(a.toolCallId)}`);
    if (toolCall.status !== "pending-confirmation" || held === undefined || held.kind !== "tool") return ALREADY_RESOLVED;
    if (ROLE_RANK[who.role] < ROLE_RANK.approver) return "approving tool calls needs the approver role";
    if (typeof a.approved !== "boolean") return "approved must be a boolean";
    let option: ConfirmationOption | undefined;
    if (a.selectedOptionId !== undefined) {
      option = held.options.find((o) => o.id === a.selectedOptionId);
      if (option === undefined) return "unknown selectedOptionId";
      if ((option.kind === "approve") !== a.approved) return "the selected option contradicts approved";
    }
    let edited: Record<string, unknown> | undefined;
    if (a.approved) {
      if (a.editedToolInput !== undefined) {
        if (!held.editable) return "this tool call's input is not editable";
        if (typeof a.editedToolInput !== "string") return "editedToolInput must be a JSON object text";
        try {
          const parsed: unknown = JSON.parse(a.editedToolInput);
          if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return "editedToolInput must be a JSON object";
          edited = parsed as Record<string, unknown>;
        } catch {
          return "editedToolInput is not valid JSON";
        }
      }
      if (a.confirmed !== "user-action" && a.confirmed !== "setting") return 'confirmed must be "user-action"';
    } else if (a.reason !== "denied" && a.reason !== "skipped") return 'reason must be "denied" or "skipped"';

    const outcome: HoldOutcome = !a.approved ? "denied" : edited !== undefined ? "edited" : "approved";
    const metadata: Record<string, unknown> = { approved_by: who.principal, client_id: who.clientId, outcome };
    if (option !== undefined) metadata.option = option.id;
    let decision: DecisionInput;
    if (!a.approved) {
      const typed = typeof a.reasonMessage === "string" ? a.reasonMessage.trim() : "";
      decision = {
        decision: "block",
        reason: typed === "" ? `Denied by ${who.principal}` : typedReason(typed, "denied", who.principal),
        metadata,
      };
    } else if (edited !== undefined) {
      decision = withReason(
        { decision: "modify", modified_payload: { ...asObject(held.tool.payload), arguments: edited }, metadata },
        `Approved by ${who.principal} with edited input`,
      );
    } else {
      const always = option?.id === "allow-session" ? ` for the rest of the session` : "";
      decision = withReason({ decision: "allow", metadata }, `Approved by ${who.principal}${always}`);
    }
    const record = decisionRecord(decision, "human", who.principal, outcome);
    if (a.approved && option?.id === "allow-session") record.rules = [`allow-session:${held.tool.toolName}`];
    // Valid: commit the client's action carrying the harness's record of who decided (so every
    // client's reduced state says so), then the roll-up removal, then release the agent.
    this.#release(held);
    commitChat(this.store, held.session, held.chat, withDecision(action, record), origin);
    this.store.commit(held.session.uri, { type: "session/inputNeededRemoved", id: held.id });
    if (a.approved && option?.id === "allow-session") {
      addRule(this.store, held.session, {
        tool: held.tool.toolName,
        createdBy: who.principal,
        clientId: who.clientId,
        createdAt: nowIso(this.store),
      });
    }
    held.tool.pendingMeta = { [META.decision]: record };
    this.options.touched(held.session);
    this.options.onDecided?.({
      session: held.session,
      chat: held.chat,
      turnId: held.turnId,
      toolCallId: held.tool.toolCallId,
      eventType: "pre_action",
      decision: decision.decision,
      decidedBy: "human",
    });
    this.#announce(held, { phase: "resolved", decision: decision.decision, outcome, approver: who.principal, ...reasonOf(decision) });
    held.settle(decision);
    return undefined;
  }

  /** A client's `chat/inputCompleted` (§9.2). */
  answerInput(chatUri: string, action: StateAction, origin: ActionOrigin, who: Dispatcher): string | undefined {
    const a = action as Record<string, unknown>;
    const held = this.#held.get(`${chatUri}#${String(a.requestId)}`);
    if (held === undefined || held.kind !== "input") return ALREADY_RESOLVED;
    if (ROLE_RANK[who.role] < ROLE_RANK.approver) return "answering input requests needs the approver role";
    // The answers synced with chat/inputAnswerChanged, overridden by those sent with the completion.
    const part = findInputPart(this.store.get<ChatState>(chatUri), held.requestId);
    const answers = { ...asObject(part?.answers), ...asObject(a.answers) };
    let decision: ConfirmationDecisionInput;
    if (a.response === "accept") {
      const choice = answerValue(answers.decision);
      const reason = answerValue(answers.reason);
      if (choice === "approve") decision = withReason({ decision: "approve" }, `Approved by ${who.principal}`);
      else if (choice === "reject")
        decision = {
          decision: "reject",
          reason:
            reason === undefined || reason.trim() === ""
              ? `Rejected by ${who.principal}`
              : typedReason(reason.trim(), "rejected", who.principal),
        };
      else return 'accept needs the "decision" answer "approve" or "reject"';
    } else if (a.response === "decline") decision = { decision: "reject", reason: `Declined by ${who.principal}` };
    else if (a.response === "cancel")
      decision = withReason({ decision: "escalate" }, `Handed back to the agent's own prompt by ${who.principal}`);
    else return 'response must be "accept", "decline" or "cancel"';
    this.#release(held);
    commitChat(this.store, held.session, held.chat, action, origin);
    const outcome: HoldOutcome =
      decision.decision === "approve" ? "approved" : decision.decision === "reject" ? "denied" : "handed-to-host";
    this.#inputOutcome(held, decision, "human", who.principal, outcome, a.response === "decline" ? "declined" : undefined);
    this.store.commit(held.session.uri, { type: "session/inputNeededRemoved", id: held.id });
    this.options.touched(held.session);
    this.options.onDecided?.({
      session: held.session,
      chat: held.chat,
      turnId: held.turnId,
      eventType: "confirmation",
      decision: decision.decision,
      decidedBy: "human",
    });
    this.#announce(held, { phase: "resolved", decision: decision.decision, outcome, approver: who.principal, ...reasonOf(decision) });
    held.settle(decision);
    return undefined;
  }

  /** True when the chat has an open input request with this id held by the host (drafts are accepted only then). */
  hasOpenInput(chatUri: string, requestId: unknown): boolean {
    return this.#held.get(`${chatUri}#${String(requestId)}`)?.kind === "input";
  }

  /** Fails closed every held request of a session (or of one chat). */
  failHeld(session: SessionRecord, chat: ChatRecord | undefined, reason: string): void {
    for (const held of [...this.#held.values()]) {
      if (held.session === session && (chat === undefined || held.chat === chat))
        this.#fail(held, reason, "timeout", undefined, undefined, "agent-gone");
    }
  }

  /**
   * An operator cancels the run: every held request of the session resolves `block` (§9.3). Called
   * before the `chat/turnCancelled` is committed, so each held tool call and input request still
   * sits in an active turn and records who cancelled it.
   */
  cancelSession(session: SessionRecord, principal: string): void {
    for (const held of [...this.#held.values()])
      if (held.session === session) this.#fail(held, cancelReason(principal), "human", "block", principal, "cancelled");
  }

  /**
   * Records how a held input request ended, where every client's reduced state keeps it: the
   * Agent Host input-request part has no `_meta`, so a system notification follows it in the turn,
   * whose `_meta["ahpHarness/decision"]` names the request, the decision and who made it.
   */
  #inputOutcome(
    held: HeldInput,
    decision: ConfirmationDecisionInput,
    by: DecidedInfo["decidedBy"],
    principal: string | undefined,
    outcome: HoldOutcome,
    how?: "declined" | "cancelled",
  ): void {
    if (this.store.get<ChatState>(held.chat.uri)?.activeTurn?.id !== held.turnId) return;
    const record: Record<string, unknown> = { ...decisionRecord(decision, by, principal, outcome), requestId: held.requestId };
    const verb =
      by === "timeout"
        ? "timed out"
        : how !== undefined
          ? how
          : decision.decision === "approve"
            ? "approved"
            : decision.decision === "reject"
              ? "rejected"
              : "handed back to the agent's own prompt";
    const who = by === "human" && principal !== undefined ? ` by ${principal}` : "";
    // A reason the person typed (or the timeout's), without the "Rejected by …" it would repeat.
    const given = "reason" in decision && typeof decision.reason === "string" ? decision.reason : "";
    let own = given.toLowerCase() === `${verb}${who}`.toLowerCase() ? "" : given.replace(/ \((?:rejected|denied) by [^()]*\)$/, "");
    if (who !== "" && own.endsWith(who)) own = own.slice(0, -who.length);
    const why = own !== "" && how !== "declined" ? `: ${own}` : "";
    commitChat(this.store, held.session, held.chat, {
      type: "chat/responsePart",
      turnId: held.turnId,
      part: { kind: "systemNotification", content: `Confirmation ${verb}${who}${why}`, _meta: { [META.decision]: record } },
    });
  }

  /** Fails closed every held request (host shutdown). */
  failAll(reason: string): void {
    for (const held of [...this.#held.values()]) this.#fail(held, reason, "timeout", undefined, undefined, "stopped");
  }

  /** The hold's own deadline passed: the client's `on_timeout` (ADR 0145), else the host's timeout decision. */
  #timedOut(held: Held): void {
    const wait = held.context.wait;
    const after = `Nobody answered within ${seconds(held.budgetMs)}`;
    if (wait?.onTimeout === "ask")
      this.#fail(held, `${after}; handed to the host's prompt`, "timeout", "escalate", undefined, "handed-to-host");
    else if (wait?.onTimeout === "block") this.#fail(held, `${after}; timed out and blocked`, "timeout", "block", undefined, "timed-out");
    else this.#fail(held, `No decision within ${seconds(held.budgetMs)}`, "timeout", undefined, undefined, "timed-out");
  }

  #deadline(budgetMs: number): string {
    return new Date(this.store.clock() + budgetMs).toISOString();
  }

  #announce(held: Held, fields: Pick<ApprovalEvent, "phase" | "decision" | "outcome" | "approver" | "reason">): void {
    const listener = this.options.onapproval;
    if (listener === undefined) return;
    const event: ApprovalEvent = {
      ...fields,
      id: held.id,
      kind: held.kind,
      sessionId: held.session.sessionId,
      sessionUri: held.session.uri,
      agentId: held.chat.agentId,
      subject: held.kind === "tool" ? held.tool.toolName : "confirmation",
      deadline: held.deadline,
      ...(held.context.why === undefined ? {} : { why: held.context.why }),
      ...(held.context.target === undefined ? {} : { target: held.context.target }),
    };
    try {
      listener(event);
    } catch {
      // A listener's failure must not touch the decision.
    }
  }

  #release(held: Held): void {
    this.#held.delete(held.id);
    this.scheduler.clearTimeout(held.timer);
  }

  #fail(
    held: Held,
    reason: string,
    by: DecidedInfo["decidedBy"],
    forced: "block" | "escalate" | undefined,
    principal: string | undefined,
    outcome: HoldOutcome,
  ): void {
    if (this.#held.get(held.id) !== held) return;
    this.#release(held);
    const state = this.store.get<ChatState>(held.chat.uri);
    const turnActive = state?.activeTurn?.id === held.turnId;
    const fallback = forced ?? this.options.timeoutDecision;
    const toolDecision: DecisionInput =
      fallback === "escalate"
        ? { decision: "escalate", reason, ...(held.context.target === undefined ? {} : { escalation_target: held.context.target }) }
        : { decision: "block", reason, metadata: { outcome, ...(principal === undefined ? {} : { cancelled_by: principal }) } };
    const inputDecision: ConfirmationDecisionInput =
      forced === "escalate" ? withReason({ decision: "escalate" }, reason) : { decision: "reject", reason };
    if (held.kind === "tool") {
      const tc = findToolCall(state, held.tool.toolCallId);
      if (turnActive && tc?.status === "pending-confirmation") {
        commitChat(this.store, held.session, held.chat, {
          type: "chat/toolCallConfirmed",
          turnId: held.turnId,
          toolCallId: held.tool.toolCallId,
          approved: false,
          reason: "skipped",
          reasonMessage: reason,
          _meta: { [META.decision]: decisionRecord(toolDecision, by, principal, outcome) },
        });
      }
    } else if (turnActive) {
      commitChat(this.store, held.session, held.chat, { type: "chat/inputCompleted", requestId: held.requestId, response: "cancel" });
      this.#inputOutcome(held, inputDecision, by, principal, outcome, by === "human" ? "cancelled" : undefined);
    }
    if (this.store.has(held.session.uri)) this.store.commit(held.session.uri, { type: "session/inputNeededRemoved", id: held.id });
    this.options.touched(held.session);
    if (held.kind === "tool") {
      const decision = toolDecision;
      held.tool.pendingMeta = { [META.decision]: decisionRecord(decision, by, principal, outcome) };
      this.options.onDecided?.({
        session: held.session,
        chat: held.chat,
        turnId: held.turnId,
        toolCallId: held.tool.toolCallId,
        eventType: "pre_action",
        decision: decision.decision,
        decidedBy: by,
      });
      this.#announce(held, {
        phase: "resolved",
        decision: decision.decision,
        outcome,
        reason,
        ...(principal === undefined ? {} : { approver: principal }),
      });
      held.settle(decision);
    } else {
      this.options.onDecided?.({
        session: held.session,
        chat: held.chat,
        turnId: held.turnId,
        eventType: "confirmation",
        decision: inputDecision.decision,
        decidedBy: by,
      });
      this.#announce(held, {
        phase: "resolved",
        decision: inputDecision.decision,
        outcome,
        reason,
        ...(principal === undefined ? {} : { approver: principal }),
      });
      held.settle(inputDecision);
    }
  }
}

/** The harness's record of a decision (tool-call `_meta["ahpHarness/decision"]`, §7.4). */
export function decisionRecord(
  decision: DecisionInput | ConfirmationDecisionInput,
  by: DecidedInfo["decidedBy"],
  principal?: string,
  outcome?: HoldOutcome,
): {
  decision: string;
  reason?: string;
  rules?: string[];
  decidedBy: DecidedInfo["decidedBy"];
  approver?: string;
  outcome?: HoldOutcome;
} {
  return {
    decision: decision.decision,
    ...("reason" in decision && typeof decision.reason === "string" ? { reason: decision.reason } : {}),
    decidedBy: by,
    ...(principal === undefined ? {} : { approver: principal }),
    ...(outcome === undefined ? {} : { outcome }),
  };
}

function reasonOf(decision: DecisionInput | ConfirmationDecisionInput): { reason?: string } {
  return "reason" in decision && typeof decision.reason === "string" ? { reason: decision.reason } : {};
}

/**
 * A client's action as the host commits it: its own `_meta` kept, the harness's decision record
 * set by the host (a client cannot supply or forge it).
 */
function withDecision(action: StateAction, record: object): StateAction {
  return { ...action, _meta: { ...asObject(action._meta), [META.decision]: record } };
}

export function findToolCall(state: ChatState | undefined, toolCallId: unknown): ToolCallState | undefined {
  for (const part of state?.activeTurn?.responseParts ?? []) {
    if (part.kind === "toolCall" && (part as { toolCall: ToolCallState }).toolCall.toolCallId === toolCallId)
      return (part as { toolCall: ToolCallState }).toolCall;
  }
  return undefined;
}

function findInputPart(state: ChatState | undefined, requestId: string): ChatInputRequest | undefined {
  for (const part of state?.activeTurn?.responseParts ?? []) {
    if (part.kind === "inputRequest" && (part as { request: ChatInputRequest }).request.id === requestId)
      return (part as { request: ChatInputRequest }).request;
  }
  return undefined;
}

/** The value of one answer: a plain string, or the selected id / text of an answer object. */
function answerValue(answer: unknown): string | undefined {
  if (typeof answer === "string") return answer;
  const a = asObject(answer);
  for (const key of ["selectedOptionId", "optionId", "value", "text", "id"]) if (typeof a[key] === "string") return a[key];
  if (a.state === "skipped") return undefined;
  const value = asObject(a.value);
  for (const key of ["value", "selectedOptionId", "optionId", "id", "text"]) if (typeof value[key] === "string") return value[key];
  if (Array.isArray(value.value) && typeof value.value[0] === "string") return value.value[0];
  if (Array.isArray(a.selectedOptionIds) && typeof a.selectedOptionIds[0] === "string") return a.selectedOptionIds[0];
  return undefined;
}

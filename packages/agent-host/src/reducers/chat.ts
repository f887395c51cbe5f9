/**
 * The chat channel reducer (spec §10.1): turns, response parts, the tool-call state machine,
 * input requests, pending messages. Pure: the input state is never mutated; `clock` is the only
 * source of time (for `modifiedAt`). Unknown action types return the state unchanged.
 */
import { SessionStatus, STATUS_ACTIVITY_MASK } from "../wire/constants.js";
import type {
  ActiveTurn,
  ChatInputRequest,
  ChatState,
  ConfirmationOption,
  PendingMessage,
  ResponsePart,
  StateAction,
  ToolCallBase,
  ToolCallState,
  Turn,
} from "../wire/types.js";
import { type Clock, isoNow } from "./clock.js";

// Actions are wire input, read field by field per action type (the vendored fixtures cover every
// branch); assigning those `any` fields into state is the point of a reducer, so the unsafe-assignment
// rule is off for this file.
/* eslint-disable @typescript-eslint/no-unsafe-assignment */
type A = StateAction & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- action fields are read per type

const BLOCKING_TOOL_STATES = new Set(["pending-confirmation", "pending-result-confirmation", "auth-required"]);

function isOpenInput(part: ResponsePart): part is Extract<ResponsePart, { kind: "inputRequest" }> {
  return part.kind === "inputRequest" && (part as { response?: unknown }).response === undefined;
}

/** The activity bits the chat's content implies, with the flag bits of `state.status` kept. */
export function chatStatus(state: ChatState, terminal?: number): number {
  let activity: number;
  const turn = state.activeTurn;
  if (terminal !== undefined) activity = terminal;
  else if (turn !== undefined) activity = blockingParts(turn) > 0 ? SessionStatus.InputNeeded : SessionStatus.InProgress;
  else activity = SessionStatus.Idle;
  return (state.status & ~STATUS_ACTIVITY_MASK) | activity;
}

/** 1 for a part that waits for a human (an open input request, a tool call in a blocking state), else 0. */
function blocks(part: ResponsePart | undefined): 0 | 1 {
  if (part === undefined) return 0;
  if (part.kind === "toolCall") return BLOCKING_TOOL_STATES.has((part as { toolCall: ToolCallState }).toolCall.status) ? 1 : 0;
  return isOpenInput(part) ? 1 : 0;
}

/**
 * How many parts of a turn wait for a human, per turn object (turns are never mutated). The
 * reducers that derive a turn by changing or appending one part carry the count over
 * ({@link derived}), so the status of a turn with thousands of tool calls costs O(1) per action
 * instead of a pass over all its parts; a turn without a known count is counted once.
 */
const BLOCKING_PARTS = new WeakMap<ActiveTurn, number>();

/**
 * The turn derived last and its count, held outside {@link BLOCKING_PARTS}: nearly every action
 * derives its turn from the one derived just before, so a chain of actions on one chat costs no
 * WeakMap entry per action. When another chain takes its place, the count moves into the WeakMap.
 */
let lastTurn: ActiveTurn | undefined;
let lastCount = 0;

function knownCount(turn: ActiveTurn): number | undefined {
  return turn === lastTurn ? lastCount : BLOCKING_PARTS.get(turn);
}

function blockingParts(turn: ActiveTurn): number {
  let count = knownCount(turn);
  if (count === undefined) {
    count = 0;
    const parts = turn.responseParts;
    for (let i = 0; i < parts.length; i++) count += blocks(parts[i]);
    BLOCKING_PARTS.set(turn, count);
  }
  return count;
}

/** `next`, derived from `turn` by replacing `removed` with `added` (either may be absent), with its count carried over when `turn`'s is known. */
function derived(turn: ActiveTurn, next: ActiveTurn, removed: ResponsePart | undefined, added: ResponsePart | undefined): ActiveTurn {
  const count = knownCount(turn);
  if (count === undefined) return next;
  if (lastTurn !== undefined && lastTurn !== turn) BLOCKING_PARTS.set(lastTurn, lastCount);
  lastTurn = next;
  lastCount = count - blocks(removed) + blocks(added);
  return next;
}

function refresh(state: ChatState): ChatState {
  const status = chatStatus(state);
  return status === state.status ? state : { ...state, status };
}

const unread = (status: number) => status & ~SessionStatus.IsRead;

/** Fields every tool-call state carries; `_meta` replaced when the action brings one. */
type Base = ToolCallBase;

function base(tc: ToolCallState, meta: unknown): Base {
  return {
    toolCallId: tc.toolCallId,
    toolName: tc.toolName,
    displayName: tc.displayName,
    intention: tc.intention,
    contributor: tc.contributor,
    _meta: (meta as ToolCallState["_meta"]) ?? tc._meta,
  };
}

function optionById(options: ConfirmationOption[] | undefined, id: unknown): ConfirmationOption | undefined {
  if (typeof id !== "string" || id === "" || options === undefined) return undefined;
  return options.find((o) => o.id === id);
}

/** Replaces one tool call of the active turn through `update`; no-op when the turn or the call does not match. */
function withToolCall(state: ChatState, a: A, update: (tc: ToolCallState, a: A) => ToolCallState): ChatState {
  const turn = state.activeTurn;
  const toolCallId: unknown = a.toolCallId;
  if (turn === undefined || turn.id !== a.turnId) return state;
  const parts = turn.responseParts;
  // Search from the end: the call being updated is nearly always one of the latest parts.
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    if (part.kind !== "toolCall") continue;
    const tc = (part as { toolCall: ToolCallState }).toolCall;
    if (tc.toolCallId !== toolCallId) continue;
    const next = update(tc, a);
    if (next === tc) return state;
    const responseParts = parts.slice();
    const changed: ResponsePart = { ...part, toolCall: next };
    responseParts[i] = changed;
    return { ...state, activeTurn: derived(turn, { ...turn, responseParts }, part, changed) };
  }
  return state;
}

/** Appends text to the markdown or reasoning part `partId` of the active turn. */
function appendText(state: ChatState, action: A, kind: "markdown" | "reasoning"): ChatState {
  const turn = state.activeTurn;
  if (turn === undefined || turn.id !== action.turnId) return state;
  const index = turn.responseParts.findIndex((p) => {
    const id = p.kind === "toolCall" ? (p as { toolCall: ToolCallState }).toolCall.toolCallId : (p as { id?: unknown }).id;
    return id === action.partId;
  });
  if (index < 0) return state;
  const part = turn.responseParts[index]!;
  if (part.kind !== kind) return state;
  const responseParts = [...turn.responseParts];
  const changed = { ...part, content: String((part as { content: string }).content) + String(action.content) } as ResponsePart;
  responseParts[index] = changed;
  return { ...state, activeTurn: derived(turn, { ...turn, responseParts }, part, changed) };
}

function endTurn(state: ChatState, action: A, turnState: Turn["state"], clock: Clock, error?: unknown): ChatState {
  const turn = state.activeTurn;
  if (turn === undefined || turn.id !== action.turnId) return state;
  const responseParts = turn.responseParts.map((part) => {
    if (part.kind !== "toolCall") return part;
    const tc = (part as { toolCall: ToolCallState }).toolCall;
    if (tc.status === "completed" || tc.status === "cancelled") return part;
    const streaming = tc.status === "streaming";
    const cancelled: ToolCallState = {
      status: "cancelled",
      ...base(tc, undefined),
      invocationMessage: streaming ? (tc.invocationMessage ?? "") : tc.invocationMessage,
      toolInput: streaming ? undefined : tc.toolInput,
      reason: "skipped",
    };
    return { kind: "toolCall", toolCall: cancelled };
  });
  const duration = typeof action.duration === "number" ? Math.max(0, action.duration) : 0;
  const done: Turn = {
    id: turn.id,
    startedAt: turn.startedAt,
    duration,
    message: turn.message,
    responseParts,
    usage: turn.usage,
    state: turnState,
    ...(error === undefined ? {} : { error: error as Turn["error"] }),
  };
  const next: ChatState = { ...state, turns: [...state.turns, done], activeTurn: undefined, modifiedAt: isoNow(clock) };
  return { ...next, status: chatStatus(next, turnState === "error" ? SessionStatus.Error : undefined) };
}

function findOpenRequest(turn: ActiveTurn, requestId: unknown): number {
  return turn.responseParts.findIndex((p) => isOpenInput(p) && p.request.id === requestId);
}

function upsertInputRequest(state: ChatState, request: ChatInputRequest, clock: Clock): ChatState {
  const turn = state.activeTurn;
  if (turn === undefined || request === null || typeof request !== "object") return state;
  const index = findOpenRequest(turn, request.id);
  const responseParts = [...turn.responseParts];
  if (index >= 0) {
    const existing = (responseParts[index] as { request: ChatInputRequest }).request;
    responseParts[index] = { kind: "inputRequest", request: { ...request, answers: request.answers ?? existing.answers } };
  } else responseParts.push({ kind: "inputRequest", request });
  const next: ChatState = { ...state, activeTurn: { ...turn, responseParts } };
  return { ...next, status: unread(chatStatus(next)), modifiedAt: isoNow(clock) };
}

/**
 * `chat/toolCallReady` may refine `intention` and `contributor`; a client-owned call keeps its
 * owner and a call cannot be handed to a client afterwards.
 */
function refinedContributor(tc: ToolCallState, a: A): ToolCallState["contributor"] {
  const next = a.contributor as ToolCallState["contributor"];
  return next === undefined || tc.contributor?.kind === "client" || next.kind === "client" ? tc.contributor : next;
}

function toolCallReady(tc: ToolCallState, a: A): ToolCallState {
  if (tc.status !== "streaming" && tc.status !== "running" && tc.status !== "pending-confirmation") return tc;
  const intention = a.intention === undefined ? tc.intention : a.intention;
  const contributor = refinedContributor(tc, a);
  const meta = (a._meta as ToolCallState["_meta"]) ?? tc._meta;
  if (a.confirmed) {
    // The fields of `base` written out, in its order: one object per action instead of three.
    return {
      status: "running",
      toolCallId: tc.toolCallId,
      toolName: tc.toolName,
      displayName: tc.displayName,
      intention,
      contributor,
      _meta: meta,
      invocationMessage: a.invocationMessage,
      toolInput: a.toolInput,
      confirmed: a.confirmed,
    };
  }
  const b: Base = {
    toolCallId: tc.toolCallId,
    toolName: tc.toolName,
    displayName: tc.displayName,
    intention,
    contributor,
    _meta: meta,
  };
  const pending = tc.status === "pending-confirmation" ? tc : undefined;
  const options = a.options ?? pending?.options;
  return {
    status: "pending-confirmation",
    ...b,
    invocationMessage: a.invocationMessage,
    toolInput: a.toolInput ?? tc.toolInput,
    confirmationTitle: a.confirmationTitle ?? pending?.confirmationTitle,
    riskAssessment: a.riskAssessment ?? pending?.riskAssessment,
    edits: a.edits ?? pending?.edits,
    editable: a.editable ?? pending?.editable,
    ...(options === undefined ? {} : { options }),
  };
}

function toolCallConfirmed(tc: ToolCallState, a: A): ToolCallState {
  if (tc.status !== "pending-confirmation") return tc;
  const b = base(tc, a._meta);
  const selectedOption = optionById(tc.options, a.selectedOptionId);
  const selected = selectedOption === undefined ? {} : { selectedOption };
  if (a.approved) {
    return {
      status: "running",
      ...b,
      invocationMessage: tc.invocationMessage,
      // An edit replaces an inline (string) input; a content reference stays.
      toolInput:
        a.editedToolInput !== undefined && (tc.toolInput === undefined || typeof tc.toolInput === "string")
          ? a.editedToolInput
          : tc.toolInput,
      confirmed: a.confirmed,
      ...selected,
    };
  }
  return {
    status: "cancelled",
    ...b,
    invocationMessage: tc.invocationMessage,
    toolInput: tc.toolInput,
    reason: a.reason,
    reasonMessage: a.reasonMessage,
    userSuggestion: a.userSuggestion,
    ...selected,
  };
}

function toolCallComplete(tc: ToolCallState, a: A): ToolCallState {
  const from = tc.status;
  if (from !== "running" && from !== "pending-confirmation" && from !== "auth-required") return tc;
  const result = (a.result ?? {}) as Record<string, unknown>;
  // From auth-required only a failed result (the invocation given up) is accepted.
  if (from === "auth-required" && result.success) return tc;
  const executed = from === "running" || from === "auth-required";
  const confirmed = executed ? tc.confirmed : "not-needed";
  const selected = executed && tc.selectedOption !== undefined ? { selectedOption: tc.selectedOption } : {};
  const earlier = from === "auth-required" && tc.content !== undefined ? { content: tc.content } : {};
  const status = a.requiresResultConfirmation && from !== "auth-required" ? "pending-result-confirmation" : "completed";
  return {
    status,
    toolCallId: tc.toolCallId,
    toolName: tc.toolName,
    displayName: tc.displayName,
    intention: tc.intention,
    contributor: tc.contributor,
    _meta: (a._meta as ToolCallState["_meta"]) ?? tc._meta,
    invocationMessage: tc.invocationMessage,
    toolInput: tc.toolInput,
    confirmed,
    ...selected,
    ...earlier,
    ...result,
  };
}

function toolCallResultConfirmed(tc: ToolCallState, a: A): ToolCallState {
  if (tc.status !== "pending-result-confirmation") return tc;
  const b = base(tc, a._meta);
  const selected = tc.selectedOption === undefined ? {} : { selectedOption: tc.selectedOption };
  if (a.approved) {
    return {
      status: "completed",
      ...b,
      invocationMessage: tc.invocationMessage,
      toolInput: tc.toolInput,
      confirmed: tc.confirmed,
      ...selected,
      success: tc.success,
      pastTenseMessage: tc.pastTenseMessage,
      content: tc.content,
      structuredContent: tc.structuredContent,
      error: tc.error,
    };
  }
  return {
    status: "cancelled",
    ...b,
    invocationMessage: tc.invocationMessage,
    toolInput: tc.toolInput,
    reason: "result-denied",
    ...selected,
  };
}

function toolCallAuth(tc: ToolCallState, a: A, required: boolean): ToolCallState {
  if (required ? tc.status !== "running" : tc.status !== "auth-required") return tc;
  if (required && tc.contributor?.kind !== "mcp") return tc;
  return {
    status: required ? "auth-required" : "running",
    ...base(tc, a._meta),
    invocationMessage: tc.invocationMessage,
    toolInput: tc.toolInput,
    confirmed: tc.confirmed,
    ...(tc.selectedOption === undefined ? {} : { selectedOption: tc.selectedOption }),
    ...(tc.content === undefined ? {} : { content: tc.content }),
    ...(required ? { auth: a.auth } : {}),
  };
}

const toolCallAuthRequired = (tc: ToolCallState, a: A): ToolCallState => toolCallAuth(tc, a, true);
const toolCallAuthResolved = (tc: ToolCallState, a: A): ToolCallState => toolCallAuth(tc, a, false);

function toolCallDelta(tc: ToolCallState, a: A): ToolCallState {
  if (tc.status !== "streaming") return tc;
  return {
    ...tc,
    ...(a._meta === undefined ? {} : { _meta: a._meta }),
    ...(a.content === undefined ? {} : { partialInput: (tc.partialInput ?? "") + String(a.content) }),
    invocationMessage: a.invocationMessage ?? tc.invocationMessage,
  };
}

function toolCallContentChanged(tc: ToolCallState, a: A): ToolCallState {
  return tc.status !== "running" ? tc : { ...tc, ...(a._meta === undefined ? {} : { _meta: a._meta }), content: a.content };
}

function pendingMessages(state: ChatState, a: A, set: boolean): ChatState {
  const steering = a.kind === "steering";
  if (set) {
    const entry: PendingMessage = { id: a.id, message: a.message };
    if (steering) return { ...state, steeringMessage: entry };
    const queued = state.queuedMessages ?? [];
    const at = queued.findIndex((m) => m.id === a.id);
    if (at < 0) return { ...state, queuedMessages: [...queued, entry] };
    const copy = [...queued];
    copy[at] = entry;
    return { ...state, queuedMessages: copy };
  }
  if (steering) return state.steeringMessage?.id === a.id ? { ...state, steeringMessage: undefined } : state;
  const queued = state.queuedMessages;
  if (queued === undefined) return state;
  const kept = queued.filter((m) => m.id !== a.id);
  if (kept.length === queued.length) return state;
  return { ...state, queuedMessages: kept.length > 0 ? kept : undefined };
}

function reorder(state: ChatState, order: unknown): ChatState {
  const queued = state.queuedMessages;
  if (queued === undefined || !Array.isArray(order)) return state;
  const byId = new Map(queued.map((m) => [m.id, m]));
  const placed = new Set<string>();
  const out: PendingMessage[] = [];
  for (const id of order) {
    const m = byId.get(id as string);
    if (m !== undefined && !placed.has(m.id)) {
      placed.add(m.id);
      out.push(m);
    }
  }
  for (const m of queued) if (!placed.has(m.id)) out.push(m);
  return { ...state, queuedMessages: out };
}

function turnStarted(state: ChatState, a: A, clock: Clock): ChatState {
  // 1.x: replaying a start for the active or an already completed turn changes nothing.
  if (state.activeTurn?.id === a.turnId || state.turns.some((t) => t.id === a.turnId)) return state;
  let next: ChatState = {
    ...state,
    activeTurn: { id: a.turnId, startedAt: a.startedAt, message: a.message, responseParts: [], usage: undefined },
  };
  next = { ...next, status: unread(chatStatus(next)), modifiedAt: isoNow(clock) };
  const queuedId = a.queuedMessageId;
  if (queuedId) {
    if (next.steeringMessage?.id === queuedId) next = { ...next, steeringMessage: undefined };
    if (next.queuedMessages !== undefined) {
      const kept = next.queuedMessages.filter((m) => m.id !== queuedId);
      next = { ...next, queuedMessages: kept.length > 0 ? kept : undefined };
    }
  }
  return next;
}

function inputAnswer(state: ChatState, a: A, clock: Clock, complete: boolean): ChatState {
  const turn = state.activeTurn;
  if (turn === undefined) return state;
  const index = findOpenRequest(turn, a.requestId);
  if (index < 0) return state;
  const part = turn.responseParts[index] as { kind: "inputRequest"; request: ChatInputRequest };
  const answers: Record<string, unknown> = { ...(part.request.answers ?? {}) };
  if (complete) Object.assign(answers, a.answers ?? {});
  else if (a.answer === undefined) delete answers[a.questionId as string];
  else answers[a.questionId as string] = a.answer;
  const request = { ...part.request, answers: Object.keys(answers).length > 0 ? (answers as ChatInputRequest["answers"]) : undefined };
  const responseParts = [...turn.responseParts];
  responseParts[index] = complete ? { ...part, request, response: a.response } : { ...part, request };
  const next: ChatState = { ...state, activeTurn: { ...turn, responseParts } };
  return complete ? { ...next, status: chatStatus(next), modifiedAt: isoNow(clock) } : { ...next, modifiedAt: isoNow(clock) };
}

function truncated(state: ChatState, turnId: unknown, clock: Clock): ChatState {
  let turns: Turn[];
  if (turnId === undefined) turns = [];
  else {
    const at = state.turns.findIndex((t) => t.id === turnId);
    if (at < 0) return state;
    turns = state.turns.slice(0, at + 1);
  }
  const next: ChatState = { ...state, turns, activeTurn: undefined, modifiedAt: isoNow(clock) };
  if (turnId === undefined) delete next.turnsNextCursor;
  return { ...next, status: chatStatus(next) };
}

function workingDirectories(state: ChatState, directory: unknown, add: boolean): ChatState {
  if (typeof directory !== "string") return state;
  const current = state.workingDirectories ?? [];
  if (add) return current.includes(directory) ? state : { ...state, workingDirectories: [...current, directory] };
  if (!current.includes(directory)) return state;
  return { ...state, workingDirectories: current.filter((d) => d !== directory) };
}

/** Applies one action to a chat state. */
export function reduceChat(state: ChatState, action: StateAction, clock: Clock): ChatState {
  const a = action as A;
  switch (a.type) {
    case "chat/turnStarted":
      return turnStarted(state, a, clock);
    case "chat/delta":
      return appendText(state, a, "markdown");
    case "chat/reasoning":
      return appendText(state, a, "reasoning");
    case "chat/responsePart": {
      const turn = state.activeTurn;
      if (turn === undefined || turn.id !== a.turnId) return state;
      const part = a.part as ResponsePart;
      return { ...state, activeTurn: derived(turn, { ...turn, responseParts: [...turn.responseParts, part] }, undefined, part) };
    }
    case "chat/usage": {
      const turn = state.activeTurn;
      if (turn === undefined || turn.id !== a.turnId) return state;
      return { ...state, activeTurn: derived(turn, { ...turn, usage: a.usage }, undefined, undefined) };
    }
    case "chat/activityChanged":
      return { ...state, activity: a.activity };
    case "chat/turnComplete":
      return endTurn(state, a, "complete", clock);
    case "chat/turnCancelled":
      return endTurn(state, a, "cancelled", clock);
    case "chat/error":
      return endTurn(state, a, "error", clock, a.error);
    case "chat/toolCallStart": {
      const turn = state.activeTurn;
      if (turn === undefined || turn.id !== a.turnId) return state;
      const toolCall = {
        toolCallId: a.toolCallId,
        toolName: a.toolName,
        displayName: a.displayName,
        intention: a.intention,
        contributor: a.contributor,
        _meta: a._meta,
        status: "streaming",
      } as ToolCallState;
      const part: ResponsePart = { kind: "toolCall", toolCall };
      return { ...state, activeTurn: derived(turn, { ...turn, responseParts: [...turn.responseParts, part] }, undefined, part) };
    }
    case "chat/toolCallDelta":
      return withToolCall(state, a, toolCallDelta);
    case "chat/toolCallReady":
      return refresh(withToolCall(state, a, toolCallReady));
    case "chat/toolCallConfirmed":
      return refresh(withToolCall(state, a, toolCallConfirmed));
    case "chat/toolCallComplete":
      return refresh(withToolCall(state, a, toolCallComplete));
    case "chat/toolCallResultConfirmed":
      return refresh(withToolCall(state, a, toolCallResultConfirmed));
    case "chat/toolCallContentChanged":
      return withToolCall(state, a, toolCallContentChanged);
    case "chat/toolCallAuthRequired":
      return refresh(withToolCall(state, a, toolCallAuthRequired));
    case "chat/toolCallAuthResolved":
      return refresh(withToolCall(state, a, toolCallAuthResolved));
    case "chat/truncated":
      return truncated(state, a.turnId, clock);
    case "chat/turnsLoaded": {
      if (!Array.isArray(a.turns)) return state;
      const known = new Set(state.turns.map((t) => t.id));
      const older = (a.turns as Turn[]).filter((t) => !known.has(t.id));
      return { ...state, turns: [...older, ...state.turns], turnsNextCursor: a.turnsNextCursor };
    }
    case "chat/inputRequested":
      return upsertInputRequest(state, a.request as ChatInputRequest, clock);
    case "chat/inputAnswerChanged":
      return inputAnswer(state, a, clock, false);
    case "chat/inputCompleted":
      return inputAnswer(state, a, clock, true);
    case "chat/pendingMessageSet":
      return pendingMessages(state, a, true);
    case "chat/pendingMessageRemoved":
      return pendingMessages(state, a, false);
    case "chat/queuedMessagesReordered":
      return reorder(state, a.order);
    case "chat/draftChanged":
      return { ...state, draft: a.draft };
    case "chat/workingDirectorySet":
      return workingDirectories(state, a.directory, true);
    case "chat/workingDirectoryRemoved":
      return workingDirectories(state, a.directory, false);
    default:
      return state;
  }
}

/**
 * The session channel reducer (spec §10.2) and the root reducer (§10.3). Pure; unknown action
 * types return the state unchanged. The session's own `status` moves only through
 * `session/inputNeeded*` and the read/archived flags (the catalogue aggregate is computed
 * elsewhere).
 */
import { SessionStatus, STATUS_ACTIVITY_MASK, STATUS_INPUT_BIT } from "../wire/constants.js";
import type { ActiveClient, ChatSummary, RootState, SessionInputRequest, SessionState, StateAction } from "../wire/types.js";
import type { Clock } from "./clock.js";

// Actions are wire input, read field by field per action type (the vendored fixtures cover every
// branch); assigning those `any` fields into state is the point of a reducer, so the unsafe-assignment
// rule is off for this file.
/* eslint-disable @typescript-eslint/no-unsafe-assignment */
type A = StateAction & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- action fields are read per type

/** True for entries that block on a human (everything except a client tool execution). */
export const blocksOnHuman = (request: SessionInputRequest): boolean => request.kind !== "toolClientExecution";

const flag = (status: number, bit: number, on: unknown) => (on ? status | bit : status & ~bit);

function inputNeededSet(state: SessionState, request: SessionInputRequest): SessionState {
  if (request === null || typeof request !== "object" || typeof request.id !== "string") return state;
  const list = state.inputNeeded ?? [];
  const at = list.findIndex((r) => r.id === request.id);
  const inputNeeded = at < 0 ? [...list, request] : list.map((r, i) => (i === at ? request : r));
  const status = inputNeeded.some(blocksOnHuman)
    ? (state.status & ~STATUS_ACTIVITY_MASK) | SessionStatus.InputNeeded
    : state.status & ~STATUS_INPUT_BIT;
  return { ...state, inputNeeded, status };
}

function inputNeededRemoved(state: SessionState, id: unknown): SessionState {
  const list = state.inputNeeded;
  if (list === undefined) return state;
  const kept = list.filter((r) => r.id !== id);
  if (kept.length === list.length) return state;
  const next: SessionState = { ...state };
  if (kept.length > 0) next.inputNeeded = kept;
  else delete next.inputNeeded;
  if (!kept.some(blocksOnHuman)) next.status = state.status & ~STATUS_INPUT_BIT;
  return next;
}

function upsertChat(chats: ChatSummary[] | undefined, summary: ChatSummary): ChatSummary[] {
  const list = chats ?? [];
  const at = list.findIndex((c) => c.resource === summary.resource);
  return at < 0 ? [...list, summary] : list.map((c, i) => (i === at ? summary : c));
}

function activeClients(state: SessionState, a: A, set: boolean): SessionState {
  const list = state.activeClients ?? [];
  if (set) {
    const client = a.activeClient as ActiveClient | undefined;
    if (client === undefined || client === null || typeof client.clientId !== "string") return state;
    const at = list.findIndex((c) => c.clientId === client.clientId);
    return { ...state, activeClients: at < 0 ? [...list, client] : list.map((c, i) => (i === at ? client : c)) };
  }
  const kept = list.filter((c) => c.clientId !== a.clientId);
  return kept.length === list.length ? state : { ...state, activeClients: kept };
}

/** Applies one action to a session state. `clock` is accepted for symmetry; no session action stamps time. */
export function reduceSession(state: SessionState, action: StateAction, _clock?: Clock): SessionState {
  const a = action as A;
  switch (a.type) {
    case "session/ready":
      return { ...state, lifecycle: "ready" };
    case "session/creationFailed":
      return { ...state, lifecycle: "creationFailed", creationError: a.error };
    case "session/chatAdded":
      return a.summary === undefined ? state : { ...state, chats: upsertChat(state.chats, a.summary as ChatSummary) };
    case "session/chatRemoved": {
      const chats = state.chats ?? [];
      if (!chats.some((c) => c.resource === a.chat)) return state;
      const next: SessionState = { ...state, chats: chats.filter((c) => c.resource !== a.chat) };
      if (next.defaultChat === a.chat) delete next.defaultChat;
      return next;
    }
    case "session/chatUpdated": {
      const chats = state.chats ?? [];
      const at = chats.findIndex((c) => c.resource === a.chat);
      if (at < 0) return state;
      const { resource: _ignored, ...changes } = (a.changes ?? {}) as Partial<ChatSummary>;
      return { ...state, chats: chats.map((c, i) => (i === at ? { ...c, ...changes } : c)) };
    }
    case "session/defaultChatChanged":
      return { ...state, defaultChat: a.defaultChat };
    case "session/titleChanged":
      return { ...state, title: a.title };
    case "session/activityChanged":
      return { ...state, activity: a.activity };
    case "session/isReadChanged":
      return { ...state, status: flag(state.status, SessionStatus.IsRead, a.isRead) };
    case "session/isArchivedChanged":
      return { ...state, status: flag(state.status, SessionStatus.IsArchived, a.isArchived) };
    case "session/metaChanged":
      return { ...state, _meta: a._meta };
    case "session/inputNeededSet":
      return inputNeededSet(state, a.request as SessionInputRequest);
    case "session/inputNeededRemoved":
      return inputNeededRemoved(state, a.id);
    case "session/activeClientSet":
      return activeClients(state, a, true);
    case "session/activeClientRemoved":
      return activeClients(state, a, false);
    default:
      return state;
  }
}

/** Applies one action to the root state. */
export function reduceRoot(state: RootState, action: StateAction, _clock?: Clock): RootState {
  const a = action as A;
  switch (a.type) {
    case "root/agentsChanged":
      return { ...state, agents: a.agents };
    case "root/activeSessionsChanged":
      return { ...state, activeSessions: a.activeSessions };
    default:
      return state;
  }
}

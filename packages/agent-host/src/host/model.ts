/**
 * What the host remembers per harness session and per agent (chat) besides channel state:
 * identities, the active turn, tool calls by id, counters, held requests, timers. Also the small
 * helpers that commit chat actions and keep `session/chatUpdated` in step with chat summaries.
 */
import { HARNESS_PROVIDER, META, SessionStatus } from "../wire/constants.js";
import type { ActionOrigin, ChatState, ChatSummary, Meta, SessionState, StateAction } from "../wire/types.js";
import { isoNow } from "../reducers/clock.js";
import type { ChannelStore } from "./store.js";

export interface ToolRecord {
  toolCallId: string;
  toolName: string;
  turnId: string;
  payload: unknown;
  /** Decision `_meta` to attach to the tool call's next action. */
  pendingMeta?: Meta;
}

export interface ChatRecord {
  readonly agentId: string;
  readonly uri: string;
  readonly depth: number;
  turnId?: string;
  implicit: boolean;
  turnStartedAt: number;
  turnCounter: number;
  toolCounter: number;
  partCounter: number;
  requestCounter: number;
  lastEventAt: number;
  readonly tools: Map<string, ToolRecord>;
}

export interface SessionRule {
  tool: string;
  createdBy: string;
  clientId: string;
  createdAt: string;
}

export interface SessionRecord {
  /**
   * The session's key, which its URIs derive from: the agent's session id, suffixed (`id#2`, …)
   * for a later run of another agent that used the same id (ADR 0161).
   */
  readonly sessionId: string;
  /** The session id the agent sends in its events. */
  readonly agentSessionId: string;
  /** 1 for the first session of an agent session id, 2 for the next run that used the same id, … */
  readonly run: number;
  /** Whether any chat of the session ever had a turn (an empty session is hidden by the inspector once ended). */
  hadTurns: boolean;
  /** Carried by per-call (hook) connections: many short connections for one live session. */
  perCall: boolean;
  /** Handshake identities of the long-lived agent connections that carried the session (a reconnect of one takes it up again). */
  readonly owners: Set<string>;
  readonly uri: string;
  readonly createdAt: string;
  ended: boolean;
  rootAgentId?: string;
  agentInfo?: { framework: string; version: string; capabilities: string[] };
  readonly chats: Map<string, ChatRecord>;
  /** Set while a client cancelled the run: every pre_action / pre_prompt is blocked with this reason. */
  cancelling?: string;
  readonly rules: SessionRule[];
  meta: Meta;
  /** Agent connections currently carrying this session. */
  readonly connections: Set<number>;
  graceTimer?: unknown;
  retentionTimer?: unknown;
}

const SUMMARY_FIELDS = ["title", "status", "activity", "origin", "interactivity"] as const;

/** Commits `action` on the chat channel; then `session/chatUpdated` with the summary fields that changed (§6.4). */
export function commitChat(
  store: ChannelStore,
  session: SessionRecord,
  chat: ChatRecord,
  action: StateAction,
  origin?: ActionOrigin,
): void {
  const before = store.get<ChatState>(chat.uri);
  store.commit(chat.uri, action, origin);
  const after = store.get<ChatState>(chat.uri);
  if (before === undefined || after === undefined || before === after) return;
  // The usual case (a tool-call or response-part action) changes none of SUMMARY_FIELDS: checked with plain reads first.
  if (
    before.title === after.title &&
    before.status === after.status &&
    before.activity === after.activity &&
    before.origin === after.origin &&
    before.interactivity === after.interactivity
  )
    return;
  const changes: Partial<ChatSummary> = {};
  let changed = false;
  for (const key of SUMMARY_FIELDS) {
    if (before[key] !== after[key]) {
      // A partial summary cannot carry "absent": a cleared activity travels as "" (host and clients reduce the same wire form).
      (changes as Record<string, unknown>)[key] = after[key] ?? (key === "activity" ? "" : undefined);
      changed = true;
    }
  }
  if (!changed) return;
  if (before.modifiedAt !== after.modifiedAt) changes.modifiedAt = after.modifiedAt;
  store.commit(session.uri, { type: "session/chatUpdated", chat: chat.uri, changes });
}

/** A new chat record (no turn yet, counters at zero) of `agentId` at `depth`. */
export function newChatRecord(agentId: string, uri: string, depth: number, now: number): ChatRecord {
  return {
    agentId,
    uri,
    depth,
    implicit: false,
    turnStartedAt: 0,
    turnCounter: 0,
    toolCounter: 0,
    partCounter: 0,
    requestCounter: 0,
    lastEventAt: now,
    tools: new Map(),
  };
}

export function initialSessionState(title: string): SessionState {
  return { provider: HARNESS_PROVIDER, title, status: SessionStatus.Idle, lifecycle: "creating", activeClients: [], chats: [] };
}

export function initialChatState(uri: string, title: string, now: string, origin?: ChatSummary["origin"], readOnly?: boolean): ChatState {
  const state: ChatState = { resource: uri, title, status: SessionStatus.Idle, modifiedAt: now, turns: [] };
  if (origin !== undefined) state.origin = origin;
  if (readOnly) state.interactivity = "read-only";
  return state;
}

export function chatSummaryOf(state: ChatState): ChatSummary {
  const summary: ChatSummary = { resource: state.resource, title: state.title, status: state.status, modifiedAt: state.modifiedAt };
  if (state.activity !== undefined) summary.activity = state.activity;
  if (state.origin !== undefined) summary.origin = state.origin;
  if (state.interactivity !== undefined) summary.interactivity = state.interactivity;
  return summary;
}

/** Replaces the session `_meta` wholesale with `record.meta` updated by `key` (§7.4). */
export function setMeta(store: ChannelStore, session: SessionRecord, key: string, value: unknown): void {
  session.meta = { ...session.meta, [key]: value };
  store.commit(session.uri, { type: "session/metaChanged", _meta: session.meta });
}

/** Sets one chat's entry inside a per-chat `_meta` map (run, task list, verification). */
export function setChatMeta(store: ChannelStore, session: SessionRecord, key: string, chatUri: string, value: unknown): void {
  const current = (session.meta[key] as Record<string, unknown> | undefined) ?? {};
  setMeta(store, session, key, { ...current, [chatUri]: value });
}

export const rulesMeta = (session: SessionRecord) =>
  session.rules.map((r) => ({ tool: r.tool, createdBy: r.createdBy, clientId: r.clientId, createdAt: r.createdAt }));

export function addRule(store: ChannelStore, session: SessionRecord, rule: SessionRule): void {
  if (session.rules.some((r) => r.tool === rule.tool)) return;
  session.rules.push(rule);
  setMeta(store, session, META.sessionRules, rulesMeta(session));
}

export const nowIso = (store: ChannelStore) => isoNow(store.clock);

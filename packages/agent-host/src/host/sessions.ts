/**
 * Session and chat lifecycle (spec §8.1 first rows, §8.2, §8.4): creating sessions and chats on
 * first sight, implicit and explicit turns, ending sessions, the agent-gone grace period and
 * retention. Every method commits synchronously, so one harness event's actions are never
 * interleaved with another's.
 */
import { HARNESS_PROVIDER, META, ROOT_URI } from "../wire/constants.js";
import type { ChatState, RootState, SessionState } from "../wire/types.js";
import {
  commitChat,
  chatSummaryOf,
  initialChatState,
  initialSessionState,
  newChatRecord,
  nowIso,
  setMeta,
  type ChatRecord,
  type SessionRecord,
} from "./model.js";
import type { Scheduler } from "./scheduler.js";
import type { ChannelStore } from "./store.js";
import { chatUri, sessionUri } from "./uri.js";

export interface SessionsOptions {
  retentionMs: number;
  graceMs: number;
  maxTurns: number;
  implicitTurnIdleMs: number;
  readOnlyChats: boolean;
}

export interface SessionHooks {
  /** A session's catalogue entry may have changed. */
  touched(session: SessionRecord): void;
  added(session: SessionRecord): void;
  removed(session: SessionRecord): void;
  /** Held requests of a chat (or of the whole session) must fail closed before its turn ends. */
  failHeld(session: SessionRecord, chat: ChatRecord | undefined, reason: string): void;
}

export class Sessions {
  readonly byId = new Map<string, SessionRecord>();
  readonly byUri = new Map<string, SessionRecord>();
  readonly chatsByUri = new Map<string, { session: SessionRecord; chat: ChatRecord }>();
  /** URIs of sessions and chats dropped after retention (reported as `missing` on replay). */
  readonly removedUris = new Set<string>();
  #hooks!: SessionHooks;

  constructor(
    readonly store: ChannelStore,
    readonly scheduler: Scheduler,
    readonly options: SessionsOptions,
  ) {
    store.create(ROOT_URI, {
      agents: [
        {
          provider: HARNESS_PROVIDER,
          displayName: "Supervised agents",
          description: "Agents supervised through the Agent Harness Protocol",
          models: [],
        },
      ],
      activeSessions: 0,
    } satisfies RootState);
  }

  setHooks(hooks: SessionHooks): void {
    this.#hooks = hooks;
  }

  get activeSessions(): number {
    let n = 0;
    for (const s of this.byId.values()) if (!s.ended) n++;
    return n;
  }

  #syncActiveCount(): void {
    const count = this.activeSessions;
    if (this.store.get<RootState>(ROOT_URI)!.activeSessions !== count) {
      this.store.commit(ROOT_URI, { type: "root/activeSessionsChanged", activeSessions: count });
    }
  }

  /** The session of `sessionId`, created when first seen; a retained ended session is re-opened only by `revive` (handshake, session_start). */
  ensureSession(sessionId: string, agentInfo?: SessionRecord["agentInfo"], revive = false): SessionRecord {
    let session = this.byId.get(sessionId);
    if (session !== undefined) {
      if (agentInfo !== undefined && session.agentInfo === undefined) {
        session.agentInfo = agentInfo;
        setMeta(this.store, session, META.agent, agentInfo);
      }
      if (session.ended && revive) {
        session.ended = false;
        if (session.retentionTimer !== undefined) this.scheduler.clearTimeout(session.retentionTimer);
        session.retentionTimer = undefined;
        this.#syncActiveCount();
      }
      return session;
    }
    const uri = sessionUri(sessionId);
    this.removedUris.delete(uri);
    session = {
      sessionId,
      uri,
      createdAt: nowIso(this.store),
      ended: false,
      chats: new Map(),
      rules: [],
      meta: {},
      connections: new Set(),
      ...(agentInfo === undefined ? {} : { agentInfo }),
    };
    const label = sessionId.length > 12 ? sessionId.slice(0, 12) : sessionId;
    this.store.create(uri, initialSessionState(`${agentInfo?.framework ?? "Agent"} session ${label}`));
    this.byId.set(sessionId, session);
    this.byUri.set(uri, session);
    this.store.commit(uri, { type: "session/ready" });
    return session;
  }

  /** Finishes the announcement of a new session once its first chat exists (§8.1 row 1). */
  announce(session: SessionRecord): void {
    if (session.agentInfo !== undefined) setMeta(this.store, session, META.agent, session.agentInfo);
    this.#syncActiveCount();
    this.#hooks.added(session);
  }

  /** The chat of `agentId`, created when first seen. The first agent at depth 0 is the root agent. */
  ensureChat(session: SessionRecord, agentId: string, depth: number, parent?: { chat: string; toolCallId?: string }): ChatRecord {
    let chat = session.chats.get(agentId);
    if (chat !== undefined) return chat;
    const uri = chatUri(session.sessionId, agentId);
    this.removedUris.delete(uri);
    const isRoot = depth === 0 && session.rootAgentId === undefined;
    if (isRoot) session.rootAgentId = agentId;
    chat = newChatRecord(agentId, uri, depth, this.store.clock());
    session.chats.set(agentId, chat);
    this.chatsByUri.set(uri, { session, chat });
    const origin =
      depth > 0 && parent?.toolCallId !== undefined ? { kind: "tool", chat: parent.chat, toolCallId: parent.toolCallId } : undefined;
    const title = isRoot ? "Main agent" : agentId || "Agent";
    const state = initialChatState(uri, title, nowIso(this.store), origin, this.options.readOnlyChats);
    this.store.create(uri, state);
    this.store.commit(session.uri, { type: "session/chatAdded", summary: chatSummaryOf(state) });
    if (isRoot) this.store.commit(session.uri, { type: "session/defaultChatChanged", defaultChat: uri });
    return chat;
  }

  /** Session and chat for one harness event, announcing what is new. */
  resolve(
    sessionId: string,
    agentId: string,
    depth: number,
    agentInfo?: SessionRecord["agentInfo"],
    revive = false,
  ): { session: SessionRecord; chat: ChatRecord } {
    const fresh = !this.byId.has(sessionId);
    const session = this.ensureSession(sessionId, agentInfo, revive);
    let chat = session.chats.get(agentId);
    if (chat === undefined) {
      const parent = session.rootAgentId === undefined ? undefined : session.chats.get(session.rootAgentId);
      chat = this.ensureChat(session, agentId, depth, parent === undefined ? undefined : { chat: parent.uri });
    }
    if (fresh) this.announce(session);
    chat.lastEventAt = this.store.clock();
    return { session, chat };
  }

  chatState(chat: ChatRecord): ChatState | undefined {
    return this.store.get<ChatState>(chat.uri);
  }

  /** Opens a turn. */
  startTurn(
    session: SessionRecord,
    chat: ChatRecord,
    turnId: string,
    text: string,
    kind: "user" | "agent",
    implicit: boolean,
    startedAt?: string,
  ): void {
    chat.turnId = turnId;
    chat.implicit = implicit;
    chat.turnStartedAt = this.store.clock();
    commitChat(this.store, session, chat, {
      type: "chat/turnStarted",
      turnId,
      startedAt: startedAt ?? nowIso(this.store),
      message: { text, origin: { kind } },
    });
  }

  /** Opens an implicit turn when the chat has none (§8.2). Returns the active turn id. */
  ensureTurn(session: SessionRecord, chat: ChatRecord, prompt?: string): string {
    if (chat.turnId !== undefined && chat.implicit && this.store.clock() - chat.lastEventAt > this.options.implicitTurnIdleMs) {
      this.endTurn(session, chat, "complete");
    }
    if (chat.turnId !== undefined) return chat.turnId;
    const turnId = `turn-${++chat.turnCounter}`;
    this.startTurn(session, chat, turnId, prompt ?? "Agent activity", "agent", true);
    return turnId;
  }

  /** Ends the active turn (held requests of the chat fail closed first). */
  endTurn(
    session: SessionRecord,
    chat: ChatRecord,
    how: "complete" | "cancelled" | "error",
    error?: { errorType: string; message: string },
  ): void {
    const turnId = chat.turnId;
    if (turnId === undefined) return;
    this.#hooks.failHeld(session, chat, how === "complete" ? "The turn ended before a decision" : "The turn ended before a decision");
    const duration = Math.max(0, this.store.clock() - chat.turnStartedAt);
    const type = how === "complete" ? "chat/turnComplete" : how === "cancelled" ? "chat/turnCancelled" : "chat/error";
    commitChat(this.store, session, chat, { type, turnId, duration, ...(error === undefined ? {} : { error }) });
    this.turnEnded(session, chat);
  }

  /** Bookkeeping after a turn ended (by the host or by a client's `chat/turnCancelled`). */
  turnEnded(session: SessionRecord, chat: ChatRecord): void {
    chat.turnId = undefined;
    chat.implicit = false;
    chat.tools.clear();
    const state = this.store.get<ChatState>(chat.uri);
    if (state?.activity !== undefined) commitChat(this.store, session, chat, { type: "chat/activityChanged" });
    this.#trimTurns(chat);
  }

  /** Per chat at most `maxTurns` completed turns are kept (§8.4); older ones leave the host's state. */
  #trimTurns(chat: ChatRecord): void {
    const state = this.store.get<ChatState>(chat.uri);
    if (state !== undefined && state.turns.length > this.options.maxTurns) {
      this.store.create(chat.uri, { ...state, turns: state.turns.slice(state.turns.length - this.options.maxTurns) });
    }
  }

  /** `session_end`, or the agent gone after the grace period (§8.1 last rows). */
  endSession(session: SessionRecord, how: "complete" | "cancelled", reason: string): void {
    if (session.ended) return;
    if (session.graceTimer !== undefined) this.scheduler.clearTimeout(session.graceTimer);
    session.graceTimer = undefined;
    this.#hooks.failHeld(session, undefined, reason);
    for (const chat of session.chats.values()) this.endTurn(session, chat, how);
    session.ended = true;
    session.cancelling = undefined;
    if (this.store.get<SessionState>(session.uri)?.activity !== undefined) {
      this.store.commit(session.uri, { type: "session/activityChanged" });
    }
    this.#syncActiveCount();
    this.#hooks.touched(session);
    session.retentionTimer = this.scheduler.setTimeout(() => this.removeSession(session), this.options.retentionMs);
  }

  /** Drops an ended session: channels, catalogue entry; its URIs become `missing`. */
  removeSession(session: SessionRecord): void {
    if (this.byId.get(session.sessionId) !== session) return;
    if (session.retentionTimer !== undefined) this.scheduler.clearTimeout(session.retentionTimer);
    this.byId.delete(session.sessionId);
    this.byUri.delete(session.uri);
    for (const chat of session.chats.values()) {
      this.chatsByUri.delete(chat.uri);
      this.store.remove(chat.uri);
      this.removedUris.add(chat.uri);
    }
    this.store.remove(session.uri);
    this.removedUris.add(session.uri);
    this.#hooks.removed(session);
  }

  /** An agent connection carried this session. */
  attach(session: SessionRecord, connectionId: number): void {
    session.connections.add(connectionId);
    if (session.graceTimer !== undefined) {
      this.scheduler.clearTimeout(session.graceTimer);
      session.graceTimer = undefined;
    }
  }

  /** An agent connection closed: its sessions without another connection end after the grace period. */
  detach(connectionId: number): void {
    for (const session of this.byId.values()) {
      if (!session.connections.delete(connectionId) || session.connections.size > 0 || session.ended) continue;
      this.#hooks.failHeld(session, undefined, "The agent disconnected");
      session.graceTimer = this.scheduler.setTimeout(() => {
        session.graceTimer = undefined;
        if (session.connections.size === 0) this.endSession(session, "cancelled", "The agent disconnected");
      }, this.options.graceMs);
    }
  }

  dispose(): void {
    for (const session of this.byId.values()) {
      if (session.graceTimer !== undefined) this.scheduler.clearTimeout(session.graceTimer);
      if (session.retentionTimer !== undefined) this.scheduler.clearTimeout(session.retentionTimer);
    }
  }
}

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
  /** Grace period of a session carried only by per-call (hook) connections (ADR 0161). */
  perCallGraceMs: number;
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

/** Who is on an agent connection, from its handshake (ADR 0161). */
export interface AgentIdentity {
  /** The handshake's framework, session id and agent id: the same for a reconnect of the same client. */
  readonly key: string;
  /** A hook host's bridge: one short connection per hook call, many for one live session. */
  readonly perCall: boolean;
  /** The handshake's session id (ADR 0174: its session, while empty, is folded into the next one the connection carries). */
  readonly sessionId?: string;
}

/** Whether a handshake's capabilities mark a per-call (hook) bridge: an AARTS runtime bridge. */
export const isPerCallAgent = (capabilities: readonly string[]): boolean => capabilities.some((c) => c.startsWith("aarts/"));

export class Sessions {
  /** Sessions by key (`SessionRecord.sessionId`: the agent's session id, suffixed for a later run). */
  readonly byId = new Map<string, SessionRecord>();
  /** The latest local session of each agent-chosen session id. */
  readonly #latest = new Map<string, SessionRecord>();
  /** Per agent connection: who it is, and the sessions it carried (by agent-chosen id). */
  readonly #agents = new Map<number, { identity?: AgentIdentity; carried: Map<string, SessionRecord> }>();
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

  /** Records who an agent connection is (its handshake); later events of the connection are routed with it. */
  identify(connectionId: number, identity: AgentIdentity): void {
    const entry = this.#agents.get(connectionId);
    if (entry === undefined) this.#agents.set(connectionId, { identity, carried: new Map() });
    else entry.identity = identity;
  }

  /**
   * The session an event of agent session `sessionId` on `connectionId` belongs to (ADR 0161):
   * the one this connection already carries; else the latest session of that id unless it ended,
   * or it is orphaned and this connection is another agent (a different handshake identity, not a
   * per-call bridge); else a new session with its own key and URI. A `revive` event (handshake, session_start) on the
   * connection that carries an ended session re-opens it.
   */
  #route(sessionId: string, connectionId: number, revive: boolean): { session: SessionRecord | undefined; fresh: boolean } {
    const own = this.#agents.get(connectionId)?.carried.get(sessionId);
    if (own !== undefined && this.byId.get(own.sessionId) === own) {
      if (own.ended && revive) this.#reopen(own);
      return { session: own, fresh: false };
    }
    const latest = this.#latest.get(sessionId);
    if (latest === undefined || this.byId.get(latest.sessionId) !== latest || latest.ended) return { session: undefined, fresh: true };
    // Orphaned (no connection carries it, the grace period runs): only a reconnect of one of its
    // own agents, a per-call hook connection or a connection that never said who it is takes it up.
    const identity = this.#agents.get(connectionId)?.identity;
    const stranger = identity !== undefined && !identity.perCall && latest.owners.size > 0 && !latest.owners.has(identity.key);
    if (stranger && latest.connections.size === 0) return { session: undefined, fresh: true };
    return { session: latest, fresh: false };
  }

  #reopen(session: SessionRecord): void {
    session.ended = false;
    if (session.retentionTimer !== undefined) this.scheduler.clearTimeout(session.retentionTimer);
    session.retentionTimer = undefined;
    this.#lifecycle(session);
    this.#syncActiveCount();
  }

  /** A key not used by any session (nor by a removed one): the agent's id, then `id#2`, `id#3`, … */
  #freshKey(sessionId: string, after: number): { key: string; run: number } {
    let run = after;
    for (;;) {
      const key = run <= 1 ? sessionId : `${sessionId}#${run}`;
      if (!this.byId.has(key) && !this.removedUris.has(sessionUri(key))) return { key, run };
      run++;
    }
  }

  /** The session of `sessionId` for an event on `connectionId`, created when new (see {@link resolve}). */
  ensureSession(
    sessionId: string,
    connectionId: number,
    agentInfo?: SessionRecord["agentInfo"],
    revive = false,
  ): { session: SessionRecord; fresh: boolean } {
    const routed = this.#route(sessionId, connectionId, revive);
    let session = routed.session;
    if (session !== undefined) {
      const folded = this.#handshakeOnly(connectionId, sessionId);
      agentInfo ??= folded?.agentInfo;
      if (agentInfo !== undefined && session.agentInfo === undefined) {
        session.agentInfo = agentInfo;
        setMeta(this.store, session, META.agent, agentInfo);
      }
      this.attach(session, connectionId);
      if (folded !== undefined) this.#fold(folded, connectionId);
      return { session, fresh: false };
    }
    const folded = this.#handshakeOnly(connectionId, sessionId);
    agentInfo ??= folded?.agentInfo;
    const previous = this.#latest.get(sessionId);
    const { key, run } = this.#freshKey(sessionId, previous === undefined ? 1 : previous.run + 1);
    const uri = sessionUri(key);
    session = {
      sessionId: key,
      agentSessionId: sessionId,
      run,
      uri,
      createdAt: nowIso(this.store),
      ended: false,
      chats: new Map(),
      rules: [],
      meta: {},
      connections: new Set(),
      hadTurns: false,
      perCall: false,
      owners: new Set(),
      ...(agentInfo === undefined ? {} : { agentInfo }),
    };
    const label = sessionId.length > 12 ? sessionId.slice(0, 12) : sessionId;
    const title = `${agentInfo?.framework ?? "Agent"} session ${label}${run > 1 ? ` (run ${run})` : ""}`;
    this.store.create(uri, initialSessionState(title));
    this.byId.set(key, session);
    this.byUri.set(uri, session);
    this.#latest.set(sessionId, session);
    this.store.commit(uri, { type: "session/ready" });
    this.#lifecycle(session);
    this.attach(session, connectionId);
    if (folded !== undefined) this.#fold(folded, connectionId);
    return { session, fresh: true };
  }

  /**
   * The session of a long-lived connection's own handshake when that connection now carries agent
   * session `sessionId` instead, and the handshake's session is nothing but the handshake: no turn,
   * no other connection (ADR 0174). An `ahp acp-proxy` shakes hands with an id of its own before
   * the agent it fronts names its sessions.
   */
  #handshakeOnly(connectionId: number, sessionId: string): SessionRecord | undefined {
    const entry = this.#agents.get(connectionId);
    const handshakeId = entry?.identity?.sessionId;
    if (entry === undefined || handshakeId === undefined || entry.identity!.perCall || handshakeId === sessionId) return undefined;
    const own = entry.carried.get(handshakeId);
    if (own === undefined || this.byId.get(own.sessionId) !== own || own.ended || own.hadTurns) return undefined;
    for (const other of own.connections) if (other !== connectionId) return undefined;
    return own;
  }

  /** Drops a handshake-only session whose connection went on to carry the agent's session (see {@link #handshakeOnly}). */
  #fold(own: SessionRecord, connectionId: number): void {
    this.#agents.get(connectionId)?.carried.delete(own.agentSessionId);
    own.connections.clear();
    own.ended = true;
    this.#syncActiveCount();
    this.removeSession(own);
  }

  /** The session's lifecycle in its `_meta` (and so in its catalogue summary): ended or not, whether it had a turn. */
  #lifecycle(session: SessionRecord): void {
    setMeta(this.store, session, META.lifecycle, {
      state: session.ended ? "ended" : "active",
      hadTurns: session.hadTurns,
      agentSessionId: session.agentSessionId,
      ...(session.run > 1 ? { run: session.run } : {}),
    });
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
    connectionId: number,
    agentInfo?: SessionRecord["agentInfo"],
    revive = false,
  ): { session: SessionRecord; chat: ChatRecord } {
    const { session, fresh } = this.ensureSession(sessionId, connectionId, agentInfo, revive);
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
    if (!session.hadTurns) {
      session.hadTurns = true;
      this.#lifecycle(session);
    }
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
    this.#lifecycle(session);
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
    if (this.#latest.get(session.agentSessionId) === session) this.#latest.delete(session.agentSessionId);
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
    let entry = this.#agents.get(connectionId);
    if (entry === undefined) {
      entry = { carried: new Map() };
      this.#agents.set(connectionId, entry);
    }
    if (entry.carried.get(session.agentSessionId) !== session) entry.carried.set(session.agentSessionId, session);
    const identity = entry.identity;
    if (identity !== undefined) {
      if (identity.perCall) session.perCall = true;
      else if (session.owners.size < 16) session.owners.add(identity.key);
    }
    if (session.graceTimer !== undefined) {
      this.scheduler.clearTimeout(session.graceTimer);
      session.graceTimer = undefined;
    }
  }

  /**
   * An agent connection closed: its sessions without another connection end after the grace
   * period (a longer one for a session with turns carried by per-call hook connections, whose
   * connections close after every call).
   */
  detach(connectionId: number): void {
    const entry = this.#agents.get(connectionId);
    this.#agents.delete(connectionId);
    const sessions = entry === undefined ? this.byId.values() : entry.carried.values();
    for (const session of sessions) {
      if (!session.connections.delete(connectionId) || session.connections.size > 0 || session.ended) continue;
      this.#hooks.failHeld(session, undefined, "The agent disconnected");
      // A hook call's own handshake session (nothing but the handshake) ends as any other.
      const perCall = session.perCall && session.owners.size === 0 && session.hadTurns;
      const grace = perCall ? this.options.perCallGraceMs : this.options.graceMs;
      session.graceTimer = this.scheduler.setTimeout(() => {
        session.graceTimer = undefined;
        if (session.connections.size === 0) this.endSession(session, "cancelled", "The agent disconnected");
      }, grace);
    }
  }

  dispose(): void {
    for (const session of this.byId.values()) {
      if (session.graceTimer !== undefined) this.scheduler.clearTimeout(session.graceTimer);
      if (session.retentionTimer !== undefined) this.scheduler.clearTimeout(session.retentionTimer);
    }
  }
}

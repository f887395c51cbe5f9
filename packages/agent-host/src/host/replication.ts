/**
 * Agent Host state across harness replicas (ADR 0085). Every replica appends the changes of the
 * sessions it supervises (channel created or replaced, action committed, channel removed, session
 * ended) to one shared, ordered log ({@link ActionRelay}) and tails it. Actions of other replicas
 * are reduced into mirror channels of the local store and sequenced with this replica's own
 * `serverSeq`, so every client sees every session. An answer to a request held on another replica
 * is checked here (role, shape) and forwarded to the owner, which resolves its hold exactly as a
 * local answer (first answer wins) and replies; the actions it commits reach every replica through
 * the log. The relay is an interface: this package never talks to Redis itself.
 */
import { randomUUID } from "node:crypto";
import { channelKind } from "../reducers/index.js";
import { ROOT_URI } from "../wire/constants.js";
import type { ActionOrigin, ChannelState, ChatState, RootState, SessionState, StateAction, ToolCallState } from "../wire/types.js";
import { ROLE_RANK, type ApprovalBroker, type Dispatcher } from "./approvals.js";
import type { Catalogue } from "./catalogue.js";
import { ClientActions } from "./dispatch.js";
import { commitChat, newChatRecord, type SessionRecord } from "./model.js";
import type { Projector } from "./projector.js";
import type { Scheduler } from "./scheduler.js";
import type { ActionRelay, ReplicaClock, ReplicationOptions, ReplicationStats } from "./relay.js";
import type { Sessions } from "./sessions.js";
import type { ChannelStore } from "./store.js";

export { replicaClock, type ActionRelay, type ActionRelayListener, type ReplicationOptions, type ReplicationStats } from "./relay.js";

type Body =
  | { k: "c"; u: string; s: ChannelState; at: number; sid?: string; ca?: string; su?: string; ag?: string; dp?: number }
  | { k: "a"; u: string; a: StateAction; o?: ActionOrigin; at: number }
  | { k: "d"; u: string }
  | { k: "e"; u: string; ended: boolean }
  | { k: "hb" }
  | { k: "hello" }
  | { k: "bye" }
  | { k: "ans"; to: string; id: string; u: string; a: StateAction; o: ActionOrigin; who: Dispatcher }
  | { k: "res"; to: string; id: string; reason?: string };
type Entry = Body & { r: string };

/** Entries kept for a retry while the shared log is unreachable; beyond it they are dropped and the state re-announced. */
const OUTBOX_LIMIT = 10_000;

interface Outgoing {
  text: string;
  kind: Body["k"];
  answer?: string;
}

const ANSWERS = new Set(["chat/toolCallConfirmed", "chat/inputCompleted"]);

interface PendingAnswer {
  channel: string;
  action: StateAction;
  origin: ActionOrigin;
  owner: string;
  timer: unknown;
}

/** What replication needs from its host. */
export interface ReplicationHost {
  readonly store: ChannelStore;
  readonly sessions: Sessions;
  readonly broker: ApprovalBroker;
  readonly catalogue: Catalogue;
  readonly scheduler: Scheduler;
  readonly clock: ReplicaClock;
  report(error: Error): void;
}

/** The replication of one `AgentHost` (created by it when `replication` is given). */
export class Replication {
  readonly id: string;
  readonly #host: ReplicationHost;
  readonly #options: ReplicationOptions;
  readonly #relay: ActionRelay;
  /** Mirrored channels (sessions and chats of other replicas) → owner replica. */
  readonly #remote = new Map<string, string>();
  readonly #lastSeen = new Map<string, number>();
  readonly #gone = new Set<string>();
  readonly #pending = new Map<string, PendingAnswer>();
  readonly #ended = new WeakMap<SessionRecord, boolean>();
  readonly #stats = { published: 0, publishFailures: 0, applied: 0, forwarded: 0, forwardFailures: 0 };
  #queue: Body[] = [];
  #outbox: Outgoing[] = [];
  #sending = false;
  #scheduled = false;
  #applying = false;
  #dirty = false;
  #answerSeq = 0;
  #connectedSince: number | undefined;
  #timer: unknown;
  #stopped = false;
  readonly #unsubscribe: Array<() => void> = [];

  constructor(host: ReplicationHost, options: ReplicationOptions) {
    this.#host = host;
    this.#options = options;
    this.#relay = options.relay;
    this.id = options.replicaId ?? randomUUID();
    const { store } = host;
    this.#unsubscribe.push(
      store.onCommit((env) => {
        if (this.#applying || env.rejectionReason !== undefined || !replicated(env.channel) || this.#remote.has(env.channel)) return;
        this.#enqueue({
          k: "a",
          u: env.channel,
          a: env.action,
          ...(env.origin === undefined ? {} : { o: env.origin }),
          at: host.clock.last(),
        });
      }),
      store.onChannel((uri, state) => {
        if (!replicated(uri)) return;
        if (this.#remote.has(uri)) {
          if (state === undefined) this.#remote.delete(uri);
          return;
        }
        if (this.#applying) return;
        this.#enqueue(state === undefined ? { k: "d", u: uri } : { k: "c", u: uri, s: state, at: host.clock.last() });
      }),
      this.#relay.subscribe({ entries: (list) => this.#receive(list), connected: () => this.#connected() }),
    );
    this.#arm();
  }

  stats(): ReplicationStats {
    let remoteSessions = 0;
    for (const uri of this.#remote.keys()) if (channelKind(uri) === "session") remoteSessions++;
    return { replicaId: this.id, ...this.#stats, remoteSessions, connected: this.#relay.connected };
  }

  /** Whether `uri` is a channel of a session supervised by another replica. */
  isRemote(uri: string): boolean {
    return this.#remote.has(uri);
  }

  /** Client actions with remote channels handled here (answers forwarded, the rest rejected). */
  clientActions(sessions: Sessions, broker: ApprovalBroker, projector: Projector, touched: (uri: string) => void): ClientActions {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the subclass below forwards to this instance
    const replication = this;
    return new (class extends ClientActions {
      override dispatch(params: unknown, who: Dispatcher): "dropped" | "committed" | "rejected" {
        const channel = (params as { channel?: unknown } | null)?.channel;
        if (typeof channel === "string" && replication.isRemote(channel)) return replication.dispatchRemote(params, who);
        return super.dispatch(params, who);
      }
    })(sessions, broker, projector, touched);
  }

  /** A session's catalogue entry may have changed: tells the others when it ended or was revived. */
  touched(session: SessionRecord): void {
    if (this.#remote.has(session.uri)) return;
    if ((this.#ended.get(session) ?? false) === session.ended) return;
    this.#ended.set(session, session.ended);
    this.#enqueue({ k: "e", u: session.uri, ended: session.ended });
  }

  /** Stops tailing and heartbeats; tells the others this replica is going (its sessions end there at once). */
  stop(): void {
    if (this.#stopped) return;
    this.#enqueue({ k: "bye" });
    this.#flush();
    if (this.#outbox.length > 0) {
      // A batch is still in flight: hand the rest (the goodbye last) to the log now, in order after
      // it, before the host closes the log's connection (a later retry would find it closed).
      const rest = this.#outbox;
      this.#outbox = [];
      this.#stats.published += rest.length;
      this.#relay.publish(rest.map((o) => o.text)).catch((error: unknown) => {
        this.#stats.publishFailures += rest.length;
        const message = error instanceof Error ? error.message : String(error);
        this.#failure(new Error(`shared action log: ${rest.length} entries not appended while stopping: ${message}`));
      });
    }
    this.#stopped = true;
    this.#host.scheduler.clearTimeout(this.#timer);
    for (const off of this.#unsubscribe.splice(0)) off();
    for (const id of [...this.#pending.keys()]) this.#settle(id, "this replica stopped");
  }

  // ------------------------------------------------------------------ answers from clients here

  /** `dispatchAction` on a mirrored channel. */
  dispatchRemote(params: unknown, who: Dispatcher): "dropped" | "committed" | "rejected" {
    const { channel, clientSeq, action } = params as { channel: string; clientSeq?: unknown; action?: unknown };
    if (typeof clientSeq !== "number" || !Number.isFinite(clientSeq)) return "dropped";
    if (action === null || typeof action !== "object" || typeof (action as StateAction).type !== "string") return "dropped";
    const origin: ActionOrigin = { clientId: who.clientId, clientSeq };
    const reason = this.#forward(channel, action as StateAction, origin, who);
    if (reason === undefined) return "committed";
    this.#host.store.reject(channel, action as StateAction, origin, reason);
    return "rejected";
  }

  #forward(channel: string, action: StateAction, origin: ActionOrigin, who: Dispatcher): string | undefined {
    const owner = this.#remote.get(channel)!;
    if (!ANSWERS.has(action.type))
      return `this session is supervised by replica ${owner}; from another replica only tool confirmations and input answers are accepted`;
    if (ROLE_RANK[who.role] < ROLE_RANK.approver)
      return action.type === "chat/toolCallConfirmed"
        ? "approving tool calls needs the approver role"
        : "answering input requests needs the approver role";
    if (this.#gone.has(owner)) return `the replica holding this request (${owner}) is gone`;
    if (!this.#relay.connected) {
      this.#stats.forwardFailures++;
      const reason = `cannot reach replica ${owner}, which holds this request: the shared action log is unavailable`;
      this.#failure(new Error(`answer from ${who.principal} not forwarded: ${reason}`));
      return reason;
    }
    const id = `${this.id}:${++this.#answerSeq}`;
    const ms = this.#options.answerTimeoutMs ?? 10_000;
    const timer = this.#host.scheduler.setTimeout(() => {
      this.#stats.forwardFailures++;
      this.#failure(new Error(`no reply from replica ${owner} to a forwarded answer within ${ms} ms`));
      this.#settle(id, `no reply from replica ${owner}, which holds this request, within ${ms} ms`);
    }, ms);
    this.#pending.set(id, { channel, action, origin, owner, timer });
    this.#stats.forwarded++;
    this.#enqueue({ k: "ans", to: owner, id, u: channel, a: action, o: origin, who });
    return undefined;
  }

  /** The forwarded answer is settled: rejected here with `reason`, or accepted (its actions came through the log). */
  #settle(id: string, reason: string | undefined): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    this.#host.scheduler.clearTimeout(pending.timer);
    if (reason !== undefined && this.#host.store.has(pending.channel))
      this.#host.store.reject(pending.channel, pending.action, pending.origin, reason);
  }

  // ------------------------------------------------------------------ publishing

  #enqueue(body: Body): void {
    if (this.#stopped) return;
    this.#queue.push(body);
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    for (const body of batch) {
      const full = this.#complete(body);
      if (full === undefined) continue;
      this.#outbox.push({ text: JSON.stringify({ ...full, r: this.id }), kind: full.k, ...(full.k === "ans" ? { answer: full.id } : {}) });
    }
    this.#pump();
  }

  /**
   * Appends the outbox, one batch at a time, so entries keep their order. Entries that could not
   * be appended stay at its head and go out when the log is back (a short outage loses nothing);
   * forwarded answers fail at once instead, heartbeats are dropped, and an outbox over
   * {@link OUTBOX_LIMIT} is dropped for a re-announcement of the current state.
   */
  #pump(): void {
    if (this.#sending || this.#outbox.length === 0) return;
    const batch = this.#outbox;
    this.#outbox = [];
    this.#sending = true;
    this.#stats.published += batch.length;
    this.#relay.publish(batch.map((o) => o.text)).then(
      () => {
        this.#sending = false;
        if (this.#dirty) {
          // Appends were dropped while the log was unreachable: tell the others the current state again.
          this.#dirty = false;
          this.#announce();
        }
        this.#pump();
      },
      (error: unknown) => {
        this.#sending = false;
        this.#stats.publishFailures += batch.length;
        const message = error instanceof Error ? error.message : String(error);
        this.#failure(new Error(`shared action log: ${batch.length} entries not appended (kept for a retry): ${message}`));
        const kept: Outgoing[] = [];
        for (const o of batch) {
          if (o.answer !== undefined) {
            this.#stats.forwardFailures++;
            this.#settle(o.answer, `cannot reach the replica holding this request: the shared action log is unavailable (${message})`);
          } else if (o.kind !== "hb") kept.push(o);
        }
        this.#outbox = kept.concat(this.#outbox);
        if (this.#outbox.length > OUTBOX_LIMIT) {
          this.#outbox = [];
          this.#dirty = true;
        }
      },
    );
  }

  /** Adds the identity a mirror needs to a channel-creation entry (looked up now: the records exist by the time of the flush). */
  #complete(body: Body): Body | undefined {
    if (body.k !== "c") return body;
    const { sessions } = this.#host;
    if (channelKind(body.u) === "session") {
      const session = sessions.byUri.get(body.u);
      return session === undefined ? undefined : { ...body, sid: session.sessionId, ca: session.createdAt };
    }
    const entry = sessions.chatsByUri.get(body.u);
    return entry === undefined ? undefined : { ...body, su: entry.session.uri, ag: entry.chat.agentId, dp: entry.chat.depth };
  }

  /** Every local session's current channel states (after a hello or lost appends). */
  #announce(): void {
    const { store, sessions } = this.#host;
    for (const session of sessions.byId.values()) {
      if (this.#remote.has(session.uri)) continue;
      const state = store.get(session.uri);
      if (state === undefined) continue;
      this.#enqueue({ k: "c", u: session.uri, s: state, at: this.#host.clock.now() });
      for (const chat of session.chats.values()) {
        const chatState = store.get(chat.uri);
        if (chatState !== undefined) this.#enqueue({ k: "c", u: chat.uri, s: chatState, at: this.#host.clock.now() });
      }
      this.#enqueue({ k: "e", u: session.uri, ended: session.ended });
    }
  }

  // ------------------------------------------------------------------ liveness

  #arm(): void {
    if (this.#stopped) return;
    this.#timer = this.#host.scheduler.setTimeout(() => {
      this.#tick();
      this.#arm();
    }, this.#options.heartbeatMs ?? 2000);
  }

  #tick(): void {
    this.#enqueue({ k: "hb" });
    if (this.#relay.connected) this.#pump();
    if (!this.#relay.connected) {
      this.#connectedSince = undefined;
      return;
    }
    const now = Date.now();
    const timeout = this.#options.replicaTimeoutMs ?? 10_000;
    // Judge others only after this replica itself has been connected for a whole timeout.
    if (this.#connectedSince === undefined) this.#connectedSince = now;
    if (now - this.#connectedSince < timeout) return;
    for (const [replica, seen] of this.#lastSeen) {
      if (now - seen > timeout && !this.#gone.has(replica)) this.#replicaGone(replica, `replica ${replica} stopped (no heartbeat)`);
    }
  }

  #connected(): void {
    const now = Date.now();
    this.#connectedSince = now;
    for (const replica of this.#lastSeen.keys()) this.#lastSeen.set(replica, now);
    this.#enqueue({ k: "hello" });
    this.#announce();
  }

  /** Another replica is gone: its agents' requests failed with their connections; here its open tool calls are cancelled and its sessions end. */
  #replicaGone(replica: string, reason: string): void {
    this.#gone.add(replica);
    this.#lastSeen.delete(replica);
    const { sessions } = this.#host;
    for (const [uri, owner] of [...this.#remote]) {
      if (owner !== replica || channelKind(uri) !== "session") continue;
      const session = sessions.byUri.get(uri);
      if (session !== undefined && !session.ended) this.#endMirror(session, reason);
    }
    for (const [id, pending] of [...this.#pending]) if (pending.owner === replica) this.#settle(id, reason);
  }

  #endMirror(session: SessionRecord, reason: string): void {
    const { store, sessions, scheduler } = this.#host;
    for (const chat of session.chats.values()) {
      const turn = store.get<ChatState>(chat.uri)?.activeTurn;
      if (turn === undefined) continue;
      for (const part of turn.responseParts) {
        if (part.kind !== "toolCall") continue;
        const toolCall = (part as { toolCall: ToolCallState }).toolCall;
        if (toolCall.status !== "pending-confirmation") continue;
        commitChat(store, session, chat, {
          type: "chat/toolCallConfirmed",
          turnId: turn.id,
          toolCallId: toolCall.toolCallId,
          approved: false,
          reason: "skipped",
          reasonMessage: reason,
        });
      }
      commitChat(store, session, chat, { type: "chat/turnCancelled", turnId: turn.id, duration: 0 });
    }
    for (const request of store.get<SessionState>(session.uri)?.inputNeeded ?? [])
      store.commit(session.uri, { type: "session/inputNeededRemoved", id: request.id });
    session.ended = true;
    this.#syncActiveCount();
    this.#host.catalogue.touched(session);
    if (session.retentionTimer !== undefined) scheduler.clearTimeout(session.retentionTimer);
    session.retentionTimer = scheduler.setTimeout(() => sessions.removeSession(session), sessions.options.retentionMs);
  }

  // ------------------------------------------------------------------ applying other replicas' entries

  #receive(list: readonly string[]): void {
    if (this.#stopped) return;
    const touched = new Set<SessionRecord>();
    for (const text of list) {
      let entry: Entry;
      try {
        entry = JSON.parse(text) as Entry;
      } catch {
        this.#host.report(new Error("shared action log: an entry is not JSON"));
        continue;
      }
      if (typeof entry?.r !== "string" || entry.r === this.id) continue;
      this.#lastSeen.set(entry.r, Date.now());
      this.#gone.delete(entry.r);
      try {
        this.#apply(entry, touched);
        this.#stats.applied++;
      } catch (error) {
        this.#host.report(error instanceof Error ? error : new Error(String(error)));
      }
    }
    for (const session of touched) if (this.#host.sessions.byUri.get(session.uri) === session) this.#host.catalogue.touched(session);
  }

  #apply(entry: Entry, touched: Set<SessionRecord>): void {
    switch (entry.k) {
      case "c":
        this.#mirrorChannel(entry, touched);
        return;
      case "a": {
        if (this.#remote.get(entry.u) !== entry.r) return;
        this.#applyingDo(() => this.#host.clock.at(entry.at, () => this.#host.store.commit(entry.u, entry.a, entry.o)));
        const session = this.#sessionOf(entry.u);
        if (session === undefined) return;
        if (entry.a.type === "session/metaChanged") session.meta = (entry.a as { _meta?: SessionRecord["meta"] })._meta ?? {};
        touched.add(session);
        return;
      }
      case "d": {
        if (this.#remote.get(entry.u) !== entry.r || channelKind(entry.u) !== "session") return;
        const session = this.#host.sessions.byUri.get(entry.u);
        if (session !== undefined) this.#host.sessions.removeSession(session);
        this.#syncActiveCount();
        return;
      }
      case "e": {
        if (this.#remote.get(entry.u) !== entry.r) return;
        const session = this.#host.sessions.byUri.get(entry.u);
        if (session === undefined) return;
        session.ended = entry.ended;
        if (!entry.ended && session.retentionTimer !== undefined) {
          this.#host.scheduler.clearTimeout(session.retentionTimer);
          session.retentionTimer = undefined;
        }
        this.#syncActiveCount();
        touched.add(session);
        return;
      }
      case "hello":
        this.#announce();
        return;
      case "bye":
        this.#replicaGone(entry.r, `replica ${entry.r} stopped`);
        return;
      case "ans":
        if (entry.to === this.id) this.#answer(entry);
        return;
      case "res":
        if (entry.to === this.id) this.#settle(entry.id, entry.reason);
        return;
      default:
        return;
    }
  }

  /** An answer forwarded by another replica to a request held here: resolved exactly as a local one. */
  #answer(entry: Extract<Entry, { k: "ans" }>): void {
    const { sessions, broker } = this.#host;
    let reason: string | undefined;
    if (!sessions.chatsByUri.has(entry.u) || this.#remote.has(entry.u)) reason = "no such chat on the replica holding it";
    else if (entry.a.type === "chat/toolCallConfirmed") reason = broker.answerTool(entry.u, entry.a, entry.o, entry.who);
    else if (entry.a.type === "chat/inputCompleted") reason = broker.answerInput(entry.u, entry.a, entry.o, entry.who);
    else reason = "only tool confirmations and input answers are forwarded";
    this.#enqueue({ k: "res", to: entry.r, id: entry.id, ...(reason === undefined ? {} : { reason }) });
  }

  #mirrorChannel(entry: Extract<Entry, { k: "c" }>, touched: Set<SessionRecord>): void {
    const { store, sessions } = this.#host;
    const kind = channelKind(entry.u);
    if (kind === "session") {
      const existing = sessions.byUri.get(entry.u);
      if (existing !== undefined && !this.#remote.has(entry.u)) {
        this.#host.report(new Error(`session ${entry.u} is supervised here and by replica ${entry.r}; keep a session on one replica`));
        return;
      }
      this.#remote.set(entry.u, entry.r);
      this.#applyingDo(() => store.create(entry.u, entry.s));
      const meta = (entry.s as SessionState & { _meta?: SessionRecord["meta"] })._meta;
      if (existing !== undefined) {
        if (meta !== undefined) existing.meta = meta;
        touched.add(existing);
        return;
      }
      if (typeof entry.sid !== "string") return;
      const lifecycle = (meta?.["ahpHarness/lifecycle"] ?? {}) as { agentSessionId?: unknown; run?: unknown; hadTurns?: unknown };
      const session: SessionRecord = {
        sessionId: entry.sid,
        agentSessionId: typeof lifecycle.agentSessionId === "string" ? lifecycle.agentSessionId : entry.sid,
        run: typeof lifecycle.run === "number" ? lifecycle.run : 1,
        hadTurns: lifecycle.hadTurns === true,
        perCall: false,
        owners: new Set(),
        uri: entry.u,
        createdAt: entry.ca ?? new Date(entry.at).toISOString(),
        ended: false,
        chats: new Map(),
        rules: [],
        meta: meta ?? {},
        connections: new Set(),
      };
      sessions.removedUris.delete(entry.u);
      sessions.byId.set(session.sessionId, session);
      sessions.byUri.set(session.uri, session);
      this.#syncActiveCount();
      this.#host.catalogue.added(session);
      return;
    }
    if (kind !== "chat" || typeof entry.su !== "string" || typeof entry.ag !== "string") return;
    const session = sessions.byUri.get(entry.su);
    if (session === undefined || this.#remote.get(entry.su) !== entry.r) return;
    if (sessions.chatsByUri.has(entry.u) && !this.#remote.has(entry.u)) return;
    let chat = session.chats.get(entry.ag);
    if (chat === undefined) {
      chat = newChatRecord(entry.ag, entry.u, entry.dp ?? 0, store.clock());
      session.chats.set(entry.ag, chat);
      sessions.chatsByUri.set(entry.u, { session, chat });
      sessions.removedUris.delete(entry.u);
    }
    this.#remote.set(entry.u, entry.r);
    this.#applyingDo(() => store.create(entry.u, entry.s));
    touched.add(session);
  }

  #sessionOf(uri: string): SessionRecord | undefined {
    const { sessions } = this.#host;
    return sessions.byUri.get(uri) ?? sessions.chatsByUri.get(uri)?.session;
  }

  /** The root channel counts every session this replica shows, its own and mirrored ones. */
  #syncActiveCount(): void {
    const { store, sessions } = this.#host;
    const count = sessions.activeSessions;
    if (store.get<RootState>(ROOT_URI)?.activeSessions !== count)
      store.commit(ROOT_URI, { type: "root/activeSessionsChanged", activeSessions: count });
  }

  #applyingDo<T>(fn: () => T): T {
    const previous = this.#applying;
    this.#applying = true;
    try {
      return fn();
    } finally {
      this.#applying = previous;
    }
  }

  #failure(error: Error): void {
    try {
      this.#options.onfailure?.(error);
    } catch {
      // A reporting callback must not break replication.
    }
  }
}

const replicated = (uri: string): boolean => {
  const kind = channelKind(uri);
  return kind === "session" || kind === "chat";
};

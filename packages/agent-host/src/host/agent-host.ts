/**
 * `AgentHost`: the adapter as one object. It owns the channel store, sessions, projector,
 * approval broker, catalogue and telemetry; exposes the harness tap as handler middleware
 * (`middleware()` / `wrap(handlers)`); clients are served by `listenAgentHost` (see server.ts).
 */
import {
  EVENT_TABLE,
  type AhpEvent,
  type AhpHandlerContext,
  type AhpServerConnection,
  type AhpServerHandlers,
  type HandlerMiddleware,
  type HandshakeRequest,
} from "@ahp/core";
import { tapHandlers, type TapTarget } from "./tap.js";
import { systemClock, type Clock } from "../reducers/clock.js";
import { ROOT_URI } from "../wire/constants.js";
import type { ChannelState, Implementation, SessionSummary } from "../wire/types.js";
import { ApprovalBroker, type ApprovalEvent, type DecidedInfo, type Role } from "./approvals.js";
import { approvalLogLine, type HostLog } from "./host-log.js";
import { ApprovalNotifier, type ApprovalWebhook, type NotifierOptions } from "./webhooks.js";
import { Catalogue } from "./catalogue.js";
import type { ClientConnection } from "./connection.js";
import { DEFAULT_LIMITS, type ConnectionLimits } from "./limits.js";
import type { HostContext } from "./context.js";
import { ClientActions } from "./dispatch.js";
import type { SessionRecord } from "./model.js";
import { Projector } from "./projector.js";
import { realScheduler, type Scheduler } from "./scheduler.js";
import { Sessions } from "./sessions.js";
import { Replication, replicaClock, type ReplicationOptions, type ReplicationStats } from "./replication.js";
import { ChannelStore, type ReplayLogLimits } from "./store.js";
import { Telemetry } from "./telemetry.js";
import type { ApprovalLabels } from "./tool-calls.js";
import { chatUri, sessionUri } from "./uri.js";

/** The name the adapter reports as `serverInfo.name` in the `initialize` result (spec §4.3). */
export const PACKAGE_NAME = "@ahp/agent-host";
/**
 * The version the adapter reports as `serverInfo.version` in the `initialize` result (spec §4.3), next
 * to {@link PACKAGE_NAME}. A literal in the source, not read from `package.json`.
 */
export const PACKAGE_VERSION = "0.1.0";

/**
 * Options of {@link AgentHost}, all optional (defaults on the members): approval hold and timeout
 * (spec §9.1, §9.4), human gate and editing, retention (§8.4), replay log and connection limits (§3),
 * telemetry (§11), approval labels, replication across replicas, and injected clock and timers for tests.
 */
export interface AgentHostOptions {
  /** Approval timeout in ms (§9.1). Default 300 000 (5 min). */
  approvalTimeoutMs?: number;
  /** The `timeout_ms` the harness advertises to agents; holds end 2 s before it (§9.1). Default: not bounded by it. */
  harnessTimeoutMs?: number;
  /** Bound on the inner (policy) handlers, in ms; the hold is not counted. Default 10 000; 0 disables. */
  innerTimeoutMs?: number;
  /** What a held tool approval answers on timeout / agent gone. Default `block`. */
  timeoutDecision?: "block" | "escalate";
  /** Whether an escalation of this event waits for a human. Default: every event. */
  humanGate?: boolean | ((event: AhpEvent) => boolean);
  /** Humans may edit tool arguments when approving (the agent then gets `modify`). Default false. */
  editable?: boolean;
  /** Mark chats `interactivity: "read-only"` (§12). Default false. */
  readOnlyChats?: boolean;
  /** Keep an ended session this long, in ms (§8.4). Default 24 h. */
  retentionMs?: number;
  /** After an agent connection closes without `session_end`, end its sessions after this long (ms). Default 30 000. */
  agentGraceMs?: number;
  /**
   * The same for a session carried only by per-call hook connections (an AARTS bridge opens one
   * per hook call, ADR 0161): it ends after this long without a call. Default 30 min.
   */
  perCallGraceMs?: number;
  /** Completed turns kept per chat. Default 200. */
  maxTurnsPerChat?: number;
  /** Replay log bounds. Default 10 000 envelopes or 32 MiB. */
  replayLog?: ReplayLogLimits;
  /** Connection limits (frame size, depth, subscriptions, dispatch rate, outbound buffer). */
  limits?: Partial<ConnectionLimits>;
  /** Serve the telemetry channel (§11). Default true. */
  telemetry?: boolean;
  /** Title and option labels of a held tool approval (§9.1). Default `DEFAULT_LABELS` (English). */
  labels?: ApprovalLabels;
  /** Injected time source for reducers and stamps. Default `Date.now`. */
  clock?: Clock;
  /** Injected timers (approval timeout, retention, grace). Default real (unref'd) timers. */
  scheduler?: Scheduler;
  /** Non-fatal problems (dropped frames, projection errors). Library code never logs. */
  onerror?: (error: Error) => void;
  /**
   * Share the Agent Host state with other harness replicas through a shared log (ADR 0085): every
   * replica shows every session, and an approver on any replica answers requests held on any other.
   */
  replication?: ReplicationOptions;
  /** A client connection was closed by the host (limits, replacement, protocol errors). */
  onclose?: (info: { principal: string; clientId?: string; code: number; reason: string }) => void;
  /**
   * Receivers told of every hold and its outcome (ADR 0146): an HTTP POST, signed with the
   * receiver's secret, retried with backoff, never on the decision path.
   */
  approvalWebhooks?: readonly ApprovalWebhook[];
  /** Retry and timeout settings of the webhook deliveries. */
  webhookDelivery?: Omit<NotifierOptions, "webhooks" | "inspectorUrl">;
  /** The inspector's address (no token) for links in notifications. Default: set by `listenAgentHost` when it serves the inspector. */
  inspectorUrl?: string;
  /**
   * Log lines worth an operator's eye: holds, answers, timeouts, refused credentials, ignored
   * `ahp_wait` metadata. Never carries a token.
   */
  onlog?: HostLog;
  /** Every hold and its outcome, as the notifications see them. */
  onapproval?: (event: ApprovalEvent) => void;
}

/**
 * The Agent Host channel adapter (spec §1, §7.2): shows the sessions of an AHP harness as live Agent
 * Host sessions and chats, and turns client answers into harness decisions (§9). Put `wrap(handlers)`
 * (or `middleware()`) into the `AhpServer`, serve clients with `listenAgentHost(host, …)`, and call
 * `dispose()` on shutdown: held requests are then failed closed. State lives in memory (shared with
 * other harness replicas only through `replication`).
 */
export class AgentHost implements HostContext, TapTarget {
  readonly store: ChannelStore;
  readonly sessions: Sessions;
  readonly broker: ApprovalBroker;
  readonly projector: Projector;
  readonly catalogue: Catalogue;
  readonly telemetry: Telemetry;
  readonly actions: ClientActions;
  readonly limits: ConnectionLimits;
  readonly serverInfo: Implementation = { name: PACKAGE_NAME, version: PACKAGE_VERSION };
  readonly telemetryEnabled: boolean;
  readonly #options: AgentHostOptions;
  readonly #clients = new Map<string, { principal: string; connection?: ClientConnection }>();
  readonly #watched = new WeakSet<AhpServerConnection>();
  readonly connections = new Set<ClientConnection>();
  readonly #replication: Replication | undefined;
  readonly #notifier: ApprovalNotifier | undefined;
  #inspectorUrl: string | undefined;

  constructor(options: AgentHostOptions = {}) {
    this.#options = options;
    const replicated = options.replication === undefined ? undefined : replicaClock(options.clock ?? systemClock);
    const clock = replicated?.now ?? options.clock ?? systemClock;
    const scheduler = options.scheduler ?? realScheduler;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.telemetryEnabled = options.telemetry ?? true;
    this.store = new ChannelStore(clock, options.replayLog);
    this.sessions = new Sessions(this.store, scheduler, {
      retentionMs: options.retentionMs ?? 24 * 60 * 60 * 1000,
      graceMs: options.agentGraceMs ?? 30_000,
      perCallGraceMs: options.perCallGraceMs ?? 30 * 60 * 1000,
      maxTurns: options.maxTurnsPerChat ?? 200,
      implicitTurnIdleMs: 10 * 60 * 1000,
      readOnlyChats: options.readOnlyChats ?? false,
    });
    this.catalogue = new Catalogue(this.store);
    this.telemetry = new Telemetry(this.store, clock);
    const touched = (session: SessionRecord) => {
      this.catalogue.touched(session);
      this.#replication?.touched(session);
    };
    const onDecided = (info: DecidedInfo) => this.telemetry.record(info);
    this.#inspectorUrl = options.inspectorUrl;
    this.#notifier =
      options.approvalWebhooks === undefined || options.approvalWebhooks.length === 0
        ? undefined
        : new ApprovalNotifier({
            ...options.webhookDelivery,
            webhooks: options.approvalWebhooks,
            inspectorUrl: () => this.#inspectorUrl,
            onfailure: (f) => {
              options.webhookDelivery?.onfailure?.(f);
              options.onlog?.(f.final ? "warn" : "info", f.final ? "approval webhook gave up" : "approval webhook failed; retrying", {
                url: f.url,
                attempt: f.attempt,
                error: f.error,
              });
            },
          });
    this.broker = new ApprovalBroker(this.store, this.sessions, scheduler, {
      timeoutDecision: options.timeoutDecision ?? "block",
      onDecided,
      onapproval: (event) => {
        this.#notifier?.notify(event);
        const line = approvalLogLine(event);
        options.onlog?.("info", line.message, line.fields);
        options.onapproval?.(event);
      },
      touched,
    });
    const gate = options.humanGate ?? true;
    this.projector = new Projector(this.sessions, this.broker, {
      humanGate: typeof gate === "function" ? gate : () => gate,
      editable: options.editable ?? false,
      holdBudgetMs: () => this.holdBudgetMs,
      ...(options.labels === undefined ? {} : { labels: options.labels }),
      onDecided,
      onignored: (problem, event) =>
        options.onlog?.("warn", "ahp_wait metadata ignored", { problem, session_id: event.session_id, event_type: event.event_type }),
      touched,
    });
    this.sessions.setHooks({
      touched,
      added: (s) => this.catalogue.added(s),
      removed: (s) => this.catalogue.removed(s),
      failHeld: (s, chat, reason) => this.broker.failHeld(s, chat, reason),
    });
    this.#replication =
      options.replication === undefined || replicated === undefined
        ? undefined
        : new Replication(
            {
              store: this.store,
              sessions: this.sessions,
              broker: this.broker,
              catalogue: this.catalogue,
              scheduler,
              clock: replicated,
              report: (e) => this.#report(e),
            },
            options.replication,
          );
    const actionTouched = (uri: string) => {
      const session = this.sessions.byUri.get(uri) ?? this.sessions.chatsByUri.get(uri)?.session;
      if (session !== undefined) touched(session);
    };
    this.actions =
      this.#replication?.clientActions(this.sessions, this.broker, this.projector, actionTouched) ??
      new ClientActions(this.sessions, this.broker, this.projector, actionTouched);
  }

  /** How long a held request may wait: min(approval timeout, advertised harness timeout − 2 s). */
  get holdBudgetMs(): number {
    const approval = this.#options.approvalTimeoutMs ?? 300_000;
    const harness = this.#options.harnessTimeoutMs;
    return harness === undefined ? approval : Math.min(approval, harness - 2000);
  }

  /**
   * The harness tap as handler middleware, for composing with other middleware
   * (`composeMiddleware`). {@link wrap} does the same with less overhead.
   */
  middleware(): HandlerMiddleware {
    return async (call, next) => {
      if (call.kind === "query") return next();
      if (call.kind === "handshake") {
        const result = await next();
        this.handshook(call.handshake!, call.ctx);
        return result;
      }
      const event = call.event!;
      if (call.kind === "notification" || !EVENT_TABLE[event.event_type].blocking) {
        this.notified(event, call.ctx);
        return next();
      }
      let decision: unknown;
      let failure: unknown;
      try {
        decision = await this.bounded(next());
      } catch (error) {
        failure = error;
      }
      return this.decided(event, decision, failure, call.ctx);
    };
  }

  /**
   * Wraps a handler set with the tap: every event is projected, every blocking decision passes
   * through the adapter (which may hold an escalation for a human). Synchronous handlers stay
   * synchronous. Put it inside audit/metrics so that they record the final decision.
   */
  wrap(handlers: AhpServerHandlers): AhpServerHandlers {
    return tapHandlers(this, handlers);
  }

  /** @internal TapTarget */
  decided(event: AhpEvent, decision: unknown, failure: unknown, ctx: AhpHandlerContext): unknown {
    this.#watch(ctx.connection);
    try {
      return this.projector.decide(event, decision, failure, ctx.connection.id, () => ctx.signal);
    } catch (error) {
      if (error === failure) throw error;
      this.#report(error);
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the inner handler's own error unchanged
      if (failure !== undefined) throw failure;
      return decision;
    }
  }

  /** @internal TapTarget */
  notified(event: AhpEvent, ctx: AhpHandlerContext): void {
    this.#watch(ctx.connection);
    this.#safely(() => this.projector.notify(event, ctx.connection.id));
  }

  /** @internal TapTarget */
  handshook(request: HandshakeRequest, ctx: AhpHandlerContext): void {
    this.#watch(ctx.connection);
    this.#safely(() => this.projector.handshake(request, ctx.connection.id));
  }

  /** @internal TapTarget: bounds async inner handlers by `innerTimeoutMs`. */
  bounded(inner: Promise<unknown>): Promise<unknown> {
    const ms = this.#options.innerTimeoutMs ?? 10_000;
    if (!(ms > 0) || !Number.isFinite(ms)) return inner;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Timeout after ${ms}ms`)), ms);
      inner.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }

  #watch(connection: AhpServerConnection): void {
    if (this.#watched.has(connection)) return;
    this.#watched.add(connection);
    const onClose = () => this.#safely(() => this.sessions.detach(connection.id));
    if (connection.signal.aborted) onClose();
    else connection.signal.addEventListener("abort", onClose, { once: true });
  }

  #safely(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#report(error);
    }
  }

  #report(error: unknown): void {
    this.#options.onerror?.(error instanceof Error ? error : new Error(String(error)));
  }

  // ---------------------------------------------------------------- HostContext

  report(error: Error): void {
    this.#options.onerror?.(error);
  }

  listSessions(): SessionSummary[] {
    return this.catalogue.list(this.sessions.byId.values());
  }

  clientOwner(clientId: string): string | undefined {
    return this.#clients.get(clientId)?.principal;
  }

  bindClient(connection: ClientConnection, clientId: string): void {
    const previous = this.#clients.get(clientId)?.connection;
    this.#clients.delete(clientId);
    this.#clients.set(clientId, { principal: connection.who.principal, connection });
    // Remember a bounded number of client ids (for the replay-or-snapshot choice of reconnect).
    if (this.#clients.size > 10_000) {
      for (const [id, entry] of this.#clients) {
        if (entry.connection === undefined || entry.connection.closed) {
          this.#clients.delete(id);
          break;
        }
      }
    }
    if (previous !== undefined && previous !== connection && !previous.closed)
      previous.close(1008, "replaced by a new connection of the same client");
  }

  telemetryOpened(uri: string): void {
    this.telemetry.opened(uri);
  }

  disposeSession(uri: string, role: Role): "ok" | "unknown" | "live" | "forbidden" {
    const session = this.sessions.byUri.get(uri);
    if (session === undefined) return "unknown";
    if (!session.ended) return "live";
    if (role !== "operator") return "forbidden";
    this.sessions.removeSession(session);
    return "ok";
  }

  closing(connection: ClientConnection, code: number, reason: string): void {
    this.#options.onclose?.({
      principal: connection.who.principal,
      ...(connection.clientId === undefined ? {} : { clientId: connection.clientId }),
      code,
      reason,
    });
  }

  /** A client socket went away (any reason). */
  disconnected(connection: ClientConnection): void {
    this.connections.delete(connection);
    this.store.unsubscribeAll(connection);
    if (connection.clientId !== undefined) {
      const entry = this.#clients.get(connection.clientId);
      if (entry?.connection === connection) entry.connection = undefined;
    }
  }

  // ---------------------------------------------------------------- inspection

  /** Current state of a channel. */
  state<T extends ChannelState>(uri: string): T | undefined {
    return this.store.get<T>(uri);
  }

  /** Channel URIs of a harness session and agent (deterministic, §7.1). */
  static uris(sessionId: string, agentId?: string): { session: string; chat?: string } {
    return agentId === undefined
      ? { session: sessionUri(sessionId) }
      : { session: sessionUri(sessionId), chat: chatUri(sessionId, agentId) };
  }

  get rootUri(): string {
    return ROOT_URI;
  }

  /** Replication counters (undefined without `replication`). */
  replicationStats(): ReplicationStats | undefined {
    return this.#replication?.stats();
  }

  /** The inspector's address (no token), linked from notifications; `listenAgentHost` sets it when it serves the inspector. */
  get inspectorUrl(): string | undefined {
    return this.#inspectorUrl;
  }

  set inspectorUrl(url: string | undefined) {
    this.#inspectorUrl = url;
  }

  /** Resolves once every queued approval notification was delivered or given up. */
  notificationsIdle(): Promise<void> {
    return this.#notifier?.idle() ?? Promise.resolve();
  }

  /** @internal A credential was refused at the HTTP server (logged without the credential). */
  refused(info: { reason: "missing" | "invalid"; path: string; remote?: string; upgrade: boolean }): void {
    this.#options.onlog?.("warn", "agent-host credentials refused", { ...info });
  }

  /** Fails every held request closed and stops the timers (and replication, after telling the other replicas). */
  dispose(reason = "The Agent Host adapter stopped"): void {
    this.broker.failAll(reason);
    this.#notifier?.close();
    this.#replication?.stop();
    this.sessions.dispose();
  }
}

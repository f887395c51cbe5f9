/**
 * The live link to the Agent Host: one {@link AgentHostClient} whose state outlives its sockets.
 * On a drop the page says so, opens a new socket with growing back-off and sends `reconnect`
 * with everything it was subscribed to: the host replays what was missed (or sends fresh
 * snapshots when its log no longer reaches back), and the client's write-ahead state converges.
 */
import {
  AgentHostClient,
  ROOT_URI,
  withToken,
  type ActionEnvelope,
  type SessionState,
  type SessionSummary,
  type SocketLike,
  type StateAction,
} from "@ahp/agent-host/client";

/**
 * `stopped`: the harness said it is going away (close 1001), or nothing answered for
 * {@link STOPPED_AFTER_MS}. The page keeps trying and resumes by itself when the harness is back.
 */
export type LinkStatus = "connecting" | "live" | "reconnecting" | "stopped" | "closed";

/** How long the link may stay down before the page says the harness stopped. */
export const STOPPED_AFTER_MS = 15_000;

export interface LiveEvents {
  onchange(): void;
  /** The host rejected one of this page's own actions. */
  onrejected(reason: string): void;
}

function randomId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `inspector-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export class Live {
  readonly client: AgentHostClient;
  /** The session list was fetched at least once (a linked session that is not in it is not on this harness). */
  listed = false;
  readonly sessions = new Map<string, SessionSummary>();
  readonly #subscriptions = new Set<string>([ROOT_URI]);
  status: LinkStatus = "connecting";
  /** How the last reconnect converged (`replay` with its count, or `snapshot`). */
  lastResync: { type: "replay"; actions: number } | { type: "snapshot" } | undefined;
  attempt = 0;
  #initialized = false;
  #stopped = false;
  /** When the link went down (reset once live again). */
  #downSince: number | undefined;

  constructor(
    readonly wsUrl: string,
    readonly token: string,
    readonly events: LiveEvents,
  ) {
    this.client = new AgentHostClient(undefined, {
      clientId: randomId(),
      onenvelope: (env) => this.#onEnvelope(env),
      onnotification: (method, params) => this.#onNotification(method, params as Record<string, unknown>),
      onclose: (code) => this.#dropped(code),
    });
  }

  start(): void {
    this.#open();
  }

  stop(): void {
    this.#stopped = true;
    this.status = "closed";
    this.client.close();
  }

  session(uri: string): SessionState | undefined {
    return this.client.state.view<SessionState>(uri);
  }

  dispatch(channel: string, action: StateAction): void {
    this.client.dispatch(channel, action);
    this.events.onchange();
  }

  #open(): void {
    const ws = new WebSocket(withToken(this.wsUrl, this.token));
    // Until it opens, a close means "try again later"; once open, the client owns the handlers.
    ws.onclose = (event) => this.#dropped(event.code);
    ws.onopen = () => {
      this.client.replaceSocket(ws as unknown as SocketLike);
      void this.#sync().catch((error: unknown) => {
        console.warn("inspector: could not resume, retrying", error);
        ws.close(4000, "sync failed");
      });
    };
  }

  async #sync(): Promise<void> {
    if (this.#initialized) {
      try {
        const result = await this.client.reconnect([...this.#subscriptions]);
        this.lastResync = result.type === "replay" ? { type: "replay", actions: result.actions.length } : { type: "snapshot" };
      } catch {
        // The host no longer knows this client: start over with fresh snapshots.
        await this.client.initialize([...this.#subscriptions]);
        this.lastResync = { type: "snapshot" };
      }
    } else {
      await this.client.initialize([ROOT_URI]);
      this.#initialized = true;
    }
    this.status = "live";
    this.attempt = 0;
    this.#downSince = undefined;
    const { items } = await this.client.request<{ items: SessionSummary[] }>("listSessions", { channel: ROOT_URI });
    this.sessions.clear();
    for (const s of items) this.sessions.set(s.resource, s);
    this.listed = true;
    for (const s of items) await this.#follow(s.resource);
    this.events.onchange();
  }

  #dropped(code?: number): void {
    if (this.#stopped) return;
    this.attempt++;
    this.#downSince ??= Date.now();
    const long = Date.now() - this.#downSince >= STOPPED_AFTER_MS;
    this.status = code === 1001 || long || this.status === "stopped" ? "stopped" : "reconnecting";
    this.events.onchange();
    const delay = Math.min(5000, 200 * 2 ** Math.min(this.attempt - 1, 5)) * (0.75 + Math.random() / 2);
    setTimeout(() => this.#open(), delay);
  }

  /** Subscribes to a session and to each of its chats. */
  async #follow(sessionUri: string): Promise<void> {
    await this.#subscribe(sessionUri);
    for (const chat of this.session(sessionUri)?.chats ?? []) await this.#subscribe(chat.resource);
  }

  async #subscribe(uri: string): Promise<void> {
    if (this.#subscriptions.has(uri) && this.client.state.confirmed(uri) !== undefined) return;
    this.#subscriptions.add(uri);
    try {
      await this.client.subscribe(uri);
    } catch {
      this.#subscriptions.delete(uri);
    }
    this.events.onchange();
  }

  #onEnvelope(env: ActionEnvelope): void {
    if (env.origin?.clientId === this.client.options.clientId && env.rejectionReason !== undefined)
      this.events.onrejected(env.rejectionReason);
    if (env.channel.startsWith("ahp-session:")) {
      for (const chat of this.session(env.channel)?.chats ?? []) {
        if (!this.#subscriptions.has(chat.resource)) void this.#subscribe(chat.resource);
      }
    }
    this.events.onchange();
  }

  #onNotification(method: string, params: Record<string, unknown>): void {
    if (method === "root/sessionAdded") {
      const summary = params.summary as SessionSummary;
      this.sessions.set(summary.resource, summary);
      void this.#follow(summary.resource);
    } else if (method === "root/sessionSummaryChanged") {
      const uri = params.session as string;
      const current = this.sessions.get(uri);
      if (current !== undefined) this.sessions.set(uri, { ...current, ...(params.changes as Partial<SessionSummary>) });
    } else if (method === "root/sessionRemoved") {
      this.sessions.delete(params.session as string);
    }
    this.events.onchange();
  }
}

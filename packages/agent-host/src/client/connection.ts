/**
 * A small Agent Host client over any WebSocket-like object (the browser's `WebSocket`, or `ws`
 * in Node): requests with ids, notifications, snapshots and envelopes fed into a
 * {@link ClientState}, and `dispatch` with write-ahead reconciliation. Browser-safe.
 */
import { encodeFrame, notification, request } from "../wire/codec.js";
import { ROOT_URI, SUPPORTED_PROTOCOL_VERSIONS } from "../wire/constants.js";
import type { ActionEnvelope, InitializeResult, JsonRpcErrorObject, ReconnectResult, Snapshot, StateAction } from "../wire/types.js";
import { ClientState } from "./state.js";

/** The part of a WebSocket this client uses (DOM `WebSocket` and `ws` both fit). */
export interface SocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  readonly readyState: number;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
}

/** A request the host answered with a JSON-RPC error; `code` and `error.data` say why. */
export class AgentHostRequestError extends Error {
  constructor(readonly error: JsonRpcErrorObject) {
    super(error.message);
    this.name = "AgentHostRequestError";
  }
  get code(): number {
    return this.error.code;
  }
}

/**
 * Options of an {@link AgentHostClient}: its client id (reused on `reconnect`) and callbacks for
 * frames, notifications, envelopes and close.
 */
export interface AgentHostClientOptions {
  clientId: string;
  /** Called for every decoded frame (before handling). */
  onframe?: (message: Record<string, unknown>) => void;
  /** Protocol notifications other than `action` (`root/session*`, `otlp/exportLogs`). */
  onnotification?: (method: string, params: unknown) => void;
  onenvelope?: (envelope: ActionEnvelope) => void;
  onclose?: (code: number, reason: string) => void;
}

/**
 * Builds a URL with the token in the `token` query parameter: a browser page cannot set headers on
 * a WebSocket, so an inspector reads its token from its own URL (`?token=…`) and passes it on here.
 */
export function withToken(url: string, token: string): string {
  const u = new URL(url);
  u.searchParams.set("token", token);
  return u.toString();
}

/**
 * An Agent Host client on any WebSocket-like socket: `initialize`, `subscribe`, `reconnect` with
 * replay, requests, and `dispatch` of optimistic actions; the reduced state of each channel is in
 * `state`.
 */
export class AgentHostClient {
  readonly state: ClientState;
  #nextId = 1;
  #clientSeq = 0;
  readonly #waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #socket: SocketLike;

  /** `socket` may be left out and given later with {@link replaceSocket}. */
  constructor(
    socket: SocketLike | undefined,
    readonly options: AgentHostClientOptions,
  ) {
    this.state = new ClientState(options.clientId);
    this.#socket = socket!;
    if (socket !== undefined) this.#attach(socket);
  }

  #attach(socket: SocketLike): void {
    socket.onmessage = (event) => {
      if (socket === this.#socket) this.#onMessage(typeof event.data === "string" ? event.data : String(event.data));
    };
    socket.onclose = (event) => {
      // A replaced socket closing late must not fail the requests of its successor.
      if (socket !== this.#socket) return;
      for (const w of this.#waiting.values()) w.reject(new Error(`connection closed (${event.code})`));
      this.#waiting.clear();
      this.options.onclose?.(event.code, event.reason);
    };
  }

  /** Uses a new socket (after a drop) and keeps the state for `reconnect`. */
  replaceSocket(socket: SocketLike): void {
    this.#socket = socket;
    this.#attach(socket);
  }

  #onMessage(text: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    this.options.onframe?.(message);
    if (typeof message.id === "number" && ("result" in message || "error" in message)) {
      const waiter = this.#waiting.get(message.id);
      this.#waiting.delete(message.id);
      if (waiter === undefined) return;
      if ("error" in message) waiter.reject(new AgentHostRequestError(message.error as JsonRpcErrorObject));
      else waiter.resolve(message.result);
      return;
    }
    if (message.method === "action") {
      const env = message.params as ActionEnvelope;
      this.state.applyEnvelope(env);
      this.options.onenvelope?.(env);
    } else if (typeof message.method === "string") this.options.onnotification?.(message.method, message.params);
  }

  /** Sends a request and resolves with its result (rejects with {@link AgentHostRequestError}). */
  request<T = unknown>(method: string, params: Record<string, unknown>): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#socket.send(encodeFrame(request(id, method, params)));
    });
  }

  notify(method: string, params: Record<string, unknown>): void {
    this.#socket.send(encodeFrame(notification(method, params)));
  }

  async initialize(
    initialSubscriptions: string[] = [ROOT_URI],
    protocolVersions: string[] = [...SUPPORTED_PROTOCOL_VERSIONS],
  ): Promise<InitializeResult> {
    const result = await this.request<InitializeResult>("initialize", {
      channel: ROOT_URI,
      protocolVersions,
      clientId: this.options.clientId,
      clientInfo: { name: "@ahp/agent-host/client" },
      initialSubscriptions,
    });
    this.state.lastSeenServerSeq = result.serverSeq;
    for (const s of result.snapshots) this.state.applySnapshot(s);
    return result;
  }

  async subscribe(channel: string): Promise<Snapshot | undefined> {
    const result = await this.request<{ snapshot?: Snapshot }>("subscribe", { channel });
    if (result.snapshot !== undefined) this.state.applySnapshot(result.snapshot);
    return result.snapshot;
  }

  unsubscribe(channel: string): void {
    this.notify("unsubscribe", { channel });
    this.state.forget(channel);
  }

  /** Dispatches an action optimistically; returns its `clientSeq`. */
  dispatch(channel: string, action: StateAction): number {
    const clientSeq = ++this.#clientSeq;
    this.state.addPending({ channel, clientSeq, action });
    this.notify("dispatchAction", { channel, clientSeq, action });
    return clientSeq;
  }

  /** Re-establishes a session on a new socket: replay or fresh snapshots. */
  async reconnect(subscriptions: string[]): Promise<ReconnectResult> {
    const result = await this.request<ReconnectResult>("reconnect", {
      channel: ROOT_URI,
      clientId: this.options.clientId,
      lastSeenServerSeq: this.state.lastSeenServerSeq,
      subscriptions,
    });
    if (result.type === "replay") {
      for (const env of result.actions) this.state.applyEnvelope(env);
      for (const uri of result.missing) this.state.forget(uri);
    } else {
      const fresh = new Set(result.snapshots.map((s) => s.resource));
      for (const uri of subscriptions) if (!fresh.has(uri)) this.state.forget(uri);
      for (const s of result.snapshots) this.state.applySnapshot(s);
    }
    return result;
  }

  close(): void {
    this.#socket.close(1000, "bye");
  }
}

/**
 * The agent side of AHP over WebSocket (spec §13.3): one JSON-RPC message per text frame,
 * credentials in the query string as the reference sends them (or as headers), ping/pong
 * keep-alive with dead-peer detection, bounded send buffering, and optional reconnection.
 */
import { deliverFrame } from "./frame.js";
import {
  AhpLocalError,
  DEFAULT_MAX_MESSAGE_BYTES,
  stringifyMessage,
  toError,
  type JsonRpcMessage,
  type MessageLimits,
  type Transport,
  type TransportInfo,
  type TransportSendOptions,
} from "@ahp/core";
import { WebSocket, type ClientOptions, type RawData } from "ws";
import { authHeaders, type ClientAuth } from "@ahp/core";
import { closeCause, errorCause, isIdleClose } from "./close-cause.js";
import { FrameSender, type Corkable } from "./sender.js";
import { buildWebSocketUrl, publicUrl } from "./url.js";

/** How {@link WebSocketClientTransport} reconnects after a dropped connection (`reconnect`). */
export interface WebSocketReconnectOptions {
  /** Connection attempts after a drop before giving up. Default 5. */
  retries?: number;
  /** First delay; doubles per attempt, with jitter (50–100 % of the value). Default 100 ms. */
  minDelayMs?: number;
  /** Upper bound of a delay. Default 5000 ms. */
  maxDelayMs?: number;
}

/** TLS settings for `wss:` URLs: trusted CAs, a client certificate, the server name to verify. */
export interface WebSocketTlsOptions {
  ca?: string | Buffer | Array<string | Buffer>;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Default true. Never turn this off outside tests. */
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** Options of {@link WebSocketClientTransport}: credentials, limits, liveness pings, reconnection and TLS. */
export interface WebSocketClientTransportOptions extends Pick<MessageLimits, "maxJsonDepth"> {
  auth?: ClientAuth;
  /**
   * `query` (default, the reference): `api_key=<key>` / `token=<token>` appended to the URL's
   * query, form-encoded. `header`: `x-api-key` / `authorization: Bearer` on the upgrade request
   * (keeps credentials out of URLs and proxy logs; the harness must read headers).
   */
  authMode?: "query" | "header";
  /** Extra headers for the upgrade request. */
  headers?: Record<string, string>;
  /** Largest message in bytes, both directions (a larger incoming frame closes the connection with 1009). Default 8 MiB. */
  maxPayload?: number;
  /** Ping the harness this often (ms) to detect a dead peer. Default 30000; `0` disables. */
  pingIntervalMs?: number;
  /** A ping unanswered for this long (ms) terminates the connection with a TIMEOUT cause. Default 10000. */
  pongTimeoutMs?: number;
  /**
   * Reconnect after the connection drops (not after `close()`), with jittered exponential
   * backoff. Requests pending on the dead connection fail with its cause; they are never
   * replayed, except when the harness closed the connection as idle (code 1001, its idle timeout
   * or room made at its cap): it read nothing after deciding to, so the requests that crossed the
   * close are sent again on the new connection, after what `onreconnect` sends. Sends made while
   * reconnecting wait for the new connection. Default off.
   */
  reconnect?: boolean | WebSocketReconnectOptions;
  /** Called after each successful reconnection (e.g. to repeat the handshake with a gating harness). */
  onreconnect?: (attempt: number) => void;
  /** permessage-deflate compression. Default false. */
  perMessageDeflate?: boolean;
  /** Opening handshake time limit (ms). Default 10000. */
  connectTimeoutMs?: number;
  /** Above this many buffered bytes, sends wait for the socket to drain. Default 1 MiB. */
  maxBufferedBytes?: number;
  tls?: WebSocketTlsOptions;
  /** Non-fatal problems (binary frames, undecodable frames when nobody listens to onparseerror). */
  onerror?: (error: Error) => void;
}

/** Default `pingIntervalMs`: how often the client pings the harness to detect a dead peer. */
export const DEFAULT_PING_INTERVAL_MS = 30_000;
/** Default `pongTimeoutMs`: an unanswered ping older than this ends the connection. */
export const DEFAULT_PONG_TIMEOUT_MS = 10_000;
/** Default `connectTimeoutMs`: the time limit of the opening handshake. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Default `maxBufferedBytes`: above this many unsent bytes, sends wait for the socket to drain. */
export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/** Upper bound of requests remembered for failing them on a drop (reconnect mode). */
const MAX_TRACKED_REQUESTS = 10_000;

type State = "new" | "connecting" | "open" | "reconnecting" | "closed";

interface Tracked {
  resolve: () => void;
  reject: (error: Error) => void;
  /** A request's text, sent again when the harness closed an idle connection under it. */
  text?: string;
}

/** Header values may not carry CR, LF or NUL and must be Latin-1. The value is never echoed (it may be a credential). */
function checkHeaderValue(name: string, value: string): void {
  // eslint-disable-next-line no-control-regex
  if (/[\r\n\0]/.test(value) || /[^\u0000-\u00ff]/.test(value)) {
    throw new AhpLocalError("INVALID_ARGUMENT", `header ${name} has a value that cannot be sent in HTTP`);
  }
}

const isResponseLike = (value: unknown): value is { id: string | number } => {
  if (value === null || typeof value !== "object") return false;
  const id = (value as { id?: unknown }).id;
  return (typeof id === "string" || typeof id === "number") && !("method" in value);
};

/**
 * The agent-side transport over WebSocket (`ws:` / `wss:`): one JSON-RPC message per text frame.
 * Credentials go in the query (as the reference) or in headers (`authMode: "header"`). A dead
 * peer is detected by pings; a dropped connection fails every pending request with its cause and,
 * with `reconnect`, is re-established with jittered backoff (requests are replayed only after
 * the harness closed an idle connection under them).
 *
 * ```ts
 * const client = new AhpClient();
 * await client.connect(new WebSocketClientTransport("ws://127.0.0.1:8081/ahp", { auth: { type: "api_key", key } }));
 * ```
 */
export class WebSocketClientTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info: TransportInfo;

  readonly #href: string;
  readonly #wsOptions: ClientOptions;
  readonly #maxPayload: number;
  readonly #limits: MessageLimits;
  readonly #pingIntervalMs: number;
  readonly #pongTimeoutMs: number;
  readonly #maxBufferedBytes: number;
  readonly #reconnect: Required<WebSocketReconnectOptions> | undefined;
  readonly #onreconnect: ((attempt: number) => void) | undefined;

  #state: State = "new";
  #ws: WebSocket | undefined;
  #sender: FrameSender | undefined;
  /** Why the current socket went away (error event, dead peer), set before its close event. */
  #socketCause: AhpLocalError | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #pongTimer: ReturnType<typeof setTimeout> | undefined;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  /** Set by an idle close with requests unanswered: they are sent again once reconnected. */
  #replayAfterReconnect = false;
  #wakeReconnect: (() => void) | undefined;
  #openWaiters: Tracked[] = [];
  readonly #tracked: Map<string | number, Tracked> | undefined;
  #closing: Promise<void> | undefined;
  #finished = false;

  constructor(url: string | URL, options: WebSocketClientTransportOptions = {}) {
    const authMode = options.authMode ?? "query";
    const target = buildWebSocketUrl(url, options.auth, authMode);
    this.#href = target.href;
    this.info = { transport: "ws", remote: publicUrl(target) };
    this.#maxPayload = options.maxPayload ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#limits = {
      maxMessageBytes: this.#maxPayload,
      ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
    };
    this.#pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
    this.#pongTimeoutMs = options.pongTimeoutMs ?? DEFAULT_PONG_TIMEOUT_MS;
    this.#maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    const headers: Record<string, string> = {};
    const extra = authMode === "header" ? authHeaders(options.auth) : {};
    for (const [name, value] of [...Object.entries(options.headers ?? {}), ...Object.entries(extra)]) {
      checkHeaderValue(name, value);
      headers[name.toLowerCase()] = value;
    }
    this.#wsOptions = {
      headers,
      maxPayload: this.#maxPayload,
      perMessageDeflate: options.perMessageDeflate ?? false,
      handshakeTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      followRedirects: false,
      ...options.tls,
    };
    if (options.reconnect !== undefined && options.reconnect !== false) {
      const r = options.reconnect === true ? {} : options.reconnect;
      this.#reconnect = { retries: r.retries ?? 5, minDelayMs: r.minDelayMs ?? 100, maxDelayMs: r.maxDelayMs ?? 5000 };
      this.#tracked = new Map();
    }
    this.#onreconnect = options.onreconnect;
    if (options.onerror !== undefined) this.onerror = options.onerror;
  }

  /** `connecting`, `open`, `reconnecting` or `closed` (`new` before start()). */
  get state(): State {
    return this.#state;
  }

  /** Opens the connection. Rejects with TRANSPORT_ERROR (refused upgrade: `details.status`; network failure: `details.code`). */
  async start(): Promise<void> {
    if (this.#state !== "new") throw new AhpLocalError("INVALID_ARGUMENT", "transport already started");
    this.#state = "connecting";
    try {
      await this.#connect();
    } catch (error) {
      this.#state = "closed";
      this.#finished = true;
      this.#rejectWaiters(toError(error));
      throw error;
    }
    if (this.#state !== "connecting") {
      // close() was called while connecting.
      throw new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
    }
    this.#opened();
  }

  /** The socket is open: release the sends that waited for it. */
  #opened(): void {
    this.#state = "open";
    const waiters = this.#openWaiters;
    this.#openWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  #rejectWaiters(error: Error): void {
    const waiters = this.#openWaiters;
    this.#openWaiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }

  /** Opens one socket and wires it once it is open. */
  #connect(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(this.#href, this.#wsOptions);
      this.#ws = ws;
      this.#socketCause = undefined;
      let refusedStatus: number | undefined;
      // The socket under the WebSocket, for writing the frames of one job together (see FrameSender).
      let socket: Corkable | undefined;
      ws.once("upgrade", (res) => (socket = res.socket));
      ws.on("error", (error) => this.#onSocketError(ws, error));
      ws.once("unexpected-response", (_req, res) => {
        refusedStatus = res.statusCode;
        res.resume();
        ws.terminate();
      });
      const onOpen = () => {
        ws.off("error", onError);
        this.#attach(ws, socket);
        resolve();
      };
      const onError = (error: Error) => {
        ws.off("open", onOpen);
        if (refusedStatus !== undefined) {
          reject(
            new AhpLocalError("TRANSPORT_ERROR", `WebSocket upgrade refused: HTTP ${refusedStatus}`, {
              details: { status: refusedStatus },
            }),
          );
          return;
        }
        const code = (error as { code?: unknown }).code;
        reject(
          new AhpLocalError("TRANSPORT_ERROR", `WebSocket connection to ${this.info.remote} failed: ${error.message}`, {
            cause: error,
            ...(typeof code === "string" ? { details: { code } } : {}),
          }),
        );
      };
      ws.once("open", onOpen);
      ws.once("error", onError);
    });
  }

  #attach(ws: WebSocket, socket: Corkable | undefined): void {
    this.#sender = new FrameSender(ws, {
      maxBufferedBytes: this.#maxBufferedBytes,
      drainTimeoutMs: 0,
      pauseReading: false,
      onStall: () => undefined,
      socket,
    });
    ws.on("message", this.#onFrame);
    ws.on("pong", () => this.#clearPongTimer());
    ws.once("close", (code: number, reason: Buffer) => this.#onSocketClose(ws, code, reason.toString("utf8")));
    if (this.#pingIntervalMs > 0 && Number.isFinite(this.#pingIntervalMs)) {
      this.#pingTimer = setInterval(() => this.#ping(ws), this.#pingIntervalMs);
      this.#pingTimer.unref?.();
    }
  }

  #ping(ws: WebSocket): void {
    if (this.#pongTimer !== undefined || ws.readyState !== WebSocket.OPEN) return;
    const timeoutMs = this.#pongTimeoutMs;
    this.#pongTimer = setTimeout(() => {
      this.#pongTimer = undefined;
      this.#socketCause ??= new AhpLocalError("TIMEOUT", `WebSocket peer did not answer a ping within ${timeoutMs}ms`, {
        details: { pongTimeoutMs: timeoutMs },
      });
      ws.terminate();
    }, timeoutMs);
    this.#pongTimer.unref?.();
    ws.ping();
  }

  #clearPongTimer(): void {
    if (this.#pongTimer !== undefined) {
      clearTimeout(this.#pongTimer);
      this.#pongTimer = undefined;
    }
  }

  #stopTimers(): void {
    this.#clearPongTimer();
    if (this.#pingTimer !== undefined) {
      clearInterval(this.#pingTimer);
      this.#pingTimer = undefined;
    }
  }

  #onSocketError(ws: WebSocket, error: Error): void {
    if (ws !== this.#ws) return;
    // While connecting, the opening promise reports the failure.
    if (ws.readyState === WebSocket.CONNECTING) return;
    this.#socketCause ??= errorCause(error);
  }

  readonly #onFrame = (data: RawData, isBinary: boolean): void => {
    const value = deliverFrame(this, data, isBinary, this.#limits);
    const tracked = this.#tracked;
    if (tracked !== undefined && isResponseLike(value)) {
      const entry = tracked.get(value.id);
      if (entry !== undefined) {
        tracked.delete(value.id);
        entry.resolve();
      }
    }
  };

  #onSocketClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.#ws) return;
    this.#stopTimers();
    const closedByUs = this.#state === "closed";
    const cause = this.#socketCause ?? (closedByUs ? undefined : closeCause("server", code, reason));
    this.#sender?.fail(cause ?? new AhpLocalError("CONNECTION_CLOSED", "Connection closed"));
    if (closedByUs) return;
    if (this.#reconnect === undefined) {
      this.#finish(cause);
      return;
    }
    // What was in flight on the dead connection fails, never replayed; except when the harness
    // closed it as idle: it read nothing after deciding to, so those requests go again once
    // reconnected.
    if (isIdleClose(code, reason)) this.#replayAfterReconnect = true;
    else this.#failTracked(cause!);
    this.#state = "reconnecting";
    void this.#reconnectLoop(cause!);
  }

  async #reconnectLoop(cause: AhpLocalError): Promise<void> {
    const { retries, minDelayMs, maxDelayMs } = this.#reconnect!;
    let last: Error = cause;
    let attempt = 0;
    while (attempt < retries) {
      attempt++;
      const base = Math.min(maxDelayMs, minDelayMs * 2 ** (attempt - 1));
      await new Promise<void>((wake) => {
        this.#wakeReconnect = wake;
        this.#reconnectTimer = setTimeout(wake, base / 2 + (Math.random() * base) / 2);
      });
      this.#reconnectTimer = undefined;
      this.#wakeReconnect = undefined;
      if (this.#state !== "reconnecting") return;
      try {
        await this.#connect();
      } catch (error) {
        last = toError(error);
        const status = AhpLocalError.isInstance(error) ? error.details?.status : undefined;
        // A refusal (401, 403, 404, ...) will not go away by retrying.
        if (typeof status === "number" && status >= 400 && status < 500) break;
        continue;
      }
      if (this.#state !== "reconnecting") {
        this.#ws?.terminate();
        return;
      }
      this.#opened();
      try {
        this.#onreconnect?.(attempt);
      } catch (error) {
        this.onerror?.(toError(error));
      }
      this.#replay();
      return;
    }
    if (this.#state !== "reconnecting") return;
    this.#finish(
      new AhpLocalError("CONNECTION_CLOSED", `WebSocket reconnect failed after ${attempt} attempts: ${last.message}`, {
        cause: last,
        details: { attempts: attempt, ...(AhpLocalError.isInstance(last) ? last.details : {}) },
      }),
    );
  }

  /**
   * After reconnecting from an idle close: sends again the requests that crossed it, in their
   * order, after what `onreconnect` sent (e.g. a repeated handshake) and before the sends that
   * waited for the new connection.
   */
  #replay(): void {
    const tracked = this.#tracked;
    if (!this.#replayAfterReconnect || tracked === undefined || this.#sender === undefined) return;
    this.#replayAfterReconnect = false;
    for (const [id, entry] of [...tracked]) {
      if (entry.text === undefined) continue;
      this.#sender.send(entry.text).catch((error: unknown) => {
        if (tracked.get(id) !== entry) return;
        tracked.delete(id);
        entry.reject(toError(error));
      });
    }
  }

  #failTracked(error: Error): void {
    const tracked = this.#tracked;
    if (tracked === undefined || tracked.size === 0) return;
    const entries = [...tracked.values()];
    tracked.clear();
    for (const entry of entries) entry.reject(error);
  }

  /** Ends the transport for good: rejects everything still waiting and fires `onclose` once. */
  #finish(cause: Error | undefined): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#state = "closed";
    this.#stopTimers();
    const failure = cause ?? new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
    this.#sender?.fail(failure);
    this.#failTracked(failure);
    this.#rejectWaiters(failure);
    this.onclose?.(cause);
  }

  #closedError(): AhpLocalError {
    return new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
  }

  /**
   * Sends one message as one text frame. Resolves once handed to the socket (after waiting for
   * drain above `maxBufferedBytes`, and for the new connection while reconnecting). In
   * reconnect mode a request resolves when its response arrived and rejects with the cause when
   * the connection drops first, so that `AhpClient` fails it promptly.
   */
  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    // The common case (open, no reconnect bookkeeping) costs no promise of its own.
    if (this.#state === "open" && this.#tracked === undefined && this.#sender !== undefined) {
      try {
        return this.#sender.send(stringifyMessage(message, this.#maxPayload), options?.signal);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.#sendWhenOpen(message, options);
  }

  /** `send()` without a promise per message on the common path (see `Transport.post`). */
  post<C>(message: JsonRpcMessage, onFailure: (error: Error, context: C) => void, context: C): void {
    if (this.#state === "open" && this.#tracked === undefined && this.#sender !== undefined) {
      let text: string;
      try {
        text = stringifyMessage(message, this.#maxPayload);
      } catch (error) {
        queueMicrotask(() => onFailure(toError(error), context));
        return;
      }
      this.#sender.post(text, onFailure, context);
      return;
    }
    this.#sendWhenOpen(message).then(undefined, (error: unknown) => onFailure(toError(error), context));
  }

  async #sendWhenOpen(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#state === "closed") throw this.#closedError();
    if (this.#state === "new") throw new AhpLocalError("NOT_CONNECTED", "transport not started");
    const text = stringifyMessage(message, this.#maxPayload);
    const signal = options?.signal;
    if (this.#state !== "open") await this.#waitOpen(signal);
    const sender = this.#sender!;
    const tracked = this.#tracked;
    const id = (message as { id?: unknown }).id;
    if (tracked === undefined || (typeof id !== "string" && typeof id !== "number") || !("method" in message)) {
      return sender.send(text, signal);
    }
    const answered = new Promise<void>((resolve, reject) => {
      if (tracked.size >= MAX_TRACKED_REQUESTS) {
        // Forget the oldest: its caller has long timed out (resolving is a no-op for AhpClient).
        const [oldestId, oldest] = tracked.entries().next().value as [string | number, Tracked];
        tracked.delete(oldestId);
        oldest.resolve();
      }
      tracked.set(id, { resolve, reject, text });
    });
    try {
      await sender.send(text, signal);
    } catch (error) {
      tracked.delete(id);
      throw error;
    }
    return answered;
  }

  #waitOpen(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new AhpLocalError("ABORTED", "send aborted", { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#openWaiters.indexOf(waiter);
        if (index >= 0) this.#openWaiters.splice(index, 1);
        reject(new AhpLocalError("ABORTED", "send aborted", { cause: signal?.reason }));
      };
      const waiter: Tracked = {
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      this.#openWaiters.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Sends a Close frame (1000), waits briefly for the peer's, and fires `onclose` once. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const wasStarted = this.#state !== "new";
      this.#state = "closed";
      if (this.#reconnectTimer !== undefined) clearTimeout(this.#reconnectTimer);
      this.#wakeReconnect?.();
      this.#stopTimers();
      const ws = this.#ws;
      if (ws !== undefined && ws.readyState !== WebSocket.CLOSED) {
        await new Promise<void>((resolve) => {
          const grace = setTimeout(() => ws.terminate(), 1000);
          ws.once("close", () => {
            clearTimeout(grace);
            resolve();
          });
          if (ws.readyState === WebSocket.OPEN) ws.close(1000);
          else ws.terminate();
        });
      }
      if (wasStarted || !this.#finished) this.#finish(undefined);
    })();
    return this.#closing;
  }
}

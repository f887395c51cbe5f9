/**
 * The agent side of AHP over HTTP (spec §13.2): every JSON-RPC message is one POST; the answer
 * to a request is the response body. Connections are kept alive and reused.
 *
 * Two HTTP stacks are supported: `undici` (default; measured faster on loopback, see the
 * package README) and `node:http` with a keep-alive `Agent`.
 */
import * as http from "node:http";
import * as https from "node:https";
import {
  AHP_METHODS,
  AhpLocalError,
  DEFAULT_MAX_MESSAGE_BYTES,
  HOLD_GRACE_MS,
  parseJsonText,
  stringifyMessage,
  toError,
  type JsonRpcMessage,
  type MessageLimits,
  type Transport,
  type TransportInfo,
  type TransportSendOptions,
} from "@ahp/core";
import { Pool, type Dispatcher } from "undici";
import {
  Abort,
  ExchangeFailure,
  mayResend,
  nodeBackend,
  READ_NOTIFICATION,
  undiciBackend,
  type Backend,
  type ReadPolicy,
  type Reply,
} from "./exchange.js";
import { authHeaders, type ClientAuth } from "@ahp/core";

/** TLS settings for `https:` URLs (passed to undici's connector or to `https.Agent`). */
export interface HttpClientTlsOptions {
  /** Trusted CA certificates (PEM). Default: Node's bundled CAs. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Client certificate and key (PEM) for mutual TLS. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Default true. Never turn this off outside tests. */
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** Options of {@link HttpClientTransport}: credentials, the HTTP stack and its connection pool, time limit and TLS. */
export interface HttpClientTransportOptions extends MessageLimits {
  /** `api_key` → `x-api-key`, `bearer` → `authorization: Bearer …` (spec §13.2). */
  auth?: ClientAuth;
  /** Extra headers for every POST (cannot replace `content-type` or the auth header). */
  headers?: Record<string, string>;
  /**
   * Time limit of one whole HTTP exchange in ms, for requests and notifications alike (as the
   * reference). Default 10000; `0` disables. When the harness's handshake answer advertises a
   * longer `timeout_ms` (it may hold a decision for a person that long), an `ahp/event` or
   * `ahp/batch` request waits that plus 5 s instead (ADR 0145); a call's own per-call timeout
   * given to `AhpClient` longer than both needs a longer limit here, or `0`.
   */
  timeoutMs?: number;
  /** HTTP stack: `undici` (default, faster) or `node` (`node:http` / `node:https` with a keep-alive Agent). */
  client?: "undici" | "node";
  /** undici only: your own dispatcher (Pool, Agent, ProxyAgent, ...). Not closed by `close()`. */
  dispatcher?: Dispatcher;
  /** node only: your own `http.Agent` / `https.Agent`. Not destroyed by `close()`. */
  agent?: http.Agent;
  /** Most sockets kept open to the harness. Default 128; further requests queue. */
  maxConnections?: number;
  tls?: HttpClientTlsOptions;
  /** Non-fatal problems. */
  onerror?: (error: Error) => void;
}

/** Default `timeoutMs`: the time limit of one whole HTTP exchange (the reference's). */
export const DEFAULT_HTTP_TIMEOUT_MS = 10_000;
/** Default `maxConnections`: sockets kept open to the harness; further requests queue. */
export const DEFAULT_HTTP_MAX_CONNECTIONS = 128;

const EXCERPT_CHARS = 512;
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Header values may not carry CR, LF or NUL (request smuggling) and must be Latin-1. */
function checkHeaderValue(name: string, value: string): void {
  // eslint-disable-next-line no-control-regex
  if (/[\r\n\0]/.test(value) || /[^\u0000-\u00ff]/.test(value)) {
    // Never echo the value: it may be a credential.
    throw new AhpLocalError("INVALID_ARGUMENT", `header ${name} has a value that cannot be sent in HTTP`);
  }
}

/**
 * The agent-side transport over HTTP (spec §13.2): every request and notification is one `POST`
 * of its JSON-RPC message, answered in the response body, over kept-alive connections (undici by
 * default, or `node:http`). HTTP status errors, bodies that are not JSON-RPC and time-outs fail
 * the call with a typed `AhpLocalError`; credentials in the URL never appear in `info`.
 *
 * ```ts
 * const client = new AhpClient();
 * await client.connect(new HttpClientTransport("http://127.0.0.1:8080/ahp", { auth: { type: "api_key", key } }));
 * ```
 */
export class HttpClientTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info: TransportInfo;
  readonly url: URL;

  readonly #timeoutMs: number;
  /** The `timeout_ms` of the last handshake answer (0 before one): how long the harness may hold a decision. */
  #advertisedMs = 0;
  readonly #limits: MessageLimits;
  readonly #maxMessageBytes: number;
  readonly #readRequest: ReadPolicy;
  readonly #backend: Backend;
  readonly #dispose: () => Promise<void>;
  /**
   * Exchanges in flight: abort function → deadline (ms, `performance.now()` clock), in start
   * order. Every exchange has the same time limit, so the oldest one always expires first: one
   * timer armed for the oldest deadline serves them all (no timer per request).
   */
  readonly #inflight = new Map<(error: AhpLocalError) => void, number>();
  /**
   * Exchanges whose limit is longer than the transport's own (a decision the harness may hold for
   * a person): abort function → deadline and limit. Few at a time; scanned whole.
   */
  readonly #held = new Map<(error: AhpLocalError) => void, { deadline: number; limitMs: number }>();
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer fires (ms, `performance.now()` clock). */
  #deadlineAt = Number.POSITIVE_INFINITY;
  #closed = false;
  #closing?: Promise<void>;

  constructor(url: string | URL, options: HttpClientTransportOptions = {}) {
    this.url = new URL(url);
    if (this.url.protocol !== "http:" && this.url.protocol !== "https:") {
      throw new AhpLocalError("INVALID_ARGUMENT", `HTTP transport needs an http: or https: URL, got ${this.url.protocol}`);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      checkHeaderValue(name, value);
      headers[name.toLowerCase()] = value;
    }
    for (const [name, value] of Object.entries(authHeaders(options.auth))) {
      checkHeaderValue(name, value);
      headers[name] = value;
    }
    headers["content-type"] = "application/json";
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#readRequest = { request: true, maxBytes: this.#maxMessageBytes };
    this.#limits = {
      maxMessageBytes: this.#maxMessageBytes,
      ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
    };
    // Never put credentials into info: origin and path only.
    this.info = { transport: "http", remote: `${this.url.origin}${this.url.pathname}` };
    if (options.onerror !== undefined) this.onerror = options.onerror;

    const useNode = options.client === "node" || (options.client === undefined && options.agent !== undefined);
    if (useNode) {
      if (options.dispatcher !== undefined) throw new AhpLocalError("INVALID_ARGUMENT", '`dispatcher` needs client: "undici"');
      const owned = options.agent === undefined;
      const agent = options.agent ?? createNodeAgent(this.url, options);
      this.#backend = nodeBackend(this.url, headers, agent);
      this.#dispose = async () => {
        if (owned) agent.destroy();
      };
    } else {
      if (options.agent !== undefined) throw new AhpLocalError("INVALID_ARGUMENT", '`agent` needs client: "node"');
      const owned = options.dispatcher === undefined;
      const dispatcher =
        options.dispatcher ??
        new Pool(this.url.origin, {
          connections: options.maxConnections ?? DEFAULT_HTTP_MAX_CONNECTIONS,
          ...(options.tls === undefined ? {} : { connect: { ...options.tls } }),
        });
      this.#backend = undiciBackend(this.url, headers, dispatcher);
      this.#dispose = async () => {
        if (owned) await dispatcher.destroy().catch(() => undefined);
      };
    }
  }

  /** Nothing to open: HTTP connects per request (and reuses kept-alive sockets). */
  async start(): Promise<void> {
    if (this.#closed) throw new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
  }

  /**
   * POSTs one message. For a request, resolves after the response was handed to `onmessage`;
   * rejects with TRANSPORT_ERROR (non-2xx, connection failure), PROTOCOL_ERROR (unparseable
   * body, id mismatch), TIMEOUT, ABORTED or CONNECTION_CLOSED. For a notification, resolves
   * once the harness answered, whatever the status (as the reference).
   */
  async send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#closed) throw new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
    const body = stringifyMessage(message, this.#maxMessageBytes);
    const m = message as { id?: unknown; method?: unknown };
    const isRequest = typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number");
    const kind = isRequest ? "request" : "notification";

    const abort = new Abort();
    let failure: AhpLocalError | undefined;
    const abortWith = (error: AhpLocalError) => {
      if (failure !== undefined) return;
      failure = error;
      abort.abort();
    };
    const userSignal = options?.signal;
    const onUserAbort = () => abortWith(new AhpLocalError("ABORTED", "send aborted", { cause: userSignal?.reason }));
    const method = m.method;
    const holdable = isRequest && (method === AHP_METHODS.event || method === AHP_METHODS.batch);
    this.#track(abortWith, holdable ? this.decisionTimeoutMs : this.#timeoutMs);
    if (userSignal !== undefined) {
      if (userSignal.aborted) onUserAbort();
      else userSignal.addEventListener("abort", onUserAbort);
    }
    try {
      if (failure !== undefined) throw failure;
      let reply: Reply;
      const policy = isRequest ? this.#readRequest : READ_NOTIFICATION;
      try {
        try {
          reply = await this.#backend(body, abort, policy);
        } catch (error) {
          // A kept-alive connection the harness closed (its idle timeout, room made at its cap)
          // as the request went out: sent once more on a new one when that is safe. The same
          // deadline and abort hold.
          if ((failure as AhpLocalError | undefined) !== undefined || this.#closed || !mayResend(error, method)) throw error;
          reply = await this.#backend(body, abort, policy);
        }
      } catch (error) {
        // `failure` is set by abortWith() from a listener, which control-flow narrowing cannot see.
        throw (failure as AhpLocalError | undefined) ?? connectionFailure(kind, error instanceof ExchangeFailure ? error.cause : error);
      }
      // The reference ignores status and body of a notification's answer.
      if (!isRequest) return;
      const { status, text } = reply;
      if (status < 200 || status >= 300) {
        const excerpt = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
        throw new AhpLocalError("TRANSPORT_ERROR", `HTTP error: ${status} - ${excerpt}`, {
          details: { status },
        });
      }
      const response = this.#decodeResponse(text);
      const expected = m.id as string | number;
      if (response.id !== expected) {
        throw new AhpLocalError("PROTOCOL_ERROR", `response id mismatch, expected ${String(expected)}, got ${String(response.id)}`, {
          details: { expected, received: response.id },
        });
      }
      if (this.#closed) throw new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
      if (method === AHP_METHODS.handshake) this.#advertisedMs = advertisedTimeout(response);
      try {
        this.onmessage?.(response);
      } catch (error) {
        this.onerror?.(toError(error));
      }
    } finally {
      this.#inflight.delete(abortWith);
      this.#held.delete(abortWith);
      userSignal?.removeEventListener("abort", onUserAbort);
    }
  }

  /**
   * The limit of an `ahp/event` or `ahp/batch` exchange: the transport's own `timeoutMs` or, when
   * the harness's last handshake answer advertised a longer `timeout_ms`, that plus
   * `HOLD_GRACE_MS` (the harness may hold the decision for a person that long; ADR 0145). `0` when
   * the transport's limit is disabled.
   */
  get decisionTimeoutMs(): number {
    const own = this.#timeoutMs;
    if (!(own > 0) || !Number.isFinite(own)) return own;
    const advertised = this.#advertisedMs;
    return advertised > own ? advertised + HOLD_GRACE_MS : own;
  }

  #track(abortWith: (error: AhpLocalError) => void, limitMs: number): void {
    const limited = limitMs > 0 && Number.isFinite(limitMs);
    const deadline = limited ? performance.now() + limitMs : Number.POSITIVE_INFINITY;
    if (!limited || limitMs === this.#timeoutMs) this.#inflight.set(abortWith, deadline);
    else this.#held.set(abortWith, { deadline, limitMs });
    if (deadline < this.#deadlineAt) this.#armDeadlineTimer(deadline);
  }

  #armDeadlineTimer(at: number): void {
    if (this.#deadlineTimer !== undefined) clearTimeout(this.#deadlineTimer);
    this.#deadlineAt = at;
    this.#deadlineTimer = setTimeout(() => this.#expire(), Math.max(0, Math.ceil(at - performance.now())));
    // The sockets of the exchanges keep the process alive, not this timer.
    this.#deadlineTimer.unref?.();
  }

  /** Aborts every exchange past its deadline, then re-arms for the earliest remaining one. */
  #expire(): void {
    this.#deadlineTimer = undefined;
    this.#deadlineAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    // Same limit for all, in start order: the first one not yet due ends the scan.
    for (const [abortWith, deadline] of this.#inflight) {
      if (deadline > now) {
        next = deadline;
        break;
      }
      this.#inflight.delete(abortWith);
      abortWith(timedOut(this.#timeoutMs));
    }
    for (const [abortWith, { deadline, limitMs }] of this.#held) {
      if (deadline > now) {
        next = Math.min(next, deadline);
        continue;
      }
      this.#held.delete(abortWith);
      abortWith(timedOut(limitMs));
    }
    if (Number.isFinite(next)) this.#armDeadlineTimer(next);
  }

  /** Spec §12.7: a body that is not a JSON-RPC response at all is a parse failure. */
  #decodeResponse(text: string): Record<string, unknown> & { id: string | number } {
    let value: unknown;
    try {
      value = parseJsonText(text, this.#limits);
    } catch (error) {
      throw new AhpLocalError("PROTOCOL_ERROR", `Failed to parse response: ${toError(error).message}`, { cause: error });
    }
    if (!isPlainObject(value)) {
      throw new AhpLocalError("PROTOCOL_ERROR", "Failed to parse response: not a JSON object");
    }
    if (typeof value.jsonrpc !== "string") {
      throw new AhpLocalError("PROTOCOL_ERROR", "Failed to parse response: missing field `jsonrpc`");
    }
    if (typeof value.id !== "string" && typeof value.id !== "number") {
      throw new AhpLocalError(
        "PROTOCOL_ERROR",
        `Failed to parse response: id must be a string, got ${JSON.stringify(value.id) ?? "nothing"}`,
      );
    }
    return value as Record<string, unknown> & { id: string | number };
  }

  /**
   * Aborts every exchange in flight (they reject with CONNECTION_CLOSED), destroys the sockets of
   * a dispatcher or agent the transport created, and fires `onclose` once. Resolves without
   * waiting for the sockets' close events, so callers see pending calls fail and close() settle
   * in the same turn.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      const closed = new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
      if (this.#deadlineTimer !== undefined) clearTimeout(this.#deadlineTimer);
      this.#deadlineTimer = undefined;
      this.#deadlineAt = Number.POSITIVE_INFINITY;
      for (const abortWith of [...this.#inflight.keys(), ...this.#held.keys()]) abortWith(closed);
      this.#inflight.clear();
      this.#held.clear();
      this.#dispose().catch((error: unknown) => this.onerror?.(toError(error)));
      this.onclose?.();
    })();
    return this.#closing;
  }
}

function timedOut(timeoutMs: number): AhpLocalError {
  return new AhpLocalError("TIMEOUT", `Timeout after ${timeoutMs}ms`, { details: { timeoutMs } });
}

/** The `timeout_ms` a handshake answer advertises (`result.config.timeout_ms`), 0 when it advertises none. */
function advertisedTimeout(response: Record<string, unknown>): number {
  const result = response.result;
  const config = isPlainObject(result) ? result.config : undefined;
  const value = isPlainObject(config) ? config.timeout_ms : undefined;
  return typeof value === "number" && value > 0 && Number.isFinite(value) ? value : 0;
}

function connectionFailure(kind: "request" | "notification", error: unknown): AhpLocalError {
  if (AhpLocalError.isInstance(error)) return error;
  const e = toError(error);
  const code = (e as { code?: unknown }).code;
  const inner = (e as { cause?: unknown }).cause;
  const innerCode = inner instanceof Error ? (inner as { code?: unknown }).code : undefined;
  const detail =
    inner instanceof Error && inner.message && !e.message.includes(inner.message) ? `${e.message} (${inner.message})` : e.message;
  return new AhpLocalError("TRANSPORT_ERROR", `HTTP ${kind} failed: ${detail}`, {
    cause: e,
    details: { ...(typeof code === "string" ? { code } : {}), ...(typeof innerCode === "string" ? { causeCode: innerCode } : {}) },
  });
}

function createNodeAgent(url: URL, options: HttpClientTransportOptions): http.Agent {
  const common = { keepAlive: true, maxSockets: options.maxConnections ?? DEFAULT_HTTP_MAX_CONNECTIONS };
  return url.protocol === "https:" ? new https.Agent({ ...common, ...options.tls }) : new http.Agent(common);
}

/**
 * The harness side: AhpServer validates and dispatches agent messages exactly in the order of
 * spec §11.3, answers with the reference's error codes and message prefixes (§11.6), and
 * follows the spec's Recommended behaviour where the reference is buggy:
 *
 * - malformed JSON is answered with -32700 (id `null`) instead of being dropped;
 * - a JSON value that is neither a request nor a notification but carries an id is answered
 *   with -32600 (configurable: `replyToInvalidMessages`);
 * - integer ids are accepted and echoed (the reference treats them as notifications);
 * - a batch is validated completely before any handler runs (no partial side effects);
 * - handlers run concurrently per connection, notifications reach their handler in arrival
 *   order per session;
 * - handlers get an AbortSignal and a timeout (default: the advertised `timeout_ms`).
 *
 * This file keeps the connections, the bookkeeping of work in flight and the dispatch of each
 * message. Beside it: server-types.ts (options, handler and context types), server-validate.ts
 * (message kind, event checks), server-batch.ts (`ahp/batch`), server-handler-call.ts (one
 * handler call: context, timeout, held answers, failures), server-replies.ts (the answers) and
 * server-connection.ts (the record of one connection).
 */
import { AhpError, AhpErrorCode, toError } from "./errors.js";
import { EVENT_TABLE, type SpecializedEventType } from "./event-table.js";
import type { DecisionInput } from "./schema/decision.js";
import { DecisionSchema } from "./schema/decision.js";
import type { AhpEvent } from "./schema/event.js";
import type { JsonRpcId, JsonRpcMessage } from "./schema/jsonrpc.js";
import {
  AHP_METHODS,
  AHP_PROTOCOL_VERSION,
  AHP_REFERENCE_CRATE_VERSION,
  HandshakeRequestSchema,
  QueryRequestSchema,
  QueryResponseSchema,
  type HandshakeResponse,
  type HarnessConfig,
  type HarnessInfo,
} from "./schema/methods.js";
import { connectionLimit, frameLimitOf, limitError } from "./limits.js";
import { handleBatch } from "./server-batch.js";
import { Connection } from "./server-connection.js";
import { EventAnswer, type AnswerKit } from "./server-event-answer.js";
import { HandlerFailure, call, callHandler, failureText } from "./server-handler-call.js";
import { isPromiseLike } from "./promise-like.js";
import {
  NOTIFIED,
  errorResponse,
  failedResult,
  handlerError,
  invalidParams,
  noop,
  notificationFailure,
  readId,
  rejectedNotification,
  resultOf,
} from "./server-replies.js";
import {
  DEFAULT_HARNESS_CAPABILITIES,
  DEFAULT_HARNESS_CONFIG,
  type AhpHandlerContext,
  type AhpProcessResult,
  type AhpServerConnection,
  type AhpServerHandlers,
  type AhpServerOptions,
  type Awaitable,
} from "./server-types.js";
import { classify, validateEvent } from "./server-validate.js";
import type { Transport, TransportInfo } from "./transport.js";
import { decode } from "./validation.js";
import { fromV1Request, toV1Result, type V1Outcome } from "./v1.js";

export { DEFAULT_HARNESS_CAPABILITIES, DEFAULT_HARNESS_CONFIG } from "./server-types.js";
export type {
  AhpHandlerContext,
  AhpProcessResult,
  AhpServerConnection,
  AhpServerHandlers,
  AhpServerOptions,
  TypedEventHandler,
} from "./server-types.js";

/**
 * The harness side (spec §11): answers handshakes, events, queries and batches from any number of transports with its
 * handlers, enforcing `batch_size` and `max_depth`, validating handler results and timing handlers out. `connect()` serves a stream
 * transport; `process()` serves one message of a request/response transport such as HTTP.
 */
export class AhpServer {
  readonly harnessInfo: HarnessInfo;
  readonly config: HarnessConfig;
  #handlers: AhpServerHandlers;
  readonly #options: AhpServerOptions;
  readonly #handlerTimeoutMs: number;
  readonly #connections = new Set<Connection>();
  readonly #notificationChains = new Map<string, Promise<void>>();
  readonly #inflight = new Set<Promise<unknown>>();
  /** What every {@link EventAnswer} of this server checks results and maps failures with. */
  readonly #answerKit: AnswerKit = {
    check: (decision) => this.#checkResult(DecisionSchema, decision),
    failure: (info, error) => this.#eventFailure(info, error),
  };
  #idleWaiters: Array<(idle: boolean) => void> = [];
  /** Open stream connections (connect()), not the per-request connections of HTTP. */
  #streams = 0;
  #nextConnectionId = 1;
  #closed = false;

  constructor(options: AhpServerOptions = {}) {
    this.#options = options;
    this.#handlers = options.handlers ?? {};
    this.harnessInfo = {
      name: options.harnessInfo?.name ?? "ahp-server",
      version: options.harnessInfo?.version ?? AHP_REFERENCE_CRATE_VERSION,
      capabilities: [...(options.harnessInfo?.capabilities ?? DEFAULT_HARNESS_CAPABILITIES)],
    };
    const config: HarnessConfig = {};
    for (const [key, value] of Object.entries(options.config ?? DEFAULT_HARNESS_CONFIG)) {
      if (value !== undefined && value !== null) (config as Record<string, unknown>)[key] = value;
    }
    this.config = config;
    this.#handlerTimeoutMs = options.handlerTimeoutMs ?? config.timeout_ms ?? 0;
  }

  /** Replaces the handler set (e.g. after a policy reload). In-flight calls keep the old one. */
  setHandlers(handlers: AhpServerHandlers): void {
    this.#handlers = handlers;
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  /**
   * Serves one transport (one agent connection). Returns the connection; it ends when the
   * transport closes.
   */
  async connect(transport: Transport): Promise<AhpServerConnection> {
    if (this.#closed) throw new AhpError(AhpErrorCode.ServerClosing, "server is closed");
    const connection = new Connection(this.#nextConnectionId++, transport.info ?? { transport: "custom" }, transport);
    this.#connections.add(connection);
    transport.onmessage = (message) => {
      void this.#serve(connection, message);
    };
    transport.onparseerror = (error, context) => {
      const frame = frameLimitOf(error);
      if (frame !== undefined) this.#options.onerror?.(limitError(connectionLimit(connection, frame.limit, frame.value, "answered_error")));
      if (this.#options.replyToInvalidMessages === false) return;
      this.#send(connection, errorResponse(context?.id ?? null, error));
    };
    transport.onerror = (error) => this.#options.onerror?.(error);
    transport.onclose = (error) => {
      connection.controller.abort(new AhpError(AhpErrorCode.ServerClosing, "Connection closed"));
      if (!this.#connections.delete(connection)) return;
      this.#streams--;
      try {
        this.#options.ondisconnect?.(connection, error);
      } catch (e) {
        this.#options.onerror?.(toError(e));
      }
      this.#checkIdle();
    };
    this.#streams++;
    try {
      this.#options.onconnection?.(connection);
    } catch (e) {
      this.#options.onerror?.(toError(e));
    }
    await transport.start();
    return connection;
  }

  /** A connection without a transport, for request/response transports that answer each message themselves (HTTP). */
  openConnection(info: TransportInfo): AhpServerConnection & { close(): void } {
    const connection = new Connection(this.#nextConnectionId++, info);
    this.#connections.add(connection);
    return Object.assign(connection, {
      close: () => {
        connection.controller.abort(new AhpError(AhpErrorCode.ServerClosing, "Connection closed"));
        this.#connections.delete(connection);
      },
    });
  }

  /** Processes one decoded message on a connection and returns what to answer. */
  process(connection: AhpServerConnection, message: unknown): Promise<AhpProcessResult> {
    let result: AhpProcessResult | Promise<AhpProcessResult>;
    try {
      result = this.#process(connection as Connection, message);
    } catch (error) {
      return Promise.reject(error);
    }
    return isPromiseLike(result) ? this.#track(Promise.resolve(result)) : Promise.resolve(result);
  }

  /** Messages received and not yet completely handled (requests answered, notifications delivered). */
  get pendingWork(): number {
    return this.#inflight.size;
  }

  /** Closes every connection; in-flight handlers see their signal abort. */
  /**
   * Closes every connection. Messages already received are first given up to `graceMs`
   * (default 2000) to finish: their handlers complete, notifications reach their handler, answers
   * are written. After that, in-flight handlers see their signal abort.
   */
  async close(options: { graceMs?: number } = {}): Promise<void> {
    this.#closed = true;
    const graceMs = options.graceMs ?? 2000;
    if (this.#inflight.size > 0 && graceMs > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        (async () => {
          // New work may be chained behind the current one (notifications of a session): wait until quiet.
          while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
        })(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, graceMs);
        }),
      ]);
      clearTimeout(timer);
    }
    const closing: Promise<void>[] = [];
    for (const connection of [...this.#connections]) {
      connection.controller.abort(new AhpError(AhpErrorCode.ServerClosing, "Server closing"));
      // Stream connections leave the set through their transport's onclose.
      if (connection.transport !== undefined) closing.push(connection.transport.close());
      else this.#connections.delete(connection);
    }
    await Promise.allSettled(closing);
    for (const connection of [...this.#connections]) connection.transport?.onclose?.();
    this.#connections.clear();
  }

  #serve(connection: Connection, message: unknown): void {
    let result: AhpProcessResult | Promise<AhpProcessResult>;
    try {
      result = this.#process(connection, message);
    } catch (error) {
      this.#options.onerror?.(toError(error));
      return;
    }
    // A synchronous handler is answered without a single promise; anything async is tracked so
    // that close() and whenIdle() can wait for it.
    if (isPromiseLike(result)) this.#trackAnswer(connection, Promise.resolve(result));
    else this.#deliver(connection, result);
  }

  /** Tracks an answer in progress and delivers it when it settles (one reaction for both). */
  #trackAnswer(connection: Connection, work: Promise<AhpProcessResult>): void {
    this.#inflight.add(work);
    work.then(
      (result) => {
        try {
          this.#deliver(connection, result);
        } finally {
          this.#inflight.delete(work);
          this.#checkIdle();
        }
      },
      (error: unknown) => {
        this.#inflight.delete(work);
        this.#options.onerror?.(toError(error));
        this.#checkIdle();
      },
    );
  }

  /** Remembers work in progress so that close() can let it finish. */
  #track<T>(work: Promise<T>): Promise<T> {
    this.#inflight.add(work);
    const done = () => {
      this.#inflight.delete(work);
      this.#checkIdle();
    };
    void work.then(done, done);
    return work;
  }

  #checkIdle(): void {
    if (this.#idleWaiters.length === 0 || this.#streams > 0 || this.#inflight.size > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve(true);
  }

  /**
   * Resolves `true` once no stream connection is open and no received message is still being
   * handled (e.g. after the agents disconnected and their last notifications were delivered),
   * or `false` after `timeoutMs`.
   */
  whenIdle(timeoutMs = 5000): Promise<boolean> {
    if (this.#streams === 0 && this.#inflight.size === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#idleWaiters = this.#idleWaiters.filter((w) => w !== settle);
        resolve(false);
      }, timeoutMs);
      const settle = (value: boolean) => {
        clearTimeout(timer);
        resolve(value);
      };
      this.#idleWaiters.push(settle);
    });
  }

  #deliver(connection: Connection, result: AhpProcessResult): void {
    if (result.kind === "response") this.#send(connection, result.response);
    else if (result.kind === "notification" && result.error !== undefined) {
      this.#options.onerror?.(result.error);
    }
  }

  #send(connection: Connection, response: JsonRpcMessage): void {
    const transport = connection.transport;
    if (transport === undefined || connection.signal.aborted) return;
    // post() when the transport has it: no promise per answer.
    if (transport.post !== undefined) transport.post(response, this.#sendFailed, { transport, response });
    else transport.send(response).catch((error: unknown) => this.#sendFailed(toError(error), { transport, response }));
  }

  readonly #sendFailed = (cause: Error, { transport, response }: { transport: Transport; response: JsonRpcMessage }): void => {
    // A result that cannot be written (too large, not serializable) is answered with an error instead.
    if (AhpError.isInstance(cause) && "id" in response && response.id !== undefined && "result" in response) {
      const fallback = errorResponse(response.id, new AhpError(AhpErrorCode.InternalError, `Internal error: ${cause.message}`));
      transport.send(fallback).catch((e: unknown) => this.#options.onerror?.(toError(e)));
    }
    this.#options.onerror?.(cause);
  };

  #process(connection: Connection, message: unknown): AhpProcessResult | Promise<AhpProcessResult> {
    const kind = classify(message, this.#options.acceptNumericIds);
    if (kind === "invalid") {
      if (this.#options.replyToInvalidMessages === false) return { kind: "ignored" };
      const id = readId(message);
      if (id === undefined) return { kind: "ignored" };
      return { kind: "response", response: errorResponse(id, new AhpError(AhpErrorCode.InvalidRequest, "Invalid JSON-RPC message")) };
    }
    if (kind === "response") return { kind: "ignored" }; // 2.4 has no harness-to-agent requests
    const msg = message as { id?: JsonRpcId; method: string; params: unknown };
    if (kind === "notification") {
      if (msg.method === AHP_METHODS.event) return this.#notification(connection, msg.params);
      if (msg.method === "harness/event" && this.#options.compat?.v1) {
        return this.#v1(connection, msg.params, undefined).then((): AhpProcessResult => ({ kind: "notification" }));
      }
      return { kind: "ignored" };
    }
    const id = msg.id as JsonRpcId;
    if (msg.method === AHP_METHODS.event) return this.#eventRequest(connection, id, msg.params);
    let result: unknown;
    try {
      result = this.#request(connection, id, msg.method, msg.params);
    } catch (error) {
      return failedResult(id, error);
    }
    return isPromiseLike(result)
      ? Promise.resolve(result).then(
          (value) => resultOf(id, value),
          (error: unknown) => failedResult(id, error),
        )
      : resultOf(id, result);
  }

  /** Returns the result, or a promise of it; throws (or rejects with) the error to answer. */
  #request(connection: Connection, id: JsonRpcId, method: string, params: unknown): unknown {
    switch (method) {
      case AHP_METHODS.handshake:
        return this.#handshake(connection, id, params);
      case AHP_METHODS.query:
        this.#gate(connection);
        return this.#query(connection, id, params);
      case AHP_METHODS.batch:
        this.#gate(connection);
        return handleBatch(params, this.config, (event, slot) => this.#generic(connection, id, event, slot), {
          connection,
          onerror: this.#options.onerror,
        });
      case "harness/event":
        if (this.#options.compat?.v1) return this.#v1(connection, params, id);
        throw new AhpError(AhpErrorCode.MethodNotFound, "Method not found");
      default:
        throw new AhpError(AhpErrorCode.MethodNotFound, "Method not found");
    }
  }

  #gate(connection: Connection): void {
    if (this.#options.requireHandshake && connection.handshake === undefined) {
      throw new AhpError(AhpErrorCode.HandshakeRequired, "Handshake must complete before sending AHP operations");
    }
  }

  async #handshake(connection: Connection, id: JsonRpcId, params: unknown): Promise<HandshakeResponse> {
    const decoded = decode(HandshakeRequestSchema, params);
    if (!decoded.ok) throw invalidParams(decoded.detail);
    const request = decoded.value;
    const major = request.protocol_version.split(".")[0];
    if (major !== "2") {
      throw new AhpError(AhpErrorCode.UnsupportedVersion, `Unsupported protocol version: ${request.protocol_version}`);
    }
    if (this.#handlers.onHandshake !== undefined) {
      try {
        await call((ctx) => this.#handlers.onHandshake!(request, ctx), connection, id, this.#handlerTimeoutMs);
      } catch (error) {
        throw AhpError.isInstance(error) ? error : handlerError(failureText(error));
      }
    }
    connection.handshake = request;
    return {
      protocol_version: AHP_PROTOCOL_VERSION,
      harness_info: { ...this.harnessInfo, capabilities: [...this.harnessInfo.capabilities] },
      config: { ...this.config },
    };
  }

  /**
   * An `ahp/event` request, answered in full: a generic event's handler outcome is checked,
   * mapped to its fail-closed decision or error and turned into the response inside the one
   * promise of the handler call (see {@link EventAnswer}).
   */
  #eventRequest(connection: Connection, id: JsonRpcId, params: unknown): AhpProcessResult | Promise<AhpProcessResult> {
    let event: AhpEvent;
    let info: (typeof EVENT_TABLE)[keyof typeof EVENT_TABLE];
    try {
      this.#gate(connection);
      event = validateEvent(params, false, this.config.max_depth, connection, this.#options.onerror);
      info = EVENT_TABLE[event.event_type];
      if (!info.blocking) {
        throw new AhpError(AhpErrorCode.InvalidParams, `Fire-and-forget event ${event.event_type} must be sent as a notification`);
      }
    } catch (error) {
      return failedResult(id, error);
    }
    const answer = new EventAnswer(this.#answerKit, id, info);
    let result: unknown;
    try {
      if (info.specialized) {
        result = this.#typed(connection, id, event);
        // #typed is async: its outcome goes through the same mapping.
        return (result as Promise<unknown>).then(
          (value) => answer.settled(value),
          (error: unknown) => answer.error(error),
        );
      }
      const handler = this.#handlers.onEvent;
      if (handler === undefined) throw new HandlerFailure("Capability not supported: Event handler not configured");
      result = callHandler((ctx) => handler(event, ctx), connection, id, this.#handlerTimeoutMs, undefined, answer);
    } catch (error) {
      return answer.error(error);
    }
    return isPromiseLike(result) ? (result as Promise<AhpProcessResult>) : answer.value(result);
  }

  /** A handler failure of a blocking event: the fail-closed decision, or the -32603 error. */
  #eventFailure(info: { failClosed?: ((reason: string) => unknown) | undefined }, error: unknown): unknown {
    if (!(error instanceof HandlerFailure)) throw error;
    if (this.#options.handlerFailure === "decision" && info.failClosed !== undefined) {
      return info.failClosed(`Handler error: ${error.text}`);
    }
    throw handlerError(error.text);
  }

  #generic(connection: Connection, id: JsonRpcId | undefined, event: AhpEvent, batch?: AhpHandlerContext["batch"]): unknown {
    const handler = this.#handlers.onEvent;
    if (handler === undefined) throw new HandlerFailure("Capability not supported: Event handler not configured");
    const decision = callHandler((ctx) => handler(event, ctx), connection, id, this.#handlerTimeoutMs, batch);
    return isPromiseLike(decision)
      ? Promise.resolve(decision).then((d) => this.#checkResult(DecisionSchema, d))
      : this.#checkResult(DecisionSchema, decision);
  }

  async #typed(connection: Connection, id: JsonRpcId, event: AhpEvent): Promise<unknown> {
    const type = event.event_type as SpecializedEventType;
    const info = EVENT_TABLE[type];
    const payload = decode(info.payloadSchema!, event.payload);
    if (!payload.ok) throw handlerError(`Serialization error: ${payload.detail}`);
    const handler = this.#handlers.typed?.[type];
    if (handler === undefined) {
      if (type === "idle") return { decision: "allow" };
      throw handlerError(`Capability not supported: ${info.capabilityLabel} not supported`);
    }
    const decision = await callHandler(
      (ctx) => handler(payload.value as never, event, ctx) as Awaitable<unknown>,
      connection,
      id,
      this.#handlerTimeoutMs,
    );
    return this.#checkResult(info.decisionSchema!, decision);
  }

  #checkResult(schema: import("zod").ZodType, value: unknown): unknown {
    if (this.#options.validateResults === false) return value;
    const checked = decode(schema, value);
    if (!checked.ok) throw new HandlerFailure(`Invalid decision: ${checked.detail}`);
    return value;
  }

  #notification(connection: Connection, params: unknown): AhpProcessResult | Promise<AhpProcessResult> {
    let event: AhpEvent;
    try {
      if (this.#options.requireHandshake && connection.handshake === undefined) {
        throw new AhpError(AhpErrorCode.HandshakeRequired, "Handshake must complete before sending AHP operations");
      }
      event = validateEvent(params, false, this.config.max_depth, connection, this.#options.onerror);
    } catch (error) {
      return { kind: "notification", error: rejectedNotification(error) };
    }
    if (EVENT_TABLE[event.event_type].blocking) {
      return {
        kind: "notification",
        error: handlerError(`Protocol error: Blocking event ${event.event_type} must be sent as a request`),
      };
    }
    const handler = this.#handlers.onNotification;
    if (handler === undefined) return NOTIFIED;
    // In arrival order per session: behind the previous notification of the same session while
    // that one is still running. With nothing of the session running, the handler is called
    // now, and only an async one starts a chain.
    const key = `${connection.id}\u0000${event.session_id}`;
    const previous = this.#notificationChains.get(key);
    if (previous === undefined) {
      let result: unknown;
      try {
        result = callHandler((ctx) => handler(event, ctx), connection, undefined, this.#handlerTimeoutMs);
      } catch (error) {
        return notificationFailure(error);
      }
      if (!isPromiseLike(result)) return NOTIFIED;
      return this.#chain(key, Promise.resolve(result));
    }
    return this.#chain(
      key,
      previous.then(() => callHandler((ctx) => handler(event, ctx), connection, undefined, this.#handlerTimeoutMs)),
    );
  }

  /** Makes `run` the running notification of its session until it settles. */
  #chain(key: string, run: Promise<unknown>): Promise<AhpProcessResult> {
    const settled = run.then(noop, noop);
    this.#notificationChains.set(key, settled);
    void settled.then(() => {
      if (this.#notificationChains.get(key) === settled) this.#notificationChains.delete(key);
    });
    return run.then(() => NOTIFIED, notificationFailure);
  }

  async #query(connection: Connection, id: JsonRpcId, params: unknown): Promise<unknown> {
    const decoded = decode(QueryRequestSchema, params);
    if (!decoded.ok) throw invalidParams(decoded.detail);
    const handler = this.#handlers.onQuery;
    if (handler === undefined) throw handlerError("Capability not supported: Query not supported");
    try {
      const answer = await callHandler((ctx) => handler(decoded.value, ctx), connection, id, this.#handlerTimeoutMs);
      return this.#checkResult(QueryResponseSchema, answer);
    } catch (error) {
      if (error instanceof HandlerFailure) throw handlerError(error.text);
      throw error;
    }
  }

  async #v1(connection: Connection, params: unknown, id: JsonRpcId | undefined): Promise<V1Outcome | undefined> {
    const request = fromV1Request(params);
    if (!request.ok) throw invalidParams(request.detail);
    const { event, blocking } = request;
    if (!blocking || id === undefined) {
      const handler = this.#handlers.onNotification;
      if (handler !== undefined) {
        try {
          await callHandler((ctx) => handler(event, ctx), connection, undefined, this.#handlerTimeoutMs);
        } catch (e) {
          this.#options.onerror?.(toError(e));
        }
      }
      return id === undefined ? undefined : toV1Result({ decision: "allow" });
    }
    try {
      const decision = (await this.#generic(connection, id, event)) as DecisionInput;
      return toV1Result(decision);
    } catch (error) {
      if (error instanceof HandlerFailure) {
        if (this.#options.handlerFailure === "decision") return toV1Result({ decision: "block", reason: `Handler error: ${error.text}` });
        throw handlerError(error.text);
      }
      throw error;
    }
  }
}

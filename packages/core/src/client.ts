/**
 * The agent side: AhpClient performs the handshake, gates every AHP operation on it, sends each
 * event in the form its type requires (request or notification), validates every response in
 * the order of spec §12.7, and fails pending calls promptly with the real cause when the
 * transport closes (the reference lets them run into the timeout).
 */
import { AhpError, AhpLocalError, toError } from "./errors.js";
import { clearDeadline, startDeadline, TimedCall } from "./deadlines.js";
import { createEvent, newId, rfc3339Now, type EventFields, type TypedEvent } from "./builders.js";
import { EVENT_TABLE, type DecisionFor, type PayloadInputFor } from "./event-table.js";
import type { Decision } from "./schema/decision.js";
import type { EventContextInput } from "./schema/context.js";
import { AhpEventSchema, type AhpEventInput, type EventType } from "./schema/event.js";
import type { JsonRpcId } from "./schema/jsonrpc.js";
import {
  AHP_METHODS,
  AHP_PROTOCOL_VERSION,
  BatchResponseSchema,
  HandshakeResponseSchema,
  QueryResponseSchema,
  type HandshakeRequest,
  type HandshakeResponse,
  type HarnessConfig,
  type QueryResponse,
} from "./schema/methods.js";
import type { Transport } from "./transport.js";
import { decode } from "./validation.js";
import type { z } from "zod";

/** The `agent_info.framework` that {@link AhpClient} sends in the handshake when `agentInfo.framework` is not given. */
export const AHP_CLIENT_FRAMEWORK = "@ahp/core";
/** The `agent_info.version` that {@link AhpClient} sends in the handshake when `agentInfo.version` is not given. */
export const AHP_CLIENT_VERSION = "0.1.0";
/**
 * How much longer than the harness's advertised `timeout_ms` a client waits for a decision: the
 * harness answers by its own deadline, and the answer still has to travel back (ADR 0145).
 */
export const HOLD_GRACE_MS = 5000;

/**
 * Configuration of an {@link AhpClient}: the identity it sends in the handshake, the call timeout, and which checks it makes before
 * sending.
 */
export interface AhpClientOptions {
  /** `framework`/`version` sent in the handshake; capabilities are given to handshake(). */
  agentInfo?: { framework?: string; version?: string };
  /** Default: a random UUID v4 chosen once per client (as the reference). */
  sessionId?: string;
  /** Default: a random UUID v4 chosen once per client (as the reference). */
  agentId?: string;
  /**
   * Per-call timeout in ms. Default 10000 (the reference's). `0` disables. When the harness
   * advertises a longer `timeout_ms`, a blocking event (and a batch) waits that plus
   * {@link HOLD_GRACE_MS}: the harness may hold its decision for a person that long (ADR 0145). A
   * call's own `timeoutMs` wins.
   */
  timeoutMs?: number;
  /** Enforce the harness's advertised `batch_size` and `max_depth` before sending (Recommended). Default true. */
  enforceHarnessLimits?: boolean;
  /** Validate outgoing events against the AhpEvent schema. Default true. */
  validateEvents?: boolean;
  /** Accept a harness whose protocol major is not 2. Default false (the handshake fails). */
  allowOtherMajor?: boolean;
  /** Request id generator; must return unique strings. Default: UUID v4. */
  generateId?: () => string;
  /** Non-fatal problems: unmatched responses, undecodable frames. Library code never logs. */
  onerror?: (error: Error) => void;
}

/**
 * Per-call options of AhpClient methods: a timeout that replaces the client's, and a signal whose abort cancels the call (a pending
 * request fails with `ABORTED`).
 */
export interface CallOptions {
  /** Per-call timeout; default the client's. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Fields the simple API lets a caller add to an event it builds. */
export interface SimpleEventOptions extends CallOptions {
  depth?: number;
  context?: EventContextInput;
  metadata?: Record<string, unknown>;
}

type Operation = "Handshake" | "Event" | "Query" | "Batch";

/** A transport's send failure as the local error a caller sees. */
function sendError(error: unknown): Error {
  if (AhpLocalError.isInstance(error)) return error;
  if (AhpError.isInstance(error)) return new AhpLocalError("MESSAGE_TOO_LARGE", error.message, { cause: error });
  return new AhpLocalError("SEND_FAILED", `send failed: ${toError(error).message}`, { cause: error });
}

/** One request waiting for its response: its time limit (see deadlines.ts), its abort listener and how to settle it. */
class PendingCall extends TimedCall {
  #signal?: AbortSignal;
  #timeoutMs = 0;

  constructor(
    readonly table: Map<JsonRpcId, PendingCall>,
    readonly id: JsonRpcId,
    readonly op: Operation,
    readonly schema: z.ZodType<unknown>,
    readonly settleValue: (value: unknown) => void,
    readonly reject: (error: Error) => void,
  ) {
    super();
  }

  startTimer(timeoutMs: number): void {
    this.#timeoutMs = timeoutMs;
    startDeadline(this, timeoutMs);
  }

  /** The time limit passed before the response came. */
  onDeadline(): void {
    const timeoutMs = this.#timeoutMs;
    this.table.delete(this.id);
    this.cleanup();
    this.reject(new AhpLocalError("TIMEOUT", `Timeout after ${timeoutMs}ms`, { details: { operation: this.op, timeoutMs } }));
  }

  watch(signal: AbortSignal): void {
    this.#signal = signal;
    signal.addEventListener("abort", this, { once: true });
  }

  /** The signal's abort (this object is its listener). */
  handleEvent(): void {
    this.table.delete(this.id);
    this.cleanup();
    this.reject(new AhpLocalError("ABORTED", `${this.op} aborted`, { cause: this.#signal?.reason }));
  }

  cleanup(): void {
    clearDeadline(this);
    this.#signal?.removeEventListener("abort", this);
  }

  resolve(result: unknown): void {
    const decoded = decode(this.schema, result);
    if (decoded.ok) this.settleValue(decoded.value);
    else this.reject(new AhpLocalError("INVALID_RESPONSE", `Serialization error: ${decoded.detail}`));
  }

  sendFailed(failure: unknown): void {
    if (this.table.get(this.id) !== this) return;
    this.table.delete(this.id);
    this.cleanup();
    const error = sendError(failure);
    // A request/response transport (HTTP) reports protocol violations of the response here.
    if (AhpLocalError.isInstance(error) && error.code === "PROTOCOL_ERROR") {
      this.reject(new AhpLocalError("PROTOCOL_ERROR", `Protocol error: ${this.op} failed: ${error.message}`, { cause: error }));
    } else this.reject(error);
  }
}

const SYNTHETIC_ALLOW = Object.freeze({ decision: "allow" }) as Decision;

/** A request's write failed (the failure callback of `Transport.post`). */
const postFailed = (error: Error, pending: PendingCall): void => pending.sendFailed(error);

/**
 * The agent side of an AHP connection (spec §12). `connect()` starts a transport and performs the handshake; every other
 * operation fails with `HANDSHAKE_REQUIRED` until a handshake succeeded. Events travel as request or notification by their type,
 * responses are validated against the expected schema, and pending calls fail as soon as the transport closes.
 */
export class AhpClient {
  readonly sessionId: string;
  readonly agentId: string;
  readonly #options: AhpClientOptions;
  readonly #pending = new Map<JsonRpcId, PendingCall>();
  readonly #controller = new AbortController();
  #transport?: Transport;
  #handshake?: HandshakeResponse;
  #closeCause?: Error;
  #closed = false;
  /** close() was called and is waiting for the transport. */
  #closing = false;
  #resolveClosed!: (cause: Error | undefined) => void;
  /** Resolves once the connection is gone, with the cause when it did not close cleanly. */
  readonly closed: Promise<Error | undefined>;

  constructor(options: AhpClientOptions = {}) {
    this.#options = options;
    this.sessionId = options.sessionId ?? newId();
    this.agentId = options.agentId ?? newId();
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  /** Aborted when the connection closes. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The harness's handshake answer, once one succeeded. */
  get handshakeResponse(): HandshakeResponse | undefined {
    return this.#handshake;
  }

  get isHandshaken(): boolean {
    return this.#handshake !== undefined;
  }

  /** The limits the harness advertised (empty before the handshake). */
  get harnessConfig(): HarnessConfig {
    return this.#handshake?.config ?? {};
  }

  /**
   * How long a decision may take by default: the client's own timeout or, when the harness
   * advertises a longer `timeout_ms`, that plus {@link HOLD_GRACE_MS} (a decision held for a person
   * is not a transport timeout, ADR 0145). `0` when the client's timeout is disabled.
   */
  get decisionTimeoutMs(): number {
    const own = this.#options.timeoutMs ?? 10_000;
    if (!(own > 0) || !Number.isFinite(own)) return 0;
    const advertised = this.#handshake?.config?.timeout_ms;
    if (typeof advertised !== "number" || !(advertised > 0) || !Number.isFinite(advertised)) return own;
    // A harness advertising no more than the client's own timeout (the default 10000 of both) holds
    // nothing for a person: the client's timeout stands (checklist item 79).
    return advertised <= own ? own : advertised + HOLD_GRACE_MS;
  }

  /** True when the harness advertised `capability` in its handshake. */
  harnessSupports(capability: string): boolean {
    return this.#handshake?.harness_info.capabilities.includes(capability) ?? false;
  }

  /**
   * Starts the transport and (unless `handshake: false`) performs the handshake with the given
   * capabilities.
   */
  async connect(
    transport: Transport,
    options: { handshake?: boolean; capabilities?: string[] } & CallOptions = {},
  ): Promise<HandshakeResponse | undefined> {
    if (this.#transport !== undefined) throw new AhpLocalError("INVALID_ARGUMENT", "client is already connected");
    this.#transport = transport;
    transport.onmessage = (message) => this.#onMessage(message);
    transport.onparseerror = (error, context) => {
      // A response refused for its size whose id could be read: fail that call now, not at its timeout.
      const pending = context?.id === undefined ? undefined : this.#pending.get(context.id);
      if (pending !== undefined) {
        this.#pending.delete(context!.id!);
        pending.cleanup();
        pending.reject(new AhpLocalError("MESSAGE_TOO_LARGE", `${pending.op} failed: ${error.message}`, { cause: error }));
      }
      this.#options.onerror?.(error);
    };
    transport.onerror = (error) => this.#options.onerror?.(error);
    transport.onclose = (error) => this.#onClose(error);
    await transport.start();
    if (options.handshake === false) return undefined;
    return this.handshake(options.capabilities ?? [], options);
  }

  /** `ahp/handshake`. A failure leaves the client unhandshaken; it may be retried. */
  async handshake(capabilities: string[] = [], options: CallOptions = {}): Promise<HandshakeResponse> {
    const params: HandshakeRequest = {
      protocol_version: AHP_PROTOCOL_VERSION,
      agent_info: {
        framework: this.#options.agentInfo?.framework ?? AHP_CLIENT_FRAMEWORK,
        version: this.#options.agentInfo?.version ?? AHP_CLIENT_VERSION,
        capabilities: [...capabilities],
      },
      session_id: this.sessionId,
      agent_id: this.agentId,
    };
    const response = await this.#call("Handshake", AHP_METHODS.handshake, params, HandshakeResponseSchema, options);
    const major = response.protocol_version.split(".")[0];
    if (major !== "2" && !this.#options.allowOtherMajor) {
      throw new AhpLocalError(
        "UNSUPPORTED_VERSION",
        `Protocol error: Handshake failed: harness speaks protocol ${response.protocol_version}, this client speaks ${AHP_PROTOCOL_VERSION}`,
      );
    }
    this.#handshake = response;
    return response;
  }

  /**
   * Simple API (spec §12.3): builds the event with this client's ids, `depth` 0 (unless given),
   * the current time, and sends it in the form its type requires. A non-blocking event returns a
   * synthetic `{"decision":"allow"}` once written.
   */
  send<T extends EventType>(
    type: T,
    payload: PayloadInputFor<T>,
    options: SimpleEventOptions = {},
  ): Promise<DecisionFor<T> extends undefined ? Decision : DecisionFor<T>> {
    // Not async: a synchronous decision path should cost no extra promise (errors still reject).
    try {
      const fields: EventFields = { sessionId: this.sessionId, agentId: this.agentId, timestamp: rfc3339Now() };
      if (options.depth !== undefined) fields.depth = options.depth;
      if (options.context !== undefined) fields.context = options.context;
      if (options.metadata !== undefined) fields.metadata = options.metadata;
      return this.event(createEvent(type, payload, fields), options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Full-event API (spec §12.4): sends the event unchanged. Blocking types become a request and
   * return their typed decision; non-blocking types become a notification and return a
   * synthetic `{"decision":"allow"}`.
   */
  event<T extends EventType>(
    event: TypedEvent<T> | (AhpEventInput & { event_type: T }),
    options: CallOptions = {},
  ): Promise<DecisionFor<T> extends undefined ? Decision : DecisionFor<T>> {
    type R = DecisionFor<T> extends undefined ? Decision : DecisionFor<T>;
    const info = EVENT_TABLE[event.event_type];
    if (info === undefined) return Promise.reject(new AhpLocalError("INVALID_ARGUMENT", `unknown event type ${String(event.event_type)}`));
    if (!info.blocking) return this.#notify(event, options, SYNTHETIC_ALLOW as R);
    return this.request(event, options) as Promise<R>;
  }

  /** Sends a blocking event as a request and returns its typed decision. */
  request<T extends EventType>(event: AhpEventInput & { event_type: T }, options: CallOptions = {}): Promise<DecisionFor<T>> {
    try {
      const info = EVENT_TABLE[event.event_type];
      if (info === undefined || !info.blocking) {
        throw new AhpLocalError(
          "INVALID_ARGUMENT",
          `Protocol error: Fire-and-forget event ${String(event.event_type)} must be sent as a notification`,
        );
      }
      this.#checkOutgoing(event, "Event");
      return this.#call("Event", AHP_METHODS.event, event, info.decisionSchema as z.ZodType<DecisionFor<T>>, options);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Sends a non-blocking event as a notification. Resolves once the transport has written it. */
  notify(event: AhpEventInput, options: CallOptions = {}): Promise<void> {
    return this.#notify(event, options, undefined);
  }

  /** Sends a notification; resolves with `value` once written. */
  #notify<V>(event: AhpEventInput, options: CallOptions, value: V): Promise<V> {
    // Not async: one notification should cost as few promises as possible (errors still reject).
    try {
      const info = EVENT_TABLE[event.event_type];
      if (info === undefined || info.blocking) {
        throw new AhpLocalError("INVALID_ARGUMENT", `Protocol error: Blocking event ${String(event.event_type)} must be sent as a request`);
      }
      const transport = this.#ready("Event");
      this.#checkOutgoing(event, "Event");
      const signal = options.signal;
      const sent = transport.send(
        { jsonrpc: "2.0", method: AHP_METHODS.event, params: event },
        signal === undefined ? undefined : { signal },
      );
      return sent.then(
        () => value,
        (error: unknown) => {
          throw sendError(error);
        },
      );
    } catch (error) {
      return Promise.reject(AhpLocalError.isInstance(error) ? error : sendError(error));
    }
  }

  /** `ahp/query` with this client's ids. */
  async query(queryType: string, payload: unknown, options: CallOptions = {}): Promise<QueryResponse> {
    this.#ready("Query");
    const params = { session_id: this.sessionId, agent_id: this.agentId, query_type: queryType, payload: payload ?? null };
    return this.#call("Query", AHP_METHODS.query, params, QueryResponseSchema, options);
  }

  /** `ahp/batch`: one generic Decision per event, in order. */
  async batch(events: readonly AhpEventInput[], options: CallOptions = {}): Promise<Decision[]> {
    this.#ready("Batch");
    for (const event of events) {
      const info = EVENT_TABLE[event.event_type];
      if (info === undefined || !info.batchable) {
        throw new AhpLocalError(
          "INVALID_ARGUMENT",
          `Protocol error: Batch failed: event type ${String(event.event_type)} cannot be batched because it does not return a generic Decision`,
        );
      }
      this.#checkOutgoing(event, "Batch");
    }
    const limit = this.#options.enforceHarnessLimits === false ? undefined : this.harnessConfig.batch_size;
    if (limit !== undefined && limit !== null && events.length > limit) {
      throw new AhpLocalError(
        "LIMIT_EXCEEDED",
        `Protocol error: Batch failed: batch size ${events.length} exceeds the harness limit ${limit}`,
      );
    }
    const response = await this.#call("Batch", AHP_METHODS.batch, { events }, BatchResponseSchema, options);
    if (response.decisions.length !== events.length) {
      throw new AhpLocalError(
        "PROTOCOL_ERROR",
        `Protocol error: Batch failed: decision count mismatch, expected ${events.length}, got ${response.decisions.length}`,
      );
    }
    return response.decisions;
  }

  /** Closes the transport. Pending calls fail with CONNECTION_CLOSED. */
  async close(): Promise<void> {
    const transport = this.#transport;
    if (transport === undefined || this.#closed) {
      this.#onClose(undefined);
      return;
    }
    // Fail pending calls now, not after the transport's teardown (a stdio child gets a grace
    // period to exit); calls made while closing are refused.
    this.#closing = true;
    this.#rejectPending(this.#closedError());
    await transport.close();
    this.#onClose(undefined);
  }

  // ------------------------------------------------------------------ internals

  #ready(op: Operation): Transport {
    if (this.#closed || this.#closing) throw this.#closedError();
    const transport = this.#transport;
    if (transport === undefined) throw new AhpLocalError("NOT_CONNECTED", "client is not connected");
    if (op !== "Handshake" && this.#handshake === undefined) {
      throw new AhpLocalError("HANDSHAKE_REQUIRED", "Protocol error: Handshake must complete before sending AHP operations");
    }
    return transport;
  }

  #checkOutgoing(event: AhpEventInput, op: Operation): void {
    this.#ready(op);
    if (this.#options.validateEvents !== false) {
      const checked = decode(AhpEventSchema, event);
      if (!checked.ok) throw new AhpLocalError("INVALID_ARGUMENT", `invalid event: ${checked.detail}`);
    }
    const maxDepth = this.#options.enforceHarnessLimits === false ? undefined : this.harnessConfig.max_depth;
    if (maxDepth !== undefined && maxDepth !== null && event.depth > maxDepth) {
      throw new AhpLocalError("LIMIT_EXCEEDED", `Protocol error: Event depth ${event.depth} exceeds the harness max depth ${maxDepth}`);
    }
  }

  #closedError(): AhpLocalError {
    const cause = this.#closeCause;
    if (AhpLocalError.isInstance(cause) && cause.code === "CONNECTION_CLOSED") return cause;
    return new AhpLocalError("CONNECTION_CLOSED", cause ? `Connection closed: ${cause.message}` : "Connection closed", {
      ...(cause === undefined ? {} : { cause }),
      ...(AhpLocalError.isInstance(cause) && cause.details !== undefined ? { details: cause.details } : {}),
    });
  }

  #call<T>(op: Operation, method: string, params: unknown, schema: z.ZodType<T>, options: CallOptions): Promise<T> {
    const transport = this.#ready(op);
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(new AhpLocalError("ABORTED", `${op} aborted`, { cause: signal.reason }));
    const id = (this.#options.generateId ?? newId)();
    const timeoutMs =
      options.timeoutMs ?? (op === "Event" || op === "Batch" ? this.decisionTimeoutMs : (this.#options.timeoutMs ?? 10_000));
    return new Promise<T>((resolve, reject) => {
      // One object per call and no closures: this is the per-request hot path.
      const pending = new PendingCall(this.#pending, id, op, schema, resolve as (value: unknown) => void, reject);
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) pending.startTimer(timeoutMs);
      if (signal !== undefined) pending.watch(signal);
      this.#pending.set(id, pending);
      // post() when the transport has it and no signal can abort the write: no promise per request.
      if (signal === undefined && transport.post !== undefined) {
        try {
          transport.post({ jsonrpc: "2.0", id, method, params }, postFailed, pending);
        } catch (error) {
          queueMicrotask(() => pending.sendFailed(error));
        }
        return;
      }
      let sent: Promise<void>;
      try {
        sent = transport.send({ jsonrpc: "2.0", id, method, params }, signal === undefined ? undefined : { signal });
      } catch (error) {
        sent = Promise.reject(error);
      }
      sent.then(undefined, (error: unknown) => pending.sendFailed(error));
    });
  }

  #onMessage(message: unknown): void {
    if (message === null || typeof message !== "object" || Array.isArray(message)) return;
    const m = message as Record<string, unknown>;
    const id = m.id;
    if (typeof id !== "string" && typeof id !== "number") return;
    if ("method" in m) return; // 2.4 has no harness-to-agent requests
    const pending = this.#pending.get(id);
    if (pending === undefined) {
      this.#options.onerror?.(new AhpLocalError("PROTOCOL_ERROR", `response with unknown id ${JSON.stringify(id)} ignored`));
      return;
    }
    this.#pending.delete(id);
    pending.cleanup();
    const op = pending.op;
    if (m.jsonrpc !== "2.0") {
      pending.reject(new AhpLocalError("PROTOCOL_ERROR", `Protocol error: ${op} failed: invalid JSON-RPC version ${String(m.jsonrpc)}`));
      return;
    }
    const error = m.error;
    if (error !== undefined && error !== null) {
      const e = error as { code?: unknown; message?: unknown; data?: unknown };
      const code = typeof e.code === "number" ? e.code : -32603;
      const text = typeof e.message === "string" ? e.message : JSON.stringify(error);
      pending.reject(new AhpError(code, `${op} failed: ${text}`, e.data === undefined ? undefined : { data: e.data }));
      return;
    }
    if (m.result === undefined || m.result === null) {
      pending.reject(new AhpLocalError("PROTOCOL_ERROR", `Protocol error: ${op} failed: missing result`));
      return;
    }
    pending.resolve(m.result);
  }

  #onClose(error: Error | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeCause = error;
    const failure = this.#closedError();
    this.#rejectPending(failure);
    this.#controller.abort(failure);
    this.#resolveClosed(error);
  }

  #rejectPending(failure: Error): void {
    for (const pending of this.#pending.values()) {
      pending.cleanup();
      pending.reject(failure);
    }
    this.#pending.clear();
  }
}

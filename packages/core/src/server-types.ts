/** What an AhpServer is configured with and what it hands to its handlers. */
import type { AhpError } from "./errors.js";
import type { DecisionInputFor, PayloadFor, SpecializedEventType } from "./event-table.js";
import type { DecisionInput } from "./schema/decision.js";
import type { AhpEvent } from "./schema/event.js";
import type { JsonRpcId, JsonRpcResponse } from "./schema/jsonrpc.js";
import type { HandshakeRequest, HarnessConfig, HarnessInfo, QueryRequest, QueryResponseInput } from "./schema/methods.js";
import type { TransportInfo } from "./transport.js";

/** Capabilities the reference harness advertises by default, in order. */
export const DEFAULT_HARNESS_CAPABILITIES = Object.freeze([
  "pre_action",
  "post_action",
  "pre_prompt",
  "query",
  "batch",
  "run_lifecycle",
  "task_list",
  "verification",
]);

/**
 * The limits an AhpServer advertises and enforces when no `config` is given: `timeout_ms` 10000, `batch_size` 100, `max_depth` 10
 * (the reference's, spec §11.2). `timeout_ms` is also the default handler timeout.
 */
export const DEFAULT_HARNESS_CONFIG: Readonly<Required<Pick<HarnessConfig, "timeout_ms" | "batch_size" | "max_depth">>> = Object.freeze({
  timeout_ms: 10_000,
  batch_size: 100,
  max_depth: 10,
});

/** Per-call facts handed to every handler. */
export interface AhpHandlerContext {
  /** Aborted when the handler times out, the connection closes or the server shuts down. */
  readonly signal: AbortSignal;
  readonly connection: AhpServerConnection;
  /** JSON-RPC id of the request; absent for notifications. */
  readonly requestId?: JsonRpcId | undefined;
  /** Position inside an `ahp/batch`. */
  readonly batch?: { readonly index: number; readonly size: number } | undefined;
  /**
   * Holds this call's answer until `until` settles: the handler's result or failure, and also
   * the answer the server gives on its own when the handler times out. For middleware that must
   * finish something before an agent may see the answer (an audit log writing the call's
   * record). Call it before the handler's work is awaited; several holds are all waited for.
   * Present on every context `AhpServer` creates.
   */
  holdAnswer?(until: PromiseLike<unknown>): void;
}

export type Awaitable<T> = T | Promise<T>;

/** A typed handler for one specialized event type: typed payload in, typed decision out. */
export type TypedEventHandler<T extends SpecializedEventType> = (
  payload: PayloadFor<T>,
  event: AhpEvent,
  ctx: AhpHandlerContext,
) => Awaitable<DecisionInputFor<T>>;

/**
 * The callbacks an {@link AhpServer} answers with. Every one is optional: without `onEvent` or `onQuery` such calls fail with
 * `Capability not supported: …` (-32603 unless `handlerFailure` or a batch turns it into a decision), and a missing typed
 * handler gives the spec §7.9 default.
 */
export interface AhpServerHandlers {
  /**
   * The generic event handler: `pre_action`, `pre_prompt`, `handshake`/`query` sent as events,
   * and every event inside `ahp/batch` (also non-blocking ones, as the reference does).
   */
  onEvent?: (event: AhpEvent, ctx: AhpHandlerContext) => Awaitable<DecisionInput>;
  /** Non-blocking events sent as notifications, in arrival order per session. */
  onNotification?: (event: AhpEvent, ctx: AhpHandlerContext) => Awaitable<void>;
  onQuery?: (query: QueryRequest, ctx: AhpHandlerContext) => Awaitable<QueryResponseInput>;
  /** Observes a valid handshake; throw an AhpError to refuse it. */
  onHandshake?: (request: HandshakeRequest, ctx: AhpHandlerContext) => Awaitable<void>;
  /** Typed handlers for the specialized points (spec §7). Missing ones answer the §7.9 default. */
  typed?: { [T in SpecializedEventType]?: TypedEventHandler<T> };
}

/**
 * Configuration of an {@link AhpServer}: what it advertises in the handshake, its handlers and timeouts, and the opt-in departures
 * from the reference (`requireHandshake`, `handlerFailure`, `compat`).
 */
export interface AhpServerOptions {
  /** `name`, `version` and `capabilities` answered in the handshake. */
  harnessInfo?: Partial<HarnessInfo>;
  /**
   * Limits advertised in the handshake and enforced. Default `{timeout_ms:10000, batch_size:100, max_depth:10}`.
   * Pass an object to replace it: members left out are not advertised and not enforced.
   */
  config?: HarnessConfig;
  handlers?: AhpServerHandlers;
  /** How long one handler call may take (ms). Default: `config.timeout_ms`; `0` disables. */
  handlerTimeoutMs?: number;
  /**
   * `error` (default, as the reference): a failing handler of a single event is answered with
   * -32603 `Handler error: …`. `decision`: it is answered with the event type's fail-closed
   * decision (`block`, `reject`, `skip` or `defer` with the error as reason), so that agents that
   * treat errors as "allow" still stop. Inside batches failures always become `block`.
   */
  handlerFailure?: "error" | "decision";
  /** Refuse events, queries and batches on a connection before its handshake (-32001). Default false (reference). */
  requireHandshake?: boolean;
  /** Accept integer request ids and echo them (Recommended). Default true. */
  acceptNumericIds?: boolean;
  /** Answer malformed JSON (-32700) and id-carrying invalid messages (-32600). Default true. */
  replyToInvalidMessages?: boolean;
  /** Accept AHP 1.x `harness/event` requests (spec §15.1). Default false (the 2.4 reference answers -32601). */
  compat?: { v1?: boolean };
  /** Validate what handlers return before sending it. Default true. */
  validateResults?: boolean;
  /** Non-fatal problems (send failures, handler crashes in notifications). Library code never logs. */
  onerror?: (error: Error) => void;
  /** A stream connection (connect()) opened. */
  onconnection?: (connection: AhpServerConnection) => void;
  /** A stream connection closed; `error` is the transport's cause when it did not close cleanly. */
  ondisconnect?: (connection: AhpServerConnection, error?: Error) => void;
}

/** One agent connection as the server sees it. */
export interface AhpServerConnection {
  readonly id: number;
  readonly info: TransportInfo;
  /** The handshake this connection completed, if any. */
  readonly handshake?: HandshakeRequest;
  /** Aborted when the connection closes. */
  readonly signal: AbortSignal;
}

/** What processing one incoming message produced (used by request/response transports such as HTTP). */
export type AhpProcessResult =
  | { kind: "response"; response: JsonRpcResponse }
  | { kind: "notification"; error?: AhpError }
  | { kind: "ignored" };

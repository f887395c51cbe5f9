/**
 * The contract between the transport-agnostic conformance suite and a transport under test.
 *
 * Everything the suite checks is observable over the wire, so the harness can live in another
 * process (stdio child, HTTP server, ...): the scripted harness built by
 * `createConformanceServer(config)` takes its whole configuration as JSON, decides from the
 * event payload, and reports what its handlers saw through `ahp/query`.
 */
import type { HarnessConfig, Transport } from "@ahp/core";

/** JSON-serializable configuration of the scripted conformance harness. */
export interface ConformanceServerConfig {
  /** Advertised and enforced limits. Absent: the reference default `{timeout_ms:10000,batch_size:100,max_depth:10}`. */
  harnessConfig?: HarnessConfig;
  /** Install the scripted typed handlers for the 8 specialized points. Default false (the §7.9 defaults answer). */
  typedHandlers?: boolean;
  /** Install the query handler (needed to read the log). Default true. */
  queryHandler?: boolean;
  requireHandshake?: boolean;
  handlerTimeoutMs?: number;
  handlerFailure?: "error" | "decision";
  compatV1?: boolean;
  /** Most handler records kept in the log (oldest dropped first). Default 10000. */
  logLimit?: number;
  /** Longest `delay_ms` a script may ask for. Default 30000. */
  maxScriptDelayMs?: number;
}

/** A raw text channel to the harness, for tests that must send bytes our client never would. */
export interface RawChannel {
  /**
   * Sends one frame (a line on stream transports, a text frame on WebSocket, a POST body on HTTP).
   * On `ndjson` channels the text is written as given followed by one `\n`, so it may itself
   * contain several lines, blank lines or `\r\n` endings.
   */
  send(text: string): Promise<void>;
  /**
   * Next frame received (a line, a text frame, or an HTTP response body with its status),
   * or `undefined` when nothing arrives within `timeoutMs`.
   * HTTP: every `send` yields exactly one frame, also a 204 (empty `text`).
   */
  next(timeoutMs?: number): Promise<RawFrame | undefined>;
  close(): Promise<void>;
  /**
   * How `send` frames text on a stream-kind harness: `ndjson` (default: bytes on a newline-delimited
   * stream, as stdio and Unix sockets) or `message` (one message per send, as WebSocket frames or the
   * in-memory pair). Ignored for `http`.
   */
  readonly framing?: "ndjson" | "message";
}

export interface RawFrame {
  text: string;
  /** HTTP only: the status code of the response that carried the frame. */
  status?: number;
}

export interface ConformanceHarness {
  /** A fresh client-side transport connected to this harness (not started). */
  connect(): Promise<Transport>;
  /** A raw channel; transports that cannot offer one leave it out and the raw items are skipped. */
  connectRaw?(): Promise<RawChannel>;
  /** Stops the harness and frees every resource (child processes, sockets, ports). */
  close(): Promise<void>;
}

export type ConformanceFactory = (config: ConformanceServerConfig) => Promise<ConformanceHarness>;

/**
 * Checks of the suite that are not numbered in the spec's checklist (§17); they can be listed in
 * `notApplicable` like checklist numbers.
 */
export type ConformanceExtraCheck =
  | "jsonrpc-array"
  | "concurrency"
  | "large-message"
  | "string-escapes"
  | "cancellation"
  | "client-timeout"
  | "close-pending"
  | "peer-death"
  | "handler-timeout"
  | "fail-closed"
  | "handshake-gating"
  | "v1-compat"
  | "notification-order"
  | "typed-scripts"
  | "large-id";

export interface ConformanceOptions {
  /** `stream` (stdio, unix, memory, ws: no answer to notifications) or `http` (a status code for each POST). */
  kind: "stream" | "http";
  /**
   * Checklist items (spec §17 numbers) or extra checks that cannot apply to this transport, with
   * the reason. They are registered as skipped tests whose title carries the reason.
   */
  notApplicable?: Partial<Record<number | ConformanceExtraCheck, string>>;
  /**
   * HTTP only: how a rejected notification (undecodable, too deep, bad contract payload, blocking
   * type) is answered. `reference` (default): status 200 with
   * `{"jsonrpc":"2.0","id":"","error":{"code":-32603,"message":"Handler error: …"}}`; `204`: 204, empty body.
   */
  httpRejectedNotification?: "reference" | "204";
  /**
   * HTTP only: how valid JSON that is neither a request nor a notification and carries no id is
   * answered. `reference` (default): 200 with `-32600 Invalid JSON-RPC message` and id `""`; `204`: 204.
   */
  httpInvalidMessage?: "reference" | "204";
  /** HTTP only: status of the answer to a malformed JSON body (its body is a -32700 error with id null). Default 400. */
  httpParseErrorStatus?: number;
  /** Longest wait for one expected response, in ms. Default 5000. */
  responseTimeoutMs?: number;
  /** Register the agent-side [C] checks (they run against an in-memory fake harness). Default true. */
  clientChecks?: boolean;
  /**
   * Reuse one message-level connection per harness for the checks that do not need a fresh one
   * (each test still uses its own session ids). Set it where a connection is expensive, e.g. a
   * child process per connection. Default false: a fresh connection per test.
   */
  shareConnections?: boolean;
}

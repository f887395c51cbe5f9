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
}

/** A raw text channel to the harness, for tests that must send bytes our client never would. */
export interface RawChannel {
  /** Sends one frame (a line on stream transports, a text frame on WebSocket, a POST body on HTTP). */
  send(text: string): Promise<void>;
  /**
   * Next frame received (a line, a text frame, or an HTTP response body with its status),
   * or `undefined` when nothing arrives within `timeoutMs`.
   */
  next(timeoutMs?: number): Promise<RawFrame | undefined>;
  close(): Promise<void>;
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

export interface ConformanceOptions {
  /** `stream` (stdio, unix, memory, ws: no answer to notifications) or `http` (a status code for each POST). */
  kind: "stream" | "http";
  /** Checklist items (spec §17 numbers) that cannot apply to this transport, with the reason. */
  notApplicable?: Record<number, string>;
}

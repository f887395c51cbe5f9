/**
 * `withAudit(handlers, log)`: records every event, decision, query, handshake and handler
 * failure of an `AhpServer` in the audit log, using the shared handler middleware shape.
 */
import type { AhpServerHandlers } from "@ahp/core";
import { canonicalJson } from "./canonical.js";
import { AuditError } from "./errors.js";
import { sha256Hex, type AuditEntry, type AuditRecord } from "./record.js";
import { findRuleId, readAnnotation, type RuleIdSources } from "@ahp/core";
import { applyHandlerMiddleware, decisionKindOf, failureMessage, type HandlerCall, type HandlerMiddleware } from "@ahp/core";

/** Anything records can be appended to (an `AuditLog`, or a test double). */
export interface AuditRecorder {
  append(entry: AuditEntry): Promise<AuditRecord | void>;
}

export interface WithAuditOptions {
  /**
   * Also write the (redacted) payload of events and queries. Default false: only
   * `payload_sha256`, the SHA-256 of the canonical payload, is written.
   */
  includePayloads?: boolean;
  /** With `includePayloads`: payloads whose canonical JSON is larger are left out (`payload_truncated`). Default 64 KiB. */
  maxPayloadBytes?: number;
  /**
   * Wait until the record is written before the handler's decision is returned. A failed write
   * then fails the call (the server answers with its fail-closed outcome). Default false: the
   * decision is not delayed and write failures go to `onerror`.
   */
  awaitWrites?: boolean;
  /** Rule id pattern for reason texts; `false` disables. See `RULE_IN_REASON`. */
  reasonPattern?: RuleIdSources["reasonPattern"];
  /** Record notifications and handshakes also when the handler set has no handler for them. Default true. */
  observeMissing?: boolean;
  /** Write failures (when not awaited). Library code never logs. */
  onerror?: (error: Error) => void;
}

/** Wraps every handler so that each call is recorded. Failures are recorded, then rethrown unchanged. */
export function withAudit(handlers: AhpServerHandlers, log: AuditRecorder, options: WithAuditOptions = {}): AhpServerHandlers {
  return applyHandlerMiddleware(handlers, auditMiddleware(log, options), {
    ...(options.observeMissing === undefined ? {} : { observeMissing: options.observeMissing }),
  });
}

/** The middleware behind {@link withAudit}, for composing with others (`composeMiddleware`). */
export function auditMiddleware(log: AuditRecorder, options: WithAuditOptions = {}): HandlerMiddleware {
  const write = async (entry: AuditEntry): Promise<void> => {
    if (options.awaitWrites) {
      try {
        await log.append(entry);
      } catch (error) {
        throw new AuditError("WRITE_FAILED", `audit record could not be written: ${failureMessage(error)}`, { cause: error });
      }
      return;
    }
    log.append(entry).catch((error: unknown) => options.onerror?.(error instanceof Error ? error : new Error(String(error))));
  };
  return async (call, next) => {
    const started = process.hrtime.bigint();
    let result: unknown;
    try {
      result = await next();
    } catch (error) {
      const entry = baseEntry(call, options, started);
      entry.kind = "failure";
      entry.error = failureMessage(error);
      addRule(entry, findRuleId({ target: call.target, ...pattern(options) }));
      try {
        await write(entry);
      } catch {
        // The handler's own failure is the one the server must see.
      }
      throw error;
    }
    const entry = baseEntry(call, options, started);
    const decision = decisionKindOf(result);
    if (decision !== undefined) entry.decision = decision;
    const reason = (result as { reason?: unknown } | null | undefined)?.reason;
    if (typeof reason === "string") entry.reason = reason;
    addRule(entry, findRuleId({ target: call.target, result, ...pattern(options) }));
    await write(entry);
    return result;
  };
}

const pattern = (options: WithAuditOptions) => (options.reasonPattern === undefined ? {} : { reasonPattern: options.reasonPattern });

function addRule(entry: AuditEntry, rule: string | undefined): void {
  if (rule !== undefined) entry.rule = rule;
}

const KIND: Record<HandlerCall["kind"], AuditEntry["kind"]> = {
  event: "decision",
  typed: "decision",
  notification: "event",
  query: "query",
  handshake: "handshake",
};

function baseEntry(call: HandlerCall, options: WithAuditOptions, started: bigint): AuditEntry {
  const latencyUs = Number((process.hrtime.bigint() - started) / 1000n);
  const entry: AuditEntry = {
    kind: KIND[call.kind],
    session: call.sessionId,
    agent: call.agentId,
    event_type: call.eventType,
    form: call.form,
    latency_us: latencyUs,
  };
  const { ctx } = call;
  if (call.event !== undefined) entry.depth = call.event.depth;
  if (ctx.requestId !== undefined) entry.request_id = ctx.requestId;
  if (ctx.batch !== undefined) entry.batch = { index: ctx.batch.index, size: ctx.batch.size };
  const info = ctx.connection.info;
  entry.conn = { id: ctx.connection.id, transport: info.transport };
  if (info.remote !== undefined) entry.conn.remote = info.remote;
  if (info.principal !== undefined) entry.conn.principal = info.principal;
  const annotation = readAnnotation(call.target);
  if (annotation?.latencyNs !== undefined) {
    const ns = typeof annotation.latencyNs === "bigint" ? Number(annotation.latencyNs) : annotation.latencyNs;
    if (Number.isFinite(ns) && ns >= 0) entry.policy_us = Math.round(ns / 1000);
  }
  const payload = call.event !== undefined ? call.event.payload : call.query?.payload;
  if (call.event !== undefined || call.query !== undefined) addPayload(entry, payload, options);
  if (call.query !== undefined) entry.query_type = call.query.query_type;
  if (call.handshake !== undefined) {
    entry.agent_framework = call.handshake.agent_info.framework;
    entry.agent_version = call.handshake.agent_info.version;
  }
  const traceId = call.event?.metadata?.trace_id;
  if (typeof traceId === "string" && /^[0-9a-f]{32}$/.test(traceId)) entry.trace_id = traceId;
  return entry;
}

function addPayload(entry: AuditEntry, payload: unknown, options: WithAuditOptions): void {
  let canonical: string;
  try {
    canonical = canonicalJson(payload === undefined ? null : payload);
  } catch {
    return; // decoded JSON always canonicalizes; anything else is left out
  }
  entry.payload_sha256 = sha256Hex(canonical);
  if (options.includePayloads) {
    if (Buffer.byteLength(canonical) > (options.maxPayloadBytes ?? 64 * 1024)) entry.payload_truncated = true;
    else entry.payload = payload === undefined ? null : payload;
  }
}

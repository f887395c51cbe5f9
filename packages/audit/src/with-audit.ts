/**
 * `withAudit(handlers, log)`: records every event, decision, query, handshake and handler
 * failure of an `AhpServer` in the audit log, using the shared handler middleware shape.
 * Write-ahead by default: a call's answer is released only once its record is stored; when the
 * record cannot be written, the answer fails closed (or, if configured, is released unrecorded).
 */
import { EVENT_TABLE, type AhpServerHandlers } from "@ahp/core";
import { canonicalJson } from "./canonical.js";
import { AuditError } from "./errors.js";
import type { AuditSyncMode } from "./log.js";
import { sha256Hex, type AuditEntry, type AuditRecord } from "./record.js";
import { findRuleId, readAnnotation, type RuleIdSources } from "@ahp/core";
import {
  applyHandlerMiddleware,
  decisionKindOf,
  failureMessage,
  handlerFailureAnswer,
  handlerTimeoutOf,
  type HandlerCall,
  type HandlerMiddleware,
} from "@ahp/core";

/** Anything records can be appended to (an `AuditLog`, or a test double). */
export interface AuditRecorder {
  append(entry: AuditEntry): Promise<AuditRecord | void>;
  /** An `AuditLog`'s sync mode: whether decisions wait for their records (`none`: they do not). */
  readonly sync?: AuditSyncMode;
  /** False while the recorder cannot write (an `AuditLog` after a failed write, until the next success). */
  readonly available?: boolean;
}

/**
 * What happens to a call whose record cannot be written:
 * - `closed` (default): the answer is the event type's fail-closed decision (`block`, or the
 *   typed equivalent such as `reject`) with a reason saying the audit log is unavailable; a query,
 *   handshake or notification fails (-32603 over the wire);
 * - `open`: the handler's answer is released anyway, unrecorded (reported through `onunaudited`).
 */
export type AuditFailureMode = "closed" | "open";

/** A call answered without its record in the log. */
export interface UnauditedCall {
  call: HandlerCall;
  error: Error;
  /** `failed_closed`: the agent got a fail-closed answer instead; `released`: it got the handler's answer. */
  outcome: "failed_closed" | "released";
}

/** Options of {@link withAudit}: payloads or their hashes, the sync mode, fail closed or open, and reporting. */
export interface WithAuditOptions {
  /**
   * Also write the (redacted) payload of events and queries. Default false: only
   * `payload_sha256`, the SHA-256 of the canonical payload, is written.
   */
  includePayloads?: boolean;
  /** With `includePayloads`: payloads whose canonical JSON is larger are left out (`payload_truncated`). Default 64 KiB. */
  maxPayloadBytes?: number;
  /**
   * Whether a call's answer waits for its record: `write` and `fsync` wait until the record's
   * group was stored (write-ahead: what an agent was told is in the log), `none` does not.
   * Default: the recorder's own `sync` (an `AuditLog`'s), else `write`.
   */
  sync?: AuditSyncMode;
  /** What a call gets when its record cannot be written. Default `closed`. */
  failure?: AuditFailureMode;
  /** @deprecated Use `sync`: `true` is `write`, `false` is `none`. */
  awaitWrites?: boolean;
  /** Rule id pattern for reason texts; `false` disables. See `RULE_IN_REASON`. */
  reasonPattern?: RuleIdSources["reasonPattern"];
  /** Record notifications and handshakes also when the handler set has no handler for them. Default true. */
  observeMissing?: boolean;
  /**
   * How the server answers a failed handler (its `handlerFailure` option): lets the record of
   * a call that ran past the server's time limit say what the agent was answered. Default `error`.
   */
  handlerFailure?: "error" | "decision";
  /** Write failures, one per call. Library code never logs. */
  onerror?: (error: Error) => void;
  /** Every call answered without its record (for a metric). */
  onunaudited?: (unaudited: UnauditedCall) => void;
}

/** Wraps every handler so that each call is recorded. Failures are recorded, then rethrown unchanged. */
export function withAudit(handlers: AhpServerHandlers, log: AuditRecorder, options: WithAuditOptions = {}): AhpServerHandlers {
  return applyHandlerMiddleware(handlers, auditMiddleware(log, options), {
    ...(options.observeMissing === undefined ? {} : { observeMissing: options.observeMissing }),
  });
}

/** The middleware behind {@link withAudit}, for composing with others (`composeMiddleware`). */
export function auditMiddleware(log: AuditRecorder, options: WithAuditOptions = {}): HandlerMiddleware {
  const sync = options.sync ?? (options.awaitWrites === undefined ? (log.sync ?? "write") : options.awaitWrites ? "write" : "none");
  const waits = sync !== "none";
  const failOpen = options.failure === "open";
  if (options.failure !== undefined && options.failure !== "closed" && options.failure !== "open") {
    throw new AuditError("INVALID_ARGUMENT", `failure must be closed or open, got ${String(options.failure)}`);
  }
  const toError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));
  const unaudited = (call: HandlerCall, error: unknown, outcome: UnauditedCall["outcome"]) => {
    const e = toError(error);
    try {
      options.onerror?.(e);
      options.onunaudited?.({ call, error: e, outcome });
    } catch {
      // a reporting callback must not change the answer
    }
  };
  /** Records without waiting (sync "none"): a failure is only reported. */
  const recordLater = (call: HandlerCall, entry: AuditEntry) => {
    log.append(entry).catch((error: unknown) => unaudited(call, error, "released"));
  };
  const record: HandlerMiddleware = async (call, next) => {
    const started = process.hrtime.bigint();
    let result: unknown;
    try {
      result = await next();
    } catch (error) {
      const entry = baseEntry(call, options, started);
      entry.kind = "failure";
      entry.error = failureMessage(error);
      describeTimeout(entry, call, error, options);
      addRule(entry, findRuleId({ target: call.target, ...pattern(options) }));
      if (!waits) recordLater(call, entry);
      else {
        try {
          await log.append(entry);
        } catch (writeError) {
          // The handler's own failure is what the server answers (fail-closed or an error).
          unaudited(call, writeError, "failed_closed");
        }
      }
      throw error;
    }
    const entry = baseEntry(call, options, started);
    describeResult(entry, call, result, options);
    if (!waits) {
      if (!failOpen && log.available === false) {
        // Known to be unavailable: do not release what cannot be recorded.
        const cause = new AuditError("UNAVAILABLE", "audit log unavailable after a failed write");
        unaudited(call, cause, "failed_closed");
        const answer = failClosed(call, cause);
        describeResult(entry, call, answer, options);
        recordLater(call, entry);
        return answer;
      }
      recordLater(call, entry);
      return result;
    }
    try {
      await log.append(entry);
    } catch (error) {
      if (failOpen) {
        unaudited(call, error, "released");
        return result;
      }
      unaudited(call, error, "failed_closed");
      return failClosed(call, error);
    }
    return result;
  };
  if (!waits) return record;
  return (call, next) => {
    const run = record(call, next);
    // Also the answer the server gives on its own (a handler timeout's fail-closed answer)
    // waits until this call's record is written.
    call.ctx.holdAnswer?.(run);
    return run;
  };
}

/** A handler that ran past the server's time limit: the limit, and what the server answered in its place. */
function describeTimeout(entry: AuditEntry, call: HandlerCall, error: unknown, options: WithAuditOptions): void {
  const timeout = handlerTimeoutOf(error);
  if (timeout === undefined) return;
  entry.timeout_ms = timeout.timeoutMs;
  const answer = handlerFailureAnswer(call, error, options.handlerFailure);
  if (answer === undefined) return;
  if ("decision" in answer) {
    entry.decision = answer.decision.decision;
    if (answer.decision.reason !== undefined) entry.reason = answer.decision.reason;
  } else entry.answer_error = answer.error.code;
}

function describeResult(entry: AuditEntry, call: HandlerCall, result: unknown, options: WithAuditOptions): void {
  const decision = decisionKindOf(result);
  if (decision !== undefined) entry.decision = decision;
  const reason = (result as { reason?: unknown } | null | undefined)?.reason;
  if (typeof reason === "string") entry.reason = reason;
  addRule(entry, findRuleId({ target: call.target, result, ...pattern(options) }));
}

/**
 * The answer to a call whose record cannot be written (failure mode `closed`): the event type's
 * fail-closed decision; queries, handshakes and notifications fail instead. The reason names the
 * error code only (never a path).
 */
function failClosed(call: HandlerCall, error: unknown): unknown {
  const reason = `audit log unavailable (${errorCode(error)}): the decision is withheld`;
  if (call.kind === "event" || call.kind === "typed") {
    const info = (EVENT_TABLE as Record<string, { failClosed?: (reason: string) => unknown } | undefined>)[call.eventType];
    const answer = call.form === "batch" ? undefined : info?.failClosed?.(reason);
    return answer ?? { decision: "block", reason };
  }
  throw new AuditError("UNAVAILABLE", reason, { cause: error });
}

/** The first errno-style code (ENOSPC, EPERM, ...) or AuditError code along the cause chain. */
function errorCode(error: unknown): string {
  let auditCode: string | undefined;
  for (let e: unknown = error, depth = 0; e !== null && typeof e === "object" && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z0-9]+$/.test(code)) return code;
    if (AuditError.isInstance(e)) auditCode ??= e.code;
  }
  return auditCode ?? "write failed";
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
  if (annotation?.shadow !== undefined) {
    entry.shadow = { decision: annotation.shadow.decision };
    if (annotation.shadow.ruleId !== undefined) entry.shadow.rule = annotation.shadow.ruleId;
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

/**
 * The bridge's wire errors (§4 error form, §5.9 codes). Each is an SDK `RequestError`, so an SDK
 * handler that throws it sends exactly this `code`, `message` and `data`.
 */
import { RequestError } from "@agentclientprotocol/sdk";

/** JSON-RPC error codes the bridge answers with (ADR 0028): the standard ones, and -31001 to -31003 for state conflicts, gate refusals and an unreachable harness. */
export const BridgeErrorCode = {
  InvalidParams: -32602,
  NotFound: -32002,
  MethodNotFound: -32601,
  /** State conflict. */
  StateConflict: -31001,
  /** The AHP gate refused. */
  GateRefused: -31002,
  /** The harness could not be reached on a fail-closed path. */
  HarnessUnavailable: -31003,
} as const;

/** `data.reason` of a `-32602` the bridge's own validation raises (§4): which rule the params broke. */
export type ValidationReason =
  | "invalid_resume_conditions"
  | "unsupported_resume_condition"
  | "invalid_suspend_params"
  | "invalid_resume_input"
  | "fresh_transcript_unsupported";

/** `data.reason` of a `-31001` state conflict: why the session's state does not allow the request (§5.2). */
export type ConflictReason =
  | "not_suspended"
  | "suspend_in_progress"
  | "resume_in_progress"
  | "resume_conflict"
  | "handle_consumed"
  | "prompt_while_suspended"
  | "session_failed";

/**
 * `data.reason` of a `-32002`: the session or handle the request names is unknown, or its
 * suspension was discarded.
 */
export type NotFoundReason = "unknown_session" | "unknown_handle" | "suspension_discarded";
/** `data.reason` of a `-31002`: how the harness refused a suspend or resume gate (§7.2). */
export type GateReason = "blocked" | "deferred" | "escalated";

/** `data` of a validation rejection: the bridge builds it itself (never the SDK's zod format). */
export interface ValidationErrorData {
  reason: ValidationReason;
  field: string;
  detail: string;
}

/** The `-32602` of a validation failure, with `data: {reason, field, detail}` as §4 fixes it. */
export function invalidParams(reason: ValidationReason, field: string, detail: string): RequestError {
  const data: ValidationErrorData = { reason, field, detail };
  return new RequestError(BridgeErrorCode.InvalidParams, "Invalid params", data);
}

/**
 * The `-31001` for a request the session's state refuses; `data` carries the state and the current
 * handle when there is one.
 */
export function stateConflict(reason: ConflictReason, state: string, handle?: string): RequestError {
  return new RequestError(BridgeErrorCode.StateConflict, `Session state conflict: ${reason}`, {
    reason,
    state,
    ...(handle === undefined ? {} : { handle }),
  });
}

/** The `-32002` for a session id the bridge does not know (or a deleted session). */
export function unknownSession(sessionId: string): RequestError {
  return new RequestError(BridgeErrorCode.NotFound, "Resource not found", { reason: "unknown_session", sessionId });
}

/** The `-32002` for a resume handle the session never issued. */
export function unknownHandle(sessionId: string, handle: string): RequestError {
  return new RequestError(BridgeErrorCode.NotFound, "Resource not found", { reason: "unknown_handle", sessionId, handle });
}

/** The `-32002` for a handle whose suspension was discarded (the session was closed or deleted while suspended). */
export function suspensionDiscarded(sessionId: string, handle: string): RequestError {
  return new RequestError(BridgeErrorCode.NotFound, "Resource not found", { reason: "suspension_discarded", sessionId, handle });
}

/**
 * The `-31002` a suspender or resumer gets when the harness blocks, defers or escalates the gate;
 * `extra` goes into `data`.
 */
export function gateRefused(reason: GateReason, extra: Record<string, unknown> = {}): RequestError {
  return new RequestError(BridgeErrorCode.GateRefused, `Harness gate refused: ${reason}`, { reason, ...extra });
}

/**
 * The `-31003` of a fail-closed gate (every resume; a suspend with `suspendGateFailure: "reject"`)
 * when the harness cannot be reached.
 */
export function harnessUnavailable(phase: "suspend" | "resume", detail: string): RequestError {
  return new RequestError(BridgeErrorCode.HarnessUnavailable, "Harness unavailable", { reason: "harness_unavailable", phase, detail });
}

/** Reads `data.reason` of an error from any peer. */
export function errorReason(error: unknown): string | undefined {
  const data = (error as { data?: { reason?: unknown } } | null)?.data;
  return typeof data?.reason === "string" ? data.reason : undefined;
}

/**
 * Reads the numeric `code` of an error from any peer (a `RequestError`, a plain JSON-RPC error
 * object); undefined when there is none.
 */
export function errorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/**
 * True when a peer answered `-32601`: the bridge remembers the method as missing and falls back to
 * the next carriage.
 */
export const isMethodNotFound = (error: unknown): boolean => errorCode(error) === BridgeErrorCode.MethodNotFound;

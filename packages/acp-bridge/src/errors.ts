/**
 * The bridge's wire errors (§4 error form, §5.9 codes). Each is an SDK `RequestError`, so an SDK
 * handler that throws it sends exactly this `code`, `message` and `data`.
 */
import { RequestError } from "@agentclientprotocol/sdk";

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

export type ValidationReason =
  | "invalid_resume_conditions"
  | "unsupported_resume_condition"
  | "invalid_suspend_params"
  | "invalid_resume_input"
  | "fresh_transcript_unsupported";

export type ConflictReason =
  | "not_suspended"
  | "suspend_in_progress"
  | "resume_in_progress"
  | "resume_conflict"
  | "handle_consumed"
  | "prompt_while_suspended"
  | "session_failed";

export type NotFoundReason = "unknown_session" | "unknown_handle" | "suspension_discarded";
export type GateReason = "blocked" | "deferred" | "escalated";

/** `data` of a validation rejection: the bridge builds it itself (never the SDK's zod format). */
export interface ValidationErrorData {
  reason: ValidationReason;
  field: string;
  detail: string;
}

export function invalidParams(reason: ValidationReason, field: string, detail: string): RequestError {
  const data: ValidationErrorData = { reason, field, detail };
  return new RequestError(BridgeErrorCode.InvalidParams, "Invalid params", data);
}

export function stateConflict(reason: ConflictReason, state: string, handle?: string): RequestError {
  return new RequestError(BridgeErrorCode.StateConflict, `Session state conflict: ${reason}`, {
    reason,
    state,
    ...(handle === undefined ? {} : { handle }),
  });
}

export function unknownSession(sessionId: string): RequestError {
  return new RequestError(BridgeErrorCode.NotFound, "Resource not found", { reason: "unknown_session", sessionId });
}

export function unknownHandle(sessionId: string, handle: string): RequestError {
  return new RequestError(BridgeErrorCode.NotFound, "Resource not found", { reason: "unknown_handle", sessionId, handle });
}

export function suspensionDiscarded(sessionId: string, handle: string): RequestError {
  return new RequestError(BridgeErrorCode.NotFound, "Resource not found", { reason: "suspension_discarded", sessionId, handle });
}

export function gateRefused(reason: GateReason, extra: Record<string, unknown> = {}): RequestError {
  return new RequestError(BridgeErrorCode.GateRefused, `Harness gate refused: ${reason}`, { reason, ...extra });
}

export function harnessUnavailable(phase: "suspend" | "resume", detail: string): RequestError {
  return new RequestError(BridgeErrorCode.HarnessUnavailable, "Harness unavailable", { reason: "harness_unavailable", phase, detail });
}

/** Reads `data.reason` of an error from any peer. */
export function errorReason(error: unknown): string | undefined {
  const data = (error as { data?: { reason?: unknown } } | null)?.data;
  return typeof data?.reason === "string" ? data.reason : undefined;
}

export function errorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

export const isMethodNotFound = (error: unknown): boolean => errorCode(error) === BridgeErrorCode.MethodNotFound;

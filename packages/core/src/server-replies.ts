/** The answers the server builds: JSON-RPC results and errors, and what a notification produced. */
import { AhpError, AhpErrorCode, toError } from "./errors.js";
import type { JsonRpcErrorResponse, JsonRpcId, JsonRpcSuccessResponse } from "./schema/jsonrpc.js";
import { LargeIntegerId } from "./large-id.js";
import { failureText } from "./server-handler-call.js";
import type { AhpProcessResult } from "./server-types.js";

export const errorResponse = (id: JsonRpcId | null, error: AhpError): JsonRpcErrorResponse => ({
  jsonrpc: "2.0",
  id,
  error: error.toJSON(),
});

export const invalidParams = (detail: string) => new AhpError(AhpErrorCode.InvalidParams, `Invalid params: ${detail}`);
export const handlerError = (text: string) => new AhpError(AhpErrorCode.InternalError, `Handler error: ${text}`);

export function resultOf(id: JsonRpcId, result: unknown): AhpProcessResult {
  return { kind: "response", response: { jsonrpc: "2.0", id, result: result as JsonRpcSuccessResponse["result"] } };
}

export function failedResult(id: JsonRpcId, error: unknown): AhpProcessResult {
  const wire = AhpError.isInstance(error) ? error : new AhpError(AhpErrorCode.InternalError, `Internal error: ${toError(error).message}`);
  return { kind: "response", response: errorResponse(id, wire) };
}

export const NOTIFIED: AhpProcessResult = Object.freeze({ kind: "notification" });

export function noop(): void {}

export function notificationFailure(error: unknown): AhpProcessResult {
  return { kind: "notification", error: handlerError(failureText(error)) };
}

export function rejectedNotification(error: unknown): AhpError {
  // Over HTTP the reference reports rejected notifications as -32603 "Handler error: <text>".
  const text = AhpError.isInstance(error) ? error.message.replace(/^Invalid params: /, "Serialization error: ") : failureText(error);
  return handlerError(text);
}

export function readId(message: unknown): JsonRpcId | null | undefined {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return undefined;
  const id = (message as Record<string, unknown>).id;
  if (typeof id === "string" || (typeof id === "number" && Number.isInteger(id))) return id;
  // An integer id past 2^53, kept as its text (typed as a number id on the wire).
  if (id instanceof LargeIntegerId) return id as unknown as JsonRpcId;
  return undefined;
}

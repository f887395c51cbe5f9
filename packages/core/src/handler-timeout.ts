/**
 * Handler timeouts as middleware sees them. When a handler runs past the server's time limit,
 * the server aborts the call's `ctx.signal` with an error marked here ({@link handlerTimeoutOf}
 * tells it from other failures) and answers on its own; {@link handlerFailureAnswer} says what
 * that answer is, by the same rules the server applies, so that an audit record or a log line
 * can state what the agent was told.
 */
import { AhpError, AhpErrorCode, toError } from "./errors.js";
import { EVENT_TABLE } from "./event-table.js";
import type { HandlerCall } from "./handler-call.js";

/** The time limit a handler ran past. */
export interface HandlerTimeout {
  /** The handler time limit (ms). */
  readonly timeoutMs: number;
}

const TIMEOUT_MARK = Symbol.for("@ahp/core.HandlerTimeout");

/** Marks `error` as the failure of a handler that ran past `timeoutMs` (used by `AhpServer`). Returns `error`. */
export function markHandlerTimeout<E extends object>(error: E, timeoutMs: number): E {
  Object.defineProperty(error, TIMEOUT_MARK, { value: { timeoutMs } satisfies HandlerTimeout });
  return error;
}

/** The timeout an error stands for when a handler ran past its time limit, or undefined for any other failure. */
export function handlerTimeoutOf(error: unknown): HandlerTimeout | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  return (error as Record<symbol, HandlerTimeout | undefined>)[TIMEOUT_MARK];
}

/** What an agent is answered for a failed handler call: a decision, a JSON-RPC error, or nothing (notifications). */
export type HandlerFailureAnswer =
  | { readonly decision: { readonly decision: string; readonly reason?: string } }
  | { readonly error: { readonly code: number; readonly message: string } }
  | undefined;

/**
 * The answer `AhpServer` gives when the handler of `call` fails with `error` (or times out),
 * given the server's `handlerFailure` option: inside a batch a `block` decision; a single event
 * with `decision` its type's fail-closed decision, else -32603 `Handler error: …`; a query
 * -32603; a handshake the error itself when it is an `AhpError`; a notification nothing.
 */
export function handlerFailureAnswer(
  call: Pick<HandlerCall, "kind" | "form" | "eventType">,
  error: unknown,
  handlerFailure: "error" | "decision" = "error",
): HandlerFailureAnswer {
  if (call.form === "notification") return undefined;
  const e = toError(error);
  const text = `Handler error: ${e.message || e.name}`;
  if (call.kind === "handshake") {
    return {
      error: AhpError.isInstance(error)
        ? { code: error.code, message: error.message }
        : { code: AhpErrorCode.InternalError, message: text },
    };
  }
  if (call.form === "batch") return { decision: { decision: "block", reason: text } };
  if (call.kind !== "query" && handlerFailure === "decision") {
    const info = (EVENT_TABLE as Record<string, { failClosed?: (reason: string) => unknown } | undefined>)[call.eventType];
    const answer = info?.failClosed?.(text) as { decision: string; reason?: string } | undefined;
    if (answer !== undefined) return { decision: answer };
  }
  return { error: { code: AhpErrorCode.InternalError, message: text } };
}

/**
 * Handler middleware: wrap an
 * `AhpServerHandlers` set so that every call of `onEvent`, `onNotification`, `onQuery`,
 * `onHandshake` and `typed.*` passes through a middleware `(call, next) => Promise<result>`.
 *
 * - `next()` runs the wrapped handler. It settles when the handler settles or when the call's
 *   `ctx.signal` aborts (handler timeout, connection closed), whichever comes first, exactly as
 *   the server itself races them; so a middleware also sees calls the server gave up on. (A
 *   handler that returns without a promise has settled first.)
 * - A middleware that catches a failure must rethrow it: the server's fail-closed rules
 *   (`handlerFailure`, batch slots becoming `block`) then still apply.
 * - Handlers that are absent stay absent (the server's defaults are unchanged), except
 *   `onNotification` and `onHandshake`, which are observed through a pass-through when
 *   `observeMissing` is on (the default): their absence and a no-op are indistinguishable on the wire.
 *
 * Used by `@ahp/audit` and `@ahp/observability`; available to any handler wrapper.
 */
import type { SpecializedEventType } from "./event-table.js";
import type { AhpEvent } from "./schema/event.js";
import type { AhpHandlerContext, AhpServerHandlers, TypedEventHandler } from "./server-types.js";
import { findRuleId, type RuleIdSources } from "./annotations.js";
import { toError } from "./errors.js";
import type { HandlerCall, HandlerForm, HandlerKind } from "./handler-call.js";
import { isPromiseLike } from "./promise-like.js";

export type { HandlerCall, HandlerForm, HandlerKind } from "./handler-call.js";

/**
 * Wraps one handler call: gets the call and `next`, which runs the handler (and rejects if the call's signal aborts first). A
 * failure must be rethrown so that the server's fail-closed rules still apply.
 */
export type HandlerMiddleware = (call: HandlerCall, next: () => Promise<unknown>) => Promise<unknown>;

/** Options of {@link applyHandlerMiddleware}: whether an absent `onNotification` or `onHandshake` is observed through a pass-through. */
export interface ApplyMiddlewareOptions {
  /** Observe `onNotification`/`onHandshake` through a pass-through when the set has none. Default true. */
  observeMissing?: boolean;
  /**
   * Answer a notification whose handler returned without a promise (and did not throw) at once,
   * and let the middleware observe it right after, its `next` settled with what the handler
   * returned. Without this every notification handler becomes async, and the server tracks each
   * one with a promise, a deadline and a per-call abort signal, which nothing can use once the
   * handler has returned. A handler that returns a promise or throws takes the full path.
   * Default false.
   */
  syncNotifications?: boolean;
  /** With `syncNotifications`: a middleware failure on the synchronous path (no caller awaits it). */
  onObserverError?: (error: Error) => void;
}

const formOf = (kind: HandlerKind, ctx: AhpHandlerContext): HandlerForm => {
  if (ctx.batch !== undefined) return "batch";
  if (kind === "notification") return "notification";
  return ctx.requestId === undefined ? "notification" : "request";
};

/** Settles with `promise`, or rejects with the abort reason once `signal` aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(typeof reason === "string" ? reason : "Aborted");
}

/**
 * Runs the handler for `next()`. A handler that returned without a promise has settled before
 * anything could abort its call, so only a promise is raced against the call's signal: the
 * race costs an abort controller per call (the signal is made on first use) and a listener
 * added and removed, which the common synchronous handler (a policy) does not need.
 */
function runHandler(fn: () => unknown, ctx: AhpHandlerContext): Promise<unknown> {
  let result: unknown;
  try {
    result = fn();
  } catch (error) {
    return Promise.reject(error);
  }
  return isPromiseLike(result) ? raceAbort(Promise.resolve(result), ctx.signal) : Promise.resolve(result);
}

/** Wraps every handler of `handlers` with `middleware`. Returns a new handler set. */
export function applyHandlerMiddleware(
  handlers: AhpServerHandlers,
  middleware: HandlerMiddleware,
  options: ApplyMiddlewareOptions = {},
): AhpServerHandlers {
  const observeMissing = options.observeMissing ?? true;
  const run = (call: HandlerCall, fn: () => unknown): Promise<unknown> => middleware(call, () => runHandler(fn, call.ctx));
  const out: AhpServerHandlers = { ...handlers };

  const onEvent = handlers.onEvent;
  if (onEvent !== undefined) {
    out.onEvent = (event, ctx) =>
      run(eventCall("event", event, ctx), () => onEvent(event, ctx)) as ReturnType<NonNullable<AhpServerHandlers["onEvent"]>>;
  }
  const onNotification = handlers.onNotification;
  if (onNotification !== undefined || observeMissing) {
    const full = async (call: HandlerCall, fn: () => unknown): Promise<void> => {
      await run(call, fn);
    };
    const onObserverError = options.onObserverError;
    out.onNotification = options.syncNotifications
      ? (event, ctx) => {
          const call = eventCall("notification", event, ctx);
          let result: unknown;
          try {
            result = onNotification?.(event, ctx);
          } catch (error) {
            return full(call, () => Promise.reject(error));
          }
          if (isPromiseLike(result)) return full(call, () => result);
          middleware(call, () => Promise.resolve(result)).catch((error: unknown) => onObserverError?.(toError(error)));
          return undefined;
        }
      : (event, ctx) => full(eventCall("notification", event, ctx), () => onNotification?.(event, ctx));
  }
  const onQuery = handlers.onQuery;
  if (onQuery !== undefined) {
    out.onQuery = (query, ctx) =>
      run(
        {
          kind: "query",
          form: formOf("query", ctx),
          eventType: "query",
          sessionId: query.session_id,
          agentId: query.agent_id,
          query,
          target: query,
          ctx,
        },
        () => onQuery(query, ctx),
      ) as ReturnType<NonNullable<AhpServerHandlers["onQuery"]>>;
  }
  const onHandshake = handlers.onHandshake;
  if (onHandshake !== undefined || observeMissing) {
    out.onHandshake = async (request, ctx) => {
      await run(
        {
          kind: "handshake",
          form: "request",
          eventType: "handshake",
          sessionId: request.session_id,
          agentId: request.agent_id,
          handshake: request,
          target: request,
          ctx,
        },
        () => onHandshake?.(request, ctx),
      );
    };
  }
  if (handlers.typed !== undefined) {
    const typed: Record<string, TypedEventHandler<SpecializedEventType>> = {};
    for (const [type, handler] of Object.entries(handlers.typed) as [
      SpecializedEventType,
      TypedEventHandler<SpecializedEventType> | undefined,
    ][]) {
      if (handler === undefined) continue;
      typed[type] = ((payload: never, event: AhpEvent, ctx: AhpHandlerContext) =>
        run(eventCall("typed", event, ctx), () => handler(payload, event, ctx))) as TypedEventHandler<SpecializedEventType>;
    }
    out.typed = typed;
  }
  return out;
}

function eventCall(kind: HandlerKind, event: AhpEvent, ctx: AhpHandlerContext): HandlerCall {
  return {
    kind,
    form: formOf(kind, ctx),
    eventType: event.event_type,
    sessionId: event.session_id,
    agentId: event.agent_id,
    event,
    target: event,
    ctx,
  };
}

/** Chains middlewares; the first one is the outermost. */
export function composeMiddleware(...middlewares: readonly HandlerMiddleware[]): HandlerMiddleware {
  return middlewares.reduceRight<HandlerMiddleware>(
    (inner, outer) => (call, next) => outer(call, () => inner(call, next)),
    (_call, next) => next(),
  );
}

/** How one handler call ended, as an observer sees it. */
export interface HandlerOutcome {
  readonly ok: boolean;
  /** What the handler returned (the decision, the query answer; `undefined` for notifications). */
  readonly result?: unknown;
  /** What it threw, or the abort reason (timeout, connection closed). */
  readonly error?: unknown;
  /** Wall time from the call to its end, in nanoseconds. */
  readonly durationNs: bigint;
  /** Matched rule id: annotation, decision `metadata.rule`, or reason text. */
  readonly ruleId?: string;
}

/**
 * Gets the start and end of every handler call made through {@link observeHandlers}, with outcome, duration and matched rule id; it
 * cannot change the call, and its own errors go to `onerror`.
 */
export interface HandlerObserver<S = unknown> {
  /** Called before the handler runs; its return value is handed to `end`. */
  start?(call: HandlerCall): S;
  end(call: HandlerCall, outcome: HandlerOutcome, state: S | undefined): void;
  /** Pattern for rule ids in reasons (see `findRuleId`). */
  reasonPattern?: RuleIdSources["reasonPattern"];
  /** An observer that throws never affects the handler; the error is reported here. */
  onerror?: (error: Error) => void;
}

/** A middleware that measures each call and reports it to `observer`; failures are rethrown unchanged. */
export function observeHandlers<S>(observer: HandlerObserver<S>): HandlerMiddleware {
  const report = (error: unknown) => observer.onerror?.(error instanceof Error ? error : new Error(String(error)));
  return async (call, next) => {
    let state: S | undefined;
    try {
      state = observer.start?.(call);
    } catch (error) {
      report(error);
    }
    const started = process.hrtime.bigint();
    let outcome: HandlerOutcome;
    let result: unknown;
    try {
      result = await next();
      outcome = {
        ok: true,
        result,
        durationNs: process.hrtime.bigint() - started,
        ...optionalRule(findRuleId({ target: call.target, result, ...reasonOption(observer.reasonPattern) })),
      };
    } catch (error) {
      outcome = {
        ok: false,
        error,
        durationNs: process.hrtime.bigint() - started,
        ...optionalRule(findRuleId({ target: call.target, ...reasonOption(observer.reasonPattern) })),
      };
      safeEnd(observer, call, outcome, state, report);
      throw error;
    }
    safeEnd(observer, call, outcome, state, report);
    return result;
  };
}

const optionalRule = (ruleId: string | undefined) => (ruleId === undefined ? {} : { ruleId });
const reasonOption = (pattern: RuleIdSources["reasonPattern"]) => (pattern === undefined ? {} : { reasonPattern: pattern });

function safeEnd<S>(
  observer: HandlerObserver<S>,
  call: HandlerCall,
  outcome: HandlerOutcome,
  state: S | undefined,
  report: (error: unknown) => void,
): void {
  try {
    observer.end(call, outcome, state);
  } catch (error) {
    report(error);
  }
}

/** The `decision` tag of a handler result, when it has one. */
export function decisionKindOf(result: unknown): string | undefined {
  if (result === null || typeof result !== "object") return undefined;
  const tag = (result as { decision?: unknown }).decision;
  return typeof tag === "string" ? tag : undefined;
}

/** The human-readable text of a failure (message only, no stack). */
export function failureMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

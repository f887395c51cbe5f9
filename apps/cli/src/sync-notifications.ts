/**
 * Handler middleware with a synchronous path for notifications. `applyHandlerMiddleware` turns
 * every handler into an async one, so the server treats each notification as work in progress:
 * a promise to track, a deadline, and a per-call abort signal (with its listeners) for the race
 * against the connection's end. A notification whose handler has already returned (the policy
 * engine's report handling does) needs none of that: nothing can time out or be aborted after
 * the handler returned, and no answer is sent. Here such a notification is answered to the
 * server at once, and the same middleware (metrics, timeout log, ...) still sees the call, with
 * `next` settled with what the handler returned. Everything else, a notification handler that
 * returns a promise or throws included, goes through `applyHandlerMiddleware` as before.
 */
import { applyHandlerMiddleware, type AhpServerHandlers, type HandlerCall, type HandlerMiddleware } from "@ahp/core";

type NotificationHandler = NonNullable<AhpServerHandlers["onNotification"]>;

const isPromiseLike = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as { then?: unknown }).then === "function";

/**
 * `applyHandlerMiddleware(handlers, middleware)` with one difference: a notification whose
 * handler returns without a promise and without throwing is answered synchronously, and the
 * middleware observes it right after (its `next` resolves with the handler's result). `onerror`
 * gets a failure of that observation (the middleware rejecting).
 */
export function applyMiddlewareSyncNotifications(
  handlers: AhpServerHandlers,
  middleware: HandlerMiddleware,
  onerror: (error: Error) => void,
): AhpServerHandlers {
  const out = applyHandlerMiddleware(handlers, middleware);
  const raw = handlers.onNotification;
  // The full path for a handler already started: its promise (or failure) is what `next` gives.
  const full = (event: Parameters<NotificationHandler>[0], ctx: Parameters<NotificationHandler>[1], pending: Promise<unknown>) =>
    applyHandlerMiddleware({ onNotification: () => pending as Promise<void> }, middleware).onNotification!(event, ctx);
  out.onNotification = (event, ctx) => {
    let result: unknown;
    try {
      result = raw?.(event, ctx);
    } catch (error) {
      return full(event, ctx, Promise.reject(error));
    }
    if (isPromiseLike(result)) return full(event, ctx, Promise.resolve(result));
    const call: HandlerCall = {
      kind: "notification",
      form: ctx.batch === undefined ? "notification" : "batch",
      eventType: event.event_type,
      sessionId: event.session_id,
      agentId: event.agent_id,
      event,
      target: event,
      ctx,
    };
    middleware(call, () => Promise.resolve(result)).catch((error: unknown) =>
      onerror(error instanceof Error ? error : new Error(String(error))),
    );
    return undefined;
  };
  return out;
}

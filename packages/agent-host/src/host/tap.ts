/**
 * The harness tap as a direct wrapper of an `AhpServerHandlers` set. It does what
 * `AgentHost.middleware()` does, but keeps synchronous handlers synchronous: a decision that
 * needs no human is projected and returned in the same call, without a promise, an abort signal
 * or a timer. Only a held request (or an async inner handler) becomes a promise.
 */
import {
  EVENT_TABLE,
  type AhpEvent,
  type AhpHandlerContext,
  type AhpServerHandlers,
  type SpecializedEventType,
  type TypedEventHandler,
} from "@ahp/core";

export interface TapTarget {
  /** The decision for a blocking event, after projection (possibly a promise when held). */
  decided(event: AhpEvent, decision: unknown, failure: unknown, ctx: AhpHandlerContext): unknown;
  /** A non-blocking event. */
  notified(event: AhpEvent, ctx: AhpHandlerContext): void;
  handshook(request: Parameters<NonNullable<AhpServerHandlers["onHandshake"]>>[0], ctx: AhpHandlerContext): void;
  /** Bounds an async inner handler (the hold is not counted). */
  bounded(inner: Promise<unknown>): Promise<unknown>;
}

const isPromiseLike = (v: unknown): v is PromiseLike<unknown> =>
  v !== null && (typeof v === "object" || typeof v === "function") && typeof (v as PromiseLike<unknown>).then === "function";

function blocking(tap: TapTarget, event: AhpEvent, ctx: AhpHandlerContext, call: () => unknown): unknown {
  if (!EVENT_TABLE[event.event_type].blocking) {
    tap.notified(event, ctx);
    return call();
  }
  let result: unknown;
  try {
    result = call();
  } catch (error) {
    return tap.decided(event, undefined, error, ctx);
  }
  if (!isPromiseLike(result)) return tap.decided(event, result, undefined, ctx);
  return tap.bounded(Promise.resolve(result)).then(
    (decision) => tap.decided(event, decision, undefined, ctx),
    (error: unknown) => tap.decided(event, undefined, error, ctx),
  );
}

export function tapHandlers(tap: TapTarget, handlers: AhpServerHandlers): AhpServerHandlers {
  const out: AhpServerHandlers = { ...handlers };
  const onEvent = handlers.onEvent;
  if (onEvent !== undefined)
    out.onEvent = (event, ctx) => blocking(tap, event, ctx, () => onEvent(event, ctx)) as ReturnType<typeof onEvent>;
  const onNotification = handlers.onNotification;
  out.onNotification = (event, ctx) => {
    tap.notified(event, ctx);
    return onNotification?.(event, ctx);
  };
  const onHandshake = handlers.onHandshake;
  out.onHandshake = (request, ctx) => {
    const result = onHandshake?.(request, ctx);
    if (isPromiseLike(result)) {
      return Promise.resolve(result).then(() => {
        tap.handshook(request, ctx);
      });
    }
    tap.handshook(request, ctx);
    return result;
  };
  if (handlers.typed !== undefined) {
    const typed: Record<string, TypedEventHandler<SpecializedEventType>> = {};
    for (const [type, handler] of Object.entries(handlers.typed) as Array<
      [SpecializedEventType, TypedEventHandler<SpecializedEventType> | undefined]
    >) {
      if (handler === undefined) continue;
      typed[type] = ((payload: never, event: AhpEvent, ctx: AhpHandlerContext) =>
        blocking(tap, event, ctx, () => handler(payload, event, ctx))) as TypedEventHandler<SpecializedEventType>;
    }
    out.typed = typed;
  }
  return out;
}

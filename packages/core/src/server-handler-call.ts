/**
 * One handler call as the server makes it: the context a handler gets (signal, holdAnswer), the
 * timeout, and how handler failures are told apart from the server's own errors.
 */
import { AhpError, AhpErrorCode, toError } from "./errors.js";
import { markHandlerTimeout } from "./handler-timeout.js";
import type { JsonRpcId } from "./schema/jsonrpc.js";
import type { Connection } from "./server-connection.js";
import type { AhpHandlerContext, Awaitable } from "./server-types.js";

/**
 * What a handler gets as `ctx`. The per-call AbortController is created only when the handler
 * reads `signal`: most decisions are synchronous and never look at it.
 */
export class HandlerCallContext implements AhpHandlerContext {
  #controller?: AbortController;
  /** What the answer waits for (holdAnswer); undefined on the common path. */
  held?: PromiseLike<unknown>;

  constructor(
    readonly connection: Connection,
    readonly requestId: JsonRpcId | undefined,
    readonly batch: AhpHandlerContext["batch"],
  ) {}

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      const outer = this.connection.signal;
      if (outer.aborted) this.#controller.abort(outer.reason);
      else outer.addEventListener("abort", this, { once: true });
    }
    return this.#controller.signal;
  }

  /** The connection's abort (this object is its listener). */
  handleEvent(): void {
    this.#controller?.abort(this.connection.signal.reason);
  }

  abort(reason: unknown): void {
    this.#controller?.abort(reason);
  }

  release(): void {
    if (this.#controller !== undefined) this.connection.signal.removeEventListener("abort", this);
  }

  holdAnswer(until: PromiseLike<unknown>): void {
    const before = this.held;
    this.held = before === undefined ? until : Promise.all([before, until]);
  }
}

/** Calls `settle` once what `ctx` holds its answer for has settled (either way); at once when nothing. */
export function afterHeld(ctx: HandlerCallContext, settle: () => void): void {
  const held = ctx.held;
  if (held === undefined) settle();
  else held.then(settle, settle);
}

export class HandlerFailure extends Error {
  constructor(readonly text: string) {
    super(text);
  }
}

export function isPromiseLike<T>(value: unknown): value is PromiseLike<T> {
  return (
    value !== null && (typeof value === "object" || typeof value === "function") && typeof (value as PromiseLike<T>).then === "function"
  );
}

/** A handler ran past the timeout: its signal is aborted and the call fails with -32603. */
export function onHandlerTimeout(ctx: HandlerCallContext, timeoutMs: number, reject: (error: unknown) => void): void {
  const error = markHandlerTimeout(new AhpError(AhpErrorCode.InternalError, `Timeout after ${timeoutMs}ms`), timeoutMs);
  ctx.abort(error);
  ctx.release();
  reject(error);
}

export function asHandlerFailure(error: unknown): HandlerFailure {
  return error instanceof HandlerFailure ? error : new HandlerFailure(failureText(error));
}

export function failureText(error: unknown): string {
  if (error instanceof HandlerFailure) return error.text;
  const e = toError(error);
  return e.message || e.name;
}

/** Runs a handler with a per-call signal and timeout; any failure becomes a HandlerFailure. */
export function callHandler<R>(
  fn: (ctx: AhpHandlerContext) => Awaitable<R>,
  connection: Connection,
  id: JsonRpcId | undefined,
  timeoutMs: number,
  batch?: AhpHandlerContext["batch"],
): Awaitable<R> {
  try {
    // An async handler's rejection (or timeout) comes back as a HandlerFailure already.
    return call(fn, connection, id, timeoutMs, batch, asHandlerFailure);
  } catch (error) {
    throw asHandlerFailure(error);
  }
}

/** Calls a handler; a synchronous result comes back as is, an async one with the timeout applied. */
export function call<R>(
  fn: (ctx: AhpHandlerContext) => Awaitable<R>,
  connection: Connection,
  id: JsonRpcId | undefined,
  timeoutMs: number,
  batch?: AhpHandlerContext["batch"],
  mapError: (error: unknown) => Error = toError,
): Awaitable<R> {
  const ctx = new HandlerCallContext(connection, id, batch);
  let result: Awaitable<R>;
  try {
    result = fn(ctx);
  } catch (error) {
    ctx.release();
    if (ctx.held === undefined) throw error;
    return new Promise<R>((_, reject) => afterHeld(ctx, () => reject(mapError(error))));
  }
  if (!isPromiseLike(result)) {
    ctx.release();
    if (ctx.held === undefined) return result;
    return new Promise<R>((resolve) => afterHeld(ctx, () => resolve(result)));
  }
  // A closed connection aborts ctx.signal but does not cut the call short: received
  // notifications still reach their handler, and close()/whenIdle() wait for the handler
  // (close() only up to its grace period).
  const timed = timeoutMs > 0 && Number.isFinite(timeoutMs);
  return new Promise<R>((resolve, reject) => {
    // An answer held by the handler's middleware (holdAnswer) waits, the timeout's answer too.
    const fail = (error: unknown) => afterHeld(ctx, () => reject(mapError(error)));
    const timer = timed ? setTimeout(onHandlerTimeout, timeoutMs, ctx, timeoutMs, fail) : undefined;
    result.then(
      (value) => {
        if (timer !== undefined) clearTimeout(timer);
        ctx.release();
        if (ctx.held === undefined) resolve(value);
        else afterHeld(ctx, () => resolve(value));
      },
      (error: unknown) => {
        if (timer !== undefined) clearTimeout(timer);
        ctx.release();
        fail(error);
      },
    );
  });
}

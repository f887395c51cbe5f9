/**
 * One handler call as the server makes it: the context a handler gets (signal, holdAnswer), the
 * timeout, and how handler failures are told apart from the server's own errors.
 */
import { LargeIntegerId } from "./large-id.js";
import { AhpError, AhpErrorCode, toError } from "./errors.js";
import { clearDeadline, startDeadline, TimedCall } from "./deadlines.js";
import { markHandlerTimeout } from "./handler-timeout.js";
import { isPromiseLike } from "./promise-like.js";
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

/** The time limit of an async handler call (see deadlines.ts). */
class HandlerDeadline extends TimedCall {
  constructor(
    readonly ctx: HandlerCallContext,
    readonly timeoutMs: number,
    readonly reject: (error: unknown) => void,
  ) {
    super();
  }

  /** The handler ran past the timeout: its signal is aborted and the call fails with -32603. */
  onDeadline(): void {
    const { ctx, timeoutMs } = this;
    const error = markHandlerTimeout(new AhpError(AhpErrorCode.InternalError, `Timeout after ${timeoutMs}ms`), timeoutMs);
    ctx.abort(error);
    ctx.release();
    this.reject(error);
  }
}

export function asHandlerFailure(error: unknown): HandlerFailure {
  return error instanceof HandlerFailure ? error : new HandlerFailure(failureText(error));
}

export function failureText(error: unknown): string {
  if (error instanceof HandlerFailure) return error.text;
  const e = toError(error);
  return e.message || e.name;
}

/** Runs a handler with a per-call signal and timeout; any failure becomes a HandlerFailure (and then `then.error`'s input). */
export function callHandler<R, T = R>(
  fn: (ctx: AhpHandlerContext) => Awaitable<R>,
  connection: Connection,
  id: JsonRpcId | undefined,
  timeoutMs: number,
  batch?: AhpHandlerContext["batch"],
  then?: CallThen<R, T>,
): Awaitable<R> | Promise<T> {
  try {
    // An async handler's rejection (or timeout) comes back as a HandlerFailure already.
    return call(fn, connection, id, timeoutMs, batch, asHandlerFailure, then);
  } catch (error) {
    throw asHandlerFailure(error);
  }
}

/**
 * What happens to an async handler's outcome before the call's promise settles: `value` maps a
 * result, `error` a failure (after `mapError`); either may throw, and the promise then rejects
 * with what it threw. It lets a caller turn the outcome into its final answer inside the one
 * promise of the call instead of chaining a promise per step (see ADR 0125).
 */
export interface CallThen<R, T> {
  value(value: R): T;
  error(error: Error): T;
}

function settleMapped<R, T>(
  then: CallThen<R, T>,
  ok: boolean,
  outcome: unknown,
  resolve: (v: T) => void,
  reject: (e: unknown) => void,
): void {
  let mapped: T;
  try {
    mapped = ok ? then.value(outcome as R) : then.error(outcome as Error);
  } catch (error) {
    reject(error);
    return;
  }
  resolve(mapped);
}

/**
 * Calls a handler. A synchronous result (or throw) comes back as is; otherwise a promise, with
 * the timeout applied, of the result mapped by `then` when it is given (of the result itself
 * when not).
 */
export function call<R, T = R>(
  fn: (ctx: AhpHandlerContext) => Awaitable<R>,
  connection: Connection,
  id: JsonRpcId | undefined,
  timeoutMs: number,
  batch?: AhpHandlerContext["batch"],
  mapError: (error: unknown) => Error = toError,
  then?: CallThen<R, T>,
): Awaitable<R> | Promise<T> {
  // Handlers see an integer id past 2^53 as its decimal text (a number would be rounded).
  const ctx = new HandlerCallContext(
    connection,
    (id as unknown) instanceof LargeIntegerId ? (id as unknown as LargeIntegerId).text : id,
    batch,
  );
  let result: Awaitable<R>;
  try {
    result = fn(ctx);
  } catch (error) {
    ctx.release();
    if (ctx.held === undefined) throw error;
    return new Promise<R | T>((resolve, reject) =>
      afterHeld(ctx, () => (then === undefined ? reject(mapError(error)) : settleMapped(then, false, mapError(error), resolve, reject))),
    ) as Promise<T>;
  }
  if (!isPromiseLike(result)) {
    ctx.release();
    if (ctx.held === undefined) return result;
    const value = result;
    return new Promise<R | T>((resolve, reject) =>
      afterHeld(ctx, () => (then === undefined ? resolve(value) : settleMapped(then, true, value, resolve, reject))),
    ) as Promise<T>;
  }
  // A closed connection aborts ctx.signal but does not cut the call short: received
  // notifications still reach their handler, and close()/whenIdle() wait for the handler
  // (close() only up to its grace period).
  const timed = timeoutMs > 0 && Number.isFinite(timeoutMs);
  return new Promise<R | T>((resolve, reject) => {
    // An answer held by the handler's middleware (holdAnswer) waits, the timeout's answer too.
    const fail =
      then === undefined
        ? (error: unknown) => afterHeld(ctx, () => reject(mapError(error)))
        : (error: unknown) => afterHeld(ctx, () => settleMapped(then, false, mapError(error), resolve, reject));
    const deadline = timed ? new HandlerDeadline(ctx, timeoutMs, fail) : undefined;
    if (deadline !== undefined) startDeadline(deadline, timeoutMs);
    result.then(
      (value) => {
        if (deadline !== undefined) clearDeadline(deadline);
        ctx.release();
        if (then === undefined) {
          if (ctx.held === undefined) resolve(value);
          else afterHeld(ctx, () => resolve(value));
        } else if (ctx.held === undefined) settleMapped(then, true, value, resolve, reject);
        else afterHeld(ctx, () => settleMapped(then, true, value, resolve, reject));
      },
      (error: unknown) => {
        if (deadline !== undefined) clearDeadline(deadline);
        ctx.release();
        fail(error);
      },
    );
  }) as Promise<T>;
}

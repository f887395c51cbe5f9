/**
 * Time for the bridge: one injectable clock for `now` and timers, and deadline timers that
 * survive the ~24.8-day ceiling of `setTimeout` by re-arming in chunks.
 */
import { MAX_TIMER_CHUNK_MS } from "./constants.js";

/** A timer armed on a {@link Clock}; only the clock that made it can clear it. */
export interface TimerHandle {
  /** Opaque. */
  readonly id: unknown;
}

/**
 * The time source of the bridge: every deadline, timer and timestamp goes through it, so tests
 * drive time with a manual clock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` after `ms` (at most {@link MAX_TIMER_CHUNK_MS}). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The process clock (`Date.now`, global timers; vitest fake timers replace both). Timers do not keep the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { id: t };
  },
  clearTimeout: (h) => clearTimeout(h.id as ReturnType<typeof setTimeout>),
};

/**
 * A clock moved by hand, for tests and simulations. Like Node, it refuses a delay above the
 * `setTimeout` ceiling (Node would fire it after 1 ms), so code that forgets to chunk fails loudly.
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void; seq: number }>();

  constructor(start = Date.UTC(2026, 10, 21, 10, 0, 0)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    if (!(ms >= 0)) throw new RangeError(`timer delay must be >= 0, got ${ms}`);
    if (ms > MAX_TIMER_CHUNK_MS) throw new RangeError(`timer delay ${ms} exceeds the setTimeout ceiling ${MAX_TIMER_CHUNK_MS}`);
    const seq = ++this.#seq;
    this.#timers.set(seq, { at: this.#now + ms, fn, seq });
    return { id: seq };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle.id as number);
  }

  /** Number of armed timers. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    this.advanceTo(this.#now + ms);
  }

  advanceTo(t: number): void {
    for (;;) {
      let next: { at: number; fn: () => void; seq: number } | undefined;
      for (const timer of this.#timers.values()) {
        if (timer.at <= t && (next === undefined || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq))) next = timer;
      }
      if (next === undefined) break;
      this.#timers.delete(next.seq);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = Math.max(this.#now, t);
  }
}

/** A one-shot timer due at an absolute time, re-armed in chunks below the `setTimeout` ceiling. */
export class DeadlineTimer {
  #handle: TimerHandle | undefined;
  #cancelled = false;

  constructor(
    readonly clock: Clock,
    readonly dueAt: number,
    readonly fire: () => void,
  ) {
    this.#arm();
  }

  #arm(): void {
    if (this.#cancelled) return;
    const remaining = this.dueAt - this.clock.now();
    if (remaining <= 0) {
      this.#handle = this.clock.setTimeout(() => this.#done(), 0);
      return;
    }
    this.#handle = this.clock.setTimeout(
      () => (this.dueAt - this.clock.now() > 0 ? this.#arm() : this.#done()),
      Math.min(remaining, MAX_TIMER_CHUNK_MS),
    );
  }

  #done(): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#handle = undefined;
    this.fire();
  }

  get armed(): boolean {
    return !this.#cancelled;
  }

  cancel(): void {
    this.#cancelled = true;
    if (this.#handle !== undefined) this.clock.clearTimeout(this.#handle);
    this.#handle = undefined;
  }
}

let lastMs = Number.NaN;
let lastIso = "";

/** A millisecond epoch time as an ISO 8601 UTC string (the wire form of every timestamp the bridge writes). */
export const isoAt = (ms: number): string => {
  // A turn asks for the same millisecond several times; NaN never equals itself, so an invalid time still throws.
  if (ms === lastMs) return lastIso;
  const iso = new Date(ms).toISOString();
  lastMs = ms;
  lastIso = iso;
  return iso;
};

/**
 * Time limits of many concurrent calls without a Node timer per call.
 *
 * Calls with the same limit expire in the order they started, so each distinct limit keeps its
 * calls in one doubly linked list, oldest first, and one timer armed for the oldest. Starting and
 * finishing a call are O(1) and allocate nothing: the list links live in the call object itself
 * (a subclass of {@link TimedCall}). A finished call leaves the list at once, so nothing waits
 * for its limit to pass. While any call of a list is running, the list's timer keeps the process
 * alive, as a timer per call would. When the list becomes empty its timer is only unreferenced,
 * not cleared: calls made one after the other (an agent waiting for each decision) then reuse it
 * instead of setting and clearing a Node timer per call. An idle timer that fires finds nothing
 * due and goes away with its list.
 *
 * Measured in `pnpm bench memory` and `pnpm bench core`: a Node `Timeout` and its arguments cost
 * about 150 bytes per in-flight call and a set + clear per call; see ADR 0125.
 */

/** Deadlines within this many ms of the timer's firing count as due (timers fire late, never early). */
const SLACK_MS = 1;

/** A call with a time limit: its own list links, and what happens when the limit passes. */
export abstract class TimedCall {
  /** @internal */ deadlineNext: TimedCall | undefined = undefined;
  /** @internal */ deadlinePrev: TimedCall | undefined = undefined;
  /** @internal */ deadlineAt = 0;
  /** @internal */ deadlineList: DeadlineList | undefined = undefined;

  /** Called once, when the call's limit passed while it was still running (it has left its list). */
  abstract onDeadline(): void;
}

class DeadlineList {
  head: TimedCall | undefined = undefined;
  tail: TimedCall | undefined = undefined;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** The call the timer was armed for, while it runs: due when the timer fires, whatever the clock says. */
  #armedFor: TimedCall | undefined = undefined;
  /** The list is empty and its timer is unreferenced (it no longer keeps the process alive). */
  #idle = false;
  /** The `setTimeout` that armed the timer: an idle timer is reused only while it is still the global one (fake timers come and go in tests). */
  #armedWith: typeof setTimeout | undefined = undefined;
  readonly #onTimer = (): void => this.#fire();

  constructor(readonly ms: number) {}

  add(call: TimedCall): void {
    call.deadlineAt = performance.now() + this.ms;
    call.deadlineList = this;
    call.deadlinePrev = this.tail;
    call.deadlineNext = undefined;
    if (this.tail === undefined) this.head = call;
    else this.tail.deadlineNext = call;
    this.tail = call;
    if (this.#timer === undefined) this.#arm(call, this.ms);
    else if (this.#idle) {
      if (this.#armedWith === setTimeout) {
        // The idle timer fires before this call's limit (it was armed earlier for the same
        // length); it then re-arms for whatever call is oldest.
        this.#idle = false;
        this.#timer.ref();
      } else {
        clearTimeout(this.#timer);
        this.#arm(call, this.ms);
      }
    }
  }

  remove(call: TimedCall): void {
    const { deadlinePrev: prev, deadlineNext: next } = call;
    if (prev === undefined) this.head = next;
    else prev.deadlineNext = next;
    if (next === undefined) this.tail = prev;
    else next.deadlinePrev = prev;
    call.deadlinePrev = call.deadlineNext = call.deadlineList = undefined;
    if (call === this.#armedFor) this.#armedFor = undefined;
    if (this.head === undefined && this.#timer !== undefined && !this.#idle) {
      this.#idle = true;
      this.#timer.unref();
    }
  }

  #arm(call: TimedCall, delay: number): void {
    this.#armedFor = call;
    this.#idle = false;
    this.#armedWith = setTimeout;
    this.#timer = setTimeout(this.#onTimer, Math.max(0, delay));
  }

  #fire(): void {
    const target = this.#armedFor;
    this.#timer = this.#armedFor = undefined;
    this.#idle = false;
    const now = performance.now();
    try {
      for (let call = this.head; call !== undefined; call = this.head) {
        if (call !== target && call.deadlineAt - now > SLACK_MS) break;
        this.remove(call);
        call.onDeadline();
      }
    } finally {
      // An expiry may have started or finished other calls of this list (and armed the timer).
      const head = this.head;
      if (head !== undefined && this.#timer === undefined) this.#arm(head, head.deadlineAt - performance.now());
      else if (head === undefined && this.#timer === undefined && LISTS.get(this.ms) === this) LISTS.delete(this.ms);
    }
  }
}

/** One list per distinct limit in use (a list is dropped when its timer fires and finds it empty). */
const LISTS = new Map<number, DeadlineList>();

/** Starts `call`'s time limit of `ms` (a positive finite number of milliseconds). */
export function startDeadline(call: TimedCall, ms: number): void {
  let list = LISTS.get(ms);
  if (list === undefined) {
    list = new DeadlineList(ms);
    LISTS.set(ms, list);
  }
  list.add(call);
}

/** Ends `call`'s time limit (it finished in time); a no-op when none is running. */
export function clearDeadline(call: TimedCall): void {
  call.deadlineList?.remove(call);
}

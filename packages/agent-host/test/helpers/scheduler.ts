/** A virtual clock and timer queue: tests move time forward explicitly instead of sleeping. */
import type { Scheduler } from "../../src/host/scheduler.js";

export class ManualTime implements Scheduler {
  now = Date.UTC(2026, 10, 1, 12, 0, 0);
  #timers: Array<{ due: number; fn: () => void; id: number }> = [];
  #next = 1;

  readonly clock = () => this.now;

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.push({ due: this.now + Math.max(0, ms), fn, id });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  get pending(): number {
    return this.#timers.length;
  }

  /** Moves the clock by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      this.#timers.sort((a, b) => a.due - b.due || a.id - b.id);
      const t = this.#timers[0];
      if (t === undefined || t.due > target) break;
      this.#timers.shift();
      this.now = Math.max(this.now, t.due);
      t.fn();
    }
    this.now = target;
  }
}

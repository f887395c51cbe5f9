/** Timers behind an interface, so that tests drive timeouts (approval, retention, grace) without waiting. */
export interface Scheduler {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Real timers; unref'd so that a pending retention or grace timer never keeps a process alive. */
export const realScheduler: Scheduler = {
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), 2 ** 31 - 1));
    t.unref?.();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

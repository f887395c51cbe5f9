/**
 * The connections one listener serves, so that silent peers cannot lock agents out:
 *
 * - a connection silent for its idle timeout with nothing in flight is closed (sweep);
 * - at the cap, room is made by closing the connection idle the longest that has nothing in
 *   flight, instead of refusing the newcomer (refused only when every connection is busy);
 * - the default cap follows the process's file-descriptor limit, with headroom;
 * - a failed accept for lack of file descriptors (EMFILE, ENFILE) is reported, and the listener
 *   backs off for a short, growing pause: connections accepted meanwhile are closed at once and
 *   idle ones are shed, so descriptors come back.
 */
import { spawnSync } from "node:child_process";
import { AhpLimitError, type LimitName } from "./limits.js";

/** What a transport keeps up to date for the roster: when its peer last sent a message, and how many requests await an answer. */
export interface ConnectionActivity {
  /** `Date.now()` of the last message received (or of the connection's start). */
  lastActive: number;
  /** Requests received and not yet answered. */
  inFlight: number;
}

/** One connection in a {@link ConnectionRoster}. */
export interface RosterEntry extends ConnectionActivity {
  /** Silence (ms) after which the connection is closed when nothing is in flight; `Infinity`: never. */
  idleMs: number;
  /** Closes the connection (`idle`: its idle timeout passed; `evicted`: room was needed; `shed`: file descriptors ran out). */
  readonly close: (reason: "idle" | "evicted" | "shed") => void;
  readonly remote?: string;
}

/** Options of a {@link ConnectionRoster}. */
export interface ConnectionRosterOptions {
  /** Transport name in limit reports (`unix`, `ws`, `http`). */
  transport: string;
  /** Connections served at once. */
  maxConnections: number;
  /** Limit reports (`max_connections`, `idle_timeout`, `open_files`) and other notices. */
  onerror?: ((error: Error) => void) | undefined;
  /** Clock (ms). Default `Date.now`. */
  now?: () => number;
}

/** Default idle timeout of agent connections (Unix socket, WebSocket): 10 minutes without a message and with nothing in flight. */
export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;
/** Default time a connection to the WebSocket listener has to complete its upgrade (ms). */
export const DEFAULT_UPGRADE_TIMEOUT_MS = 10_000;
/** The cap used when the file-descriptor limit cannot be read, and the highest default cap. */
export const FALLBACK_MAX_CONNECTIONS = 1024;
/** File descriptors left for everything but connections (log and audit files, state store, child processes). */
export const FD_HEADROOM = 256;
/** Longest back-off after running out of file descriptors (ms). */
export const MAX_ACCEPT_BACKOFF_MS = 5_000;
const FIRST_ACCEPT_BACKOFF_MS = 100;

let fdLimit: number | null | undefined;

/**
 * The process's file-descriptor limit (soft `RLIMIT_NOFILE`), read once from `ulimit -n` in a
 * child shell (which inherits the limit; Node raises its soft limit to the hard one at start).
 * Undefined when it cannot be read or is unlimited.
 */
export function fileDescriptorLimit(): number | undefined {
  if (fdLimit === undefined) {
    fdLimit = null;
    if (process.platform !== "win32") {
      try {
        const out = spawnSync("sh", ["-c", "ulimit -n"], { encoding: "utf8", timeout: 5_000 });
        const value = Number.parseInt(out.stdout.trim(), 10);
        if (out.status === 0 && Number.isInteger(value) && value > 0) fdLimit = value;
      } catch {
        fdLimit = null;
      }
    }
  }
  return fdLimit ?? undefined;
}

/**
 * The default `maxConnections` of one listener: a quarter of the file descriptors left after
 * {@link FD_HEADROOM} (a harness may run three listeners, and each connection may need a second
 * descriptor for a file or a child), at least 32 and at most {@link FALLBACK_MAX_CONNECTIONS}.
 * Under `ulimit -n 1024` this is 192.
 */
export function defaultMaxConnections(limit: number | undefined = fileDescriptorLimit()): number {
  if (limit === undefined) return FALLBACK_MAX_CONNECTIONS;
  return Math.max(32, Math.min(FALLBACK_MAX_CONNECTIONS, Math.floor((limit - FD_HEADROOM) / 4)));
}

/** Whether `error` says that the process or the system ran out of file descriptors. */
export function isOutOfFileDescriptors(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "EMFILE" || code === "ENFILE";
}

/** See the module comment. */
export class ConnectionRoster {
  readonly #options: ConnectionRosterOptions;
  readonly #entries = new Set<RosterEntry>();
  readonly #now: () => number;
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #sweepEveryMs = Number.POSITIVE_INFINITY;
  #backoffMs = 0;
  #backoffUntil = 0;
  #lastShortage = 0;
  #closed = false;

  constructor(options: ConnectionRosterOptions) {
    if (!Number.isInteger(options.maxConnections) || options.maxConnections < 1) {
      throw new RangeError("`maxConnections` must be an integer >= 1");
    }
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get maxConnections(): number {
    return this.#options.maxConnections;
  }

  /** Whether the listener is backing off after running out of file descriptors. */
  get backingOff(): boolean {
    return this.#now() < this.#backoffUntil;
  }

  /**
   * Admits a connection: returns its entry (keep `lastActive` and `inFlight` up to date, call
   * {@link remove} when it closes), or undefined when it must be refused (every connection busy,
   * backing off, or closed). At the cap, the longest-idle connection with nothing in flight is
   * closed to make room.
   */
  admit(idleMs: number, close: RosterEntry["close"], remote?: string): RosterEntry | undefined {
    if (this.#closed) return undefined;
    if (this.backingOff) {
      this.#report(
        "open_files",
        this.#backoffMs,
        "refused_backing_off",
        remote,
        "connection closed at once while backing off after running out of file descriptors",
      );
      return undefined;
    }
    if (this.#entries.size >= this.#options.maxConnections) {
      const victim = this.#longestIdle();
      if (victim === undefined) {
        this.#report("max_connections", this.#options.maxConnections, "refused", remote, "every connection has requests in flight");
        return undefined;
      }
      this.#entries.delete(victim);
      this.#report(
        "max_connections",
        this.#options.maxConnections,
        "closed_longest_idle",
        victim.remote,
        `closed the connection idle longest (${Math.round((this.#now() - victim.lastActive) / 1000)} s) to serve a new one`,
      );
      victim.close("evicted");
    }
    const entry: RosterEntry = { lastActive: this.#now(), inFlight: 0, idleMs, close, ...(remote === undefined ? {} : { remote }) };
    this.#entries.add(entry);
    this.#schedule(idleMs);
    return entry;
  }

  /** Forgets a connection that closed. */
  remove(entry: RosterEntry): void {
    this.#entries.delete(entry);
    if (this.#entries.size === 0) this.#stopSweeper();
  }

  /** Changes the idle timeout of an admitted connection (e.g. once a WebSocket upgrade completed). */
  setIdle(entry: RosterEntry, idleMs: number): void {
    entry.idleMs = idleMs;
    entry.lastActive = this.#now();
    this.#schedule(idleMs);
  }

  /**
   * A failed accept (`error` from the listening server): for EMFILE/ENFILE reports it, starts or
   * lengthens the back-off and sheds idle connections; returns whether it was one.
   */
  acceptFailed(error: unknown): boolean {
    if (!isOutOfFileDescriptors(error)) return false;
    const now = this.#now();
    // A shortage soon after the last one doubles the pause; a quiet spell resets it.
    this.#backoffMs =
      now - this.#lastShortage < 2 * MAX_ACCEPT_BACKOFF_MS
        ? Math.min(MAX_ACCEPT_BACKOFF_MS, Math.max(FIRST_ACCEPT_BACKOFF_MS, this.#backoffMs * 2))
        : FIRST_ACCEPT_BACKOFF_MS;
    this.#lastShortage = now;
    this.#backoffUntil = now + this.#backoffMs;
    const code = (error as { code: string }).code;
    // Half of the idle connections (idle longest first) give their descriptors back.
    const idle = [...this.#entries].filter((e) => e.inFlight === 0).sort((a, b) => a.lastActive - b.lastActive);
    const shed = idle.slice(0, Math.ceil(idle.length / 2));
    for (const entry of shed) {
      this.#entries.delete(entry);
      entry.close("shed");
    }
    this.#report(
      "open_files",
      this.#backoffMs,
      "backed_off",
      undefined,
      `accept failed with ${code} (out of file descriptors): new connections closed at once for ${this.#backoffMs} ms, ${shed.length} idle connection(s) closed`,
    );
    return true;
  }

  /** Stops the sweep; entries are left to their owners. */
  close(): void {
    this.#closed = true;
    this.#stopSweeper();
  }

  #longestIdle(): RosterEntry | undefined {
    let victim: RosterEntry | undefined;
    for (const entry of this.#entries) {
      if (entry.inFlight > 0) continue;
      if (victim === undefined || entry.lastActive < victim.lastActive) victim = entry;
    }
    return victim;
  }

  #schedule(idleMs: number): void {
    if (!Number.isFinite(idleMs) || this.#closed) return;
    const every = Math.max(50, Math.min(5_000, Math.floor(idleMs / 4)));
    if (this.#sweeper !== undefined && every >= this.#sweepEveryMs) return;
    this.#stopSweeper();
    this.#sweepEveryMs = every;
    this.#sweeper = setInterval(() => this.#sweep(), every);
    this.#sweeper.unref?.();
  }

  #stopSweeper(): void {
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    this.#sweepEveryMs = Number.POSITIVE_INFINITY;
  }

  #sweep(): void {
    const now = this.#now();
    for (const entry of [...this.#entries]) {
      if (entry.inFlight > 0 || now - entry.lastActive < entry.idleMs) continue;
      this.#entries.delete(entry);
      this.#report("idle_timeout", entry.idleMs, "closed_idle", entry.remote, "connection silent with nothing in flight");
      entry.close("idle");
    }
    if (this.#entries.size === 0) this.#stopSweeper();
  }

  #report(limit: LimitName, value: number, action: string, remote: string | undefined, what: string): void {
    const onerror = this.#options.onerror;
    if (onerror === undefined) return;
    const transport = this.#options.transport;
    onerror(
      new AhpLimitError(
        "LIMIT_EXCEEDED",
        `${transport}${remote === undefined ? "" : ` from ${remote}`}: ${what} (limit ${limit} ${value}): ${action}`,
        { transport, limit, value, action, ...(remote === undefined ? {} : { remote }) },
        { details: { [limit]: value } },
      ),
    );
  }
}

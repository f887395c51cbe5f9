/**
 * The connections one listener serves, so that silent peers cannot lock agents out:
 *
 * - a connection silent for its idle timeout with nothing in flight is closed (sweep);
 * - a connection whose peer takes none of the bytes written to it for the write-stall deadline is
 *   closed, in flight or not (sweep), so that a peer that stopped reading cannot hold a slot;
 * - at the cap, room is made by closing the connection idle the longest that has nothing in
 *   flight, instead of refusing the newcomer (refused only when every connection is busy);
 * - the default cap follows the process's file-descriptor limit, with headroom;
 * - the process's open descriptors are counted against that limit (`DescriptorBudget`): short of
 *   descriptors, the longest-idle connections are closed, on every listener;
 * - a failed accept for lack of file descriptors (EMFILE, ENFILE) that Node does report is
 *   reported too, and the listener backs off for a short, growing pause: connections accepted
 *   meanwhile are closed at once and idle ones are shed, so descriptors come back.
 */
import {
  DescriptorBudget,
  FD_HEADROOM,
  fileDescriptorLimit,
  processDescriptorBudget,
  type DescriptorClient,
  type DescriptorShortage,
  type IdleConnection,
} from "./descriptors.js";
import { AhpLimitError, type LimitName } from "./limits.js";

export * from "./descriptors.js";

/** What a transport keeps up to date for the roster: when its peer last sent a message, and how many requests await an answer. */
export interface ConnectionActivity {
  /** `Date.now()` of the last message received (or of the connection's start). */
  lastActive: number;
  /** Requests received and not yet answered. */
  inFlight: number;
}

/** Why the roster closes a connection: silent too long, room needed at the cap, out of descriptors, or its peer stopped reading. */
export type RosterCloseReason = "idle" | "evicted" | "shed" | "stalled";

/** One connection in a {@link ConnectionRoster}. */
export interface RosterEntry extends ConnectionActivity {
  /** Silence (ms) after which the connection is closed when nothing is in flight; `Infinity`: never. */
  idleMs: number;
  /**
   * Closes the connection (`idle`: its idle timeout passed; `evicted`: room was needed; `shed`:
   * file descriptors ran out; `stalled`: its peer took nothing written to it for the write-stall deadline).
   */
  readonly close: (reason: RosterCloseReason) => void;
  readonly remote?: string;
}

/**
 * What the roster reads of a connection's socket to tell a peer that stopped reading: a
 * `net.Socket` (or `tls.TLSSocket`) as it is. `writableLength`: bytes written and not yet taken
 * by the system; `bytesWritten`: every byte written so far (taken or not).
 */
export interface WriteProbe {
  readonly writableLength: number;
  readonly bytesWritten?: number | undefined;
}

/** Options of a {@link ConnectionRoster}. */
export interface ConnectionRosterOptions {
  /** Transport name in limit reports (`unix`, `ws`, `http`). */
  transport: string;
  /** Connections served at once. */
  maxConnections: number;
  /**
   * A connection with bytes waiting to be written, of which its peer took none for this long, is
   * closed (ms), whether requests are in flight or not (see {@link ConnectionRoster.watchWrites}).
   * Default {@link DEFAULT_WRITE_STALL_MS}; 0 disables.
   */
  writeStallMs?: number;
  /** The process's descriptors (default: the one shared budget); `false`: not counted. */
  descriptors?: DescriptorBudget | false;
  /** Limit reports (`max_connections`, `idle_timeout`, `open_files`, `outbound_stall`) and other notices. */
  onerror?: ((error: Error) => void) | undefined;
  /** Clock (ms). Default `Date.now`. */
  now?: () => number;
}

/** Default idle timeout of agent connections (Unix socket, WebSocket): 10 minutes without a message and with nothing in flight. */
export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;
/** Default time a connection to the WebSocket listener has to complete its upgrade (ms). */
export const DEFAULT_UPGRADE_TIMEOUT_MS = 10_000;
/** Default write-stall deadline: a peer that took none of the bytes written to it for this long is dropped (ms). */
export const DEFAULT_WRITE_STALL_MS = 30_000;
/** The cap used when the file-descriptor limit cannot be read, and the highest default cap. */
export const FALLBACK_MAX_CONNECTIONS = 1024;
export { FD_HEADROOM, fileDescriptorLimit };
/** Longest back-off after running out of file descriptors (ms). */
export const MAX_ACCEPT_BACKOFF_MS = 5_000;
const FIRST_ACCEPT_BACKOFF_MS = 100;

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

/** What the roster remembers of a watched socket: the bytes taken at the last sweep, and since when none were. */
interface WriteWatch {
  readonly probe: WriteProbe;
  taken: number;
  stalledSince: number | undefined;
}

/** See the module comment. */
export class ConnectionRoster implements DescriptorClient {
  readonly #options: ConnectionRosterOptions;
  readonly #entries = new Set<RosterEntry>();
  readonly #writes = new Map<RosterEntry, WriteWatch>();
  readonly #now: () => number;
  readonly #stallMs: number;
  readonly #budget: DescriptorBudget | undefined;
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
    const stall = options.writeStallMs ?? DEFAULT_WRITE_STALL_MS;
    if (!Number.isInteger(stall) || stall < 0) throw new RangeError("`writeStallMs` must be an integer >= 0 (0 disables)");
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#stallMs = stall === 0 ? Number.POSITIVE_INFINITY : stall;
    this.#budget = options.descriptors === false ? undefined : (options.descriptors ?? processDescriptorBudget());
  }

  get size(): number {
    return this.#entries.size;
  }

  get maxConnections(): number {
    return this.#options.maxConnections;
  }

  /** The write-stall deadline (ms; `Infinity` when disabled). */
  get writeStallMs(): number {
    return this.#stallMs;
  }

  /** Whether the listener is backing off after running out of file descriptors. */
  get backingOff(): boolean {
    return this.#now() < this.#backoffUntil;
  }

  /**
   * Admits a connection: returns its entry (keep `lastActive` and `inFlight` up to date, call
   * {@link remove} when it closes), or undefined when it must be refused (every connection busy,
   * backing off, or closed). At the cap, or short of file descriptors, the longest-idle
   * connection with nothing in flight is closed to make room.
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
    const budget = this.#budget;
    if (budget !== undefined) budget.add(this);
    if (this.#entries.size >= this.#options.maxConnections) {
      if (!this.#makeRoom("max_connections", this.#options.maxConnections, remote, "every connection has requests in flight"))
        return undefined;
    } else if (budget?.short === true) {
      const shortage = budget.shortage()!;
      if (
        !this.#makeRoom("open_files", shortage.limit, remote, `${describeShortage(shortage)} and every connection has requests in flight`)
      ) {
        return undefined;
      }
    }
    const entry: RosterEntry = { lastActive: this.#now(), inFlight: 0, idleMs, close, ...(remote === undefined ? {} : { remote }) };
    this.#entries.add(entry);
    this.#schedule(idleMs);
    return entry;
  }

  /** Closes the longest-idle connection for `limit` (reported); false, and the refusal reported, when every one is busy. */
  #makeRoom(limit: "max_connections" | "open_files", value: number, remote: string | undefined, busy: string): boolean {
    const victim = this.#longestIdle();
    if (victim === undefined) {
      this.#report(limit, value, "refused", remote, busy);
      return false;
    }
    this.#forget(victim);
    const why =
      limit === "open_files"
        ? `${describeShortage(this.#budget!.shortage()!)}: closed the connection idle longest`
        : "closed the connection idle longest";
    this.#report(
      limit,
      value,
      "closed_longest_idle",
      victim.remote,
      `${why} (${Math.round((this.#now() - victim.lastActive) / 1000)} s) to serve a new one`,
    );
    victim.close(limit === "open_files" ? "shed" : "evicted");
    return true;
  }

  /** Forgets a connection that closed. */
  remove(entry: RosterEntry): void {
    this.#forget(entry);
    if (this.#entries.size === 0) this.#stopSweeper();
  }

  /** Changes the idle timeout of an admitted connection (e.g. once a WebSocket upgrade completed). */
  setIdle(entry: RosterEntry, idleMs: number): void {
    entry.idleMs = idleMs;
    entry.lastActive = this.#now();
    this.#schedule(idleMs);
  }

  /**
   * Watches what is written to an admitted connection (its socket): when bytes wait to be written
   * and the peer took none of them for the write-stall deadline, the connection is reported
   * (`outbound_stall`, `closed_write_stall`) and closed with reason `stalled`, whatever is in
   * flight; the requests in flight on it fail with it.
   */
  watchWrites(entry: RosterEntry, probe: WriteProbe): void {
    if (!this.#entries.has(entry) || !Number.isFinite(this.#stallMs)) return;
    this.#writes.set(entry, { probe, taken: taken(probe), stalledSince: undefined });
    this.#schedule(this.#stallMs);
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
    const idle = this.idleEntries().sort((a, b) => a.lastActive - b.lastActive);
    const shed = idle.slice(0, Math.ceil(idle.length / 2));
    for (const entry of shed) {
      this.#forget(entry);
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

  /** Connections with nothing in flight (for the descriptor budget). */
  idleEntries(): RosterEntry[] {
    return [...this.#entries].filter((e) => e.inFlight === 0);
  }

  /** Closes `entries` (this roster's, chosen by the descriptor budget) and reports it once. */
  shedForDescriptors(entries: IdleConnection[], shortage: DescriptorShortage): void {
    let shed = 0;
    for (const entry of entries as RosterEntry[]) {
      if (!this.#entries.has(entry)) continue;
      this.#forget(entry);
      entry.close("shed");
      shed++;
    }
    if (shed === 0) return;
    this.#report(
      "open_files",
      shortage.limit,
      "closed_longest_idle",
      undefined,
      `${describeShortage(shortage)}: closed the ${shed} connection(s) idle longest`,
    );
  }

  /** Reports a shortage of descriptors with no idle connection to close. */
  reportShortage(shortage: DescriptorShortage): void {
    this.#report("open_files", shortage.limit, "none_idle", undefined, `${describeShortage(shortage)} and no connection is idle`);
  }

  /** Stops the sweep and the descriptor count; entries are left to their owners. */
  close(): void {
    this.#closed = true;
    this.#budget?.delete(this);
    this.#stopSweeper();
  }

  #forget(entry: RosterEntry): void {
    this.#entries.delete(entry);
    this.#writes.delete(entry);
  }

  #longestIdle(): RosterEntry | undefined {
    let victim: RosterEntry | undefined;
    for (const entry of this.#entries) {
      if (entry.inFlight > 0) continue;
      if (victim === undefined || entry.lastActive < victim.lastActive) victim = entry;
    }
    return victim;
  }

  #schedule(periodMs: number): void {
    if (!Number.isFinite(periodMs) || this.#closed) return;
    const every = Math.max(50, Math.min(5_000, Math.floor(periodMs / 4)));
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
    for (const [entry, watch] of [...this.#writes]) {
      const pending = watch.probe.writableLength;
      const took = taken(watch.probe);
      if (pending === 0 || took !== watch.taken) {
        watch.taken = took;
        watch.stalledSince = pending === 0 ? undefined : now;
        continue;
      }
      watch.stalledSince ??= now;
      if (now - watch.stalledSince < this.#stallMs) continue;
      this.#forget(entry);
      this.#report(
        "outbound_stall",
        this.#stallMs,
        "closed_write_stall",
        entry.remote,
        `peer took none of the ${pending} bytes waiting for it for ${Math.round((now - watch.stalledSince) / 1000)} s; ${entry.inFlight} request(s) in flight fail with the connection`,
      );
      entry.close("stalled");
    }
    for (const entry of [...this.#entries]) {
      if (entry.inFlight > 0 || now - entry.lastActive < entry.idleMs) continue;
      this.#forget(entry);
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

/** Bytes the system took from a socket so far. */
function taken(probe: WriteProbe): number {
  return (probe.bytesWritten ?? 0) - probe.writableLength;
}

function describeShortage(shortage: DescriptorShortage): string {
  const open = Number.isFinite(shortage.open) ? `${shortage.open}` : "all";
  return `${open} of ${shortage.limit} file descriptors open (fewer than ${shortage.reserve} free)`;
}

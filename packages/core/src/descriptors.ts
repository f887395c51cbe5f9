/**
 * The process's file descriptors against its limit. libuv handles most failed accepts for lack of
 * descriptors itself (it accepts and closes the connection with a descriptor it keeps in
 * reserve) and tells Node nothing, so the listeners cannot rely on an `EMFILE` error: they count
 * the open descriptors instead (`/proc/self/fd` on Linux, `/dev/fd` on macOS and the BSDs) against
 * the soft `RLIMIT_NOFILE`, and between two counts estimate from the connections they opened and
 * closed. Where neither directory can be read, the estimate is the listeners' own connections plus
 * a fixed allowance of 64 for everything else.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** File descriptors left for everything but connections (log and audit files, state store, child processes). */
export const FD_HEADROOM = 256;

let fdLimit: number | null | undefined;

/** `Max open files` (soft) of `/proc/self/limits`, or undefined. */
function limitFromProc(): number | null | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/self/limits", "utf8");
  } catch {
    return undefined;
  }
  const line = text.split("\n").find((l) => l.startsWith("Max open files"));
  const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
  if (soft === "unlimited") return null;
  const value = Number.parseInt(soft ?? "", 10);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/**
 * The process's file-descriptor limit (soft `RLIMIT_NOFILE`), read once: from `/proc/self/limits`
 * on Linux, elsewhere from `ulimit -n` in a child shell (which inherits the limit; Node raises its
 * soft limit to the hard one at start). Undefined when it cannot be read or is unlimited.
 */
export function fileDescriptorLimit(): number | undefined {
  if (fdLimit === undefined) {
    fdLimit = null;
    if (process.platform !== "win32") {
      const fromProc = limitFromProc();
      if (fromProc !== undefined) fdLimit = fromProc;
      else {
        try {
          const out = spawnSync("sh", ["-c", "ulimit -n"], { encoding: "utf8", timeout: 5_000 });
          const value = Number.parseInt(out.stdout.trim(), 10);
          if (out.status === 0 && Number.isInteger(value) && value > 0) fdLimit = value;
        } catch {
          fdLimit = null;
        }
      }
    }
  }
  return fdLimit ?? undefined;
}

const FD_DIRECTORIES = ["/proc/self/fd", "/dev/fd"];
let fdDirectory: string | null | undefined;

/**
 * The number of file descriptors this process has open, counted in `/proc/self/fd` (Linux) or
 * `/dev/fd` (macOS, BSD); `Infinity` when the count itself fails for lack of descriptors;
 * undefined when the platform offers neither directory.
 */
export function openFileDescriptors(): number | undefined {
  if (fdDirectory === null || process.platform === "win32") return undefined;
  const candidates = fdDirectory === undefined ? FD_DIRECTORIES : [fdDirectory];
  for (const dir of candidates) {
    try {
      // The listing includes the descriptor that reads it.
      const open = readdirSync(dir).length - 1;
      fdDirectory = dir;
      return open;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "EMFILE" || code === "ENFILE") return Number.POSITIVE_INFINITY;
    }
  }
  fdDirectory = null;
  return undefined;
}

/**
 * Descriptors that must stay free: below this many the listeners close idle connections. An
 * eighth of the limit, at least 8 and at most {@link FD_HEADROOM} (32 under `ulimit -n 256`, 128
 * under `ulimit -n 1024`).
 */
export function descriptorReserve(limit: number): number {
  return Math.max(8, Math.min(FD_HEADROOM, Math.floor(limit / 8)));
}

/** Descriptors assumed open besides the connections where they cannot be counted. */
const UNCOUNTED_BASELINE = 64;
/** How often the open descriptors are counted while a listener is open (ms). */
export const DEFAULT_DESCRIPTOR_CHECK_MS = 1_000;

/** What a shortage of file descriptors looked like when it was found. */
export interface DescriptorShortage {
  /** Descriptors open (`Infinity` when even counting them failed for lack of one). */
  readonly open: number;
  /** The soft `RLIMIT_NOFILE`. */
  readonly limit: number;
  /** Descriptors that should stay free ({@link descriptorReserve}). */
  readonly reserve: number;
}

/** A connection a {@link DescriptorClient} may close: when its peer was last heard from. */
export interface IdleConnection {
  readonly lastActive: number;
}

/** What a {@link DescriptorBudget} needs of a listener's connections (a `ConnectionRoster`). */
export interface DescriptorClient {
  /** Connections open now, one descriptor each. */
  readonly size: number;
  /** Connections with nothing in flight, which may be closed. */
  idleEntries(): IdleConnection[];
  /** Closes these connections (idle the longest first) for lack of descriptors, and reports it. */
  shedForDescriptors(entries: IdleConnection[], shortage: DescriptorShortage): void;
  /** Reports a shortage when no connection anywhere could be closed. */
  reportShortage(shortage: DescriptorShortage): void;
}

/** Options of a {@link DescriptorBudget} (tests inject the limit and the count). */
export interface DescriptorBudgetOptions {
  /** Default {@link fileDescriptorLimit}; none: the budget does nothing. */
  limit?: number | undefined;
  /** Default {@link openFileDescriptors}. */
  count?: () => number | undefined;
  /** Default {@link DEFAULT_DESCRIPTOR_CHECK_MS}. */
  intervalMs?: number;
}

/**
 * The file descriptors of one process, shared by its listeners: counted every `intervalMs` while
 * a listener is open, and estimated in between (the last count, plus the connections opened
 * since, minus those closed). When fewer than {@link descriptorReserve} are free, the connections
 * idle the longest with nothing in flight, on any listener, are closed until twice the reserve is
 * free again, and each listener that closed some reports it (`open_files`).
 */
export class DescriptorBudget {
  readonly limit: number | undefined;
  readonly reserve: number;
  readonly #count: () => number | undefined;
  readonly #intervalMs: number;
  readonly #clients = new Set<DescriptorClient>();
  /** Descriptors open besides the clients' connections, at the last count. */
  #baseline: number | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: DescriptorBudgetOptions = {}) {
    this.limit = "limit" in options ? options.limit : fileDescriptorLimit();
    this.reserve = this.limit === undefined ? 0 : descriptorReserve(this.limit);
    this.#count = options.count ?? openFileDescriptors;
    this.#intervalMs = options.intervalMs ?? DEFAULT_DESCRIPTOR_CHECK_MS;
  }

  /** Starts watching for `client` (the first one starts the periodic count). */
  add(client: DescriptorClient): void {
    if (this.limit === undefined || this.#clients.has(client)) return;
    this.#clients.add(client);
    if (this.#baseline === undefined) this.#measure();
    if (this.#timer === undefined && Number.isFinite(this.#intervalMs) && this.#intervalMs > 0) {
      this.#timer = setInterval(() => this.check(), this.#intervalMs);
      this.#timer.unref?.();
    }
  }

  /** Stops watching for `client` (the last one stops the periodic count). */
  delete(client: DescriptorClient): void {
    this.#clients.delete(client);
    if (this.#clients.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Estimated descriptors open now, or undefined when the limit is unknown. */
  estimate(): number | undefined {
    if (this.limit === undefined) return undefined;
    return (this.#baseline ?? UNCOUNTED_BASELINE) + this.#connections();
  }

  /** Whether fewer than the reserve are free (by the estimate): a listener then makes room before it serves a newcomer. */
  get short(): boolean {
    const open = this.estimate();
    return open !== undefined && this.limit! - open < this.reserve;
  }

  /** The shortage the estimate shows, for a report. */
  shortage(): DescriptorShortage | undefined {
    const open = this.estimate();
    return open === undefined ? undefined : { open, limit: this.limit!, reserve: this.reserve };
  }

  /**
   * Counts the open descriptors now; when fewer than the reserve are free, closes idle
   * connections (see the class comment). Returns the shortage found, or undefined.
   */
  check(): DescriptorShortage | undefined {
    const limit = this.limit;
    if (limit === undefined) return undefined;
    const open = this.#measure();
    const free = limit - open;
    if (free >= this.reserve) return undefined;
    const shortage: DescriptorShortage = { open, limit, reserve: this.reserve };
    const want = free >= 0 ? 2 * this.reserve - free : 2 * this.reserve;
    type Candidate = { client: DescriptorClient; entry: IdleConnection };
    const candidates: Candidate[] = [];
    for (const client of this.#clients) {
      for (const entry of client.idleEntries()) candidates.push({ client, entry });
    }
    candidates.sort((a, b) => a.entry.lastActive - b.entry.lastActive);
    const chosen = new Map<DescriptorClient, IdleConnection[]>();
    for (const { client, entry } of candidates.slice(0, want)) {
      const list = chosen.get(client);
      if (list === undefined) chosen.set(client, [entry]);
      else list.push(entry);
    }
    for (const [client, entries] of chosen) client.shedForDescriptors(entries, shortage);
    if (chosen.size === 0) {
      const first = this.#clients.values().next();
      if (first.done !== true) first.value.reportShortage(shortage);
    }
    return shortage;
  }

  #connections(): number {
    let sum = 0;
    for (const client of this.#clients) sum += client.size;
    return sum;
  }

  #measure(): number {
    const counted = this.#count();
    const connections = this.#connections();
    if (counted === undefined) return (this.#baseline ?? UNCOUNTED_BASELINE) + connections;
    if (Number.isFinite(counted)) this.#baseline = Math.max(0, counted - connections);
    return counted;
  }
}

let processBudget: DescriptorBudget | undefined;

/** The {@link DescriptorBudget} of this process, shared by every listener that does not bring its own. */
export function processDescriptorBudget(): DescriptorBudget {
  processBudget ??= new DescriptorBudget();
  return processBudget;
}

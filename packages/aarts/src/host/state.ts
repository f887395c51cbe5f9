/**
 * Cross-event state for subprocess hosts (adapter spec §4 general rules): the host spawns one
 * process per event, so turn counters, pending asks, sub-agent bindings and compaction
 * snapshots live in a per-user state directory, one JSON file per session, written atomically
 * (temporary file + rename) under an exclusive lock file for read-modify-write.
 */
import { createHash, randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Key-value store for state that must outlive one hook process (turn counters, pending asks,
 * sub-agent bindings, compaction snapshots). Values are JSON. Implement it to keep that state
 * elsewhere; {@link FileStateStore} is the default of the hook command, {@link MemoryStateStore} of in-process hosts.
 */
export interface StateStore {
  /** The current value (undefined when none). Reads never block. */
  read<T>(key: string): Promise<T | undefined>;
  /**
   * Read-modify-write under the store's lock: `fn` gets the current value and returns the new
   * one (`undefined` deletes it). Returns what was written.
   */
  update<T>(key: string, fn: (current: T | undefined) => T | undefined): Promise<T | undefined>;
}

/** An in-memory store (in-process hosts, tests). */
export class MemoryStateStore implements StateStore {
  readonly #values = new Map<string, string>();
  async read<T>(key: string): Promise<T | undefined> {
    const text = this.#values.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }
  async update<T>(key: string, fn: (current: T | undefined) => T | undefined): Promise<T | undefined> {
    const next = fn(await this.read<T>(key));
    if (next === undefined) this.#values.delete(key);
    else this.#values.set(key, JSON.stringify(next));
    return next;
  }
}

/** Options of {@link FileStateStore}. */
export interface FileStateStoreOptions {
  /** How long to wait for the lock. Default 2 000 ms. */
  readonly lockTimeoutMs?: number;
  /** A lock file older than this is considered abandoned (its process crashed). Default 10 000 ms. */
  readonly staleLockMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One JSON file per key in a directory created with mode 0700. File operations are synchronous
 * (the files are small; a hook process spawned per tool call would otherwise pay thread-pool
 * round trips on its critical path); only waiting for a contended lock yields.
 */
export class FileStateStore implements StateStore {
  /** Directory holding the files (created with mode 0700 on the first write). */
  readonly dir: string;
  readonly #options: FileStateStoreOptions;
  readonly #files = new Map<string, string>();
  #ready = false;

  /** Creates a store in `dir` (see {@link defaultStateDir}); nothing is touched on disk until the first write. */
  constructor(dir: string, options: FileStateStoreOptions = {}) {
    this.dir = dir;
    this.#options = options;
  }

  /** File of a key: a hash, so that session ids never become paths. */
  fileOf(key: string): string {
    let file = this.#files.get(key);
    if (file === undefined) {
      file = join(this.dir, `${createHash("sha256").update(key).digest("hex").slice(0, 32)}.json`);
      this.#files.set(key, file);
    }
    return file;
  }

  #ensureDir(): void {
    if (this.#ready) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.#ready = true;
  }

  async read<T>(key: string): Promise<T | undefined> {
    return this.#readNow<T>(key);
  }

  #readNow<T>(key: string): T | undefined {
    return this.#readText<T>(key).value;
  }

  /** The value of a key and the text it was read from (both undefined when there is none or it is not JSON). */
  #readText<T>(key: string): { text?: string; value?: T } {
    let text: string;
    try {
      text = readFileSync(this.fileOf(key), "utf8");
    } catch {
      return {};
    }
    try {
      return { text, value: JSON.parse(text) as T };
    } catch {
      return {};
    }
  }

  /**
   * Read-modify-write under an exclusive lock file; the new value is written atomically (file mode
   * 0600, temporary file + rename). Throws when the lock stays held by a live process for longer than
   * `lockTimeoutMs`, or on a file system error.
   *
   * An update that changes nothing (`fn` returns what is stored, byte for byte once serialized) is
   * answered from one read, without the lock or a write: it takes effect at that read, as if it had
   * run under the lock just then. Otherwise the value is read again under the lock, and `fn` runs
   * again when another process changed it meanwhile: `fn` may be called twice, so it must only
   * compute the new value from the one it is given.
   */
  async update<T>(key: string, fn: (current: T | undefined) => T | undefined): Promise<T | undefined> {
    const seen = this.#readText<T>(key);
    let early: { next: T | undefined } | undefined;
    if (seen.text !== undefined) {
      const next = fn(seen.value);
      if (next !== undefined && JSON.stringify(next) === seen.text) return next;
      early = { next };
    }
    this.#ensureDir();
    const file = this.fileOf(key);
    const release = await this.#lock(`${file}.lock`);
    try {
      const now = this.#readText<T>(key);
      // Still what fn saw: its answer stands; else it runs again on what is stored now.
      const next = early !== undefined && now.text === seen.text ? early.next : fn(now.value);
      if (next === undefined) {
        rmSync(file, { force: true });
      } else {
        const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
        writeFileSync(tmp, JSON.stringify(next), { mode: 0o600 });
        renameSync(tmp, file);
      }
      return next;
    } finally {
      release();
    }
  }

  async #lock(path: string): Promise<() => void> {
    const deadline = Date.now() + (this.#options.lockTimeoutMs ?? 2_000);
    const stale = this.#options.staleLockMs ?? 10_000;
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      try {
        closeSync(openSync(path, "wx", 0o600));
        return () => {
          try {
            unlinkSync(path);
          } catch {
            // already gone
          }
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        try {
          const info = statSync(path);
          if (Date.now() - info.mtimeMs > stale) {
            try {
              unlinkSync(path);
            } catch {
              // removed by someone else
            }
            continue;
          }
        } catch {
          continue; // released meanwhile
        }
        if (Date.now() > deadline) throw new Error(`state lock ${path} is held by another process`, { cause: error });
        await sleep(delay);
      }
    }
  }
}

/**
 * The per-user state directory: `$AHP_HOOK_STATE_DIR`, else `$XDG_STATE_HOME/ahp/aarts`, else
 * `%LOCALAPPDATA%\ahp\aarts` on Windows, else `~/.local/state/ahp/aarts`.
 */
export function defaultStateDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env.AHP_HOOK_STATE_DIR) return env.AHP_HOOK_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "ahp", "aarts");
  if (process.platform === "win32" && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, "ahp", "aarts");
  return join(env.HOME ?? homedir(), ".local", "state", "ahp", "aarts");
}

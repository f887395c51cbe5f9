/**
 * The default store: one JSON file per session in a directory, each write atomic (temporary
 * file, fsync, rename, fsync of the directory), so a crash leaves either the old or the new
 * record, never half of one.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { StoredSuspensionSchema, type StoredSuspension } from "./schema.js";
import { SuspensionStoreError, type SuspensionStore } from "./store.js";

const SUFFIX = ".suspension.json";
const TEMP = ".tmp";

/** `$XDG_STATE_HOME/ahp/acp-bridge`, else `~/.local/state/ahp/acp-bridge`. */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME !== undefined && env.XDG_STATE_HOME !== "" ? env.XDG_STATE_HOME : join(homedir(), ".local", "state");
  return join(base, "ahp", "acp-bridge");
}

/** The file name of a session: a digest, since session ids are arbitrary strings. */
export const recordFileName = (sessionId: string): string =>
  `${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}${SUFFIX}`;

/** Options of {@link FileSuspensionStore}. */
export interface FileSuspensionStoreOptions {
  /** fsync files and the directory (default true). Turning it off loses durability on power loss. */
  fsync?: boolean;
}

/**
 * The durable store: one JSON file per suspended session in a directory, written atomically
 * (temporary file, fsync, rename, fsync of the directory) before a suspend is acknowledged.
 */
export class FileSuspensionStore implements SuspensionStore {
  readonly #fsync: boolean;
  #ready: Promise<void> | undefined;
  /** Writes per session run one after another, so a later state never loses to an earlier one. */
  readonly #chains = new Map<string, Promise<void>>();

  constructor(
    readonly dir: string,
    options: FileSuspensionStoreOptions = {},
  ) {
    this.#fsync = options.fsync ?? true;
  }

  #ensureDir(): Promise<void> {
    this.#ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).then(() => undefined);
    return this.#ready;
  }

  async loadAll(): Promise<StoredSuspension[]> {
    let names: string[];
    try {
      await this.#ensureDir();
      names = await readdir(this.dir);
    } catch (error) {
      throw new SuspensionStoreError("READ_FAILED", `cannot read the suspension store ${this.dir}: ${(error as Error).message}`, this.dir, {
        cause: error,
      });
    }
    const out: StoredSuspension[] = [];
    for (const name of names.sort()) {
      const path = join(this.dir, name);
      if (name.endsWith(TEMP)) {
        // An unfinished write from a crash: the rename never happened, the old record is intact.
        await rm(path, { force: true });
        continue;
      }
      if (!name.endsWith(SUFFIX)) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(await readFile(path, "utf8"));
      } catch (error) {
        throw new SuspensionStoreError(
          "CORRUPT",
          `corrupt suspension record ${path}: ${(error as Error).message}; fix or move the file away (the bridge does not drop suspensions)`,
          path,
          { cause: error },
        );
      }
      const record = StoredSuspensionSchema.safeParse(parsed);
      if (!record.success) {
        const issue = record.error.issues[0];
        throw new SuspensionStoreError(
          "CORRUPT",
          `corrupt suspension record ${path}: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}; fix or move the file away (the bridge does not drop suspensions)`,
          path,
        );
      }
      if (recordFileName(record.data.sessionId) !== name) {
        throw new SuspensionStoreError(
          "CORRUPT",
          `suspension record ${path} names session ${JSON.stringify(record.data.sessionId)}, whose file would be ${recordFileName(record.data.sessionId)}`,
          path,
        );
      }
      out.push(record.data);
    }
    return out;
  }

  save(record: StoredSuspension): Promise<void> {
    return this.#serial(record.sessionId, () => this.#write(record));
  }

  remove(sessionId: string): Promise<void> {
    return this.#serial(sessionId, async () => {
      const path = join(this.dir, recordFileName(sessionId));
      try {
        await rm(path, { force: true });
        await this.#syncDir();
      } catch (error) {
        throw new SuspensionStoreError("WRITE_FAILED", `cannot remove ${path}: ${(error as Error).message}`, path, { cause: error });
      }
    });
  }

  #serial(sessionId: string, op: () => Promise<void>): Promise<void> {
    const previous = this.#chains.get(sessionId) ?? Promise.resolve();
    const next = previous.then(op, op);
    const tail = next.catch(() => undefined);
    this.#chains.set(sessionId, tail);
    void tail.then(() => {
      if (this.#chains.get(sessionId) === tail) this.#chains.delete(sessionId);
    });
    return next;
  }

  async #write(record: StoredSuspension): Promise<void> {
    const path = join(this.dir, recordFileName(record.sessionId));
    const temp = `${path}.${randomBytes(6).toString("hex")}${TEMP}`;
    try {
      await this.#ensureDir();
      const handle = await open(temp, "wx", 0o600);
      try {
        await handle.writeFile(`${JSON.stringify(record)}\n`, "utf8");
        if (this.#fsync) await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, path);
      await this.#syncDir();
    } catch (error) {
      await rm(temp, { force: true }).catch(() => undefined);
      this.#ready = undefined;
      throw new SuspensionStoreError("WRITE_FAILED", `cannot write the suspension record ${path}: ${(error as Error).message}`, path, {
        cause: error,
      });
    }
  }

  async #syncDir(): Promise<void> {
    if (!this.#fsync) return;
    const dir = await open(this.dir, "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}

/**
 * What `ahp serve` does before it serves: the files named by flags are checked up front, listen
 * failures name the option and address, an audit log that cannot be written stops the start, and
 * the log lines of a start that fails are held back, so that a failed start prints one line.
 */
import { stat } from "node:fs/promises";
import { AuditError } from "@ahp/audit";
import {
  EXIT_FAILURE,
  EXIT_IOERR,
  EXIT_NOINPUT,
  EXIT_OSERR,
  EXIT_WRONG_KEY,
  ExitError,
  describeErrno,
  errnoCode,
  type CliIo,
} from "./io.js";

/**
 * Throws an {@link ExitError} (exit 66) unless `path`, named by `flag`, exists and is a file (or a
 * directory when `kind` says so). Checked before anything starts, so the user reads which flag
 * named the missing file instead of a raw ENOENT from deep inside the start.
 */
export async function requireInput(flag: string, path: string, kind: "file" | "directory" = "file"): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    const code = errnoCode(error);
    throw new ExitError(`${flag} ${path}: ${describeErrno(code, (error as Error).message)}`, EXIT_NOINPUT, { cause: error });
  }
  if (kind === "file" && !info.isFile()) throw new ExitError(`${flag} ${path}: not a regular file`, EXIT_NOINPUT);
  if (kind === "directory" && !info.isDirectory()) throw new ExitError(`${flag} ${path}: not a directory`, EXIT_NOINPUT);
}

/**
 * Refuses an audit log path that is not a regular file (a device such as `/dev/null` or `/dev/full`,
 * a FIFO, a directory): records written there are lost or never written, so the harness must not
 * start as if it had an audit log. A path that does not exist yet is fine (the log is created).
 */
export async function requireAuditFile(path: string): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return;
    throw auditOpenFailure(path, error);
  }
  if (!info.isFile()) {
    throw new ExitError(
      `--audit ${path}: cannot write the audit log there: ${info.isDirectory() ? "is a directory" : "not a regular file"}`,
      EXIT_IOERR,
    );
  }
}

/** Write errors: the log cannot be written where it is (disk full, read-only, no permission). */
const WRITE_ERRNOS = new Set(["ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EIO", "EFBIG", "EISDIR", "ENOTDIR", "ENOENT", "EINVAL"]);

/**
 * What opening the audit log threw, as an {@link ExitError}: a write failure exits 74 (EX_IOERR), a
 * log written with another key 77 (as `ahp audit verify` with the wrong key), anything else (a
 * broken chain, a log held by another writer) 2.
 */
export function auditOpenFailure(path: string, error: unknown): ExitError {
  const message = error instanceof Error ? error.message : String(error);
  if (AuditError.isInstance(error)) {
    if (error.code === "WRITE_FAILED" || error.code === "UNAVAILABLE") {
      return new ExitError(`--audit ${path}: cannot write the audit log: ${message}`, EXIT_IOERR, { cause: error });
    }
    if (error.code === "KEY_MISMATCH") return new ExitError(`--audit ${path}: ${message}`, EXIT_WRONG_KEY, { cause: error });
    return new ExitError(`--audit ${path}: ${message}`, EXIT_FAILURE, { cause: error });
  }
  const code = errnoCode(error);
  if (code !== undefined && WRITE_ERRNOS.has(code)) {
    return new ExitError(`--audit ${path}: cannot write the audit log: ${describeErrno(code, message)}`, EXIT_IOERR, { cause: error });
  }
  return new ExitError(`--audit ${path}: ${message}`, EXIT_FAILURE, { cause: error });
}

/**
 * Runs `listen`, turning its failure into one line naming the option and the address
 * (`--http 127.0.0.1:8080: address already in use`), exit 71 (EX_OSERR).
 */
export async function listenAs<T>(option: string, address: string, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    const code = errnoCode(error);
    const message = error instanceof Error ? error.message : String(error);
    // The Unix transport explains why a path is in use ("another server is listening on this socket").
    const why = option === "--unix" ? /: ([^:]+)$/.exec(message)?.[1] : undefined;
    const text = describeErrno(code, message);
    throw new ExitError(`${option} ${address}: ${text}${why !== undefined && why !== text ? ` (${why})` : ""}`, EXIT_OSERR, {
      cause: error,
    });
  }
}

/**
 * The log stream of a start: lines are held until {@link StartupLog.release} (the harness serves:
 * they go out, and later lines pass straight through) or {@link StartupLog.discard} (the start
 * failed: one error line says why; the held lines go out only under `--log-level debug`).
 */
export class StartupLog {
  #held: string[] | undefined = [];
  /** Let the held lines out on a failed start too (`--log-level debug`). */
  keepOnFailure = false;
  constructor(private readonly io: Pick<CliIo, "stderr">) {}

  write(chunk: string): boolean {
    if (this.#held === undefined) return this.io.stderr.write(chunk);
    this.#held.push(chunk);
    return true;
  }

  release(): void {
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined && held.length > 0) this.io.stderr.write(held.join(""));
  }

  discard(): void {
    if (this.keepOnFailure) {
      this.release();
      return;
    }
    this.#held = [];
  }
}

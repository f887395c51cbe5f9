/** The process surface a command uses, injectable for tests. */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

export const processIo = (): CliIo => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });

/**
 * A usage problem (unknown option, bad value, missing argument): printed as one line with
 * "see 'ahp <command> --help'", exit code 64 (EX_USAGE).
 */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * A configuration problem the command line cannot fix by itself (a key file that is too short,
 * an unreadable file): printed with a hint instead of the usage, exit code 78 (EX_CONFIG).
 */
export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(
    message: string,
    /** One line telling the user what to do. */
    readonly hint?: string,
  ) {
    super(message);
  }
}

/**
 * A failure with its own exit code (a file that does not exist, an address in use, a log that
 * cannot be written): printed as one line `ahp <command>: <message>`, no usage, no hint.
 */
export class ExitError extends Error {
  override name = "ExitError";
  constructor(
    message: string,
    /** The process exit code (one of the EXIT_* constants). */
    readonly exitCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The errno code of a Node.js error (also one wrapped as `cause` or carried in `details.code`), if any. */
export function errnoCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const record = e as { code?: unknown; details?: { code?: unknown }; cause?: unknown };
    if (typeof record.code === "string" && /^E[A-Z0-9]+$/.test(record.code)) return record.code;
    if (typeof record.details?.code === "string") return record.details.code;
    e = record.cause;
  }
  return undefined;
}

/** A few words for the errno codes a command line meets (reading files, binding addresses, writing logs). */
export function describeErrno(code: string | undefined, fallback: string): string {
  switch (code) {
    case "ENOENT":
      return "no such file or directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "is a directory";
    case "ENOTDIR":
      return "a part of the path is not a directory";
    case "EADDRINUSE":
      return "address already in use";
    case "EADDRNOTAVAIL":
      return "address not available on this machine";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "unknown host";
    case "ENOSPC":
      return "no space left on the device";
    case "EDQUOT":
      return "disk quota exceeded";
    case "EROFS":
      return "read-only file system";
    case "EFBIG":
      return "file too large";
    case "EIO":
      return "input/output error";
    default:
      return fallback;
  }
}

export const EXIT_OK = 0;
/** `ahp send --fail-on`: a decision listed there was returned. */
export const EXIT_DECISION = 1;
/** Protocol or transport failure. */
export const EXIT_FAILURE = 2;
export const EXIT_USAGE = 64;
/** A file named on the command line does not exist or cannot be read (EX_NOINPUT). */
export const EXIT_NOINPUT = 66;
/** The harness (or another service the command needs) cannot be reached (EX_UNAVAILABLE). */
export const EXIT_UNAVAILABLE = 69;
/** A listen address cannot be bound: in use, or not permitted (EX_OSERR). */
export const EXIT_OSERR = 71;
/** A file the command must write cannot be written: disk full, read-only (EX_IOERR). */
export const EXIT_IOERR = 74;
/** `ahp audit verify`: the key is not the key the log was written with (EX_NOPERM), distinct from tampering (1). */
export const EXIT_WRONG_KEY = 77;
export const EXIT_CONFIG = 78;

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

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
export const EXIT_CONFIG = 78;

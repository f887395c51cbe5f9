/** The process surface a command uses, injectable for tests. */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

export const processIo = (): CliIo => ({ stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });

/** A usage problem: printed with the command's usage line, exit code 64 (EX_USAGE). */
export class UsageError extends Error {
  override name = "UsageError";
}

export const EXIT_OK = 0;
/** Protocol or transport failure. */
export const EXIT_FAILURE = 2;
export const EXIT_USAGE = 64;

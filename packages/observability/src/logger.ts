/**
 * A tiny structured logger: one JSON object per line, written to a given stream; stderr by
 * default and never stdout (under the stdio transport stdout carries the protocol). Every
 * string passes through a redaction hook before it is written.
 */
import type { AhpServerHandlers } from "@ahp/core";
import { redactSecrets, redactValue, type Redactor } from "@ahp/core";
import {
  applyHandlerMiddleware,
  decisionKindOf,
  failureMessage,
  observeHandlers,
  type ApplyMiddlewareOptions,
  type HandlerMiddleware,
} from "@ahp/core";

/** A log line's level, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";
const LEVELS: Record<LogLevel | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Where lines go: anything with `write(string)` (a Writable, a file stream, a test buffer). */
export interface LogStream {
  write(chunk: string): unknown;
}

/** Options of {@link createLogger}: level, stream (never stdout), redaction and bound fields. */
export interface LoggerOptions {
  /** Lowest level written. Default `info`. `silent` writes nothing. */
  level?: LogLevel | "silent";
  /** Default `process.stderr`. `process.stdout` (fd 1) is refused. */
  stream?: LogStream;
  /** Fields on every line. */
  bindings?: Record<string, unknown>;
  /** Applied to every string (message, fields, bindings). Default `redactSecrets`; values under sensitive keys are always replaced. */
  redactor?: Redactor;
  /** Clock for `time`. Default `() => new Date()`. */
  clock?: () => Date;
  /** Include `stack` when logging errors. Default true. */
  errorStacks?: boolean;
  /** A stream that throws: reported here, never to the caller. */
  onerror?: (error: Error) => void;
}

/** Structured fields of one log line (redacted before they are written). */
export type LogFields = Record<string, unknown>;

/** A JSON-lines logger: one object per line with `time`, `level` and `msg`, plus fields and bindings. */
export interface Logger {
  readonly level: LogLevel | "silent";
  isLevelEnabled(level: LogLevel): boolean;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger whose lines also carry `bindings`. */
  child(bindings: LogFields): Logger;
}

function isStdout(stream: LogStream): boolean {
  if (stream === process.stdout) return true;
  const fd = (stream as { fd?: unknown }).fd;
  return fd === 1;
}

const RESERVED = new Set(["time", "level", "msg"]);

/**
 * A JSON-lines {@link Logger} writing to stderr by default. Refuses stdout, which carries the
 * protocol under the stdio transport; every string passes through the redactor (secrets are
 * replaced) before it is written.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const stream = options.stream ?? process.stderr;
  if (isStdout(stream)) {
    throw new TypeError("the logger refuses stdout: under the stdio transport stdout carries the protocol; log to stderr or a file");
  }
  const level = options.level ?? "info";
  if (!(level in LEVELS)) throw new TypeError(`unknown log level ${String(level)}`);
  return new JsonLogger(stream, LEVELS[level], level, options, options.bindings ?? {});
}

class JsonLogger implements Logger {
  constructor(
    readonly stream: LogStream,
    readonly threshold: number,
    readonly level: LogLevel | "silent",
    readonly options: LoggerOptions,
    readonly bindings: LogFields,
  ) {}

  isLevelEnabled(level: LogLevel): boolean {
    return LEVELS[level] >= this.threshold;
  }
  debug(msg: string, fields?: LogFields): void {
    this.#write("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.#write("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.#write("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.#write("error", msg, fields);
  }
  child(bindings: LogFields): Logger {
    return new JsonLogger(this.stream, this.threshold, this.level, this.options, { ...this.bindings, ...bindings });
  }

  #write(level: LogLevel, msg: string, fields?: LogFields): void {
    if (LEVELS[level] < this.threshold) return;
    try {
      const redactor = this.options.redactor ?? redactSecrets;
      const record: Record<string, unknown> = {
        time: (this.options.clock?.() ?? new Date()).toISOString(),
        level,
        msg: redactor(String(msg)),
      };
      const extra = { ...this.bindings, ...fields };
      const safe = redactValue(toPlain(extra, this.options.errorStacks ?? true), redactor) as LogFields;
      for (const [key, value] of Object.entries(safe)) {
        if (value === undefined) continue;
        record[RESERVED.has(key) ? `field_${key}` : key] = value;
      }
      this.stream.write(`${JSON.stringify(record, jsonReplacer)}\n`);
    } catch (error) {
      this.options.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

const jsonReplacer = (_key: string, value: unknown) => (typeof value === "bigint" ? value.toString() : value);

/** Errors become `{ name, message, code?, stack? }`; everything else is passed through. */
function toPlain(fields: LogFields, stacks: boolean): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) out[key] = value instanceof Error ? errorFields(value, stacks) : value;
  return out;
}

function errorFields(error: Error, stacks: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" || typeof code === "number") out.code = code;
  if (stacks && typeof error.stack === "string") out.stack = error.stack;
  if (error.cause instanceof Error) out.cause = errorFields(error.cause, false);
  return out;
}

/** Options of the logging middleware: the levels of decision and failure lines, and which handlers to wrap. */
export interface LoggingMiddlewareOptions extends ApplyMiddlewareOptions {
  /** Level of a line per decision/event. Default `debug`. */
  decisionLevel?: LogLevel;
  /** Level of a line per handler failure. Default `warn`. */
  failureLevel?: LogLevel;
}

/** Logs every handler call: decisions at `decisionLevel`, failures at `failureLevel`. */
export function loggingMiddleware(logger: Logger, options: LoggingMiddlewareOptions = {}): HandlerMiddleware {
  const decisionLevel = options.decisionLevel ?? "debug";
  const failureLevel = options.failureLevel ?? "warn";
  return observeHandlers({
    end: (call, outcome) => {
      const fields: LogFields = {
        event_type: call.eventType,
        session: call.sessionId,
        agent: call.agentId,
        form: call.form,
        latency_ms: Number(outcome.durationNs) / 1e6,
      };
      if (call.event !== undefined) fields.depth = call.event.depth;
      if (outcome.ruleId !== undefined) fields.rule = outcome.ruleId;
      if (outcome.ok) {
        if (!logger.isLevelEnabled(decisionLevel)) return;
        const decision = decisionKindOf(outcome.result);
        if (decision !== undefined) fields.decision = decision;
        logger[decisionLevel](
          call.kind === "notification"
            ? "ahp event"
            : `ahp ${call.kind === "query" ? "query" : call.kind === "handshake" ? "handshake" : "decision"}`,
          fields,
        );
      } else {
        fields.error = failureMessage(outcome.error);
        logger[failureLevel]("ahp handler failed", fields);
      }
    },
  });
}

/** Wraps every handler so that each call is logged. */
export function withLogging(handlers: AhpServerHandlers, logger: Logger, options: LoggingMiddlewareOptions = {}): AhpServerHandlers {
  return applyHandlerMiddleware(handlers, loggingMiddleware(logger, options), options);
}

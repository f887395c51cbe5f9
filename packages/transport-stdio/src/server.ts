/**
 * The harness side of stdio (spec §13.1): NDJSON on this process's stdin/stdout. Only JSON-RPC
 * lines are ever written to stdout (logs belong on stderr). End of stdin means "no more
 * requests": the answers to requests already received are still written, then the transport
 * closes — so `printf '<request>\n' | harness` prints its response, as with the reference.
 */
import type { Readable, Writable } from "node:stream";
import {
  AhpLimitError,
  AhpLocalError,
  NdjsonServerTransport,
  type AhpServer,
  type MessageLimits,
  type NdjsonWriteOptions,
} from "@ahp/core";
import { DEFAULT_MAX_IN_FLIGHT, limitInFlight } from "@ahp/core";

export { DEFAULT_DRAIN_TIMEOUT_MS } from "@ahp/core";

/** Options of {@link StdioServerTransport}: the streams (default this process's stdin/stdout), limits, write grouping, drain time. */
export interface StdioServerTransportOptions extends MessageLimits, NdjsonWriteOptions {
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. Never ended by the transport. */
  stdout?: Writable;
  /**
   * After end of input, how long to wait for the answers to requests already received before
   * closing (ms). Default 30000. Handlers time out on their own (the server's `handlerTimeoutMs`).
   */
  drainTimeoutMs?: number;
}

/** Serves one agent on this process's stdin/stdout (core's NDJSON server connection). */
export class StdioServerTransport extends NdjsonServerTransport {
  constructor(options: StdioServerTransportOptions = {}) {
    const stdin = options.stdin ?? process.stdin;
    super({
      readable: stdin,
      writable: options.stdout ?? process.stdout,
      info: { transport: "stdio" },
      ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
      ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
      ...(options.flushLines === undefined ? {} : { flushLines: options.flushLines }),
      ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
      // Stop reading so that an open stdin no longer keeps the process alive.
      onRelease: () => void stdin.pause(),
    });
  }
}

/** Options of {@link serveStdio}: the transport's own, plus the in-flight limit and an abort signal. */
export interface ServeStdioOptions extends StdioServerTransportOptions {
  /** Aborting closes the connection. */
  signal?: AbortSignal;
  /**
   * Requests handled at once; at the limit stdin is not read until answers have been written
   * (pipe backpressure for the agent). Default 256.
   */
  maxInFlight?: number;
  /** Called the first time the `maxInFlight` limit pauses reading. */
  onlimit?: (error: AhpLocalError) => void;
}

/**
 * Serves `server` on this process's stdin/stdout. Resolves once the agent ended stdin and the
 * answers to its requests were written (or `signal` aborted, or stdout broke), with the close
 * cause when there was one.
 */
export async function serveStdio(server: AhpServer, options: ServeStdioOptions = {}): Promise<Error | undefined> {
  const transport = new StdioServerTransport(options);
  const signal = options.signal;
  const stdin = options.stdin ?? process.stdin;
  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
    throw new AhpLocalError("INVALID_ARGUMENT", "`maxInFlight` must be an integer >= 1");
  let released = false;
  void transport.closed.then(() => (released = true));
  // Once the transport has released stdin, a late answer must not start reading it again.
  const gate = { pause: () => void stdin.pause(), resume: () => void (released || stdin.resume()) };
  await server.connect(
    limitInFlight(transport, maxInFlight, gate, () =>
      options.onlimit?.(
        new AhpLimitError(
          "LIMIT_EXCEEDED",
          `${maxInFlight} requests in flight on stdin: reading paused until answers are written (reported once)`,
          { transport: "stdio", limit: "max_in_flight", value: maxInFlight, action: "paused_reading" },
          { details: { maxInFlight } },
        ),
      ),
    ),
  );
  const onAbort = () => void transport.close();
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await transport.closed;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * The harness side of stdio (spec §13.1): NDJSON on this process's stdin/stdout. Only JSON-RPC
 * lines are ever written to stdout (logs belong on stderr). End of stdin means "no more
 * requests": the answers to requests already received are still written, then the transport
 * closes — so `printf '<request>\n' | harness` prints its response, as with the reference.
 */
import type { Readable, Writable } from "node:stream";
import { NdjsonServerTransport, type AhpServer, type MessageLimits, type NdjsonWriteOptions } from "@ahp/core";

export { DEFAULT_DRAIN_TIMEOUT_MS } from "@ahp/core";

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

export interface ServeStdioOptions extends StdioServerTransportOptions {
  /** Aborting closes the connection. */
  signal?: AbortSignal;
}

/**
 * Serves `server` on this process's stdin/stdout. Resolves once the agent ended stdin and the
 * answers to its requests were written (or `signal` aborted, or stdout broke), with the close
 * cause when there was one.
 */
export async function serveStdio(server: AhpServer, options: ServeStdioOptions = {}): Promise<Error | undefined> {
  const transport = new StdioServerTransport(options);
  const signal = options.signal;
  await server.connect(transport);
  const onAbort = () => void transport.close();
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await transport.closed;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

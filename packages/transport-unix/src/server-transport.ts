/**
 * The harness side of one accepted socket connection. When the agent half-closes (ends its
 * output), the answers to the requests already received are still written before this side
 * ends too; the server that accepts sockets must be created with `allowHalfOpen: true`.
 */
import type { Socket } from "node:net";
import { NdjsonServerTransport, type MessageLimits, type NdjsonWriteOptions, type TransportInfo } from "@ahp/core";
import { endSocket } from "./socket.js";

export { DEFAULT_DRAIN_TIMEOUT_MS } from "@ahp/core";

/** Options of one accepted socket connection ({@link UnixSocketServerTransport}): limits, write grouping, drain and close times. */
export interface UnixSocketServerTransportOptions extends MessageLimits, NdjsonWriteOptions {
  info?: TransportInfo;
  /** After the agent ended its side, how long to wait for pending answers before closing (ms). Default 30000. */
  drainTimeoutMs?: number;
  /** `close()` ends the socket and waits this long for the agent to close before destroying it (ms). Default 2000. */
  closeGraceMs?: number;
}

/** One accepted socket connection (core's NDJSON server connection over the socket). */
export class UnixSocketServerTransport extends NdjsonServerTransport {
  constructor(socket: Socket, options: UnixSocketServerTransportOptions = {}) {
    const graceMs = options.closeGraceMs ?? 2000;
    super({
      readable: socket,
      writable: socket,
      info: options.info ?? { transport: "unix" },
      ...(options.maxMessageBytes === undefined ? {} : { maxMessageBytes: options.maxMessageBytes }),
      ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
      ...(options.flushLines === undefined ? {} : { flushLines: options.flushLines }),
      ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
      // A socket's 'close' means both directions are gone: nothing left to drain.
      onReadableClose: "close",
      onRelease: () => endSocket(socket, graceMs),
    });
  }
}

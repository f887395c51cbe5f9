/**
 * Limits of an HTTP server (the HTTP transport's, and the one that carries WebSocket upgrades): how
 * long a client may take to send its request headers and its whole request, how often that is
 * checked, and a report of every connection cut for it (slowloris clients, malformed requests).
 */
import type * as http from "node:http";
import type { Duplex } from "node:stream";
import * as nodeHttp from "node:http";
import { AhpLocalError } from "./errors.js";
import { AhpLimitError } from "./limits.js";

/** Time a client has to send its request headers (ms). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Time a client has to send its whole request (ms). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Time limits of an HTTP server against slow or stalled clients. */
export interface HttpServerLimits {
  /** A client must send its request headers within this time (ms), or gets 408 and is closed. Default 10000. */
  headersTimeoutMs?: number;
  /** ... and its whole request (headers and body) within this time (ms). Default 30000. */
  requestTimeoutMs?: number;
}

/** Options for `http.createServer` / `https.createServer` enforcing `limits`. */
export function httpServerOptions(limits: HttpServerLimits): http.ServerOptions {
  const headersTimeout = limits.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = Math.max(limits.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, headersTimeout);
  for (const [name, value] of [
    ["headersTimeoutMs", headersTimeout],
    ["requestTimeoutMs", requestTimeout],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) throw new AhpLocalError("INVALID_ARGUMENT", `\`${name}\` must be an integer >= 1`);
  }
  return {
    headersTimeout,
    requestTimeout,
    // Node checks the two timeouts every 30 s by default, which would let a slow client stay
    // up to 30 s past its limit.
    connectionsCheckingInterval: Math.min(1000, headersTimeout),
  };
}

const STATUS: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout"],
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large"],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, "Payload Too Large"],
};

/**
 * Answers and reports requests Node refuses before any handler sees them: a request not
 * received in time (408), headers too large (431), malformed HTTP (400). A reset connection is
 * only closed.
 */
export function reportClientErrors(
  server: http.Server,
  limits: http.ServerOptions,
  onerror?: (error: Error) => void,
  transport = "http",
): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const code = error.code ?? "";
    if (code === "ECONNRESET" || code === "EPIPE" || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, text] = STATUS[code] ?? [400, "Bad Request"];
    const remote = (socket as { remoteAddress?: string }).remoteAddress;
    const from = remote === undefined ? "" : ` from ${remote}`;
    const peer = remote === undefined ? {} : { remote };
    let report: Error;
    if (status === 408) {
      report = new AhpLimitError(
        "TIMEOUT",
        `HTTP request${from} not received in time (headers within ${limits.headersTimeout} ms, whole request within ${limits.requestTimeout} ms): answered 408 and closed`,
        { transport, limit: "request_timeout", value: limits.headersTimeout ?? 0, action: "answered_408_closed", ...peer },
        { details: { headersTimeoutMs: limits.headersTimeout, requestTimeoutMs: limits.requestTimeout } },
      );
    } else if (status === 431) {
      const value = limits.maxHeaderSize ?? nodeHttp.maxHeaderSize;
      report = new AhpLimitError(
        "LIMIT_EXCEEDED",
        `HTTP request headers${from} larger than ${value} bytes: answered 431 and closed`,
        { transport, limit: "max_header_bytes", value, action: "answered_431_closed", ...peer },
        { details: { code } },
      );
    } else {
      report = new AhpLocalError(
        "PROTOCOL_ERROR",
        `malformed HTTP request${from} (${code || error.message}): answered ${status} and closed`,
        {
          details: { code },
        },
      );
    }
    onerror?.(report);
    socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    setTimeout(() => socket.destroy(), 1000).unref();
  });
}

/**
 * The agent side of a Unix domain socket (spec §13.4): connects to a socket path and speaks
 * NDJSON, exactly as stdio. Connect failures reject `start()`; a harness that goes away closes
 * the transport at once with the cause, so pending requests fail immediately (spec §14 item 9).
 */
import { createConnection } from "node:net";
import {
  AhpErrorCode,
  AhpLocalError,
  NdjsonClientTransport,
  toError,
  type MessageLimits,
  type NdjsonWriteOptions,
  type NdjsonStreams,
} from "@ahp/core";
import { errnoCode, finishSocket, IDLE_CLOSE_MESSAGE, noop } from "./socket.js";

/** Options of {@link UnixSocketClientTransport}: the socket path, timeouts, message limits and write grouping. */
export interface UnixSocketClientTransportOptions extends MessageLimits, NdjsonWriteOptions {
  /** Path of the harness's socket. */
  path: string;
  /** How long `start()` waits for the connection (ms). Default 10000. */
  connectTimeoutMs?: number;
  /** `close()` flushes what was written, then closes; it destroys the socket when that takes longer than this (ms). Default 2000. */
  closeGraceMs?: number;
  /**
   * When the harness closes the connection while no request waits for an answer, saying it closed
   * an idle connection (its idle timeout, or room made at its cap), reconnect for the next call, repeating the last
   * successful handshake first, so the caller sees nothing. Requests that crossed that close (sent
   * before the notice arrived) are sent again on the new connection: the harness reads nothing after
   * deciding to close an idle connection, so none of them was handled. Default true; false closes the
   * transport instead.
   */
  reconnect?: boolean;
}

/** Default `connectTimeoutMs`: how long `start()` waits for the harness to accept the connection. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Default `closeGraceMs`: how long `close()` lets written data flush before destroying the socket. */
export const DEFAULT_SOCKET_CLOSE_GRACE_MS = 2000;

/**
 * The agent-side transport over a Unix domain socket: `start()` connects to the harness's socket
 * and speaks NDJSON on it. When the harness refuses the connection (too many connections) or goes
 * away, the transport closes with the harness's notice or the socket error as the cause, and every
 * pending request fails with it.
 */
export class UnixSocketClientTransport extends NdjsonClientTransport {
  readonly #options: UnixSocketClientTransportOptions;
  /** A -32003 notice the harness sent with id `null` (e.g. "too many connections") before it closed. */
  #peerNotice?: string;

  constructor(options: UnixSocketClientTransportOptions) {
    if (typeof options?.path !== "string" || options.path.length === 0) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketClientTransport: `path` must be a non-empty string");
    }
    super("UnixSocketClientTransport", { transport: "unix", remote: options.path }, options, options.reconnect !== false);
    this.#options = options;
  }

  protected async openStreams(): Promise<NdjsonStreams> {
    const path = this.#options.path;
    const timeoutMs = this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const socket = createConnection({ path });
    const failure = await new Promise<Error | undefined>((resolve) => {
      const timer = setTimeout(() => {
        done();
        const error = Object.assign(new Error(`connect timed out after ${timeoutMs} ms`), { code: "ETIMEDOUT" });
        socket.destroy();
        resolve(error);
      }, timeoutMs);
      const onConnect = () => {
        done();
        resolve(undefined);
      };
      const onError = (error: Error) => {
        done();
        resolve(error);
      };
      const done = () => {
        clearTimeout(timer);
        socket.off("connect", onConnect);
        socket.off("error", onError);
      };
      socket.once("connect", onConnect);
      socket.once("error", onError);
    });
    if (failure !== undefined) {
      socket.on("error", noop);
      socket.destroy();
      const code = errnoCode(failure);
      throw new AhpLocalError("TRANSPORT_ERROR", `cannot connect to harness at ${path}: ${failure.message}`, {
        cause: failure,
        details: { path, ...(code === undefined ? {} : { code }) },
      });
    }
    const graceMs = this.#options.closeGraceMs ?? DEFAULT_SOCKET_CLOSE_GRACE_MS;
    return { readable: socket, writable: socket, info: this.info, release: () => finishSocket(socket, graceMs) };
  }

  /** Reconnects only after the harness said it closed an idle connection; a shutdown or a refusal closes the transport. */
  protected override mayReopen(): boolean {
    const idle = this.#peerNotice === IDLE_CLOSE_MESSAGE;
    if (idle) this.#peerNotice = undefined;
    return idle;
  }

  /** Requests that crossed the harness's idle close are sent again: it read nothing after deciding to close. */
  protected override mayReplay(): boolean {
    return this.mayReopen();
  }

  protected override observe(message: unknown): void {
    if (isNullIdError(message)) this.#peerNotice = (message as { error: { message: string } }).error.message;
  }

  protected peerClosed(cause: Error | undefined): AhpLocalError {
    const path = this.#options.path;
    const root = cause === undefined ? undefined : ((cause as { cause?: unknown }).cause ?? cause);
    const code = errnoCode(root);
    let message = `harness at ${path} closed the connection`;
    if (this.#peerNotice !== undefined) message += `: ${this.#peerNotice}`;
    else if (cause !== undefined) message += ` (${toError(root).message})`;
    return new AhpLocalError("CONNECTION_CLOSED", message, {
      ...(cause === undefined ? {} : { cause }),
      details: {
        path,
        ...(code === undefined ? {} : { code }),
        ...(this.#peerNotice === undefined ? {} : { peerError: this.#peerNotice }),
      },
    });
  }
}

/** A -32003 notice with id `null`: the harness says why it is about to close the connection. */
function isNullIdError(message: unknown): boolean {
  if (message === null || typeof message !== "object") return false;
  const m = message as Record<string, unknown>;
  if (m.id !== null || m.error === null || typeof m.error !== "object") return false;
  const error = m.error as Record<string, unknown>;
  return error.code === AhpErrorCode.ServerClosing && typeof error.message === "string";
}

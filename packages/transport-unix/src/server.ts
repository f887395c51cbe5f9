/**
 * A Unix domain socket server for harnesses (spec §13.4; the reference has none, §14 item 20).
 * Every accepted connection is a {@link UnixSocketServerTransport} connected to one `AhpServer`;
 * connections are served concurrently.
 */
import { createServer, type Server, type Socket } from "node:net";
import {
  AhpErrorCode,
  AhpLimitError,
  AhpLocalError,
  ConnectionRoster,
  DEFAULT_IDLE_TIMEOUT_MS,
  defaultMaxConnections,
  toError,
  type AhpServer,
  type MessageLimits,
  type NdjsonWriteOptions,
} from "@ahp/core";
import { DEFAULT_MAX_IN_FLIGHT, limitInFlight } from "@ahp/core";
import { UnixSocketServerTransport } from "./server-transport.js";
import { clearStaleSocket, listenAt, removeSocketFile, type SocketIdentity } from "./socket-file.js";
import { IDLE_CLOSE_MESSAGE, MAX_SOCKET_PATH_BYTES, endSocket, noop } from "./socket.js";

/** Options of {@link UnixSocketServer} and {@link listenUnix}: the socket file, limits and callbacks. */
export interface UnixSocketServerOptions extends MessageLimits, NdjsonWriteOptions {
  /** Socket path to listen on. */
  path: string;
  /** File mode of the socket. Default 0o600 (only this user can connect). */
  mode?: number;
  /**
   * Connections served at once. At the cap the connection idle the longest with nothing in flight
   * is closed to make room; only when every connection has requests in flight is the newcomer
   * refused (a -32003 notice, then closed). Default: derived from the file-descriptor limit
   * (`defaultMaxConnections()`: 1024 at most, 192 under `ulimit -n 1024`).
   */
  maxConnections?: number;
  /**
   * A connection that sent no message for this long and has nothing in flight is closed (ms);
   * 0 disables. Default 600000 (10 minutes). Clients reconnect for their next call.
   */
  idleTimeoutMs?: number;
  /**
   * A connection whose peer took none of the bytes written to it for this long is closed, with
   * whatever requests it has in flight (ms); 0 disables. Default 30000.
   */
  stallTimeoutMs?: number;
  /**
   * Requests of one connection handled at once; at the limit the connection is not read until
   * answers have been written (socket backpressure for the agent). Default 256.
   */
  maxInFlight?: number;
  /** After an agent ended its side, how long to wait for pending answers before closing (ms). Default 30000. */
  drainTimeoutMs?: number;
  /** `close()` ends each connection and waits this long before destroying it (ms). Default 2000. */
  closeGraceMs?: number;
  /** Called for every accepted connection (before it is served); `transport.closed` tells when it ends. */
  onconnection?: (transport: UnixSocketServerTransport) => void;
  /** Non-fatal problems (refused connections, failed writes). Library code never logs. */
  onerror?: (error: Error) => void;
}

/** Default file mode of the socket: only the owner may connect. */
export const DEFAULT_SOCKET_MODE = 0o600;
/** The highest default `maxConnections` (the default is derived from the file-descriptor limit, see `defaultMaxConnections`). */
export const DEFAULT_MAX_CONNECTIONS = 1024;

/**
 * Serves an `AhpServer` on a Unix domain socket, one NDJSON connection per agent. `listen()`
 * removes a stale socket file left by a dead process (never a live one, nor a file that is not a
 * socket), binds with `mode`, and `close()` ends every connection and removes the socket file.
 */
export class UnixSocketServer {
  readonly path: string;
  readonly #server: AhpServer;
  readonly #options: UnixSocketServerOptions;
  readonly #net: Server;
  readonly #transports = new Set<UnixSocketServerTransport>();
  readonly #refused = new Set<Socket>();
  readonly #roster: ConnectionRoster;
  readonly #idleMs: number;
  #identity?: SocketIdentity;
  #state: "new" | "binding" | "listening" | "closing" | "closed" = "new";
  #binding?: Promise<void>;
  #closing?: Promise<void>;

  constructor(server: AhpServer, options: UnixSocketServerOptions) {
    if (typeof options?.path !== "string" || options.path.length === 0) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServer: `path` must be a non-empty string");
    }
    if (options.path.startsWith("\0")) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServer: abstract socket names are not supported; use a file path");
    }
    if (Buffer.byteLength(options.path) > MAX_SOCKET_PATH_BYTES) {
      throw new AhpLocalError(
        "INVALID_ARGUMENT",
        `UnixSocketServer: socket path is ${Buffer.byteLength(options.path)} bytes; the limit is ${MAX_SOCKET_PATH_BYTES}`,
        { details: { path: options.path } },
      );
    }
    const mode = options.mode ?? DEFAULT_SOCKET_MODE;
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServer: `mode` must be a file mode between 0 and 0o777");
    }
    const limit = options.maxConnections;
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServer: `maxConnections` must be an integer >= 1");
    }
    const idle = options.idleTimeoutMs;
    if (idle !== undefined && (!Number.isInteger(idle) || idle < 0)) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServer: `idleTimeoutMs` must be an integer >= 0 (0 disables)");
    }
    const stall = options.stallTimeoutMs;
    if (stall !== undefined && (!Number.isInteger(stall) || stall < 0)) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServer: `stallTimeoutMs` must be an integer >= 0 (0 disables)");
    }
    const inFlight = options.maxInFlight;
    if (inFlight !== undefined && (!Number.isInteger(inFlight) || inFlight < 1)) {
      throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServer: `maxInFlight` must be an integer >= 1");
    }
    this.path = options.path;
    this.#server = server;
    this.#options = options;
    // allowHalfOpen: an agent that ends its side still gets the answers to what it sent.
    this.#idleMs = idle === 0 ? Number.POSITIVE_INFINITY : (idle ?? DEFAULT_IDLE_TIMEOUT_MS);
    this.#roster = new ConnectionRoster({
      transport: "unix",
      maxConnections: limit ?? defaultMaxConnections(),
      ...(stall === undefined ? {} : { writeStallMs: stall }),
      onerror: options.onerror,
    });
    this.#net = createServer({ allowHalfOpen: true }, (socket) => this.#accept(socket));
    // EMFILE/ENFILE while accepting: reported and backed off by the roster; anything else reported.
    this.#net.on("error", (error) => {
      if (!this.#roster.acceptFailed(error)) this.#options.onerror?.(error);
    });
  }

  get listening(): boolean {
    return this.#state === "listening";
  }

  /** Connections currently served. */
  get connectionCount(): number {
    return this.#transports.size;
  }

  /** Claims the path (replacing only a stale socket) and starts accepting connections. */
  async listen(): Promise<void> {
    if (this.#state !== "new") throw new AhpLocalError("INVALID_ARGUMENT", "UnixSocketServer: listen() may be called once");
    this.#state = "binding";
    this.#binding = (async () => {
      await clearStaleSocket(this.path);
      this.#identity = await listenAt(this.#net, this.path, this.#options.mode ?? DEFAULT_SOCKET_MODE);
    })();
    try {
      await this.#binding;
    } catch (error) {
      this.#state = "closed";
      throw error;
    }
    if (this.#state === "binding") this.#state = "listening";
  }

  /** Stops accepting, ends every connection, removes the socket file; resolves when all is done. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#state !== "closed") this.#state = "closing";
    this.#roster.close();
    await this.#binding?.catch(noop);
    const stopped = this.#net.listening ? new Promise<void>((resolve) => this.#net.close(() => resolve())) : Promise.resolve();
    const graceMs = this.#options.closeGraceMs ?? 2000;
    await Promise.allSettled([
      ...[...this.#transports].map((transport) => transport.close()),
      ...[...this.#refused].map((socket) => endSocket(socket, graceMs)),
    ]);
    await stopped;
    if (this.#identity !== undefined) await removeSocketFile(this.path, this.#identity);
    this.#state = "closed";
  }

  #accept(socket: Socket): void {
    socket.on("error", noop); // errors are reported through the transport once it exists
    if (this.#state !== "listening" && this.#state !== "binding") {
      socket.destroy();
      return;
    }
    // Closed by the roster (idle, or to make room) once it is served.
    const served: { transport?: UnixSocketServerTransport } = {};
    const entry = this.#roster.admit(
      this.#idleMs,
      (reason) => (reason === "stalled" ? this.#closeStalled(socket) : this.#closeIdle(served.transport, reason)),
      this.path,
    );
    if (entry === undefined) {
      // The roster reported why (every connection busy, or backing off after EMFILE).
      this.#refuse(socket, `Server busy: too many connections (limit ${this.#roster.maxConnections})`);
      return;
    }
    const transport = new UnixSocketServerTransport(socket, {
      info: { transport: "unix", remote: this.path },
      ...(this.#options.maxMessageBytes === undefined ? {} : { maxMessageBytes: this.#options.maxMessageBytes }),
      ...(this.#options.maxJsonDepth === undefined ? {} : { maxJsonDepth: this.#options.maxJsonDepth }),
      ...(this.#options.flushLines === undefined ? {} : { flushLines: this.#options.flushLines }),
      ...(this.#options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: this.#options.drainTimeoutMs }),
      ...(this.#options.closeGraceMs === undefined ? {} : { closeGraceMs: this.#options.closeGraceMs }),
    });
    served.transport = transport;
    this.#roster.watchWrites(entry, socket);
    this.#transports.add(transport);
    void transport.closed.then(() => {
      this.#transports.delete(transport);
      this.#roster.remove(entry);
    });
    try {
      this.#options.onconnection?.(transport);
    } catch (error) {
      this.#options.onerror?.(toError(error));
    }
    const maxInFlight = this.#options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    const gated = limitInFlight(
      transport,
      maxInFlight,
      { pause: () => socket.pause(), resume: () => socket.resume() },
      () =>
        this.#options.onerror?.(
          new AhpLimitError(
            "LIMIT_EXCEEDED",
            `${maxInFlight} requests in flight on one connection to ${this.path}: reading paused until answers are written (reported once per connection)`,
            { transport: "unix", limit: "max_in_flight", value: maxInFlight, action: "paused_reading", remote: this.path },
            { details: { maxInFlight } },
          ),
        ),
      entry,
    );
    this.#server.connect(gated).catch((error: unknown) => {
      this.#options.onerror?.(toError(error));
      void transport.close();
    });
  }

  /**
   * Closes a connection the roster let go; an idle or evicted one is told so first, so that its
   * client reconnects. The close never waits for the notice's write: a peer that stopped reading
   * would keep it unconfirmed, and with it the descriptor, after the roster forgot the connection.
   * The notice is handed to the socket before its end (close() flushes queued lines), and the
   * socket is destroyed after `closeGraceMs` when the peer does not take it.
   */
  #closeIdle(transport: UnixSocketServerTransport | undefined, reason: "idle" | "evicted" | "shed" | "stalled"): void {
    if (transport === undefined) return;
    if (reason !== "shed") {
      transport.post(
        { jsonrpc: "2.0", id: null, error: { code: AhpErrorCode.ServerClosing, message: IDLE_CLOSE_MESSAGE } },
        noop,
        undefined,
      );
    }
    void transport.close();
  }

  /**
   * Drops a connection whose peer stopped reading: the socket is destroyed (its pending writes
   * cannot complete), so the connection closes with this cause and its requests in flight fail.
   */
  #closeStalled(socket: Socket): void {
    const ms = this.#roster.writeStallMs;
    socket.destroy(
      new AhpLocalError("TIMEOUT", `Unix socket peer took no bytes written to it for ${ms} ms (stallTimeoutMs): connection dropped`, {
        details: { stallTimeoutMs: ms },
      }),
    );
  }

  /** Tells the agent why (a -32003 notice with id null, which it can show) and closes the connection. */
  #refuse(socket: Socket, message: string): void {
    this.#refused.add(socket);
    socket.once("close", () => this.#refused.delete(socket));
    const notice = { jsonrpc: "2.0", id: null, error: { code: AhpErrorCode.ServerClosing, message } };
    socket.write(`${JSON.stringify(notice)}\n`);
    void endSocket(socket, this.#options.closeGraceMs ?? 2000);
  }
}

/** Creates a {@link UnixSocketServer} for `server` and starts listening. */
export async function listenUnix(server: AhpServer, options: UnixSocketServerOptions): Promise<UnixSocketServer> {
  const listener = new UnixSocketServer(server, options);
  await listener.listen();
  return listener;
}

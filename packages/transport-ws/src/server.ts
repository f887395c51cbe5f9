/**
 * The harness side of AHP over WebSocket (spec §13.3): every accepted socket becomes one
 * AhpServer connection. Credentials are verified before the upgrade completes (401 otherwise),
 * sends are bounded by `maxBufferedBytes` (the socket stops reading while answers wait, and a
 * peer that does not read for `drainTimeoutMs` is dropped), and silent peers are found with
 * pings.
 */
import { deliverFrame } from "./frame.js";
import type * as http from "node:http";
import type * as https from "node:https";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import {
  AhpLimitError,
  AhpLocalError,
  type ConnectionRoster,
  type RosterEntry,
  DEFAULT_MAX_MESSAGE_BYTES,
  stringifyMessage,
  toError,
  type AhpServer,
  type JsonRpcMessage,
  type MessageLimits,
  type Transport,
  type TransportInfo,
  type TransportSendOptions,
} from "@ahp/core";
import { WebSocketServer as WsServer, type RawData, type WebSocket, type WebSocketServer } from "ws";
import { closeCause, errorCause } from "./close-cause.js";
import { CredentialVerifier, type AuthorizeRequest, type ServerAuthOption } from "@ahp/core";
import { credentialsFromUpgrade } from "./credentials.js";
import { FrameSender, type Corkable } from "./sender.js";
import { DEFAULT_MAX_IN_FLIGHT, limitInFlight, type ReadGate } from "@ahp/core";

/** Default path `listenWebSocket` accepts agents on. */
export const DEFAULT_WS_PATH = "/ahp";
/** Default `maxBufferedBytes`: above this many unsent answer bytes, answers wait and reading pauses. */
export const DEFAULT_SERVER_MAX_BUFFERED_BYTES = 1024 * 1024;
/** Default `drainTimeoutMs`: an agent that reads nothing for this long while answers wait is dropped (ms). */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;
/** Default interval of the server's liveness pings to each agent (ms). */
export const DEFAULT_SERVER_PING_INTERVAL_MS = 30_000;
/** Default time an agent has to answer a ping before the server terminates its connection (ms). */
export const DEFAULT_SERVER_PONG_TIMEOUT_MS = 10_000;
/** Default `maxConnections`: agent connections one WebSocket server serves at once. */
export const DEFAULT_MAX_WS_CONNECTIONS = 1024;

/** Per-connection settings of the server side. */
export interface WebSocketConnectionOptions extends Pick<MessageLimits, "maxJsonDepth"> {
  /** Largest message in bytes; larger incoming frames close the connection with 1009. Default 8 MiB. */
  maxPayload?: number;
  /** Above this many buffered bytes, answers wait (and reading pauses) until the peer reads. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** A peer that reads nothing for this long while answers wait is dropped. Default 30000 ms; `0` disables. */
  drainTimeoutMs?: number;
  /** Ping each agent this often (ms); `0` disables. Default 30000. */
  pingIntervalMs?: number;
  /** An unanswered ping terminates the connection after this long (ms). Default 10000. */
  pongTimeoutMs?: number;
  /**
   * Requests of one connection handled at once; at the limit the connection is not read until
   * answers have been sent (TCP backpressure for the agent). Default 256.
   */
  maxInFlight?: number;
}

/** Options of {@link attachWebSocketServer}: your `wss` or `httpServer`, credentials, limits and callbacks. */
export interface AttachWebSocketOptions extends WebSocketConnectionOptions {
  /**
   * Your own `WebSocketServer`. Every `connection` it emits is served. Credentials are then
   * checked after the upgrade (a refused agent is closed with 1008); to answer 401 before the
   * upgrade, also pass `verifyClient: createVerifyClient(auth)` when you construct it.
   */
  wss?: WebSocketServer;
  /** Your own `http.Server` / `https.Server`: upgrades on `path` are verified (401) and served. */
  httpServer?: http.Server | https.Server;
  /** Only with `httpServer`: the accepted path (query ignored). Default: any path, as the reference. */
  path?: string;
  /** Credentials accepted at upgrade: query `api_key` / `token` (as the reference client sends) or headers. */
  auth?: ServerAuthOption;
  /**
   * Agent connections served at once; further upgrades are refused with 503 (with `httpServer`)
   * or closed with 1013 "try again later" (with `wss`). Default 1024. {@link listenWebSocket}
   * instead caps every TCP connection to its port (upgraded or not): at the cap the one idle the
   * longest with nothing in flight is closed to make room; its default is derived from the
   * file-descriptor limit (`defaultMaxConnections()`).
   */
  maxConnections?: number;
  /**
   * {@link listenWebSocket}: an agent connection that sent no message for this long and has
   * nothing in flight is closed (1001) (ms); 0 disables. Default 600000 (10 minutes). The
   * server's pings and the peer's pongs do not count as activity.
   */
  idleTimeoutMs?: number;
  /** {@link listenWebSocket}: time a TCP connection has to complete its WebSocket upgrade (or plain HTTP request) (ms). Default 10000. */
  upgradeTimeoutMs?: number;
  /** Only with `httpServer`: permessage-deflate. Default false. */
  perMessageDeflate?: boolean;
  /** Non-fatal problems: binary frames, refused peers, stalled peers. Credentials are never included. */
  onerror?: (error: Error) => void;
}

/** What {@link attachWebSocketServer} returns: the `WebSocketServer` in use, the open connections and `close()`. */
export interface AttachedWebSocketServer {
  readonly wss: WebSocketServer;
  /** Open agent connections. */
  readonly connectionCount: number;
  /** Closes every agent connection (1001) and stops serving; your `wss` / `httpServer` stay open. */
  close(): Promise<void>;
}

const UNAUTHORIZED = JSON.stringify({ error: "unauthorized" });

/** Upgrade requests that `createVerifyClient` already accepted, with their principal label. */
const verifiedRequests = new WeakMap<IncomingMessage, string | null>();

type Authenticate = (req: IncomingMessage) => Promise<string | null | false>;

function createAuthenticator(
  auth: ServerAuthOption | undefined,
  onerror?: (error: Error) => void,
): {
  authenticate: Authenticate;
  challenge: string | undefined;
} {
  if (auth === undefined) return { authenticate: async () => null, challenge: undefined };
  if (typeof auth === "function") {
    const authorize: AuthorizeRequest = auth;
    return {
      challenge: undefined,
      authenticate: async (req) => {
        try {
          return (await authorize(req)) === true ? null : false;
        } catch (error) {
          onerror?.(new Error(`auth function failed: ${toError(error).message}`));
          return false;
        }
      },
    };
  }
  const verifier = new CredentialVerifier(auth);
  return {
    challenge: verifier.acceptsBearer ? 'Bearer realm="ahp"' : undefined,
    authenticate: async (req) => verifier.verify(credentialsFromUpgrade(req)) ?? false,
  };
}

/**
 * A `verifyClient` callback for your own `new WebSocketServer({ verifyClient })`: refuses the
 * upgrade with 401 (and `WWW-Authenticate: Bearer` when bearer tokens are configured) unless the
 * query (`api_key`, `token`) or the headers carry an accepted credential.
 */
export function createVerifyClient(
  auth: ServerAuthOption,
): (
  info: { req: IncomingMessage },
  callback: (ok: boolean, code?: number, message?: string, headers?: http.OutgoingHttpHeaders) => void,
) => void {
  const { authenticate, challenge } = createAuthenticator(auth);
  return (info, callback) => {
    void authenticate(info.req).then((principal) => {
      if (principal === false) callback(false, 401, "Unauthorized", challenge === undefined ? {} : { "WWW-Authenticate": challenge });
      else {
        verifiedRequests.set(info.req, principal);
        callback(true);
      }
    });
  };
}

export function pathOf(url: string | undefined): string {
  if (url === undefined) return "/";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

function remoteOf(req: IncomingMessage): string | undefined {
  const { remoteAddress, remotePort } = req.socket;
  if (remoteAddress === undefined) return undefined;
  return remoteAddress.includes(":") ? `[${remoteAddress}]:${remotePort}` : `${remoteAddress}:${remotePort}`;
}

/** Answers an upgrade request with a plain HTTP status and closes the socket. */
function refuseUpgrade(socket: Duplex, status: number, text: string, body: string, extra: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const headers = {
    Connection: "close",
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    ...extra,
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n");
  socket.end(`HTTP/1.1 ${status} ${text}\r\n${head}\r\n\r\n${body}`);
}

/** One accepted agent socket as a core {@link Transport}. */
export class WebSocketServerTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info: TransportInfo;

  readonly #ws: WebSocket;
  readonly #sender: FrameSender;
  readonly #maxPayload: number;
  readonly #limits: MessageLimits;
  readonly #pingIntervalMs: number;
  readonly #pongTimeoutMs: number;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #pongTimer: ReturnType<typeof setTimeout> | undefined;
  #cause: AhpLocalError | undefined;
  #closedByUs = false;
  #finished = false;
  #closing: Promise<void> | undefined;
  /** Why reading is paused (the sender waiting for the peer to read, too many requests in flight). */
  readonly #pausedFor = new Set<string>();
  /** Resolves once the socket is closed. */
  readonly closed: Promise<void>;
  #resolveClosed!: () => void;

  /**
   * `socket` is the socket under `ws` (the upgrade request's `req.socket`); given, the answers
   * sent in one job leave together: the first at once, the rest in one write (see `FrameSender`).
   */
  constructor(ws: WebSocket, info: TransportInfo, options: WebSocketConnectionOptions = {}, socket?: Corkable) {
    this.#ws = ws;
    this.info = info;
    this.#maxPayload = options.maxPayload ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#limits = {
      maxMessageBytes: this.#maxPayload,
      ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
    };
    this.#pingIntervalMs = options.pingIntervalMs ?? DEFAULT_SERVER_PING_INTERVAL_MS;
    this.#pongTimeoutMs = options.pongTimeoutMs ?? DEFAULT_SERVER_PONG_TIMEOUT_MS;
    this.#sender = new FrameSender(ws, {
      maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_SERVER_MAX_BUFFERED_BYTES,
      drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
      pauseReading: true,
      readGate: this.readGate("congested"),
      socket,
      onStall: (stall) => {
        const error = this.#asLimit(stall, "outbound_stall", options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS, "dropped");
        this.#cause ??= error;
        this.onerror?.(error);
        ws.terminate();
      },
    });
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    // Listen for errors at once: `ws` emits them for bad frames, and an unheard error would crash.
    // A bad frame (not UTF-8, over `maxPayload`, a protocol violation) closes the connection:
    // say why through onerror, so that the harness's logs tell what the limit did.
    ws.on("error", (error) => {
      const wsCause = errorCause(error);
      const cause =
        wsCause.code === "MESSAGE_TOO_LARGE" ? this.#asLimit(wsCause, "max_message_bytes", this.#maxPayload, "closed_1009") : wsCause;
      const first = this.#cause === undefined;
      this.#cause ??= cause;
      if (first && !this.#finished) this.onerror?.(cause);
    });
    ws.once("close", (code: number, reason: Buffer) => this.#onClose(code, reason.toString("utf8")));
  }

  /** The same report as a limit report (see `limitRejectionOf`), for the harness's logs and metrics. */
  #asLimit(error: AhpLocalError, limit: "outbound_stall" | "max_message_bytes", value: number, action: string): AhpLimitError {
    const remote = this.info.remote;
    return new AhpLimitError(
      error.code,
      error.message,
      { transport: "ws", limit, value, action, ...(remote === undefined ? {} : { remote }) },
      { cause: error.cause, ...(error.details === undefined ? {} : { details: error.details }) },
    );
  }

  /** Pauses and resumes reading for one reason; reading resumes when no reason is left. */
  readGate(reason: string): ReadGate {
    return {
      pause: () => {
        if (this.#pausedFor.size === 0) this.#ws.pause();
        this.#pausedFor.add(reason);
      },
      resume: () => {
        if (!this.#pausedFor.delete(reason) || this.#pausedFor.size > 0) return;
        if (this.#ws.readyState === 1) this.#ws.resume();
      },
    };
  }

  async start(): Promise<void> {
    this.#ws.on("message", this.#onFrame);
    this.#ws.on("pong", () => this.#clearPongTimer());
    if (this.#pingIntervalMs > 0 && Number.isFinite(this.#pingIntervalMs)) {
      this.#pingTimer = setInterval(() => this.#ping(), this.#pingIntervalMs);
      this.#pingTimer.unref?.();
    }
  }

  readonly #onFrame = (data: RawData, isBinary: boolean): void => {
    // Nothing is read once this side decided to close: a request that crossed the close was not
    // handled, so an agent may send it again (see isIdleClose).
    if (this.#finished || this.#closedByUs) return;
    deliverFrame(this, data, isBinary, this.#limits);
  };

  #ping(): void {
    if (this.#pongTimer !== undefined || this.#ws.readyState !== 1) return;
    const timeoutMs = this.#pongTimeoutMs;
    this.#pongTimer = setTimeout(() => {
      this.#pongTimer = undefined;
      const cause = new AhpLocalError("TIMEOUT", `WebSocket peer did not answer a ping within ${timeoutMs}ms`, {
        details: { pongTimeoutMs: timeoutMs },
      });
      this.#cause ??= cause;
      this.onerror?.(cause);
      this.#ws.terminate();
    }, timeoutMs);
    this.#pongTimer.unref?.();
    this.#ws.ping();
  }

  #clearPongTimer(): void {
    if (this.#pongTimer !== undefined) {
      clearTimeout(this.#pongTimer);
      this.#pongTimer = undefined;
    }
  }

  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#finished || this.#ws.readyState !== 1) {
      return Promise.reject(this.#cause ?? new AhpLocalError("CONNECTION_CLOSED", "Connection closed"));
    }
    try {
      return this.#sender.send(stringifyMessage(message, this.#maxPayload), options?.signal);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `send()` without a promise per message on the common path (see `Transport.post`). */
  post<C>(message: JsonRpcMessage, onFailure: (error: Error, context: C) => void, context: C): void {
    let failure: Error | undefined;
    if (this.#finished || this.#ws.readyState !== 1) failure = this.#cause ?? new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
    else {
      try {
        this.#sender.post(stringifyMessage(message, this.#maxPayload), onFailure, context);
        return;
      } catch (error) {
        failure = toError(error);
      }
    }
    const error = failure;
    queueMicrotask(() => onFailure(error, context));
  }

  #onClose(code: number, reason: string): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#clearPongTimer();
    if (this.#pingTimer !== undefined) clearInterval(this.#pingTimer);
    const cause =
      this.#cause ?? (this.#closedByUs ? undefined : code === 1000 || code === 1001 ? undefined : closeCause("client", code, reason));
    this.#sender.fail(cause ?? new AhpLocalError("CONNECTION_CLOSED", "Connection closed"));
    this.#resolveClosed();
    this.onclose?.(cause);
  }

  /** Closes with `code` (default 1001 going away); a peer that does not answer within 1 s is cut. */
  close(code = 1001, reason = "server closing"): Promise<void> {
    this.#closing ??= (async () => {
      this.#closedByUs = true;
      if (!this.#finished) {
        const grace = setTimeout(() => this.#ws.terminate(), 1000);
        if (this.#ws.readyState === 1) this.#ws.close(code, reason);
        else this.#ws.terminate();
        await this.closed;
        clearTimeout(grace);
      }
    })();
    return this.#closing;
  }
}

/** How `listenWebSocket` tells the attached server about the TCP connections it tracks. */
export interface SocketRoster {
  readonly roster: ConnectionRoster;
  readonly entries: WeakMap<object, RosterEntry>;
  readonly transports: WeakMap<object, WebSocketServerTransport>;
  readonly idleMs: number;
}

/** Internal: the roster {@link listenWebSocket} hands to the server it attaches (not exported from the package). */
export const socketRosters = new WeakMap<AttachWebSocketOptions, SocketRoster>();

/** Internal: `upgrade` listeners that only observe an upgrade and never answer it (not another endpoint). */
export const upgradeObservers = new WeakSet<object>();

/**
 * Serves `server` over WebSocket on your own `WebSocketServer` (`wss`) or `http.Server`
 * (`httpServer`). With `httpServer`, upgrades outside `path` are left to other `upgrade`
 * listeners (or answered 404 when there are none) and refused agents get 401 before the
 * upgrade completes.
 */
export function attachWebSocketServer(server: AhpServer, options: AttachWebSocketOptions): AttachedWebSocketServer {
  if ((options.wss === undefined) === (options.httpServer === undefined)) {
    throw new AhpLocalError("INVALID_ARGUMENT", "attachWebSocketServer needs exactly one of `wss` or `httpServer`");
  }
  const onerror = options.onerror;
  const { authenticate, challenge } = createAuthenticator(options.auth, onerror);
  const transports = new Set<WebSocketServerTransport>();
  const connectionOptions: WebSocketConnectionOptions = {
    maxPayload: options.maxPayload ?? DEFAULT_MAX_MESSAGE_BYTES,
    ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
    ...(options.maxBufferedBytes === undefined ? {} : { maxBufferedBytes: options.maxBufferedBytes }),
    ...(options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs }),
    ...(options.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.pingIntervalMs }),
    ...(options.pongTimeoutMs === undefined ? {} : { pongTimeoutMs: options.pongTimeoutMs }),
  };
  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_WS_CONNECTIONS;
  for (const [name, value] of [
    ["maxInFlight", maxInFlight],
    ["maxConnections", maxConnections],
  ] as const) {
    if (!Number.isInteger(value) || value < 1)
      throw new AhpLocalError("INVALID_ARGUMENT", `attachWebSocketServer: \`${name}\` must be an integer >= 1`);
  }
  /** Upgrades accepted and not yet served (authentication still running). */
  let upgrading = 0;
  const tracked = socketRosters.get(options);
  // Under listenWebSocket the roster caps TCP connections (and makes room) before any upgrade.
  const full = () => tracked === undefined && transports.size + upgrading >= maxConnections;
  const refusedFull = (req: IncomingMessage) => {
    const remote = remoteOf(req);
    onerror?.(
      new AhpLimitError(
        "LIMIT_EXCEEDED",
        `WebSocket connection refused: ${maxConnections} connections open (limit maxConnections)`,
        {
          transport: "ws",
          limit: "max_connections",
          value: maxConnections,
          action: "refused",
          ...(remote === undefined ? {} : { remote }),
        },
        { details: { maxConnections } },
      ),
    );
  };
  let closed = false;

  const serve = (ws: WebSocket, req: IncomingMessage, principal: string | null) => {
    if (closed) {
      ws.terminate();
      return;
    }
    const info: TransportInfo = { transport: "ws" };
    const remote = remoteOf(req);
    if (remote !== undefined) info.remote = remote;
    if (typeof principal === "string") info.principal = principal;
    const transport = new WebSocketServerTransport(ws, info, connectionOptions, req.socket);
    transports.add(transport);
    const entry = tracked?.entries.get(req.socket);
    if (entry !== undefined) {
      entry.inFlight = 0; // the upgrade is done; from now on the requests in flight count
      tracked!.transports.set(req.socket, transport);
      tracked!.roster.setIdle(entry, tracked!.idleMs);
    }
    void transport.closed.then(() => transports.delete(transport));
    // AhpServer.connect() installs its callbacks synchronously; report transport notices to ours too.
    const gated = limitInFlight(
      transport,
      maxInFlight,
      transport.readGate("in-flight"),
      () =>
        onerror?.(
          new AhpLimitError(
            "LIMIT_EXCEEDED",
            `${maxInFlight} requests in flight on one WebSocket connection${remote === undefined ? "" : ` from ${remote}`}: reading paused until answers are sent (reported once per connection)`,
            {
              transport: "ws",
              limit: "max_in_flight",
              value: maxInFlight,
              action: "paused_reading",
              ...(remote === undefined ? {} : { remote }),
            },
            { details: { maxInFlight } },
          ),
        ),
      entry,
    );
    const connecting = server.connect(gated);
    if (onerror !== undefined) {
      const coreOnError = transport.onerror;
      transport.onerror = (error) => {
        coreOnError?.(error);
        onerror(error);
      };
    }
    connecting.catch((error: unknown) => {
      onerror?.(toError(error));
      void transport.close(1011, "server unavailable");
    });
  };

  let wss: WebSocketServer;
  let detach: () => void;
  if (options.httpServer !== undefined) {
    const httpServer = options.httpServer;
    const ownWss: WebSocketServer = new WsServer({
      noServer: true,
      maxPayload: connectionOptions.maxPayload!,
      perMessageDeflate: options.perMessageDeflate ?? false,
    });
    wss = ownWss;
    const path = options.path;
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (path !== undefined && pathOf(req.url) !== path) {
        // Someone else's upgrade (another WebSocket endpoint on the same server)? Listeners that
        // only observe upgrades (the listener's in-flight count) claim none.
        if (httpServer.listeners("upgrade").some((l) => l !== onUpgrade && !upgradeObservers.has(l))) return;
        refuseUpgrade(socket, 404, "Not Found", JSON.stringify({ error: "not found" }));
        return;
      }
      const onSocketError = () => socket.destroy();
      socket.on("error", onSocketError);
      if (closed) {
        refuseUpgrade(socket, 503, "Service Unavailable", JSON.stringify({ error: "server closing" }));
        return;
      }
      if (full()) {
        refusedFull(req);
        refuseUpgrade(socket, 503, "Service Unavailable", JSON.stringify({ error: "too many connections" }), { "Retry-After": "1" });
        return;
      }
      upgrading++;
      authenticate(req).then(
        (principal) => {
          upgrading--;
          socket.off("error", onSocketError);
          if (principal === false) {
            // Says nothing about which part failed; never echoes what was presented.
            refuseUpgrade(socket, 401, "Unauthorized", UNAUTHORIZED, challenge === undefined ? {} : { "WWW-Authenticate": challenge });
            return;
          }
          if (socket.destroyed) return;
          ownWss.handleUpgrade(req, socket, head, (ws) => serve(ws, req, principal));
        },
        (error: unknown) => {
          upgrading--;
          onerror?.(toError(error));
          socket.destroy();
        },
      );
    };
    httpServer.on("upgrade", onUpgrade);
    detach = () => {
      httpServer.off("upgrade", onUpgrade);
      ownWss.close();
    };
  } else {
    wss = options.wss!;
    const checkAfterUpgrade = options.auth !== undefined;
    const onConnection = (ws: WebSocket, req: IncomingMessage) => {
      if (full()) {
        refusedFull(req);
        ws.close(1013, "too many connections");
        return;
      }
      const verified = verifiedRequests.get(req);
      if (!checkAfterUpgrade || verified !== undefined) {
        serve(ws, req, verified ?? null);
        return;
      }
      authenticate(req).then(
        (principal) => {
          if (principal === false) {
            onerror?.(new AhpLocalError("TRANSPORT_ERROR", "WebSocket connection refused: unauthorized"));
            ws.close(1008, "unauthorized");
            return;
          }
          serve(ws, req, principal);
        },
        () => ws.close(1008, "unauthorized"),
      );
    };
    wss.on("connection", onConnection);
    detach = () => wss.off("connection", onConnection);
  }

  return {
    wss,
    get connectionCount() {
      return transports.size;
    },
    async close() {
      if (closed) return;
      closed = true;
      detach();
      await Promise.allSettled([...transports].map((t) => t.close()));
      transports.clear();
    },
  };
}

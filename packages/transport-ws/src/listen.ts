/** `listenWebSocket`: an HTTP(S) server of its own carrying WebSocket agents, health and readiness routes, and connection limits. */
import * as http from "node:http";
import * as https from "node:https";
import type { IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  AhpLocalError,
  answerReadiness,
  ConnectionRoster,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_READY_PATH,
  DEFAULT_UPGRADE_TIMEOUT_MS,
  defaultMaxConnections,
  httpServerOptions,
  reportClientErrors,
  type AhpServer,
  type HttpServerLimits,
  type Readiness,
} from "@ahp/core";
import type { WebSocketServer } from "ws";
import { IDLE_EVICTED_REASON, IDLE_TIMEOUT_REASON } from "./close-cause.js";
import {
  attachWebSocketServer,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_WS_PATH,
  pathOf,
  socketRosters,
  upgradeObservers,
  type AttachWebSocketOptions,
  type SocketRoster,
} from "./server.js";

/** Options of {@link listenWebSocket}: those of {@link attachWebSocketServer}, plus address, path, TLS and HTTP server limits. */
export interface ListenWebSocketOptions extends Omit<AttachWebSocketOptions, "wss" | "httpServer">, HttpServerLimits {
  /** Plain HTTP requests this listener does not serve itself (instead of 404), e.g. `/metrics`. */
  fallback?: (req: IncomingMessage, res: http.ServerResponse) => void;
  /**
   * Whether the harness can decide now, answered on `GET /readyz` without credentials (like
   * `/healthz`): 200 `{"status":"ready","checks":{…}}` or 503 `{"status":"not_ready",…}`. Unset: ready whenever alive.
   */
  readiness?: Readiness;
  /** How long `/readyz` waits for `readiness` before answering 503 (ms). Default 5000. */
  readinessTimeoutMs?: number;
  /** Default `127.0.0.1` (loopback only). */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Serve `wss:` with this certificate and key (PEM). */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

/** A running {@link listenWebSocket} server: its URL and port, the underlying servers, and `close()`. */
export interface WebSocketListener {
  /** `ws://host:port/ahp` */
  readonly url: string;
  readonly port: number;
  readonly httpServer: http.Server;
  readonly wss: WebSocketServer;
  readonly connectionCount: number;
  /** Closes every agent connection (1001) and the listening server. Does not close the AhpServer. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP(S) server on `host:port` (default `127.0.0.1`, a free port) accepting
 * WebSocket agents on `path` (default `/ahp`). Plain HTTP requests get `GET /healthz` → 200
 * `{"status":"ok"}` (alive), `GET /readyz` → 200 or 503 (see `readiness`), 426 on the AHP path and 404 elsewhere.
 */
export async function listenWebSocket(server: AhpServer, options: ListenWebSocketOptions = {}): Promise<WebSocketListener> {
  const {
    host = "127.0.0.1",
    port = 0,
    tls,
    path = DEFAULT_WS_PATH,
    fallback,
    headersTimeoutMs,
    requestTimeoutMs,
    readiness,
    readinessTimeoutMs,
    idleTimeoutMs,
    upgradeTimeoutMs = DEFAULT_UPGRADE_TIMEOUT_MS,
    ...attachOptions
  } = options;
  for (const [name, value] of [
    ["idleTimeoutMs", idleTimeoutMs ?? 0],
    ["upgradeTimeoutMs", upgradeTimeoutMs],
  ] as const) {
    if (!Number.isInteger(value) || value < 0)
      throw new AhpLocalError("INVALID_ARGUMENT", `listenWebSocket: \`${name}\` must be an integer >= 0`);
  }
  const maxConnections = attachOptions.maxConnections ?? defaultMaxConnections();
  const tracked: SocketRoster = {
    // A peer that takes none of the bytes written to its socket for drainTimeoutMs is dropped,
    // also when the answers waiting for it fit below maxBufferedBytes.
    roster: new ConnectionRoster({
      transport: "ws",
      maxConnections,
      writeStallMs: attachOptions.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
      onerror: attachOptions.onerror,
    }),
    entries: new WeakMap(),
    transports: new WeakMap(),
    idleMs: idleTimeoutMs === 0 ? Number.POSITIVE_INFINITY : (idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS),
  };
  const onRequest = (req: IncomingMessage, res: http.ServerResponse) => {
    const requestPath = pathOf(req.url);
    const send = (status: number, body: string, extra: Record<string, string> = {}) => {
      res.writeHead(status, { ...extra, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    };
    if (requestPath === "/healthz" && (req.method === "GET" || req.method === "HEAD")) send(200, '{"status":"ok"}');
    else if (requestPath === DEFAULT_READY_PATH) void answerReadiness(req, res, readiness, readinessTimeoutMs);
    else if (requestPath === path) send(426, JSON.stringify({ error: "WebSocket upgrade required" }), { upgrade: "websocket" });
    else if (fallback !== undefined) fallback(req, res);
    else send(404, JSON.stringify({ error: "not found" }));
  };
  const serverOptions = httpServerOptions({
    ...(headersTimeoutMs === undefined ? {} : { headersTimeoutMs }),
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
  });
  const httpServer: http.Server =
    tls === undefined
      ? http.createServer(serverOptions, onRequest)
      : https.createServer({ ...serverOptions, cert: tls.cert, key: tls.key }, onRequest);
  reportClientErrors(httpServer, serverOptions, attachOptions.onerror, "ws");
  // Every TCP connection is counted from its accept: one that never upgrades is closed after
  // upgradeTimeoutMs, and at the cap the one idle the longest with nothing in flight makes room.
  httpServer.on("connection", (socket: Socket) => {
    const remote = socket.remoteAddress === undefined ? undefined : `${socket.remoteAddress}:${socket.remotePort}`;
    const entry = tracked.roster.admit(
      upgradeTimeoutMs === 0 ? Number.POSITIVE_INFINITY : upgradeTimeoutMs,
      (reason) => {
        const transport = tracked.transports.get(socket);
        if (transport === undefined || reason === "shed" || reason === "stalled") socket.destroy();
        else void transport.close(1001, reason === "idle" ? IDLE_TIMEOUT_REASON : IDLE_EVICTED_REASON);
      },
      remote,
    );
    if (entry === undefined) {
      socket.destroy();
      return;
    }
    tracked.entries.set(socket, entry);
    tracked.roster.watchWrites(entry, socket);
    socket.once("close", () => tracked.roster.remove(entry));
  });
  // An upgrade in progress (its headers received, credentials being checked) is in flight: a
  // flood of newer connections must not close it as the longest idle. Serving the upgraded
  // connection hands the count to its in-flight limiter.
  const countUpgrade = (req: IncomingMessage) => {
    const entry = tracked.entries.get(req.socket);
    if (entry !== undefined) entry.inFlight++;
  };
  upgradeObservers.add(countUpgrade);
  httpServer.prependListener("upgrade", countUpgrade);
  // A plain HTTP request in progress (health, readiness) is in flight.
  httpServer.on("request", (req: IncomingMessage, res: http.ServerResponse) => {
    const entry = tracked.entries.get(req.socket);
    if (entry === undefined) return;
    entry.inFlight++;
    res.once("close", () => {
      entry.inFlight--;
      entry.lastActive = Date.now();
    });
  });
  const attachWith: AttachWebSocketOptions = { ...attachOptions, maxConnections, httpServer, path };
  socketRosters.set(attachWith, tracked);
  const attached = attachWebSocketServer(server, attachWith);
  try {
    await new Promise<void>((resolve, reject) => {
      httpServer.once("error", reject);
      httpServer.listen(port, host, () => {
        httpServer.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await attached.close();
    throw error;
  }
  // After listening, a server error is a failed accept: EMFILE/ENFILE back off, the rest is reported.
  httpServer.on("error", (error) => {
    if (!tracked.roster.acceptFailed(error)) attachOptions.onerror?.(error);
  });
  const address = httpServer.address() as AddressInfo;
  const hostPart = address.address.includes(":") ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `${tls === undefined ? "ws" : "wss"}://${hostPart}:${address.port}${path}`,
    port: address.port,
    httpServer,
    wss: attached.wss,
    get connectionCount() {
      return attached.connectionCount;
    },
    close() {
      closing ??= (async () => {
        tracked.roster.close();
        const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
        await attached.close();
        httpServer.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}

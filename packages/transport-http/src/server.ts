/**
 * The harness side of AHP over HTTP (spec §13.2): a plain Node `(req, res, next?)` handler
 * that answers `POST <path>` with the status codes of the reference, plus a `listenHttp`
 * convenience server.
 *
 * | situation                                          | status | body                                   |
 * | -------------------------------------------------- | ------ | -------------------------------------- |
 * | request (also a JSON-RPC error)                    | 200    | JSON-RPC response                      |
 * | notification handled (or ignored method)           | 204    | empty                                  |
 * | notification rejected, `rejectedNotifications: "reference"` | 200 | `{"jsonrpc":"2.0","id":"","error":{-32603 …}}` |
 * | notification rejected, `rejectedNotifications: "204"`       | 204 | empty                          |
 * | valid JSON, neither request nor notification       | 200    | -32600 `Invalid JSON-RPC message`, id `""` |
 * | malformed JSON                                     | 400    | -32700, id `null`                      |
 * | JSON nested deeper than the limit                  | 400    | -32002, id `null`                      |
 * | credentials configured and missing / wrong         | 401    | `{"error":"unauthorized"}`             |
 * | other path                                         | 404 (or `next()`)                       |
 * | other method on the path                           | 405, `Allow: POST`                      |
 * | body over `maxBodyBytes`                           | 413, connection closed                  |
 * | content type not JSON                              | 415                                     |
 * | `maxInFlight` requests already pending on the socket | 503, -32003, id `null`, `Retry-After: 1` |
 *
 * `listenHttp` also bounds the connections it serves (`maxConnections`) and how long a client
 * may take to send its request (`headersTimeoutMs`, `requestTimeoutMs`: 408 and closed).
 */
import * as http from "node:http";
import * as https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  AhpError,
  AhpErrorCode,
  answerReadiness,
  ConnectionRoster,
  DEFAULT_READY_PATH,
  defaultMaxConnections,
  parseJsonText,
  stringifyMessage,
  toError,
  type AhpProcessResult,
  type AhpServer,
  type AhpServerConnection,
  type Readiness,
  type RosterEntry,
  type TransportInfo,
} from "@ahp/core";
import {
  AhpLimitError,
  AhpLocalError,
  CredentialVerifier,
  frameLimitOf,
  credentialsFromHeaders,
  type AuthorizeRequest,
  type ServerAuthOption,
} from "@ahp/core";
import { httpServerOptions, reportClientErrors, type HttpServerLimits } from "@ahp/core";

/** Default path of the AHP route (`POST`). */
export const DEFAULT_HTTP_PATH = "/ahp";
/** Default health route: `GET` answers 200 `{"status":"ok"}` without credentials. */
export const DEFAULT_HEALTH_PATH = "/healthz";
/** Default `maxBodyBytes` (the reference's 2 MiB); a larger body is answered 413 without being buffered. */
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Default `maxInFlight`: requests handled at once on one connection; further ones get 503. */
export const DEFAULT_MAX_IN_FLIGHT = 256;
/** The highest default `maxConnections` of {@link listenHttp} (the default is derived from the file-descriptor limit). */
export const DEFAULT_SERVER_MAX_CONNECTIONS = 1024;
/** Default `keepAliveTimeoutMs` of {@link listenHttp}: an idle keep-alive connection is closed after this long (ms). */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;

/** Options of the HTTP request handler: route, health route, credentials and limits. */
export interface HttpHandlerOptions {
  /** The one AHP route. Default `/ahp`. Matched exactly against the request path (query ignored). */
  path?: string;
  /** `GET` health route answering 200 `{"status":"ok"}` without credentials. Default `/healthz`; `false` disables. */
  healthPath?: string | false;
  /**
   * `GET` readiness route, without credentials like the health route: 200 `{"status":"ready","checks":{…}}`
   * when `readiness` says ready, 503 `{"status":"not_ready",…}` otherwise. Default `/readyz`; `false` disables.
   */
  readyPath?: string | false;
  /** Whether the harness can decide now (policy loaded, audit sink writable, …). Unset: ready whenever alive. */
  readiness?: Readiness;
  /** How long `/readyz` waits for `readiness` before answering 503 (ms). Default 5000. */
  readinessTimeoutMs?: number;
  /**
   * Verify credentials: API keys (`X-API-Key`), bearer tokens (`Authorization: Bearer`), or
   * your own function. Unset: no check (as the reference).
   */
  auth?: ServerAuthOption;
  /** Largest accepted body in bytes. Default 2 MiB (the reference's). Larger bodies get 413. */
  maxBodyBytes?: number;
  /** Deepest accepted JSON nesting. Default 128. */
  maxJsonDepth?: number;
  /**
   * Requests handled at once on one connection (HTTP/1.1 pipelining); further ones are answered
   * 503 with a -32003 error until earlier ones are answered. Default 256.
   */
  maxInFlight?: number;
  /**
   * Answer to a notification the harness rejected (undecodable event, blocking type, …):
   * `reference` (default): 200 with `{"jsonrpc":"2.0","id":"","error":{"code":-32603,"message":"Handler error: …"}}`,
   * exactly as the reference server; `204`: 204 No Content, as JSON-RPC prescribes (a notification
   * is never answered). Reference clients ignore the body either way.
   */
  rejectedNotifications?: "reference" | "204";
  /** Unexpected failures (a handler crash outside AhpServer, a failing auth function). Secrets are never included. */
  onerror?: (error: Error) => void;
}

/** A Node request handler; `next` is called for foreign paths when given (Express/Connect style). */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

const JSON_TYPE = "application/json";
const INVALID_MESSAGE = JSON.stringify({
  jsonrpc: "2.0",
  id: "",
  error: { code: AhpErrorCode.InvalidRequest, message: "Invalid JSON-RPC message" },
});
const UNAUTHORIZED = JSON.stringify({ error: "unauthorized" });

function sendJson(res: ServerResponse, status: number, text: string, extra?: http.OutgoingHttpHeaders): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...extra, "content-type": JSON_TYPE, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const errorJson = (message: string) => JSON.stringify({ error: message });
const rpcError = (error: AhpError, id: string | null = null) => JSON.stringify({ jsonrpc: "2.0", id, error: error.toJSON() });

function isJsonContentType(value: string | undefined): boolean {
  if (value === JSON_TYPE) return true;
  if (value === undefined) return false;
  const semicolon = value.indexOf(";");
  const type = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  return type === JSON_TYPE || (type.startsWith("application/") && type.endsWith("+json"));
}

/** §3.4 rule 2 without the id test: what the reference would classify as a notification (JSON-RPC "2.0" only, ADR 0154). */
function isNotificationShaped(message: unknown): boolean {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  return m.jsonrpc === "2.0" && typeof m.method === "string" && "params" in m;
}

type SocketConnection = AhpServerConnection & { close(): void };

type BodyResult = { ok: true; body: Buffer } | { ok: false; bytes: number };

/**
 * Reads the request body, stopping (without buffering the rest) as soon as it passes `limit`.
 * Once settled its listeners stay on the finished request and ignore what follows (a request
 * that ended or failed emits nothing that matters any more): removing four listeners per request
 * cost more than the rest of this function.
 */
function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve({ ok: false, bytes: Number(declared) });
  return new Promise((resolve, reject) => {
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let total = 0;
    let settled = false;
    const onData = (chunk: Buffer) => {
      if (settled) return;
      total += chunk.length;
      if (total > limit) {
        settled = true;
        req.off("data", onData);
        req.pause();
        resolve({ ok: false, bytes: total });
        return;
      }
      if (first === undefined) first = chunk;
      else (chunks ??= [first]).push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => {
      if (settled) return;
      settled = true;
      resolve({ ok: true, body: chunks !== undefined ? Buffer.concat(chunks, total) : (first ?? Buffer.alloc(0)) });
    });
    req.on("error", (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
    req.on("close", () => {
      if (settled) return;
      settled = true;
      reject(new Error("client closed the request"));
    });
  });
}

function remoteOf(req: IncomingMessage): string | undefined {
  const { remoteAddress, remotePort } = req.socket;
  if (remoteAddress === undefined) return undefined;
  return remoteAddress.includes(":") ? `[${remoteAddress}]:${remotePort}` : `${remoteAddress}:${remotePort}`;
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return "/";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Creates a Node request handler serving `server` at `options.path` (default `/ahp`). Mount it
 * in `http.createServer(handler)`, as Express/Connect middleware (`app.use(handler)`: foreign
 * paths go to `next()`), or call it with the raw `req`/`res` of another framework.
 *
 * Every kept-alive TCP connection is one AhpServer connection (`info.transport` `http`, `remote`
 * the peer address, `principal` a label such as `api_key#1`); a client that disconnects while
 * its request is pending aborts the handler's signal. Connection state such as a completed
 * handshake is therefore per socket: do not rely on it over HTTP (a client may use several).
 */
export function createHttpHandler(server: AhpServer, options: HttpHandlerOptions = {}): HttpHandler {
  const path = options.path ?? DEFAULT_HTTP_PATH;
  const healthPath = options.healthPath === undefined ? DEFAULT_HEALTH_PATH : options.healthPath;
  const readyPath = options.readyPath === undefined ? DEFAULT_READY_PATH : options.readyPath;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const parseLimits = {
    // Size is enforced while reading; the text is re-measured only for the nesting limit.
    maxMessageBytes: Number.MAX_SAFE_INTEGER,
    ...(options.maxJsonDepth === undefined ? {} : { maxJsonDepth: options.maxJsonDepth }),
  };
  const rejectedAs204 = options.rejectedNotifications === "204";
  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
    throw new AhpLocalError("INVALID_ARGUMENT", "`maxInFlight` must be an integer >= 1");
  const inFlight = new WeakMap<Socket, number>();
  const onerror = options.onerror;
  let verifier: CredentialVerifier | undefined;
  let authorize: AuthorizeRequest | undefined;
  if (typeof options.auth === "function") authorize = options.auth;
  else if (options.auth !== undefined) verifier = new CredentialVerifier(options.auth);
  const challenge = verifier?.acceptsBearer ? { "www-authenticate": 'Bearer realm="ahp"' } : undefined;

  /** Returns the principal label, `null` when authentication is off, or `false` when refused. */
  const authenticate = async (req: IncomingMessage): Promise<string | null | false> => {
    if (verifier !== undefined) return verifier.verify(credentialsFromHeaders(req.headers)) ?? false;
    if (authorize === undefined) return null;
    try {
      return (await authorize(req)) === true ? null : false;
    } catch (error) {
      onerror?.(new Error(`auth function failed: ${toError(error).message}`));
      return false;
    }
  };

  /**
   * One AhpServer connection per TCP connection (and principal): HTTP/1.1 keeps sockets alive,
   * so the connection lives as long as the socket does. Its close (the agent went away) aborts
   * the signal of every handler still running for it.
   */
  const connections = new WeakMap<Socket, Map<string, SocketConnection>>();
  const connectionFor = (req: IncomingMessage, principal: string | null): SocketConnection => {
    const socket = req.socket;
    let perPrincipal = connections.get(socket);
    if (perPrincipal === undefined) {
      const created = new Map<string, SocketConnection>();
      perPrincipal = created;
      connections.set(socket, created);
      socket.once("close", () => {
        for (const connection of created.values()) connection.close();
        created.clear();
      });
    }
    const key = principal ?? "";
    let connection = perPrincipal.get(key);
    if (connection === undefined || connection.signal.aborted) {
      const info: TransportInfo = { transport: "http" };
      const remote = remoteOf(req);
      if (remote !== undefined) info.remote = remote;
      if (principal !== null) info.principal = principal;
      connection = server.openConnection(info);
      perPrincipal.set(key, connection);
    }
    return connection;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): Promise<void> => {
    const requestPath = pathOf(req.url);
    if (requestPath !== path) {
      if (healthPath !== false && requestPath === healthPath) {
        if (req.method === "GET" || req.method === "HEAD") sendJson(res, 200, '{"status":"ok"}');
        else sendJson(res, 405, errorJson("method not allowed"), { allow: "GET, HEAD" });
        return;
      }
      if (readyPath !== false && requestPath === readyPath) {
        await answerReadiness(req, res, options.readiness, options.readinessTimeoutMs);
        return;
      }
      if (next !== undefined) next();
      else sendJson(res, 404, errorJson("not found"));
      return;
    }
    if (req.method !== "POST") {
      sendJson(res, 405, errorJson("method not allowed"), { allow: "POST" });
      return;
    }
    const principal = verifier === undefined && authorize === undefined ? null : await authenticate(req);
    if (principal === false) {
      // Says nothing about which part failed; never echoes what was presented.
      sendJson(res, 401, UNAUTHORIZED, challenge);
      return;
    }
    if (!isJsonContentType(req.headers["content-type"])) {
      sendJson(res, 415, errorJson("expected Content-Type: application/json"));
      return;
    }

    let message: unknown;
    const preParsed = (req as { body?: unknown }).body;
    if (req.readableEnded && preParsed !== undefined) {
      // A body parser (express.json(), ...) already consumed the stream.
      if (typeof preParsed === "string" || Buffer.isBuffer(preParsed)) {
        const bytes = Buffer.byteLength(preParsed);
        if (bytes > maxBodyBytes) return tooLarge(req, res, bytes, maxBodyBytes, onerror);
        const parsed = parse(req, res, preParsed.toString());
        if (parsed === undefined) return;
        message = parsed.value;
      } else message = preParsed;
    } else {
      let body: BodyResult;
      try {
        body = await readBody(req, maxBodyBytes);
      } catch {
        return; // the client went away while sending
      }
      if (!body.ok) return tooLarge(req, res, body.bytes, maxBodyBytes, onerror);
      const parsed = parse(req, res, body.body.toString("utf8"));
      if (parsed === undefined) return;
      message = parsed.value;
    }

    const socket = req.socket;
    const pending = inFlight.get(socket) ?? 0;
    if (pending >= maxInFlight) {
      const remote = remoteOf(req);
      onerror?.(
        new AhpLimitError(
          "LIMIT_EXCEEDED",
          `${maxInFlight} requests in flight on one HTTP connection from ${remote ?? "?"}: answered 503`,
          {
            transport: "http",
            limit: "max_in_flight",
            value: maxInFlight,
            action: "answered_503",
            ...(remote === undefined ? {} : { remote }),
          },
          { details: { maxInFlight } },
        ),
      );
      const busy = new AhpError(AhpErrorCode.ServerClosing, `Server busy: ${maxInFlight} requests in flight on this connection (limit)`);
      sendJson(res, 503, rpcError(busy), { "retry-after": "1" });
      return;
    }
    inFlight.set(socket, pending + 1);
    let result: AhpProcessResult;
    try {
      result = await server.process(connectionFor(req, principal), message);
    } finally {
      inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1);
    }
    switch (result.kind) {
      case "response": {
        let text: string;
        try {
          // stringifyMessage echoes an integer id past 2^53 as the text it arrived as.
          text = stringifyMessage(result.response, Number.MAX_SAFE_INTEGER);
        } catch (error) {
          const id = result.response.id;
          text = rpcError(
            new AhpError(AhpErrorCode.InternalError, `Internal error: ${toError(error).message}`),
            typeof id === "string" ? id : null,
          );
        }
        sendJson(res, 200, text);
        return;
      }
      case "notification":
        if (result.error === undefined || rejectedAs204) noContent(res);
        else sendJson(res, 200, rpcError(result.error, ""));
        return;
      default:
        // Notifications of other methods are ignored with success; everything else is invalid.
        if (isNotificationShaped(message)) noContent(res);
        else sendJson(res, 200, INVALID_MESSAGE);
    }
  };

  const parse = (req: IncomingMessage, res: ServerResponse, text: string): { value: unknown } | undefined => {
    try {
      return { value: parseJsonText(text, parseLimits) };
    } catch (error) {
      const frame = frameLimitOf(error);
      if (frame !== undefined) {
        const remote = remoteOf(req);
        onerror?.(
          new AhpLimitError(
            "MESSAGE_TOO_LARGE",
            `HTTP body from ${remote ?? "?"} nested deeper than maxJsonDepth ${frame.value}: answered 400`,
            {
              transport: "http",
              limit: frame.limit,
              value: frame.value,
              action: "answered_400",
              ...(remote === undefined ? {} : { remote }),
            },
          ),
        );
      }
      if (AhpError.isInstance(error)) sendJson(res, 400, rpcError(error));
      else sendJson(res, 400, rpcError(new AhpError(AhpErrorCode.ParseError, "Parse error")));
      return undefined;
    }
  };

  return (req, res, next) => {
    handle(req, res, next).catch((error: unknown) => {
      onerror?.(toError(error));
      if (!res.headersSent) sendJson(res, 500, errorJson("internal error"));
      else res.destroy();
    });
  };
}

function noContent(res: ServerResponse): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(204);
  res.end();
}

function tooLarge(req: IncomingMessage, res: ServerResponse, bytes: number, limit: number, onerror?: (error: Error) => void): void {
  const error = new AhpError(AhpErrorCode.MessageTooLarge, `Message too large: ${bytes} bytes exceeds limit ${limit}`);
  const remote = remoteOf(req);
  onerror?.(
    new AhpLimitError(
      "MESSAGE_TOO_LARGE",
      `HTTP body from ${remote ?? "?"} of ${bytes}+ bytes exceeds maxBodyBytes ${limit}: answered 413 and closed`,
      {
        transport: "http",
        limit: "max_body_bytes",
        value: limit,
        action: "answered_413_closed",
        ...(remote === undefined ? {} : { remote }),
      },
      { details: { bytes, maxBodyBytes: limit } },
    ),
  );
  // Stop reading: the rest of the body is not buffered and the connection is not reused.
  sendJson(res, 413, rpcError(error), { connection: "close" });
}

/** Options of {@link listenHttp}: the handler's options, plus address, TLS, connection limits and a fallback route. */
export interface ListenHttpOptions extends HttpHandlerOptions, HttpServerLimits {
  /**
   * TCP connections served at once. At the cap the connection idle the longest with no request in
   * progress is closed to make room (reported); only when every one has a request in progress is
   * the newcomer closed at once. Default: derived from the file-descriptor limit
   * (`defaultMaxConnections()`: 1024 at most, 192 under `ulimit -n 1024`).
   */
  maxConnections?: number;
  /** A keep-alive connection with no request for this long is closed (ms). Default 5000 (Node's). */
  keepAliveTimeoutMs?: number;
  /**
   * A connection whose client took none of the bytes written to it (an answer it does not read)
   * for this long is closed, with the requests in progress on it (ms); 0 disables. Default 30000.
   */
  stallTimeoutMs?: number;
  /** Requests outside the AHP and health paths (instead of 404), e.g. `/metrics`. */
  fallback?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Default `127.0.0.1` (loopback only). */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

/** A running {@link listenHttp} server: its URL and port, the `http.Server`, and `close()`. */
export interface HttpListener {
  /** `http://host:port/ahp` */
  readonly url: string;
  readonly port: number;
  readonly httpServer: http.Server;
  /**
   * Stops accepting connections and closes every open one; requests still in flight are cut
   * (their handlers see the signal abort). Does not close the AhpServer.
   */
  close(): Promise<void>;
}

/** Starts an HTTP(S) server on `host:port` (default `127.0.0.1`, a free port) serving `server`. */
export async function listenHttp(server: AhpServer, options: ListenHttpOptions = {}): Promise<HttpListener> {
  const {
    host = "127.0.0.1",
    port = 0,
    tls,
    fallback,
    headersTimeoutMs,
    requestTimeoutMs,
    maxConnections,
    keepAliveTimeoutMs = DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
    stallTimeoutMs,
    ...handlerOptions
  } = options;
  if (!Number.isInteger(keepAliveTimeoutMs) || keepAliveTimeoutMs < 1)
    throw new AhpLocalError("INVALID_ARGUMENT", "`keepAliveTimeoutMs` must be an integer >= 1");
  const ahp = createHttpHandler(server, handlerOptions);
  const handler = fallback === undefined ? ahp : (req: IncomingMessage, res: ServerResponse) => ahp(req, res, () => fallback(req, res));
  const serverOptions = httpServerOptions({
    ...(headersTimeoutMs === undefined ? {} : { headersTimeoutMs }),
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
  });
  const httpServer: http.Server =
    tls === undefined
      ? http.createServer(serverOptions, handler)
      : https.createServer({ ...serverOptions, cert: tls.cert, key: tls.key }, handler);
  reportClientErrors(httpServer, serverOptions, handlerOptions.onerror);
  const connectionLimit = maxConnections ?? defaultMaxConnections();
  if (!Number.isInteger(connectionLimit) || connectionLimit < 1)
    throw new AhpLocalError("INVALID_ARGUMENT", "`maxConnections` must be an integer >= 1");
  httpServer.keepAliveTimeout = keepAliveTimeoutMs;
  // Connections are capped here rather than with `httpServer.maxConnections` (which drops every
  // newcomer at the cap): the longest-idle connection with no request in progress makes room.
  if (stallTimeoutMs !== undefined && (!Number.isInteger(stallTimeoutMs) || stallTimeoutMs < 0))
    throw new AhpLocalError("INVALID_ARGUMENT", "`stallTimeoutMs` must be an integer >= 0 (0 disables)");
  const roster = new ConnectionRoster({
    transport: "http",
    maxConnections: connectionLimit,
    ...(stallTimeoutMs === undefined ? {} : { writeStallMs: stallTimeoutMs }),
    onerror: handlerOptions.onerror,
  });
  const entries = new WeakMap<Socket, RosterEntry>();
  httpServer.on("connection", (socket: Socket) => {
    const remote = socket.remoteAddress === undefined ? undefined : `${socket.remoteAddress}:${socket.remotePort}`;
    const entry = roster.admit(Number.POSITIVE_INFINITY, () => socket.destroy(), remote);
    if (entry === undefined) {
      socket.destroy();
      return;
    }
    entries.set(socket, entry);
    roster.watchWrites(entry, socket);
    socket.once("close", () => roster.remove(entry));
  });
  httpServer.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const entry = entries.get(req.socket);
    if (entry === undefined) return;
    entry.inFlight++;
    entry.lastActive = Date.now();
    res.once("close", () => {
      entry.inFlight--;
      entry.lastActive = Date.now();
    });
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(port, host, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  // After listening, a server error is a failed accept: EMFILE/ENFILE back off, the rest is reported.
  httpServer.on("error", (error) => {
    if (!roster.acceptFailed(error)) handlerOptions.onerror?.(error);
  });
  const address = httpServer.address() as AddressInfo;
  const hostPart = address.family === "IPv6" || address.address.includes(":") ? `[${address.address}]` : address.address;
  const path = handlerOptions.path ?? DEFAULT_HTTP_PATH;
  let closing: Promise<void> | undefined;
  return {
    url: `${tls === undefined ? "http" : "https"}://${hostPart}:${address.port}${path}`,
    port: address.port,
    httpServer,
    close() {
      closing ??= new Promise<void>((resolve) => {
        roster.close();
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * The adapter's HTTP server: WebSocket upgrades for Agent Host clients and extra routes (e.g. the
 * inspector's static files), all behind the same token authentication (401 before any upgrade or
 * route). The one exception is the page cookie (see `page-session.ts`): issued with the page for a
 * valid `?token=`, it lets a reload GET the static files again and nothing else. Binds loopback
 * unless a host is given.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { credentialsFromHeaders } from "@ahp/core";
import { WebSocketServer, type WebSocket } from "ws";
import type { AgentHost } from "./agent-host.js";
import { TokenAuthenticator, tokenOf, type Principal, type TokenEntry } from "./auth.js";
import { ClientConnection } from "./connection.js";
import { Flusher } from "./fanout.js";
import { PageSessions } from "./page-session.js";
import { serveDirectory, staticFiles, type RouteHandler } from "./static.js";
import { signInPage, wantsHtml } from "./sign-in.js";

/** Options of {@link listenAgentHost}: the accepted tokens (required), where to listen, and extra HTTP routes. */
export interface ListenOptions {
  /** `token principal role` entries accepted at the upgrade and on every route. */
  tokens: readonly TokenEntry[];
  /** Default `127.0.0.1`. Listening elsewhere must be asked for explicitly. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Extra routes tried in order for plain HTTP requests (after authentication). */
  routes?: readonly RouteHandler[];
  /** Serve a directory of static files at a prefix (default `/inspector/`), behind the same authentication. */
  staticDir?: { dir: string; prefix?: string };
  /**
   * The page cookie of `staticDir` (on by default when `staticDir` is given): a GET of the page
   * (`<prefix>` or `<prefix>index.html`) with a valid `?token=` gets an HttpOnly, SameSite=Strict
   * cookie scoped to the prefix, holding an opaque random id kept in memory. That cookie then
   * authenticates GET of the static files under the prefix, so that a reload works once the page
   * has removed the token from the address bar; never a route, the WebSocket upgrade or another
   * method. `false` turns it off.
   */
  pageCookie?:
    | false
    | {
        /** A cookie not used for this long is forgotten. Default 12 hours. */
        idleMs?: number;
        /** A cookie is forgotten this long after it was issued, used or not. Default 7 days. */
        maxAgeMs?: number;
        /** At most this many live cookies; one more forgets the least recently used. Default 1000. */
        maxEntries?: number;
        /** The clock, in milliseconds (tests). Default `Date.now`. */
        now?: () => number;
      };
}

/**
 * The running server of {@link listenAgentHost}: `url` for Agent Host clients, `httpUrl` for the routes,
 * the bound `port` and the Node server. `close()` closes client sockets with 1001 (terminating those
 * still open after 1 s) and resolves once the server stopped; it does not dispose the {@link AgentHost}.
 */
export interface AgentHostListener {
  /** `ws://host:port/` */
  readonly url: string;
  /** `http://host:port/` */
  readonly httpUrl: string;
  readonly port: number;
  readonly httpServer: http.Server;
  close(): Promise<void>;
}

const unauthorized = (body = '{"error":"unauthorized"}') => ({
  status: 401,
  headers: {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "www-authenticate": 'Bearer realm="agent-host"',
  },
  body,
});

function refuseUpgrade(socket: Duplex): void {
  const r = unauthorized();
  const head = Object.entries({ ...r.headers, connection: "close" })
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n");
  socket.end(`HTTP/1.1 401 Unauthorized\r\n${head}\r\n\r\n${r.body}`);
}

let nextConnectionId = 1;

/** Starts the HTTP server of `host`. */
export async function listenAgentHost(host: AgentHost, options: ListenOptions): Promise<AgentHostListener> {
  const auth = new TokenAuthenticator(options.tokens);
  const routes: RouteHandler[] = [...(options.routes ?? [])];
  const refuse = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0]!;
    host.refused({
      reason: tokenOf(req) === undefined ? "missing" : "invalid",
      path,
      upgrade: false,
      ...(req.socket.remoteAddress === undefined ? {} : { remote: req.socket.remoteAddress }),
    });
    // A person's browser gets a page that says how to get a link; API clients keep the JSON.
    const r = wantsHtml(req) ? signInPage(tokenOf(req) !== undefined) : unauthorized();
    res.writeHead(r.status, r.headers).end(r.body);
  };
  let page: { mount: string; sessions: PageSessions; files: RouteHandler } | undefined;
  if (options.staticDir !== undefined) {
    const prefix = options.staticDir.prefix ?? "/inspector/";
    const mount = prefix.endsWith("/") ? prefix : `${prefix}/`;
    routes.push(staticFiles(options.staticDir.dir, mount));
    if (options.pageCookie !== false) {
      // With only a cookie, a path that names no file is refused, not "not found": the
      // cookie must not tell which routes exist.
      const files = serveDirectory(options.staticDir.dir, mount, refuse);
      page = { mount, sessions: new PageSessions({ ...options.pageCookie, path: mount }), files };
    }
  }

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
      return;
    }
    const who = auth.authenticate(req);
    if (who === undefined) {
      // No token at all (a wrong one is refused as such): a live page cookie may fetch the
      // static files under the prefix, with GET only, and skips every other route.
      if (
        page !== undefined &&
        req.method === "GET" &&
        path.startsWith(page.mount) &&
        tokenOf(req) === undefined &&
        page.sessions.check(req) !== undefined
      ) {
        page.files(req, res, () => refuse(req, res));
        return;
      }
      refuse(req, res);
      return;
    }
    if (
      page !== undefined &&
      req.method === "GET" &&
      (path === page.mount || path === `${page.mount}index.html`) &&
      credentialsFromHeaders(req.headers).bearerToken === undefined
    )
      // Authenticated by the `?token=` of a page load.
      page.sessions.issue(req, res, who);
    let i = 0;
    const next = () => {
      const route = routes[i++];
      if (route === undefined) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
        return;
      }
      try {
        route(req, res, next);
      } catch (error) {
        host.report(error instanceof Error ? error : new Error(String(error)));
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end('{"error":"internal error"}');
      }
    };
    next();
  };

  const httpServer = http.createServer(onRequest);
  const wss = new WebSocketServer({ noServer: true, maxPayload: host.limits.maxFrameBytes, perMessageDeflate: false });
  const sockets = new Set<WebSocket>();
  const flusher = new Flusher();

  const serve = (ws: WebSocket, who: Principal, socket: Duplex) => {
    const connection = new ClientConnection(nextConnectionId++, ws, who, host, socket, flusher);
    host.connections.add(connection);
    sockets.add(ws);
    ws.once("close", () => {
      sockets.delete(ws);
      host.disconnected(connection);
    });
  };

  httpServer.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const who = auth.authenticate(req);
    if (who === undefined) {
      host.refused({
        reason: tokenOf(req) === undefined ? "missing" : "invalid",
        path: (req.url ?? "/").split("?")[0]!,
        upgrade: true,
        ...(req.socket.remoteAddress === undefined ? {} : { remote: req.socket.remoteAddress }),
      });
      refuseUpgrade(socket);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, who, socket));
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  const address = httpServer.address() as AddressInfo;
  const hostPart = address.address.includes(":") ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  if (page !== undefined && host.inspectorUrl === undefined) host.inspectorUrl = `http://${hostPart}:${address.port}${page.mount}`;
  return {
    url: `ws://${hostPart}:${address.port}/`,
    httpUrl: `http://${hostPart}:${address.port}/`,
    port: address.port,
    httpServer,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => httpServer.close(() => resolve()));
        flusher.flush();
        for (const ws of sockets) ws.close(1001, "server closing");
        const grace = setTimeout(() => {
          for (const ws of sockets) ws.terminate();
        }, 1000);
        grace.unref?.();
        wss.close();
        httpServer.closeAllConnections();
        await stopped;
        clearTimeout(grace);
      })();
      return closing;
    },
  };
}

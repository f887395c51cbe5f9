/**
 * Serving a directory of static files under a URL prefix (the inspector's built files), with
 * no path traversal: the decoded path is resolved inside the root and must stay there.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, resolve, sep } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".map": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};

/**
 * An extra HTTP route of `listenAgentHost`, tried in `routes` order for authenticated plain HTTP
 * requests: it answers `res` or calls `next()` to pass on (after the last route: 404). A throw is
 * reported to the host's `onerror` and answered with 500. {@link staticFiles} makes one.
 */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/** A route handler serving `root` at `prefix` (e.g. `/inspector/`); `index.html` for directories. */
export function staticFiles(root: string, prefix: string): RouteHandler {
  return serveDirectory(root, prefix, (_req, res) => res.writeHead(404, { "content-type": "text/plain" }).end("not found"));
}

/**
 * {@link staticFiles} with the answer for a path that names no file inside `root` (outside the
 * root, missing, a directory without `index.html`) left to `notFound`.
 */
export function serveDirectory(root: string, prefix: string, notFound: (req: IncomingMessage, res: ServerResponse) => void): RouteHandler {
  const base = resolve(root);
  const mount = prefix.endsWith("/") ? prefix : `${prefix}/`;
  return (req, res, next) => {
    const path = (req.url ?? "/").split("?")[0]!;
    if (path === mount.slice(0, -1)) {
      res.writeHead(301, { location: mount }).end();
      return;
    }
    if (!path.startsWith(mount) || (req.method !== "GET" && req.method !== "HEAD")) {
      next();
      return;
    }
    let relative: string;
    try {
      relative = decodeURIComponent(path.slice(mount.length));
    } catch {
      res.writeHead(400, { "content-type": "text/plain" }).end("bad path");
      return;
    }
    if (relative.includes("\0")) {
      res.writeHead(400, { "content-type": "text/plain" }).end("bad path");
      return;
    }
    let file = resolve(base, relative === "" ? "index.html" : relative);
    if (file !== base && !file.startsWith(base + sep)) {
      notFound(req, res);
      return;
    }
    void (async () => {
      try {
        let info = await stat(file);
        if (info.isDirectory()) {
          file = resolve(file, "index.html");
          info = await stat(file);
        }
        if (!info.isFile()) throw new Error("not a file");
        res.writeHead(200, {
          "content-type": TYPES[extname(file).toLowerCase()] ?? "application/octet-stream",
          "content-length": info.size,
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
          "referrer-policy": "no-referrer",
        });
        if (req.method === "HEAD") res.end();
        else
          createReadStream(file)
            .on("error", () => res.destroy())
            .pipe(res);
      } catch {
        if (!res.headersSent) notFound(req, res);
      }
    })();
  };
}

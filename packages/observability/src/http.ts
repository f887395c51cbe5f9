/** Serving the exposition text: a plain Node `(req, res)` handler and a standalone listener. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import type { AhpMetrics } from "./metrics.js";

/** Options of the `/metrics` request handler you mount yourself: the path it answers and where collection failures go. */
export interface MetricsHandlerOptions {
  /** Answer only this path (404 otherwise). Default: any path (mount it where you route `/metrics`). */
  path?: string;
  /** Collection failures (the response is a bare 500). Library code never logs. */
  onerror?: (error: Error) => void;
}

const registryOf = (source: Registry | AhpMetrics): Registry => ("registry" in source ? source.registry : source);

/**
 * A Node `(req, res)` handler answering `GET`/`HEAD` with the registry's exposition text;
 * other methods get 405. Mountable next to the HTTP transport.
 */
export function metricsHandler(
  source: Registry | AhpMetrics,
  options: MetricsHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const registry = registryOf(source);
  return (req, res) => {
    if (options.path !== undefined) {
      const pathname = (req.url ?? "/").split("?")[0];
      if (pathname !== options.path) {
        res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
        return;
      }
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }).end("method not allowed\n");
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, {
          "content-type": registry.contentType,
          "content-length": Buffer.byteLength(text),
          "cache-control": "no-store",
        });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (error: unknown) => {
        options.onerror?.(error instanceof Error ? error : new Error(String(error)));
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        res.end("metrics collection failed\n");
      },
    );
  };
}

/** Options of the `/metrics` listener: what to serve, the address (loopback by default), the port and the path. */
export interface ListenMetricsOptions {
  /** The metrics (or a bare registry) to serve. */
  metrics: AhpMetrics | Registry;
  /** Default 127.0.0.1 (loopback). Bind wider only deliberately. */
  host?: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Default `/metrics`. */
  path?: string;
  onerror?: (error: Error) => void;
}

/** A running `/metrics` listener: its server, address and URL, and `close()`. */
export interface MetricsListener {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  /** `http://host:port/metrics`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `/metrics` on its own port, bound to loopback by default. */
export async function listenMetrics(options: ListenMetricsOptions): Promise<MetricsListener> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/metrics";
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new RangeError(`port must be an integer 0..65535, got ${String(options.port)}`);
  }
  const handler = metricsHandler(options.metrics, { path, ...(options.onerror === undefined ? {} : { onerror: options.onerror }) });
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    server,
    host: address.address,
    port: address.port,
    url: `http://${urlHost}:${address.port}${path}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

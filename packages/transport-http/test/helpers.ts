import { vi } from "vitest";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import type { AhpServerOptions } from "@ahp/core";
import { listenHttp, type HttpListener, type ListenHttpOptions } from "@ahp/transport-http";

import { listeningHarness, type ListeningHarness } from "@ahp/conformance";

/** How long a wait lasts before it fails: generous, because the machine may be busy. */
export const WAIT_MS = 60_000;

// A test that waits must outlive its waits, so that a failed wait reports what it awaited.
vi.setConfig({ testTimeout: WAIT_MS + 30_000, hookTimeout: WAIT_MS + 30_000 });

export { deferred, event, preAction } from "@ahp/conformance";

export const request = (id: string | number, method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
export const notification = (method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", method, params });

export type Harness = ListeningHarness<HttpListener>;

export function startHarness(options: AhpServerOptions = {}, listen: ListenHttpOptions = {}): Promise<Harness> {
  return listeningHarness((server) => listenHttp(server, listen), options);
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A POST with node:http directly (no keep-alive), so tests control every byte. */
export function rawRequest(
  url: string,
  {
    method = "POST",
    body,
    headers = { "content-type": "application/json" },
    agent = false,
  }: { method?: string; body?: string | Buffer; headers?: http.OutgoingHttpHeaders; agent?: http.Agent | false } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

export const HANDSHAKE_RESULT = {
  protocol_version: "2.4",
  harness_info: { name: "capture", version: "0", capabilities: [] },
  config: {},
};

export interface Capture {
  url: string;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; rawHeaders: string[]; body: string }>;
  /** Sets how the next requests are answered. */
  reply: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;
  close(): Promise<void>;
}

/** A bare node:http server that records what a client sends and answers as scripted. */
export async function captureServer(): Promise<Capture> {
  const capture: Capture = {
    url: "",
    requests: [],
    reply: (_req, body, res) => {
      const { id, method } = JSON.parse(body) as { id?: unknown; method?: string };
      if (id === undefined) {
        res.writeHead(204).end();
        return;
      }
      const result = method === "ahp/handshake" ? HANDSHAKE_RESULT : { decision: "allow" };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result }));
    },
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      capture.requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, rawHeaders: req.rawHeaders, body });
      capture.reply(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  capture.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ahp`;
  capture.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return capture;
}

/**
 * Waits until `check()` holds, polling every few ms, for at most `timeoutMs` (generous: the machine
 * may be busy); the error names `what` was awaited.
 */
export async function until(check: () => boolean, timeoutMs = WAIT_MS, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

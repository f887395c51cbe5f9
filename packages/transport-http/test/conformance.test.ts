/**
 * The cross-transport conformance suite over real HTTP on 127.0.0.1: the scripted harness is
 * served by `listenHttp`, our agent side is `HttpClientTransport`, and the raw channel POSTs
 * bytes with node:http and reports each answer's status and body.
 */
import * as http from "node:http";
import { describe, expect, it } from "vitest";
import { RawFrameQueue, createConformanceServer, describeConformance, type ConformanceFactory, type RawChannel } from "@ahp/conformance";
import { HttpClientTransport, listenHttp } from "@ahp/transport-http";

/** A raw channel: every `send` is one POST; its answer (also a 204) is one frame. */
function rawHttpChannel(url: string): RawChannel {
  const frames = new RawFrameQueue();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  return {
    send: (text) =>
      new Promise<void>((resolve, reject) => {
        const req = http.request(
          url,
          { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => frames.push({ text: Buffer.concat(chunks).toString("utf8"), status: res.statusCode ?? 0 }));
            res.on("error", () => frames.close());
          },
        );
        req.on("error", reject);
        req.end(text, () => resolve());
      }),
    next: (timeoutMs) => frames.next(timeoutMs),
    close: async () => {
      frames.close();
      agent.destroy();
    },
  };
}

const httpFactory: ConformanceFactory = async (config) => {
  const server = createConformanceServer(config);
  // The suite sends a 4 MiB message; the reference's 2 MiB body limit is exercised in status-codes.test.ts.
  const listener = await listenHttp(server, { maxBodyBytes: 8 * 1024 * 1024 });
  return {
    connect: async () => new HttpClientTransport(listener.url),
    async connectRaw() {
      return rawHttpChannel(listener.url);
    },
    async close() {
      await listener.close();
      await server.close();
    },
  };
};

const coverage = describeConformance("HTTP (listenHttp + HttpClientTransport)", httpFactory, {
  kind: "http",
  notApplicable: {
    "handshake-gating":
      "HTTP is stateless: every POST is its own server connection (as in the reference), so a handshake cannot open a gate for later POSTs",
  },
});

describe("conformance coverage over HTTP", () => {
  it("runs the HTTP status-code items and skips only per-connection handshake gating", () => {
    for (const n of [86, 87, 88]) expect(coverage.items.has(n)).toBe(true);
    expect([...coverage.skipped.keys()]).toEqual(["handshake-gating"]);
  });
});

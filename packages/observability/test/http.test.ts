import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createAhpMetrics, listenMetrics, metricsHandler } from "../src/index.js";
import { parseExposition, valueOf } from "./helpers.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("/metrics over real HTTP", () => {
  it("listenMetrics binds 127.0.0.1 and serves the exposition text", async () => {
    const metrics = createAhpMetrics();
    metrics.recordPolicyReload(true);
    const listener = await listenMetrics({ metrics, port: 0 });
    closers.push(() => listener.close());
    expect(listener.host).toBe("127.0.0.1");
    expect(listener.url).toBe(`http://127.0.0.1:${listener.port}/metrics`);
    const response = await fetch(listener.url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseExposition(await response.text());
    expect(valueOf(samples, "ahp_policy_reloads_total", { result: "success" })).toBe(1);

    const head = await fetch(listener.url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await fetch(listener.url, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const other = await fetch(`http://127.0.0.1:${listener.port}/other`);
    expect(other.status).toBe(404);
  });

  it("metricsHandler mounts next to other routes of an existing server", async () => {
    const metrics = createAhpMetrics();
    const handler = metricsHandler(metrics);
    const server = createServer((req, res) => {
      if (req.url === "/metrics") return handler(req, res);
      res.writeHead(200).end("ahp endpoint");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const { port } = server.address() as AddressInfo;
    expect(await (await fetch(`http://127.0.0.1:${port}/ahp`)).text()).toBe("ahp endpoint");
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toContain("# TYPE ahp_events_total counter");
    expect(text).toContain("# TYPE ahp_decision_latency_seconds histogram");
  });

  it("a failing collection answers 500 without details and reports through onerror", async () => {
    const metrics = createAhpMetrics();
    const errors: Error[] = [];
    metrics.registry.registerMetric({
      name: "broken_metric",
      get: () => Promise.reject(new Error("secret internals")),
      reset: () => undefined,
    } as never);
    const listener = await listenMetrics({ metrics, port: 0, onerror: (e) => errors.push(e) });
    closers.push(() => listener.close());
    const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      request(listener.url, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
        .on("error", reject)
        .end();
    });
    expect(response.status).toBe(500);
    expect(response.body).not.toContain("secret internals");
    expect(errors.map((e) => e.message)).toEqual(["secret internals"]);
  });

  it("rejects invalid ports and closes cleanly", async () => {
    const metrics = createAhpMetrics();
    await expect(listenMetrics({ metrics, port: -1 })).rejects.toThrow(RangeError);
    const listener = await listenMetrics({ metrics, port: 0 });
    await listener.close();
    await expect(fetch(listener.url)).rejects.toThrow();
  });
});

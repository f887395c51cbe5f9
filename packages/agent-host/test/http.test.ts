/** The adapter's HTTP side: extra routes and static files behind the same token authentication as the WebSocket API. */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHost } from "../src/host/agent-host.js";
import { listenAgentHost, type AgentHostListener } from "../src/host/server.js";
import { TOKENS } from "./helpers/harness.js";

let dir: string;
let listener: AgentHostListener;
const host = new AgentHost();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-host-static-"));
  await mkdir(join(dir, "site", "assets"), { recursive: true });
  await writeFile(join(dir, "site", "index.html"), "<h1>inspector</h1>");
  await writeFile(join(dir, "site", "assets", "app.js"), "console.log(1)");
  await writeFile(join(dir, "secret.txt"), "top secret");
  listener = await listenAgentHost(host, {
    tokens: TOKENS,
    staticDir: { dir: join(dir, "site") },
    routes: [(req, res, next) => (req.url?.startsWith("/custom") ? res.writeHead(200).end("custom") : next())],
  });
});
afterAll(async () => {
  await listener.close();
  await rm(dir, { recursive: true, force: true });
});

function get(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${listener.httpUrl.replace(/\/$/, "")}${path}`, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("HTTP routes behind token authentication", () => {
  it("refuses a request without a token or with a wrong one (401)", async () => {
    expect((await get("/inspector/")).status).toBe(401);
    expect((await get("/inspector/?token=nope")).status).toBe(401);
    expect((await get("/inspector/", { authorization: "Bearer nope" })).status).toBe(401);
    expect((await get("/custom")).status).toBe(401);
  });

  it("serves the static directory with a token in the header or the query", async () => {
    const a = await get("/inspector/", { authorization: "Bearer viewer-token" });
    expect(a).toMatchObject({ status: 200, body: "<h1>inspector</h1>" });
    expect(a.headers["content-type"]).toMatch(/text\/html/);
    expect(a.headers["referrer-policy"]).toBe("no-referrer");
    const b = await get("/inspector/assets/app.js?token=viewer-token");
    expect(b).toMatchObject({ status: 200, body: "console.log(1)" });
    expect((await get("/inspector?token=viewer-token")).status).toBe(301);
    expect((await get("/custom?token=approver-token")).body).toBe("custom");
    expect((await get("/elsewhere?token=approver-token")).status).toBe(404);
    expect((await get("/healthz")).status).toBe(200);
  });

  it("never leaves the directory (no path traversal)", async () => {
    for (const path of [
      "/inspector/../secret.txt",
      "/inspector/%2e%2e/secret.txt",
      "/inspector/..%2fsecret.txt",
      "/inspector/assets/%2e%2e/%2e%2e/secret.txt",
      "/inspector/%00",
    ]) {
      const r = await get(`${path}${path.includes("?") ? "&" : "?"}token=viewer-token`);
      expect(r.body, path).not.toContain("top secret");
      expect([400, 404], path).toContain(r.status);
    }
  });
});

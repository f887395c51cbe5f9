/**
 * The page cookie over real HTTP on loopback: issued only with the page for a valid `?token=`,
 * HttpOnly, SameSite=Strict and scoped to the prefix; it lets GET fetch the static files again
 * and is refused everywhere else (routes, the WebSocket upgrade, other methods); unknown and
 * expired ids get 401.
 */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { AgentHost } from "../src/host/agent-host.js";
import { PAGE_COOKIE } from "../src/host/page-session.js";
import { listenAgentHost, type AgentHostListener } from "../src/host/server.js";
import { TOKENS } from "./helpers/harness.js";

const HOUR = 60 * 60 * 1000;
let dir: string;
let listener: AgentHostListener;
let clock = 1_000_000;
const host = new AgentHost();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agent-host-cookie-"));
  await mkdir(join(dir, "site", "assets"), { recursive: true });
  await writeFile(join(dir, "site", "index.html"), "<h1>inspector</h1>");
  await writeFile(join(dir, "site", "assets", "app.js"), "console.log(1)");
  listener = await listenAgentHost(host, {
    tokens: TOKENS,
    staticDir: { dir: join(dir, "site") },
    pageCookie: { now: () => clock },
    // A route that trusts whatever reaches it: only the server's authentication guards it.
    routes: [(req, res, next) => ((req.url ?? "").startsWith("/inspector/whoami.json") ? res.writeHead(200).end("whoami") : next())],
  });
});
afterAll(async () => {
  await listener.close();
  await rm(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: string;
  setCookie: string[];
}

function send(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${listener.httpUrl.replace(/\/$/, "")}${path}`, { method, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, setCookie: res.headers["set-cookie"] ?? [] }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Opens the token link and returns the `Cookie` header value a browser would send back. */
async function openTokenLink(token = "approver-token"): Promise<string> {
  const r = await send(`/inspector/?token=${token}`);
  expect(r.status).toBe(200);
  expect(r.setCookie).toHaveLength(1);
  return r.setCookie[0]!.split(";")[0]!;
}

function upgrade(headers: Record<string, string>, path = "/"): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${listener.url.replace(/\/$/, "")}${path}`, { headers });
    ws.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once("open", () => {
      ws.close();
      resolve(101);
    });
    ws.once("error", (e) => reject(e));
  });
}

describe("page cookie", () => {
  it("is set with the page for a valid ?token=, HttpOnly, SameSite=Strict, scoped to the prefix, holding no token", async () => {
    const r = await send("/inspector/?token=approver-token");
    expect(r.status).toBe(200);
    expect(r.setCookie).toHaveLength(1);
    const [pair, ...attributes] = r.setCookie[0]!.split(";").map((s) => s.trim());
    const [name, value] = pair!.split("=");
    expect(name).toBe(PAGE_COOKIE);
    expect(value).toMatch(/^[A-Za-z0-9_-]{22}$/); // 128 random bits
    expect(value).not.toContain("approver");
    expect(attributes).toEqual(expect.arrayContaining(["HttpOnly", "SameSite=Strict", "Path=/inspector/"]));
    expect(attributes).not.toContain("Secure"); // plain HTTP here; set over TLS
    // Every page load gets a fresh id.
    expect(await openTokenLink()).not.toBe(pair);
  });

  it("is not set without a valid token, nor for a token in the header, nor outside the page", async () => {
    expect((await send("/inspector/?token=nope")).setCookie).toEqual([]);
    expect((await send("/inspector/")).setCookie).toEqual([]);
    const header = await send("/inspector/", { authorization: "Bearer approver-token" });
    expect(header.status).toBe(200);
    expect(header.setCookie).toEqual([]);
    const asset = await send("/inspector/assets/app.js?token=approver-token");
    expect(asset.status).toBe(200);
    expect(asset.setCookie).toEqual([]);
    expect((await send("/inspector/whoami.json?token=approver-token")).setCookie).toEqual([]);
    expect((await send("/inspector/?token=approver-token", {}, "HEAD")).setCookie).toEqual([]);
  });

  it("lets a reload GET the page and its files", async () => {
    const cookie = await openTokenLink();
    expect(await send("/inspector/", { cookie })).toMatchObject({ status: 200, body: "<h1>inspector</h1>", setCookie: [] });
    expect(await send("/inspector/index.html", { cookie })).toMatchObject({ status: 200, body: "<h1>inspector</h1>" });
    expect(await send("/inspector/assets/app.js", { cookie })).toMatchObject({ status: 200, body: "console.log(1)" });
    // Among other cookies of the same site.
    expect((await send("/inspector/", { cookie: `theme=dark; ${cookie}; x=1` })).status).toBe(200);
  });

  it("is refused (401) for routes, paths that name no file, other methods and other paths", async () => {
    const cookie = await openTokenLink();
    expect(await send("/inspector/whoami.json", { cookie })).toMatchObject({ status: 401, body: '{"error":"unauthorized"}' });
    expect((await send("/inspector/nothing-here", { cookie })).status).toBe(401);
    expect((await send("/inspector/../secret.txt", { cookie })).status).toBe(401);
    for (const method of ["POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
      expect((await send("/inspector/", { cookie }, method)).status, method).toBe(401);
    expect((await send("/", { cookie })).status).toBe(401);
    // The cookie still works afterwards: refusals do not depend on its state.
    expect((await send("/inspector/", { cookie })).status).toBe(200);
  });

  it("is refused (401) at the WebSocket upgrade, at / and under the prefix", async () => {
    const cookie = await openTokenLink();
    expect(await upgrade({ cookie })).toBe(401);
    expect(await upgrade({ cookie }, "/inspector/")).toBe(401);
    expect(await upgrade({ authorization: "Bearer approver-token" })).toBe(101);
  });

  it("does not rescue a wrong token: a request with a bad token and a live cookie gets 401", async () => {
    const cookie = await openTokenLink();
    expect((await send("/inspector/?token=nope", { cookie })).status).toBe(401);
    expect((await send("/inspector/", { cookie, authorization: "Bearer nope" })).status).toBe(401);
  });

  it("refuses an unknown id, a malformed one and one whose page load replaced it", async () => {
    expect((await send("/inspector/", { cookie: `${PAGE_COOKIE}=AAAAAAAAAAAAAAAAAAAAAA` })).status).toBe(401);
    expect((await send("/inspector/", { cookie: `${PAGE_COOKIE}=approver-token` })).status).toBe(401);
    const first = await openTokenLink();
    const again = await send("/inspector/?token=approver-token", { cookie: first });
    expect(again.setCookie).toHaveLength(1);
    expect((await send("/inspector/", { cookie: first })).status).toBe(401);
    expect((await send("/inspector/", { cookie: again.setCookie[0]!.split(";")[0]! })).status).toBe(200);
  });

  it("expires after 12 hours idle (each use restarts that clock) and 7 days after it was issued", async () => {
    const cookie = await openTokenLink();
    clock += 11 * HOUR;
    expect((await send("/inspector/", { cookie })).status).toBe(200);
    clock += 11 * HOUR;
    expect((await send("/inspector/", { cookie })).status).toBe(200);
    clock += 12 * HOUR;
    expect((await send("/inspector/", { cookie })).status).toBe(401);
    // Used every 11 hours, it still ends 7 days after the token link was opened.
    const busy = await openTokenLink();
    for (let elapsed = 11; elapsed < 7 * 24; elapsed += 11) {
      clock += 11 * HOUR;
      expect((await send("/inspector/", { cookie: busy })).status, `after ${elapsed} h`).toBe(200);
    }
    clock += 11 * HOUR;
    expect((await send("/inspector/", { cookie: busy })).status).toBe(401);
  });

  it("can be turned off", async () => {
    const off = await listenAgentHost(host, { tokens: TOKENS, staticDir: { dir: join(dir, "site") }, pageCookie: false });
    try {
      const r = await new Promise<string[]>((resolve, reject) => {
        request(`${off.httpUrl}inspector/?token=approver-token`, (res) => {
          res.resume();
          resolve(res.headers["set-cookie"] ?? []);
        })
          .on("error", reject)
          .end();
      });
      expect(r).toEqual([]);
    } finally {
      await off.close();
    }
  });
});

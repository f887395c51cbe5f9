/**
 * Refused credentials: a person's browser gets a readable sign-in page that says how to get a
 * link (never a token), an API client keeps the JSON 401, and each refusal is logged without the
 * credential, for page requests and WebSocket upgrades alike.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { AgentHost } from "../src/host/agent-host.js";
import { listenAgentHost, type AgentHostListener } from "../src/host/server.js";
import { TOKENS } from "./helpers/harness.js";

let listener: AgentHostListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

const WRONG = "wrong-token-abcdef0123456789";

describe("refused credentials", () => {
  it("a browser gets the sign-in page, an API client JSON; both are logged without the token", async () => {
    const logs: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
    const host = new AgentHost({ onlog: (level, message, fields) => logs.push({ level, message, fields }) });
    listener = await listenAgentHost(host, { tokens: TOKENS, routes: [(_req, res) => res.writeHead(200).end("ok")] });
    const html = { accept: "text/html,application/xhtml+xml" };

    const missing = await fetch(`${listener.httpUrl}inspector/`, { headers: html });
    expect(missing.status).toBe(401);
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await missing.text();
    expect(page).toContain("Sign-in needed");
    expect(page).toContain("Ask the person who runs the harness for an inspector link");
    expect(page).toContain('data-reason="missing"');

    const wrong = await fetch(`${listener.httpUrl}inspector/?token=${WRONG}`, { headers: html });
    expect(wrong.status).toBe(401);
    const wrongPage = await wrong.text();
    expect(wrongPage).toContain('data-reason="invalid"');
    expect(wrongPage).not.toContain(WRONG);

    const api = await fetch(`${listener.httpUrl}anything`, { headers: { authorization: `Bearer ${WRONG}` } });
    expect(api.status).toBe(401);
    expect(await api.json()).toEqual({ error: "unauthorized" });

    const upgrade = new WebSocket(`${listener.url}?token=${WRONG}`);
    const status = await new Promise<number | undefined>((resolve) => {
      upgrade.on("unexpected-response", (_req, res) => resolve(res.statusCode));
      upgrade.on("error", () => resolve(undefined));
    });
    expect(status).toBe(401);

    expect(logs.map((l) => [l.level, l.message, l.fields.reason, l.fields.upgrade])).toEqual([
      ["warn", "agent-host credentials refused", "missing", false],
      ["warn", "agent-host credentials refused", "invalid", false],
      ["warn", "agent-host credentials refused", "invalid", false],
      ["warn", "agent-host credentials refused", "invalid", true],
    ]);
    expect(JSON.stringify(logs)).not.toContain(WRONG);
  });
});

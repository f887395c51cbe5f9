/**
 * `ahp serve --agent-host` serves the built inspector at /inspector/ by default, behind the same
 * tokens, with `whoami.json` telling the page its role; `--agent-host-static` replaces the page.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
let dir: string;
let tokens: string;
const running: ChildProcess[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-cli-inspector-"));
  tokens = join(dir, "t.tokens");
  await writeFile(tokens, "approver-secret alice approver\nviewer-secret vera viewer\n");
  await chmod(tokens, 0o600);
});
afterEach(() => {
  for (const child of running.splice(0)) child.kill("SIGTERM");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `ahp serve` with the Agent Host port and resolves with its logged `listening` line. */
function serve(extra: string[] = []): Promise<{ url: string; inspector: string }> {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--ws", "127.0.0.1:0", "--agent-host", "127.0.0.1:0", "--agent-host-token-file", tokens, ...extra],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  running.push(child);
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      for (const line of stderr.split("\n")) {
        if (!line.startsWith("{")) continue;
        const l = JSON.parse(line) as Record<string, string>;
        if (l.msg === "listening" && l.transport === "agent-host") resolve({ url: l.url!, inspector: l.inspector! });
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

describe("ahp serve --agent-host and the inspector", () => {
  it("serves the built inspector at /inspector/ by default, behind the tokens, and logs its URL without a token", async () => {
    const h = await serve();
    expect(h.inspector).toBe(`${h.url.replace(/^ws:/, "http:")}inspector/`);
    expect((await fetch(h.inspector)).status).toBe(401);
    const page = await fetch(`${h.inspector}?token=viewer-secret`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(await page.text()).toContain("AHP inspector");
    const viewer = await fetch(`${h.inspector}whoami.json`, { headers: { authorization: "Bearer viewer-secret" } });
    expect(await viewer.json()).toEqual({ principal: "vera", role: "viewer" });
    const approver = await fetch(`${h.inspector}whoami.json?token=approver-secret`);
    expect(await approver.json()).toEqual({ principal: "alice", role: "approver" });
    expect((await fetch(`${h.inspector}whoami.json`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
  });

  it("--agent-host-static replaces the built-in page", async () => {
    const site = join(dir, "site");
    await mkdir(site, { recursive: true });
    await writeFile(join(site, "index.html"), "<p>custom</p>");
    const h = await serve(["--agent-host-static", site]);
    expect(await (await fetch(`${h.inspector}?token=viewer-secret`)).text()).toBe("<p>custom</p>");
  });
});

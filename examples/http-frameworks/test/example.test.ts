import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHarness, type Mounted } from "../src/harness.js";
import { connectAgent, RECIPES } from "../src/main.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const server = createHarness();

describe.each(Object.entries(RECIPES))("%s recipe", (name, mount) => {
  let mounted: Mounted;
  beforeAll(async () => {
    mounted = await mount(server);
  });
  afterAll(async () => {
    await mounted.close();
  });

  it("an agent gets the harness's decisions", async () => {
    const client = await connectAgent(mounted.url);
    try {
      const ok = await client.send("pre_action", { tool_name: "bash", arguments: { command: "npm test" } });
      const rm = await client.send("pre_action", { tool_name: "bash", arguments: { command: "rm -rf build/" } });
      expect(ok.decision).toBe("allow");
      expect(rm).toMatchObject({ decision: "block", reason: "recursive delete" });
    } finally {
      await client.close();
    }
  });

  it("the framework's own routes still answer", async () => {
    const res = await fetch(`${mounted.base}/status`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ framework: name === "websocket" ? "node:http" : name });
  });

  it("refuses an agent with a wrong key", async () => {
    await expect(connectAgent(mounted.url, "wrong-key")).rejects.toThrow(/401|unauthori[sz]ed/i);
  });

  if (name !== "websocket") {
    it("answers the health route without credentials, and a bad body with the protocol's error", async () => {
      expect((await fetch(`${mounted.base}/healthz`)).status).toBe(200);
      const bad = await fetch(mounted.url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "example-key-0123456789" },
        body: "{not json",
      });
      // Express's JSON parser rejects malformed JSON before the handler sees it (its own 400).
      expect(bad.status).toBe(400);
      if (name !== "express") expect(await bad.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    });
  }
});

it("pnpm start mounts every recipe and prints the decisions", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: ROOT, timeout: 30_000 });
  for (const name of Object.keys(RECIPES)) {
    expect(stdout).toMatch(new RegExp(`^${name}\\s+\\S+/ahp\\s+npm test\\s+allow$`, "m"));
    expect(stdout).toMatch(new RegExp(`^${name}\\s+\\S+/ahp\\s+rm -rf build/\\s+block$`, "m"));
  }
});

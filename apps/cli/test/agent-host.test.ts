/**
 * `ahp serve --agent-host`: a real harness process with the Agent Host adapter on loopback. An
 * agent (AhpClient over WebSocket) is escalated by the built-in policy; a human approver on the
 * Agent Host side answers; the tokens file is checked for its mode.
 */
// Frames from the wire are read as untyped JSON in assertions; a wrong shape fails the expectation.

import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AhpClient } from "@ahp/core";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { agentHostSocket, serveWithAgentHost } from "./agent-host-socket.js";

const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const PUSH = { tool_name: "bash", arguments: { command: "git push origin main" } };

let dir: string;
const running: ChildProcess[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-cli-agent-host-"));
});
afterEach(() => {
  for (const child of running.splice(0)) child.kill("SIGTERM");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/** Starts `ahp serve` and resolves with the URLs of the ws and agent-host listeners and the log lines. */
const serve = (args: string[]) => serveWithAgentHost(BIN, ["serve", ...args], running);

async function tokensFile(
  name: string,
  mode: number,
  text = "approver-secret alice approver\n# a viewer\nviewer-secret vera viewer\n",
): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  await chmod(path, mode);
  return path;
}

const inspector = agentHostSocket;

async function agent(url: string): Promise<AhpClient> {
  const client = new AhpClient({ sessionId: "cli-session", agentId: "main", timeoutMs: 0 });
  await client.connect(new WebSocketClientTransport(url), { capabilities: ["pre_action"] });
  return client;
}

describe("ahp serve --agent-host", () => {
  it("refuses a tokens file readable by group or others, and --agent-host without a tokens file", async () => {
    const open = await tokensFile("open.tokens", 0o644);
    const r = await run(["serve", "--ws", "127.0.0.1:0", "--agent-host", "127.0.0.1:0", "--agent-host-token-file", open]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/readable by its group or others .*chmod 600/);
    const missing = await run(["serve", "--ws", "127.0.0.1:0", "--agent-host", "127.0.0.1:0"]);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toMatch(/--agent-host needs --agent-host-token-file/);
    const stray = await run(["serve", "--ws", "127.0.0.1:0", "--approval-timeout-ms", "5"]);
    expect(stray.code).toBe(64);
  });

  it("an escalated git push waits for a human approver, who allows it; the advertised timeout covers the approval timeout", async () => {
    const tokens = await tokensFile("ok.tokens", 0o600);
    const h = await serve([
      "--ws",
      "127.0.0.1:0",
      "--agent-host",
      "127.0.0.1:0",
      "--agent-host-token-file",
      tokens,
      "--approval-timeout-ms",
      "60000",
    ]);
    const human = await inspector(h.agentHost, "approver-secret");
    const init = await human.request("initialize", {
      channel: "ahp-root://",
      protocolVersions: ["1.1.0"],
      clientId: "human",
      initialSubscriptions: ["ahp-root://"],
    });
    expect(init.result.protocolVersion).toBe("1.1.0");
    const a = await agent(h.ws);
    expect(a.harnessConfig.timeout_ms).toBe(62_000);
    const added = await human.next((f) => f.method === "root/sessionAdded");
    const sessionUri = added.params.summary.resource as string;
    await human.request("subscribe", { channel: sessionUri });
    const decision = a.send("pre_action", PUSH);
    const set = await human.next((f) => f.method === "action" && f.params.action.type === "session/inputNeededSet");
    const entry = set.params.action.request;
    expect(entry.kind).toBe("toolConfirmation");
    human.send({
      jsonrpc: "2.0",
      method: "dispatchAction",
      params: {
        channel: entry.chat,
        clientSeq: 1,
        action: {
          type: "chat/toolCallConfirmed",
          turnId: entry.turnId,
          toolCallId: entry.toolCall.toolCallId,
          approved: true,
          confirmed: "user-action",
        },
      },
    });
    const result = await decision;
    expect(result.decision).toBe("allow");
    expect((result as { metadata?: Record<string, unknown> }).metadata?.approved_by).toBe("alice");
    expect(h.logs().some((l) => l.msg === "advertised timeout raised for human approvals")).toBe(true);
    human.ws.close();
    await a.close();
  });

  it("without an answer the escalation fails closed (block) after the approval timeout", async () => {
    const tokens = await tokensFile("t.tokens", 0o600);
    const h = await serve([
      "--ws",
      "127.0.0.1:0",
      "--agent-host",
      "127.0.0.1:0",
      "--agent-host-token-file",
      tokens,
      "--approval-timeout-ms",
      "1000",
    ]);
    const a = await agent(h.ws);
    const result = await a.send("pre_action", PUSH);
    expect(result).toMatchObject({ decision: "block", reason: "No decision within 1 s" });
    await a.close();
  });

  it("serves --agent-host-static behind the same tokens; a wrong token is 401 at the upgrade", async () => {
    const tokens = await tokensFile("s.tokens", 0o600);
    const site = join(dir, "site");
    await mkdir(site, { recursive: true });
    await writeFile(join(site, "index.html"), "<p>inspector</p>");
    const h = await serve([
      "--ws",
      "127.0.0.1:0",
      "--agent-host",
      "127.0.0.1:0",
      "--agent-host-token-file",
      tokens,
      "--agent-host-static",
      site,
    ]);
    const base = h.agentHost.replace(/^ws:/, "http:");
    expect((await fetch(`${base}inspector/`)).status).toBe(401);
    const ok = await fetch(`${base}inspector/?token=viewer-secret`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("<p>inspector</p>");
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${h.agentHost}?token=wrong`);
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("error", () => undefined);
    });
    expect(status).toBe(401);
  });

  it("reads the agent_host section of ahp.config.yaml", async () => {
    const tokens = await tokensFile("c.tokens", 0o600);
    const config = join(dir, "ahp.config.yaml");
    await writeFile(
      config,
      `listen:\n  ws: ["127.0.0.1:0"]\nagent_host:\n  listen: 127.0.0.1:0\n  token_file: ${tokens}\n  approval_timeout_ms: 30000\n`,
    );
    const h = await serve(["--config", config]);
    const a = await agent(h.ws);
    expect(a.harnessConfig.timeout_ms).toBe(32_000);
    await a.close();
  });
});

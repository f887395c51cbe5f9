/**
 * What the browser tests share: finding Debian's chromium (never downloading one), a real
 * `ahp serve --agent-host` child process, a scripted agent, and a TCP proxy in front of the
 * Agent Host port that can cut every connection (the "socket drops" of the reconnect test).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { createServer, connect, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AhpClient } from "@ahp/core";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const IN_CI = process.env.CI === "true";
export const INSTALL_HINT = `chromium not found at ${CHROMIUM}: install it with \`apt-get install chromium\` (or set CHROMIUM_PATH)`;

/** The folder (git-ignored) where screenshots of the page are saved. */
export const ARTIFACTS = fileURLToPath(new URL("../test-artifacts/", import.meta.url));
const CLI = fileURLToPath(new URL("../../cli/dist/main.js", import.meta.url));

export function launchChromium(): Promise<Browser> {
  // Running as root (containers, CI) chromium refuses to start with its sandbox on.
  const args = process.getuid?.() === 0 ? ["--no-sandbox"] : [];
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args });
}

export const TOKENS = {
  approver: "approver-secret-0123456789",
  approver2: "approver2-secret-0123456789",
  viewer: "viewer-secret-0123456789",
} as const;

export interface Served {
  child: ChildProcess;
  ws: string;
  agentHost: string;
  /** http://host:port/ of the Agent Host listener. */
  httpUrl: string;
  stderr: () => string;
}

/**
 * Starts `ahp serve --ws … --config …` with the Agent Host port on (editable approvals, held
 * requests wait `approvalTimeoutMs`) and resolves once both listen.
 */
export async function serve(dir: string, extra: string[] = [], approvalTimeoutMs = 120_000): Promise<Served> {
  await mkdir(dir, { recursive: true });
  const tokens = join(dir, "agent-host.tokens");
  await writeFile(tokens, `${TOKENS.approver} alice approver\n${TOKENS.approver2} bob approver\n${TOKENS.viewer} vera viewer\n`);
  await chmod(tokens, 0o600);
  const config = join(dir, "ahp.config.yaml");
  await writeFile(
    config,
    `agent_host:\n  listen: 127.0.0.1:0\n  token_file: ${JSON.stringify(tokens)}\n  approval_timeout_ms: ${approvalTimeoutMs}\n  editable: true\n`,
  );
  const child = spawn(process.execPath, [CLI, "serve", "--ws", "127.0.0.1:0", "--config", config, ...extra], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const listening = stderr
        .split("\n")
        .filter((l) => l.startsWith("{") && l.includes('"listening"'))
        .map((l) => JSON.parse(l) as Record<string, string>);
      const ws = listening.find((l) => l.transport === "ws")?.url;
      const agentHost = listening.find((l) => l.transport === "agent-host")?.url;
      if (ws !== undefined && agentHost !== undefined)
        resolve({ child, ws, agentHost, httpUrl: agentHost.replace(/^ws:/, "http:"), stderr: () => stderr });
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`ahp serve exited with ${code}: ${stderr}`)));
  });
}

export const NPM_INSTALL = { command: "npm install left-pad --registry http://registry.example.net" };

/** A scripted agent: one AHP session over WebSocket that waits as long as the harness holds a decision. */
export async function agent(wsUrl: string, sessionId: string): Promise<AhpClient> {
  const client = new AhpClient({ sessionId, agentId: "main", agentInfo: { framework: "scripted-agent", version: "1.0.0" }, timeoutMs: 0 });
  await client.connect(new WebSocketClientTransport(wsUrl), { capabilities: ["pre_action", "post_action"] });
  return client;
}

export function preAction(client: AhpClient, args: Record<string, unknown>, toolName = "bash") {
  return client.send("pre_action", { action_type: "tool_call", tool_name: toolName, arguments: args }) as Promise<{
    decision: string;
    modified_payload?: { arguments?: unknown };
    reason?: string;
  }>;
}

/** A TCP proxy to `target` whose connections can all be cut, and which can refuse new ones for a while. */
export async function cuttableProxy(target: { host: string; port: number }) {
  const pairs = new Set<Socket>();
  let refusing = false;
  const server = createServer((inbound) => {
    if (refusing) {
      inbound.destroy();
      return;
    }
    const outbound = connect(target.port, target.host);
    for (const s of [inbound, outbound]) {
      pairs.add(s);
      s.on("error", () => undefined);
      s.on("close", () => {
        pairs.delete(s);
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    /** Destroys every open connection and refuses new ones until {@link restore}. */
    cut() {
      refusing = true;
      for (const s of pairs) s.destroy();
    },
    restore() {
      refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of pairs) s.destroy();
        server.close(() => resolve());
      }),
  };
}

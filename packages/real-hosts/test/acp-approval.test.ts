/**
 * A person approves through the Agent Host: the real claude-agent-acp (the real Claude Code
 * against the scripted Anthropic stub) behind `ahp acp-proxy --connect` to `ahp serve
 * --agent-host`. The model asks to run a command the built-in policy escalates; an approver
 * answers on the Agent Host WebSocket API after a few seconds (longer than nothing, shorter than
 * the approval timeout); the proxy waits for that answer. Approved: the command ran (a file it
 * writes exists). Denied: it did not.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startAnthropicStub } from "../src/anthropic-stub.js";
import { claudeEnv } from "../src/claude.js";
import { ensureHost } from "../src/hosts.js";

const CLI = fileURLToPath(new URL("../../../apps/cli/dist/main.js", import.meta.url));

type Frame = Record<string, any>;
/** The CLI tests' Agent Host client (it needs `ws`, a dependency of the CLI, not of this package). */
interface AgentHostHelpers {
  serveWithAgentHost: (
    bin: string,
    args: string[],
    running: ChildProcess[],
  ) => Promise<{ child: ChildProcess; ws: string; agentHost: string; logs: () => Frame[] }>;
  agentHostSocket: (
    url: string,
    token: string,
  ) => Promise<{
    ws: { close: () => void };
    frames: Frame[];
    next: (test: (f: Frame) => boolean) => Promise<Frame>;
    request: (method: string, params: Record<string, unknown>) => Promise<Frame>;
    send: (m: unknown) => void;
  }>;
}
const helpers = (): Promise<AgentHostHelpers> =>
  import(/* @vite-ignore */ new URL("../../../apps/cli/test/agent-host-socket.ts", import.meta.url).href) as Promise<AgentHostHelpers>;
const TOKEN = "approver-token-0123456789";

const cleanups: Array<() => Promise<void>> = [];
const running: ChildProcess[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) c.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

type Message = Record<string, any>;

/** The proxy as an ACP client sees it: JSON lines on stdio; agent requests answered "allow". */
function proxy(argv: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, argv, { stdio: ["pipe", "pipe", "pipe"], env, detached: true });
  cleanups.push(async () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone
    }
  });
  let stderr = "";
  let buffered = "";
  let nextId = 0;
  const waiting = new Map<number, (m: Message) => void>();
  const asked: Message[] = [];
  const write = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout.on("data", (c: Buffer) => {
    buffered += c.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const line of parts) {
      if (line.trim() === "") continue;
      const m = JSON.parse(line) as Message;
      if (m.method !== undefined && m.id !== undefined) {
        asked.push(m);
        write({ jsonrpc: "2.0", id: m.id, result: { outcome: { outcome: "selected", optionId: "allow" } } });
      } else if (m.method === undefined) waiting.get(m.id as number)?.(m);
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      for (const settle of waiting.values()) settle({ error: { code: "exited", stderr } });
      resolve(code);
    }),
  );
  return {
    child,
    asked,
    exited,
    stderr: () => stderr,
    request(method: string, params: unknown): Promise<Message> {
      const id = nextId++;
      write({ jsonrpc: "2.0", id, method, params });
      return new Promise((resolve) => waiting.set(id, resolve));
    },
  };
}

describe("an escalated tool call of claude-agent-acp through ahp acp-proxy, answered by a person on the Agent Host", () => {
  for (const approved of [true, false]) {
    it(`${approved ? "approved" : "denied"} after a few seconds: the command ${approved ? "ran" : "did not run"}`, async () => {
      const { agentHostSocket, serveWithAgentHost } = await helpers();
      const host = await ensureHost("claudeAgentAcp");
      const dir = await tempDir("acp-approval-");
      const tokens = join(dir, "tokens");
      await writeFile(tokens, `${TOKEN} alice approver\n`);
      await chmod(tokens, 0o600);
      const h = await serveWithAgentHost(
        CLI,
        [
          "serve",
          "--ws",
          "127.0.0.1:0",
          "--agent-host",
          "127.0.0.1:0",
          "--agent-host-token-file",
          tokens,
          "--approval-timeout-ms",
          "120000",
        ],
        running,
      );
      const human = await agentHostSocket(h.agentHost, TOKEN);
      cleanups.push(async () => human.ws.close());
      await human.request("initialize", {
        channel: "ahp-root://",
        protocolVersions: ["1.1.0"],
        clientId: "alice",
        initialSubscriptions: ["ahp-root://"],
      });

      const cwd = await tempDir("acp-approval-cwd-");
      const marker = join(cwd, "pushed.txt");
      const server = await startAnthropicStub({
        steps: [{ tool_use: { name: "Bash", input: { command: `git push origin main; touch ${marker}` } } }],
      });
      cleanups.push(() => server.close());
      const home = await tempDir("acp-approval-home-");
      const p = proxy(
        [
          CLI,
          "acp-proxy",
          "--connect",
          h.ws,
          "--store",
          join(home, "store"),
          "--",
          process.execPath,
          join(host.pkgDir, "dist", "index.js"),
        ],
        claudeEnv({ home, baseUrl: server.url }),
      );
      running.push(p.child);
      await p.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const sessionId = String((await p.request("session/new", { cwd, mcpServers: [] })).result.sessionId);
      const added = await human.next((f) => f.method === "root/sessionAdded");
      await human.request("subscribe", { channel: added.params.summary.resource as string });
      const turn = p.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "push it" }] });
      const set = await human.next((f) => f.method === "action" && f.params.action.type === "session/inputNeededSet");
      const entry = set.params.action.request;
      expect(entry.kind).toBe("toolConfirmation");
      // The person takes a few seconds; the proxy keeps waiting.
      await new Promise((resolve) => setTimeout(resolve, 4000));
      expect(existsSync(marker)).toBe(false);
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
            approved,
            confirmed: "user-action",
          },
        },
      });
      const done = await turn;
      expect(done.result?.stopReason).toBe("end_turn");
      expect(existsSync(marker)).toBe(approved);
      // Approved at the harness: the client still decides (it allowed); denied: the client was never asked.
      expect(p.asked.filter((m) => m.method === "session/request_permission")).toHaveLength(approved ? 1 : 0);
      expect(p.stderr()).not.toContain('"msg":"harness failure"');
      p.child.stdin.end();
      expect(await p.exited).toBe(0);
      // What the Agent Host recorded about the tool call, for the record (printed, not asserted).
      const states = human.frames
        .filter((f) => f.method === "action" && /toolCall|inputNeeded|turn/i.test(String(f.params?.action?.type)))
        .map((f) => ({
          type: f.params.action.type,
          approved: f.params.action.approved,
          state: f.params.action.state,
          reason: f.params.action.reason,
        }));
      console.log(`agent host, ${approved ? "approved" : "denied"}:`, JSON.stringify(states));
    }, 600_000);
  }
});

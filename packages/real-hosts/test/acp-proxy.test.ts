/**
 * `ahp acp-proxy` in front of the real ACP agents, installed from the npm registry at pinned
 * versions: Zed's claude-agent-acp (running the real Claude Code against the scripted Anthropic
 * stub on loopback) and codex-acp (only protocol steps that need no model). Assertions are on
 * what happened: the bytes the client got and their order, whether the client was asked, whether
 * the file exists, what the model was told, which processes are left.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type AnthropicStub, startAnthropicStub, type Step } from "../src/anthropic-stub.js";
import { claudeEnv } from "../src/claude.js";
import { ensureHost } from "../src/hosts.js";

const CLI = fileURLToPath(new URL("../../../apps/cli/dist/main.js", import.meta.url));

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function stub(steps: Step[]): Promise<AnthropicStub> {
  const server = await startAnthropicStub({ steps });
  cleanups.push(() => server.close());
  return server;
}

/** Polls `check` until it holds or `ms` passed (wall clock, generous for a busy machine). */
async function until(check: () => boolean, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

type Message = Record<string, unknown> & { id?: number | string; method?: string; params?: any; result?: any; error?: any };

/**
 * A minimal ACP client over a process's stdio, at the level of JSON lines: every line it read is
 * kept in order; agent requests are answered by `answer` (default: cancelled).
 */
function acpProcess(argv: string[], env: NodeJS.ProcessEnv, answer?: (m: Message) => unknown) {
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env, detached: true });
  const lines: Message[] = [];
  const asked: Message[] = [];
  let stderr = "";
  let buffered = "";
  let nextId = 0;
  const waiting = new Map<number, (m: Message) => void>();
  const write = (m: unknown) => child.stdin!.write(`${JSON.stringify(m)}\n`);
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout!.on("data", (c: Buffer) => {
    buffered += c.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const line of parts) {
      if (line.trim() === "") continue;
      const m = JSON.parse(line) as Message;
      lines.push(m);
      if (m.method !== undefined && m.id !== undefined) {
        asked.push(m);
        write({ jsonrpc: "2.0", id: m.id, result: answer?.(m) ?? { outcome: { outcome: "cancelled" } } });
      } else if (m.method === undefined && typeof m.id === "number") waiting.get(m.id)?.(m);
    }
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      // A request the process never answered fails now rather than hang the test.
      for (const settle of waiting.values()) settle({ error: { code: "exited", message: `the process exited (${code})`, stderr } });
      waiting.clear();
      resolve(code);
    }),
  );
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone
    }
  };
  cleanups.push(async () => killGroup());
  return {
    child,
    lines,
    asked,
    stderr: () => stderr,
    exited,
    request(method: string, params: unknown): Promise<Message> {
      const id = nextId++;
      write({ jsonrpc: "2.0", id, method, params });
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    updates: (sessionId?: string) =>
      lines.filter((m) => m.method === "session/update" && (sessionId === undefined || m.params.sessionId === sessionId)),
  };
}

const proxyArgv = (store: string, agent: string[]) => [process.execPath, CLI, "acp-proxy", "--store", store, "--", ...agent];
const INIT = { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } };

describe("claude-agent-acp through ahp acp-proxy", () => {
  it("the agent's first update (available_commands_update) reaches the client after the session/new answer, 10 of 10 runs", async () => {
    const host = await ensureHost("claudeAgentAcp");
    const agent = [process.execPath, join(host.pkgDir, "dist", "index.js")];
    const server = await stub([]);
    let arrived = 0;
    for (let run = 0; run < 10; run++) {
      const home = await tempDir("acp-home-");
      const cwd = await tempDir("acp-cwd-");
      const p = acpProcess(proxyArgv(join(home, "store"), agent), claudeEnv({ home, baseUrl: server.url }));
      expect((await p.request("initialize", INIT)).result).toBeDefined();
      const created = await p.request("session/new", { cwd, mcpServers: [] });
      const sessionId = String(created.result.sessionId);
      await until(
        () => p.updates(sessionId).some((m) => m.params.update.sessionUpdate === "available_commands_update"),
        `run ${run}: the first update`,
      );
      const answerAt = p.lines.indexOf(created);
      const updateAt = p.lines.findIndex((m) => m.method === "session/update" && m.params.sessionId === sessionId);
      expect(updateAt).toBeGreaterThan(answerAt);
      arrived++;
      p.child.stdin!.end();
      expect(await p.exited).toBe(0);
    }
    expect(arrived).toBe(10);
  }, 1_200_000);

  it("a Write outside the session's cwd is refused without asking the client, who sees why; inside, the client decides", async () => {
    const host = await ensureHost("claudeAgentAcp");
    const agent = [process.execPath, join(host.pkgDir, "dist", "index.js")];
    const home = await tempDir("acp-home-");
    const cwd = await tempDir("acp-cwd-");
    const elsewhere = await tempDir("acp-elsewhere-");
    const outside = join(elsewhere, "outside.txt");
    const inside = join(cwd, "inside.txt");
    const server = await stub([{ tool_use: { name: "Write", input: { file_path: outside, content: "outside\n" } } }]);
    const p = acpProcess(proxyArgv(join(home, "store"), agent), claudeEnv({ home, baseUrl: server.url }), () => ({
      outcome: { outcome: "selected", optionId: "allow" },
    }));
    await p.request("initialize", INIT);
    const sessionId = String((await p.request("session/new", { cwd, mcpServers: [] })).result.sessionId);
    const done = await p.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write the file" }] });
    expect(done.result?.stopReason).toBe("end_turn");
    expect(existsSync(outside)).toBe(false);
    expect(p.asked.filter((m) => m.method === "session/request_permission")).toHaveLength(0);
    const refusal = p.updates(sessionId).find((m) => m.params.update._meta?.["ahpHarness/decision"] !== undefined);
    expect(refusal?.params.update).toMatchObject({
      sessionUpdate: "tool_call_update",
      status: "failed",
      _meta: { "ahpHarness/decision": { decision: "block", reason: "Write outside the workspace", rule: "block-write-outside-workspace" } },
    });
    expect(JSON.stringify(refusal?.params.update.content)).toContain("Refused by the harness: Write outside the workspace");
    // What the model was told: the agent's own refusal (claude-agent-acp offers no way to say more).
    const told = server.toolResults();
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ name: "Write", is_error: true });
    expect(told[0]!.content).toContain("User refused permission");
    p.child.stdin!.end();
    expect(await p.exited).toBe(0);

    const server2 = await stub([{ tool_use: { name: "Write", input: { file_path: inside, content: "inside\n" } } }]);
    const q = acpProcess(proxyArgv(join(home, "store"), agent), claudeEnv({ home, baseUrl: server2.url }), () => ({
      outcome: { outcome: "selected", optionId: "allow" },
    }));
    await q.request("initialize", INIT);
    const s2 = String((await q.request("session/new", { cwd, mcpServers: [] })).result.sessionId);
    expect(
      (await q.request("session/prompt", { sessionId: s2, prompt: [{ type: "text", text: "write the file" }] })).result?.stopReason,
    ).toBe("end_turn");
    const asked = q.asked.filter((m) => m.method === "session/request_permission");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.params.toolCall).toMatchObject({ kind: "edit" });
    expect(existsSync(inside)).toBe(true);
    q.child.stdin!.end();
    expect(await q.exited).toBe(0);
  }, 600_000);
});

/** An isolated, empty Codex home (codex-acp refuses a CODEX_HOME that does not exist). */
async function codexEnv(home: string): Promise<NodeJS.ProcessEnv> {
  await mkdir(join(home, ".codex"), { recursive: true });
  return { PATH: process.env.PATH, HOME: home, CODEX_HOME: join(home, ".codex") };
}

describe("codex-acp through ahp acp-proxy (no model needed)", () => {
  it("a request for a session the proxy does not hold gets codex-acp's own answer", async () => {
    const host = await ensureHost("codexAcp");
    const agent = [process.execPath, join(host.pkgDir, "bin", "codex-acp.js")];
    const home = await tempDir("codex-home-");
    const env = await codexEnv(home);
    const direct = acpProcess(agent, env);
    await direct.request("initialize", INIT);
    const own = await direct.request("session/prompt", { sessionId: "not-held", prompt: [{ type: "text", text: "hi" }] });
    direct.child.stdin!.end();
    expect(own.error).toBeDefined();
    expect(own.error.code).not.toBe(-32002);

    const p = acpProcess(proxyArgv(join(home, "store"), agent), env);
    await p.request("initialize", INIT);
    const through = await p.request("session/prompt", { sessionId: "not-held", prompt: [{ type: "text", text: "hi" }] });
    expect(through.error).toMatchObject({ code: own.error.code, message: own.error.message });
    p.child.stdin!.end();
    expect(await p.exited).toBe(0);
  }, 300_000);

  for (const how of ["the client disconnects", "SIGTERM"] as const) {
    it(`no process of the agent's group outlives the proxy when ${how} (codex-acp's npm wrapper does not forward signals)`, async () => {
      const host = await ensureHost("codexAcp");
      const agent = [process.execPath, join(host.pkgDir, "bin", "codex-acp.js")];
      const home = await tempDir("codex-home-");
      const env = await codexEnv(home);
      const p = acpProcess(proxyArgv(join(home, "store"), agent), env);
      expect((await p.request("initialize", INIT)).result).toBeDefined();
      await until(() => /"msg":"agent started"[^\n]*"pid":\d+/.test(p.stderr()), "the agent's pid");
      const pgid = Number(/"msg":"agent started"[^\n]*"pid":(\d+)/.exec(p.stderr())![1]);
      cleanups.push(async () => {
        try {
          process.kill(-pgid, "SIGKILL");
        } catch {
          // gone
        }
      });
      expect(groupAlive(pgid)).toBe(true);
      if (how === "SIGTERM") p.child.kill("SIGTERM");
      else p.child.stdin!.end();
      expect(await p.exited).toBe(0);
      await until(() => !groupAlive(pgid), "the agent's process group to be gone", 30_000);
    }, 300_000);
  }
});

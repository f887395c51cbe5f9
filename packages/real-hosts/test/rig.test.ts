/**
 * The rig itself: the stub speaks the protocol the real Claude Code accepts. Each pinned Claude
 * Code is run with a one-step script (a Write inside its cwd) and the file must exist afterwards,
 * with the model told the write succeeded.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AnthropicStub, startAnthropicStub } from "../src/anthropic-stub.js";
import { runClaude } from "../src/claude.js";
import { claudeCliPath, ensureHost, HOSTS } from "../src/hosts.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function stub(steps: Parameters<typeof startAnthropicStub>[0]["steps"]): Promise<AnthropicStub> {
  const server = await startAnthropicStub({ steps });
  cleanups.push(() => server.close());
  return server;
}

describe("anthropic stub on its own", () => {
  it("streams the scripted tool_use, then end_turn once the conversation holds its result", async () => {
    const server = await stub([{ tool_use: { name: "Bash", input: { command: "true" } } }]);
    const ask = async (messages: unknown[]) => {
      const res = await fetch(`${server.url}/v1/messages?beta=true`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", stream: true, tools: [{ name: "Bash" }], messages }),
      });
      return res.text();
    };
    const first = await ask([{ role: "user", content: "go" }]);
    expect(first).toContain('"type":"tool_use"');
    expect(first).toContain('"stop_reason":"tool_use"');
    const id = /"id":"(toolu_[^"]+)"/.exec(first)?.[1];
    expect(id).toBeDefined();
    const second = await ask([
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id, name: "Bash", input: { command: "true" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "denied", is_error: true }] },
    ]);
    expect(second).toContain('"stop_reason":"end_turn"');
    expect(server.toolResults()).toEqual([{ tool_use_id: id, name: "Bash", content: "denied", is_error: true }]);
  });

  it("answers requests without tools with text, without consuming a step, and counts tokens", async () => {
    const server = await stub([{ tool_use: { name: "Bash", input: { command: "true" } } }]);
    const res = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "title?" }] }),
    });
    const body = (await res.json()) as { content: Array<{ type: string }>; stop_reason: string };
    expect(body.content[0]?.type).toBe("text");
    expect(body.stop_reason).toBe("end_turn");
    const tokens = await fetch(`${server.url}/v1/messages/count_tokens`, { method: "POST", body: "{}" });
    expect(await tokens.json()).toEqual({ input_tokens: 100 });
    const withTools = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", tools: [{ name: "Bash" }], messages: [{ role: "user", content: "go" }] }),
    });
    expect(((await withTools.json()) as { stop_reason: string }).stop_reason).toBe("tool_use");
  });

  it("refuses a body that is not JSON with a 400", async () => {
    const server = await stub([]);
    const res = await fetch(`${server.url}/v1/messages`, { method: "POST", body: "{nope" });
    expect(res.status).toBe(400);
  });
});

describe.each([
  ["claudeAgentSdk", "2.1.83"],
  ["claudeCode", HOSTS.claudeCode.version],
] as const)("real Claude Code from %s (%s) against the stub", (key, cliVersion) => {
  it("runs a scripted Write inside its cwd: the file exists and the model is told it worked", async () => {
    const host = await ensureHost(key);
    const cli = claudeCliPath(host);
    const cwd = await tempDir("ahp-rig-cwd-");
    const home = await tempDir("ahp-rig-home-");
    const target = join(cwd, "hello.txt");
    const server = await stub([{ tool_use: { name: "Write", input: { file_path: target, content: "hi from the stub\n" } } }]);
    const run = await runClaude({ cli, cwd, home, baseUrl: server.url, prompt: "write the file" });
    expect(run.timedOut, run.stderr).toBe(false);
    expect(existsSync(target), `${run.stdout}\n${run.stderr}`).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("hi from the stub\n");
    const results = server.toolResults();
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: "Write", is_error: false });
    const init = run.events.find((event) => event.type === "system" && event.subtype === "init");
    expect(init?.claude_code_version).toBe(cliVersion);
    expect(run.code).toBe(0);
  });
});

/**
 * `ahp acp-proxy` holds with an agent that writes the way fast agents do: an answer and the
 * session's first update in one write, a replay before a load's answer, its own errors for
 * sessions the proxy does not hold, permission requests with `kind`/`rawInput`/`locations`, and
 * processes that never hear SIGTERM. Every assertion is on what happened: the bytes the client
 * got, whether the client was asked, whether the file exists, whether a process is left.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

// Each test starts the CLI and an agent; on a busy machine that alone can take many seconds.
vi.setConfig({ testTimeout: 120_000 });

const BIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const AGENT = fileURLToPath(new URL("./fixtures/acp-raw-agent.mjs", import.meta.url));
const running: ChildProcess[] = [];
const groups: number[] = [];

function alive(pid: number, group = false): boolean {
  try {
    process.kill(group ? -pid : pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

afterEach(() => {
  for (const c of running.splice(0)) c.kill("SIGKILL");
  for (const g of groups.splice(0)) {
    try {
      process.kill(-g, "SIGKILL");
    } catch {
      // gone
    }
  }
});
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-acp-proxy-held-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Update {
  sessionId: string;
  update: Record<string, unknown> & { sessionUpdate: string };
}

function proxy(args: string[], env: NodeJS.ProcessEnv = {}, onPermission?: (params: Record<string, unknown>) => unknown) {
  const child = spawn(
    process.execPath,
    [BIN, "acp-proxy", "--store", join(dir, `store-${running.length}`), ...args, "--", process.execPath, AGENT],
    {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, ...env },
    },
  );
  running.push(child);
  let stderr = "";
  const lines: Array<Record<string, unknown>> = [];
  let buffered = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const tee = new PassThrough();
  child.stdout.on("data", (c: Buffer) => {
    buffered += c.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const l of parts) if (l.trim() !== "") lines.push(JSON.parse(l) as Record<string, unknown>);
    tee.write(c);
  });
  child.stdout.on("end", () => tee.end());
  const updates: Update[] = [];
  const asked: Array<Record<string, unknown>> = [];
  const conn = client({ name: "held" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params);
    })
    .onRequest("session/request_permission", ({ params }) => {
      asked.push(params);
      return (onPermission?.(params) ?? { outcome: { outcome: "cancelled" } }) as never;
    })
    .connect(ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(tee) as ReadableStream<Uint8Array>));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const agentPid = (): number | undefined => {
    const m = /"msg":"agent started"[^\n]*"pid":(\d+)/.exec(stderr);
    return m === null ? undefined : Number(m[1]);
  };
  return { child, conn, ctx: conn.agent, updates, asked, lines, stderr: () => stderr, exited, agentPid };
}

/** Index of the proxy's stdout line that answers request `id`, and of the first update of `sessionId` with `tag`. */
function order(lines: Array<Record<string, unknown>>, sessionId: string, tag: string) {
  const answer = lines.findIndex((l) => "result" in l && (l.result as Record<string, unknown> | null)?.sessionId === sessionId);
  const update = lines.findIndex(
    (l) =>
      l.method === "session/update" && (l.params as Update).sessionId === sessionId && (l.params as Update).update.sessionUpdate === tag,
  );
  return { answer, update };
}

describe("ahp acp-proxy with an agent that writes an answer and an update at once", () => {
  it("the first update of every new session arrives, after the session/new answer (10 of 10)", async () => {
    const p = proxy([]);
    await p.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    for (let i = 0; i < 10; i++) {
      const { sessionId } = await p.ctx.request("session/new", { cwd: dir, mcpServers: [] });
      await until(
        () => p.updates.some((u) => u.sessionId === sessionId && u.update.sessionUpdate === "available_commands_update"),
        `the first update of ${sessionId}`,
      );
      const o = order(p.lines, sessionId, "available_commands_update");
      expect(o.answer).toBeGreaterThanOrEqual(0);
      expect(o.update).toBeGreaterThan(o.answer);
    }
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
  });

  it("resume and load of sessions the proxy has not seen: the updates arrive in their turn", async () => {
    const p = proxy([]);
    await p.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    await p.ctx.request("session/resume", { sessionId: "elsewhere-1", cwd: dir, mcpServers: [] });
    await until(() => p.updates.some((u) => u.sessionId === "elsewhere-1"), "the update after resume");
    const resumeAnswer = p.lines.findIndex((l) => "result" in l && l.id !== undefined && p.lines.indexOf(l) > 0);
    const resumeUpdate = p.lines.findIndex((l) => l.method === "session/update" && (l.params as Update).sessionId === "elsewhere-1");
    expect(resumeUpdate).toBeGreaterThan(resumeAnswer);

    await p.ctx.request("session/load", { sessionId: "elsewhere-2", cwd: dir, mcpServers: [] });
    await until(() => p.updates.filter((u) => u.sessionId === "elsewhere-2").length === 2, "the replay and the update after load");
    expect(p.updates.filter((u) => u.sessionId === "elsewhere-2").map((u) => u.update.sessionUpdate)).toEqual([
      "user_message_chunk",
      "available_commands_update",
    ]);
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
  });

  it("a prompt for a session the proxy does not hold gets the agent's own answer", async () => {
    const p = proxy([]);
    await p.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const error = await p.ctx
      .request("session/prompt", { sessionId: "never-opened", prompt: [{ type: "text", text: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32000, message: "Authentication required" });
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
  });
});

describe("ahp acp-proxy permission gate", () => {
  it("an edit outside the session's cwd is refused without asking the client, the client sees why; inside, the client decides", async () => {
    const project = await mkdtemp(join(dir, "project-"));
    const outside = join(dir, "outside.txt");
    const inside = join(project, "inside.txt");
    const log = join(dir, "agent-answers.jsonl");
    const p = proxy([], { ACP_RAW_AGENT_LOG: log }, () => ({ outcome: { outcome: "selected", optionId: "allow" } }));
    await p.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await p.ctx.request("session/new", { cwd: project, mcpServers: [] });

    await p.ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `write ${outside}` }] });
    expect(existsSync(outside)).toBe(false);
    expect(p.asked).toHaveLength(0);
    const refusal = p.updates.find((u) => u.update.sessionUpdate === "tool_call_update" && u.update._meta !== undefined);
    expect(refusal?.update).toMatchObject({
      status: "failed",
      _meta: {
        "ahpHarness/decision": {
          decision: "block",
          reason: "Write outside the workspace",
          rule: "block-write-outside-workspace",
          by: "harness",
        },
      },
    });
    const text = JSON.stringify(refusal?.update.content);
    expect(text).toContain("Refused by the harness: Write outside the workspace [rule: block-write-outside-workspace]");
    // The agent's own "refused" update of the same call keeps the harness's reason in front.
    const last = p.updates.filter((u) => u.update.sessionUpdate === "tool_call_update").at(-1)!;
    expect(JSON.stringify(last.update.content)).toMatch(/Refused by the harness.*User refused permission/);
    const answers = (await readFile(log, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { result: Record<string, unknown> });
    expect(answers[0]!.result).toMatchObject({
      outcome: { outcome: "selected", optionId: "reject" },
      _meta: { "ahpHarness/decision": { decision: "block", rule: "block-write-outside-workspace" } },
    });

    await p.ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `write ${inside}` }] });
    expect(p.asked).toHaveLength(1);
    expect(p.asked[0]).toMatchObject({ toolCall: { kind: "edit", locations: [{ path: inside }] } });
    expect(await readFile(inside, "utf8")).toBe("written by the agent\n");
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
  });
});

describe("ahp acp-proxy start and stop", () => {
  it("waits as long as the harness may hold a decision, or as long as --decision-timeout-ms says", async () => {
    const p = proxy(["--decision-timeout-ms", "123456"]);
    await p.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    await until(() => p.stderr().includes('"msg":"harness connected"'), "the harness");
    expect(p.stderr()).toMatch(/"msg":"harness connected"[^\n]*"decision_timeout_ms":123456/);
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
    const q = proxy([]);
    // The embedded harness starts once the client's initialize is answered.
    await q.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    await until(() => q.stderr().includes('"msg":"harness connected"'), "the harness");
    // The embedded harness advertises its own timeout_ms: that is the wait.
    expect(q.stderr()).toMatch(/"msg":"harness connected"[^\n]*"decision_timeout_ms":\d+/);
    q.child.stdin.end();
    expect(await q.exited).toBe(0);
  });

  for (const how of ["the client disconnects", "SIGTERM"] as const) {
    it(`no agent process outlives the proxy when ${how}, even one that ignores SIGTERM`, async () => {
      const p = proxy([], { ACP_RAW_AGENT_GRANDCHILD: "1" });
      await p.ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      await until(() => p.agentPid() !== undefined && /grandchild (\d+)/.test(p.stderr()), "the agent and its child");
      const pgid = p.agentPid()!;
      groups.push(pgid);
      const grandchild = Number(/grandchild (\d+)/.exec(p.stderr())![1]);
      expect(alive(grandchild)).toBe(true);
      if (how === "SIGTERM") p.child.kill("SIGTERM");
      else p.child.stdin.end();
      expect(await p.exited).toBe(0);
      await until(() => !alive(pgid, true), "the agent's process group to be gone");
      expect(alive(grandchild)).toBe(false);
    });
  }
});

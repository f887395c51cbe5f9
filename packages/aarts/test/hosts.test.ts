/** Host adapters beyond the §6 scenarios: cross-event state, compaction, skills, sub-agents; the state store; connections. */
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AhpServer } from "@ahp/core";
import { listenHttp } from "@ahp/transport-http";
import { listenWebSocket } from "@ahp/transport-ws";
import { afterEach, describe, expect, it } from "vitest";
import {
  AartsHost,
  CLAUDE_CODE,
  FileStateStore,
  parseConnect,
  parseSkillFile,
  parseYamlSubset,
  runClaudeCompatibleHook,
  runClineHook,
  runCursorHook,
  runHookCommand,
  runWindsurfHook,
  VSCODE,
} from "@ahp/aarts";
import { allow, deny, engine, out, runtime } from "./helpers.js";

let dir: string;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});
const tmp = () => (dir = mkdtempSync(join(tmpdir(), "aarts-hosts-")));

describe("Claude Code adapter", () => {
  it("Task spawn → SubagentStart binding → permitted_tools enforced locally for the sub-agent's tools", async () => {
    const e = engine((event) =>
      event.hook_point === "PreSubAgentSpawn" ? allow({ directives: { permitted_tools: ["file_read"] } }) : allow(),
    );
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: e }] }));
    const common = { session_id: "S", cwd: "/w" };
    await runClaudeCompatibleHook(
      CLAUDE_CODE,
      {
        ...common,
        hook_event_name: "PreToolUse",
        tool_name: "Task",
        tool_use_id: "tu1",
        tool_input: { prompt: "read docs", subagent_type: "explore" },
      },
      rt,
    );
    await runClaudeCompatibleHook(CLAUDE_CODE, { ...common, hook_event_name: "SubagentStart", agent_id: "ag1", agent_type: "explore" }, rt);
    const calls = e.events.length;
    const bash = await runClaudeCompatibleHook(
      CLAUDE_CODE,
      {
        ...common,
        hook_event_name: "PreToolUse",
        agent_id: "ag1",
        tool_name: "Bash",
        tool_use_id: "tu2",
        tool_input: { command: "curl x" },
      },
      rt,
    );
    expect(out(bash)).toMatchObject({
      hookSpecificOutput: {
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining("not permitted for sub-agent S/tu1"),
      },
    });
    expect(e.events.length).toBe(calls);
    await runClaudeCompatibleHook(
      CLAUDE_CODE,
      {
        ...common,
        hook_event_name: "PreToolUse",
        agent_id: "ag1",
        tool_name: "Read",
        tool_use_id: "tu3",
        tool_input: { file_path: "/w/README.md" },
      },
      rt,
    );
    expect(e.events.at(-1)).toMatchObject({ session_id: "S/tu1", is_sub_agent: true, parent_session_id: "S", tool_name: "file_read" });
  });

  it("PreCompact reads the transcript (deny ⇒ exit 2), PostCompact uses the snapshot and renders inject_context", async () => {
    tmp();
    const transcript = join(dir, "t.jsonl");
    writeFileSync(transcript, '{"type":"user","text":"a"}\n{"type":"assistant","text":"b"}\n');
    const blocking = runtime(new AartsHost({ hooks: [{ id: "e", engine: engine(() => deny({ reasons: ["keep context"] })) }] }));
    const blocked = await runClaudeCompatibleHook(
      CLAUDE_CODE,
      { session_id: "S", hook_event_name: "PreCompact", trigger: "auto", transcript_path: transcript },
      blocking,
    );
    expect(blocked).toEqual({ stdout: "", stderr: "keep context\n", exitCode: 2 });
    const e = engine((event) =>
      event.hook_point === "PostCompact"
        ? allow({ directives: { inject_context: { position: "system", content: "Earlier: denied curl" } } })
        : allow(),
    );
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: e }] }));
    await runClaudeCompatibleHook(
      CLAUDE_CODE,
      { session_id: "S", hook_event_name: "PreCompact", trigger: "manual", transcript_path: transcript },
      rt,
    );
    expect(e.events[0]).toMatchObject({
      hook_point: "PreCompact",
      compaction_reason: "user_triggered",
      context_before: [
        { type: "user", text: "a" },
        { type: "assistant", text: "b" },
      ],
    });
    writeFileSync(transcript, '{"type":"summary","text":"ab"}\n');
    const post = await runClaudeCompatibleHook(
      CLAUDE_CODE,
      { session_id: "S", hook_event_name: "PostCompact", transcript_path: transcript },
      rt,
    );
    expect(e.events[1]).toMatchObject({
      hook_point: "PostCompact",
      original_value: {
        transcript: [
          { type: "user", text: "a" },
          { type: "assistant", text: "b" },
        ],
      },
      modified_value: { transcript: [{ type: "summary", text: "ab" }] },
    });
    expect(out(post)).toEqual({ hookSpecificOutput: { hookEventName: "PostCompact", additionalContext: "Earlier: denied curl" } });
    // Without a readable transcript the hook is not fired.
    expect(
      out(
        await runClaudeCompatibleHook(
          CLAUDE_CODE,
          { session_id: "S", hook_event_name: "PreCompact", transcript_path: join(dir, "missing") },
          rt,
        ),
      ),
    ).toEqual({});
    expect(e.events).toHaveLength(2);
  });

  it("Skill: PreSkillLoad from the skill file's frontmatter; strip_hooks on a host that cannot strip ⇒ deny", async () => {
    tmp();
    const skillDir = join(dir, ".claude", "skills", "deploy");
    mkdirSync(skillDir, { recursive: true });
    writeFileSync(
      join(skillDir, "SKILL.md"),
      '---\nname: deploy\ndescription: "Deploys the app"\nallowed-tools: [Bash, Read]\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./check.sh\n---\nRun `make deploy`.\n',
    );
    const e = engine((event) => (event.hook_point === "PreSkillLoad" ? allow({ directives: { strip_hooks: true } }) : allow()));
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: e }] }), { home: join(dir, "home") });
    const r = await runClaudeCompatibleHook(
      CLAUDE_CODE,
      { session_id: "S", cwd: dir, hook_event_name: "PreToolUse", tool_name: "Skill", tool_use_id: "t", tool_input: { skill: "deploy" } },
      rt,
    );
    const skill = e.events.find((ev) => ev.hook_point === "PreSkillLoad") as Record<string, unknown>;
    expect(skill).toMatchObject({
      source: "project",
      source_id: join(".claude", "skills", "deploy", "SKILL.md"),
      load_context: "skill_invocation",
      frontmatter: { name: "deploy", description: "Deploys the app", "allowed-tools": ["Bash", "Read"] },
      declared_hooks: [{ event: "PreToolUse", matcher: "Bash", command: "./check.sh", type: "command" }],
      body_content: "Run `make deploy`.\n",
    });
    expect(skill.file_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(out(r)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    // An unknown skill is not fired.
    await runClaudeCompatibleHook(
      CLAUDE_CODE,
      {
        session_id: "S",
        cwd: dir,
        hook_event_name: "PreToolUse",
        tool_name: "Skill",
        tool_use_id: "t2",
        tool_input: { skill: "../../etc" },
      },
      rt,
    );
    expect(e.events.filter((ev) => ev.hook_point === "PreSkillLoad")).toHaveLength(1);
  });

  it("Stop is observed; SubagentStop deny blocks; VS Code uses its own tool table; unknown events answer {}", async () => {
    const e = engine((event) => (event.hook_point === "PostSubAgentResult" ? deny({ reasons: ["leak"] }) : allow()));
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: e }] }));
    expect(
      out(await runClaudeCompatibleHook(CLAUDE_CODE, { session_id: "S", hook_event_name: "Stop", last_assistant_message: "done" }, rt)),
    ).toEqual({});
    expect(e.events.at(-1)).toMatchObject({ hook_point: "PreOutputDeliver", output_text: "done" });
    expect(
      out(
        await runClaudeCompatibleHook(
          CLAUDE_CODE,
          { session_id: "S", hook_event_name: "SubagentStop", agent_id: "x", last_assistant_message: "secret" },
          rt,
        ),
      ),
    ).toEqual({ decision: "block", reason: "leak" });
    await runClaudeCompatibleHook(
      VSCODE,
      { session_id: "V", hook_event_name: "PreToolUse", tool_name: "run_in_terminal", tool_input: { command: "pip install x" } },
      rt,
    );
    expect(e.events.at(-1)).toMatchObject({ host_id: "vscode", tool_name: "package_install", tool_name_native: "run_in_terminal" });
    expect(
      out(await runClaudeCompatibleHook(CLAUDE_CODE, { session_id: "S", hook_event_name: "Notification", message: "hi" }, rt)),
    ).toEqual({});
  });
});

describe("Cursor, Cline and Windsurf adapters", () => {
  it("Cursor post-tool redaction for MCP, additional_context otherwise, subagentStop followup, Task spawns", async () => {
    const e = engine((event) => (["PostToolUse", "PostSubAgentResult"].includes(event.hook_point) ? deny({ reasons: ["leak"] }) : allow()));
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: e }] }));
    const c = { conversation_id: "c", generation_id: "g" };
    expect(
      out(await runCursorHook({ ...c, hook_event_name: "afterMCPExecution", tool_name: "get", tool_input: "{}", result_json: "{}" }, rt)),
    ).toEqual({ updated_mcp_tool_output: "[redacted by e1]" });
    expect(out(await runCursorHook({ ...c, hook_event_name: "afterShellExecution", command: "cat .env", output: "K=V" }, rt))).toEqual({
      additional_context: "leak",
    });
    expect(out(await runCursorHook({ ...c, hook_event_name: "subagentStop", result: "x" }, rt))).toEqual({ followup_message: "leak" });
    await runCursorHook(
      {
        ...c,
        hook_event_name: "preToolUse",
        tool_name: "Task",
        tool_use_id: "tu",
        tool_input: { prompt: "explore", subagent_type: "explore" },
      },
      rt,
    );
    expect(e.events.slice(-2).map((ev) => ev.hook_point)).toEqual(["PreToolUse", "PreSubAgentSpawn"]);
    expect(e.events.at(-1)).toMatchObject({ sub_agent_id: "tu", delegated_task: "explore", sub_agent_type: "explore" });
    await runCursorHook({ ...c, hook_event_name: "sessionEnd" }, rt);
    expect(e.notified.at(-1)).toMatchObject({ hook_point: "SessionEnd", session_id: "c" });
  });

  it("Cline: TaskStart deny cancels; PostToolUse deny adds context; TaskComplete ends the session", async () => {
    const e = engine((event) => (event.hook_point === "PreToolUse" ? allow() : deny({ reasons: ["nope"] })));
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: e }] }));
    const base = { clineVersion: "3", timestamp: 1714557600000, taskId: "T" };
    expect(out(await runClineHook({ ...base, hookName: "TaskStart", workspaceRoots: ["/w"], taskStart: {} }, rt))).toEqual({
      cancel: true,
      errorMessage: "nope",
    });
    expect(e.events[0]).toMatchObject({
      hook_point: "SessionStart",
      host_version: "3",
      environment: { working_directory: "/w" },
      timestamp: "2024-05-01T10:00:00.000Z",
    });
    expect(
      out(
        await runClineHook(
          {
            ...base,
            hookName: "PostToolUse",
            postToolUse: { toolName: "read_file", parameters: { path: ".env" }, result: "K=V", executionTimeMs: 4 },
          },
          rt,
        ),
      ),
    ).toEqual({
      cancel: false,
      contextModification: "Security notice from e1: nope",
    });
    await runClineHook({ ...base, hookName: "TaskComplete", taskComplete: {} }, rt);
    expect(e.notified.at(-1)).toMatchObject({ hook_point: "SessionEnd", session_id: "T" });
  });

  it("Windsurf: MCP tool names, observe-only post hooks, prompt deny ⇒ exit 2", async () => {
    const e = engine(() => deny({ reasons: ["blocked"] }));
    const rt = runtime(new AartsHost({ hooks: [{ id: "e", engine: e }] }));
    const mcp = await runWindsurfHook(
      {
        agent_action_name: "pre_mcp_tool_use",
        trajectory_id: "tr",
        execution_id: "ex",
        tool_info: { mcp_server_name: "gh", mcp_tool_name: "create_issue", mcp_tool_arguments: { body: "https://x.test" } },
      },
      rt,
    );
    expect(mcp.exitCode).toBe(2);
    expect(e.events[0]).toMatchObject({ tool_name: "mcp_call", tool_name_native: "create_issue", session_id: "tr", turn_id: "ex" });
    expect(
      (
        await runWindsurfHook(
          { agent_action_name: "post_run_command", trajectory_id: "tr", tool_info: { command_line: "ls", output: "a" } },
          rt,
        )
      ).exitCode,
    ).toBe(0);
    expect(
      await runWindsurfHook({ agent_action_name: "pre_user_prompt", trajectory_id: "tr", tool_info: { user_prompt: "x" } }, rt),
    ).toEqual({ stdout: "", stderr: "blocked\n", exitCode: 2 });
  });
});

describe("frontmatter reader", () => {
  it("parses the subset skill files use and refuses the rest", () => {
    expect(parseYamlSubset("a: 1\nb: 'it''s'\nc: [x, \"y\"]\nd:\n  - p\n  - q: 1\n    r: true\ne: |\n  line1\n  line2\nf: ~\n")).toEqual({
      a: 1,
      b: "it's",
      c: ["x", "y"],
      d: ["p", { q: 1, r: true }],
      e: "line1\nline2",
      f: null,
    });
    expect(() => parseYamlSubset("a: {b: 1}")).toThrow();
    expect(() => parseYamlSubset("\tx: 1")).toThrow();
    expect(() => parseSkillFile("no frontmatter")).toThrow();
    expect(parseSkillFile("---\nname: x\n---\nbody").body).toBe("body");
  });
});

describe("FileStateStore", () => {
  it("serialises concurrent read-modify-write updates (no lost update) and writes files 0600 in a 0700 directory", async () => {
    tmp();
    const store = new FileStateStore(join(dir, "state"));
    await Promise.all(Array.from({ length: 25 }, () => store.update<{ n: number }>("k", (s) => ({ n: (s?.n ?? 0) + 1 }))));
    expect(await store.read("k")).toEqual({ n: 25 });
    const { statSync } = await import("node:fs");
    expect(statSync(join(dir, "state")).mode & 0o777).toBe(0o700);
    expect(statSync(store.fileOf("k")).mode & 0o777).toBe(0o600);
    await store.update("k", () => undefined);
    expect(existsSync(store.fileOf("k"))).toBe(false);
  });

  it("takes over an abandoned lock and gives up on a held one", async () => {
    tmp();
    const store = new FileStateStore(join(dir, "s"), { lockTimeoutMs: 50, staleLockMs: 1_000 });
    await store.update("k", () => ({ v: 1 }));
    const lock = `${store.fileOf("k")}.lock`;
    writeFileSync(lock, "");
    await expect(store.update("k", () => ({ v: 2 }))).rejects.toThrow(/held by another process/);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(await store.update("k", () => ({ v: 3 }))).toEqual({ v: 3 });
  });
});

describe("connections", () => {
  it("parses connect specs", () => {
    expect(parseConnect("unix:/run/ahp.sock")).toEqual({ kind: "unix", target: "/run/ahp.sock", remote: false });
    expect(parseConnect("unix:///run/ahp.sock").target).toBe("/run/ahp.sock");
    expect(parseConnect("stdio:ahp-harness --stdio")).toEqual({ kind: "stdio", target: "ahp-harness --stdio", remote: false });
    expect(parseConnect("https://h.example/ahp")).toMatchObject({ kind: "http", remote: true });
    expect(parseConnect("ws://127.0.0.1:9/ahp")).toMatchObject({ kind: "ws", remote: true });
    expect(() => parseConnect("tcp://x")).toThrow(/expected unix:PATH/);
  });

  const coreDist = fileURLToPath(new URL("../../core/dist/index.js", import.meta.url));
  it.skipIf(!existsSync(coreDist))("stdio: spawns the harness as a child process, and stops it afterwards", async () => {
    tmp();
    const script = join(dir, "harness.mjs");
    writeFileSync(
      script,
      `import { AhpServer, NdjsonStreamTransport } from ${JSON.stringify(coreDist)};\n` +
        `const server = new AhpServer({ harnessInfo: { name: "stdio-h", capabilities: ["pre_action"] }, handlers: { onEvent: (e) => e.payload.arguments?.command?.includes("rm") ? { decision: "block", reason: "stdio says no" } : { decision: "allow" } } });\n` +
        `await server.connect(new NdjsonStreamTransport({ readable: process.stdin, writable: process.stdout }));\n`,
    );
    let stdout = "";
    const code = await runHookCommand(["claude-code", "--connect", `stdio:${process.execPath} ${script}`], {
      stdin: JSON.stringify({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf x" } }),
      stdout: { write: (c: string) => (stdout += c) },
      stderr: { write: () => undefined },
      env: { HOME: dir, AHP_HOOK_STATE_DIR: join(dir, "state"), PATH: process.env.PATH ?? "" },
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "stdio says no" },
    });
  });

  it("ws: with --remote-consent the optional @ahp/transport-ws is loaded and used", async () => {
    tmp();
    const server = new AhpServer({
      harnessInfo: { name: "ws-h", capabilities: ["pre_action"] },
      handlers: { onEvent: () => ({ decision: "escalate", reason: "ws asks" }) },
    });
    const listener = await listenWebSocket(server);
    try {
      let stdout = "";
      await runHookCommand(["claude-code", "--connect", listener.url, "--remote-consent"], {
        stdin: JSON.stringify({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } }),
        stdout: { write: (c: string) => (stdout += c) },
        stderr: { write: () => undefined },
        env: { HOME: dir, AHP_HOOK_STATE_DIR: join(dir, "state") },
      });
      expect(JSON.parse(stdout)).toEqual({
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "ws asks" },
      });
    } finally {
      await listener.close();
      await server.close();
    }
  });

  it("http: needs --remote-consent; with it, the optional @ahp/transport-http is loaded and used", async () => {
    tmp();
    const server = new AhpServer({
      harnessInfo: { name: "http-h", capabilities: ["pre_action"] },
      handlers: { onEvent: () => ({ decision: "block", reason: "http says no" }) },
    });
    const listener = await listenHttp(server);
    try {
      const run = async (extra: string[]) => {
        let stdout = "";
        await runHookCommand(["claude-code", "--connect", listener.url, "--fail-closed", ...extra], {
          stdin: JSON.stringify({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } }),
          stdout: { write: (c: string) => (stdout += c) },
          stderr: { write: () => undefined },
          env: { HOME: dir, AHP_HOOK_STATE_DIR: join(dir, "state") },
        });
        return JSON.parse(stdout) as { hookSpecificOutput: { permissionDecisionReason: string } };
      };
      expect((await run([])).hookSpecificOutput.permissionDecisionReason).toContain("fail-closed applied");
      expect((await run(["--remote-consent"])).hookSpecificOutput.permissionDecisionReason).toBe("http says no");
    } finally {
      await listener.close();
      await server.close();
    }
  });
});

/**
 * End to end: the real built hook command (`node dist/bin.cjs <host> --connect unix:…`) is
 * spawned with real Claude Code and Cursor hook payloads against a real AhpServer on a Unix
 * socket; stdout and the exit code are checked for allow, deny, ask, modify, harness down
 * (fail-open and fail-closed) and timeout.
 *
 * When the bin's outputs are missing or older than the sources they are rebuilt first (`../hook-spawn.ts`).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, ensureHookBuilt, spawnHook, type HookRun } from "../hook-spawn.js";
import { startUnixHarness, testPolicy, type UnixHarness } from "../unix-harness.js";

let home: string;
const hook = (args: string[], input: string, timeoutMs = 60_000): Promise<HookRun> =>
  spawnHook([bin, ...args], input, { PATH: process.env.PATH ?? "", HOME: home, AHP_HOOK_STATE_DIR: join(home, "state") }, timeoutMs);

const claude = (name: string) => readFileSync(new URL(`../fixtures/hosts/claude-code/${name}.json`, import.meta.url), "utf8");
const cursor = (name: string) => readFileSync(new URL(`../fixtures/hosts/cursor/${name}.json`, import.meta.url), "utf8");
const withCommand = (text: string, command: string) => {
  const input = JSON.parse(text) as Record<string, unknown>;
  if (typeof input.command === "string") input.command = command;
  else input.tool_input = { command };
  return JSON.stringify(input);
};

let harness: UnixHarness;
beforeAll(async () => {
  await ensureHookBuilt();
  harness = await startUnixHarness(testPolicy);
  home = mkdtempSync(join(tmpdir(), "aarts-e2e-"));
}, 60_000);
afterAll(async () => {
  await harness?.close();
  rmSync(home, { recursive: true, force: true });
});

describe("e2e: Claude Code payloads through the real hook command", { timeout: 120_000 }, () => {
  const args = () => ["claude-code", "--connect", `unix:${harness.path}`];

  it("allow ⇒ {} exit 0", async () => {
    const r = await hook(args(), claude("pre-tool-use-bash"));
    expect(r).toMatchObject({ code: 0, json: {}, stderr: "" });
  });

  it("deny ⇒ permissionDecision deny with the harness reason", async () => {
    const r = await hook(args(), claude("pre-tool-use-rm"));
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "destructive command" },
    });
  });

  it("ask ⇒ permissionDecision ask", async () => {
    const r = await hook(args(), claude("pre-tool-use-webfetch"));
    expect(r.json).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "network fetch needs approval",
      },
    });
  });

  it("modify ⇒ ask with updatedInput (default)", async () => {
    const r = await hook(args(), withCommand(claude("pre-tool-use-bash"), "sed -i s/a/b/ package.json"));
    expect(r.json).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "ahp:test-harness modified this tool call",
        updatedInput: { command: "sed -n p package.json" },
      },
    });
  });

  it("harness down: fail-open ⇒ {} exit 0; fail-closed ⇒ deny", async () => {
    const down = ["claude-code", "--connect", `unix:${join(home, "no-harness.sock")}`];
    expect(await hook(down, claude("pre-tool-use-bash"))).toMatchObject({ code: 0, json: {} });
    const closed = await hook([...down, "--fail-closed"], claude("pre-tool-use-bash"));
    expect(closed.code).toBe(0);
    expect(closed.json).toMatchObject({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } });
  });

  it("a decision held past --timeout-ms ⇒ Claude Code's own prompt (ask) or deny, never allow, whatever the failure policy", async () => {
    const input = withCommand(claude("pre-tool-use-bash"), "sleep-forever");
    for (const policy of ["--fail-open", "--fail-closed"]) {
      const held = await hook([...args(), "--timeout-ms", "250", "--host-version", "2.1.332", policy], input);
      expect(held.code).toBe(0);
      expect(held.json).toMatchObject({
        hookSpecificOutput: { permissionDecision: "ask", permissionDecisionReason: expect.stringContaining("Nobody answered") },
      });
      const unknownVersion = await hook([...args(), "--timeout-ms", "250", policy], input);
      expect(unknownVersion.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    }
  });

  it("UserPromptSubmit deny ⇒ decision block", async () => {
    expect((await hook(args(), claude("user-prompt-submit"))).json).toEqual({ decision: "block", reason: "prompt injection" });
  });
});

describe("e2e: Cursor payloads through the real hook command", { timeout: 120_000 }, () => {
  const args = () => ["cursor", "--connect", `unix:${harness.path}`];

  it("allow ⇒ explicit permission allow", async () => {
    expect(await hook(args(), cursor("before-shell-execution"))).toMatchObject({ code: 0, json: { permission: "allow" } });
  });

  it("deny ⇒ permission deny with user and agent messages", async () => {
    expect((await hook(args(), cursor("before-shell-execution-rm"))).json).toEqual({
      permission: "deny",
      user_message: "destructive command",
      agent_message: "destructive command",
    });
  });

  it("ask ⇒ permission ask", async () => {
    expect((await hook(args(), cursor("before-mcp-execution"))).json).toEqual({
      permission: "ask",
      user_message: "network fetch needs approval",
      agent_message: "network fetch needs approval",
    });
  });

  it("modify on preToolUse ⇒ allow with updated_input", async () => {
    expect((await hook(args(), cursor("pre-tool-use-shell"))).json).toEqual({
      permission: "allow",
      updated_input: { command: "sed -n p package.json" },
    });
  });

  it("harness down: fail-open ⇒ allow; fail-closed ⇒ deny", async () => {
    const down = ["cursor", "--connect", `unix:${join(home, "no-harness.sock")}`];
    expect((await hook(down, cursor("before-shell-execution"))).json).toEqual({ permission: "allow" });
    expect((await hook([...down, "--fail-closed"], cursor("before-shell-execution"))).json).toMatchObject({ permission: "deny" });
  });

  it("a decision held past --timeout-ms ⇒ Cursor's ask, never allow", async () => {
    const input = withCommand(cursor("before-shell-execution"), "sleep-forever");
    expect((await hook([...args(), "--timeout-ms", "250"], input)).json).toMatchObject({ permission: "ask" });
    expect((await hook([...args(), "--timeout-ms", "250", "--fail-closed"], input)).json).toMatchObject({ permission: "ask" });
  });
});

describe("e2e: the bin's import graph", { timeout: 120_000 }, () => {
  it("does not contain zod or the wire schemas (cold start)", () => {
    const text = readFileSync(bin, "utf8");
    expect(text).not.toMatch(/from "zod"|ZodType|z\.object\(/);
    expect(text.startsWith("#!/usr/bin/env node")).toBe(true);
  });
});

/**
 * `ahp hook` as users meet it: its usage, what it answers when it is not set up or the harness is
 * not there, and decisions through a running `ahp serve --unix` with the default policy: the
 * host's cwd is the working directory of tool events, and lifecycle hooks are not refused.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

/** The installed `ahp` (package.json "bin"): CommonJS, it hands `ahp hook <host>` to the launcher itself. */
const BIN = fileURLToPath(new URL("../bin/ahp.cjs", import.meta.url));
const AARTS = fileURLToPath(new URL("../node_modules/@ahp/aarts", import.meta.url));

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function ahp(args: string[], input = "", env: NodeJS.ProcessEnv = {}, bin = BIN): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, AHP_CONNECT: "", AHP_HOOK_CONFIG: "", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

let dir: string;
const running: ChildProcess[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-hook-cli-"));
});
afterEach(() => {
  for (const child of running.splice(0)) child.kill("SIGKILL");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `ahp serve --unix <path>` and resolves once it listens. */
async function serveUnix(path: string, args: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, "serve", "--unix", path, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  running.push(child);
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 60_000);
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes('"listening"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return child;
}

const claudeInput = (fields: Record<string, unknown>) =>
  JSON.stringify({
    session_id: "5b0c2f1e-7d3a-4c9b-8e21-0f6a9d4c3b12",
    transcript_path: join(dir, "t.jsonl"),
    cwd: join(dir, "project"),
    permission_mode: "default",
    ...fields,
  });

describe("ahp hook: usage and set-up errors", () => {
  it("--help names the command as typed: Usage: ahp hook", async () => {
    const r = await ahp(["hook", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("Usage: ahp hook <host>")).toBe(true);
    expect(r.stdout).not.toContain("ahp-aarts-hook <host>");
  });

  it("without --connect it blocks with exit 2 and says why, even with --fail-open (never {} and exit 0)", async () => {
    const input = claudeInput({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "t1" });
    for (const extra of [[], ["--fail-open"]]) {
      const r = await ahp(["hook", "claude-code", ...extra], input, { AHP_HOOK_STATE_DIR: join(dir, "state") });
      expect(r.code).toBe(2);
      expect(r.stdout.trim()).not.toBe("{}");
      expect(JSON.parse(r.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
      expect(r.stderr).toContain("no harness configured");
    }
  });

  it("a missing socket is reported as 'cannot connect to the harness at …', not as an incompatible version", async () => {
    const missing = join(dir, "nothing-here.sock");
    const input = claudeInput({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "t2" });
    const r = await ahp(["hook", "claude-code", "--connect", `unix:${missing}`, "--fail-closed", "--verbose"], input, {
      AHP_HOOK_STATE_DIR: join(dir, "state"),
    });
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    expect(answer.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain(`cannot connect to the harness at unix:${missing}`);
    expect(r.stderr + answer.hookSpecificOutput.permissionDecisionReason).not.toContain("incompatible AARTS version");
  });
});

describe("the ahp bin answers ahp hook <host> before loading the CLI", () => {
  const bash = () => claudeInput({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "t3" });
  const missing = () => `unix:${join(dir, "no-harness.sock")}`;

  it("every host goes to the hook launcher (its phase trace), options and exit code as ahp-aarts-hook's", async () => {
    const hosts = ["claude-code", "cursor", "copilot-cli", "vscode", "cline", "windsurf"];
    const env = { AHP_HOOK_TRACE: "1", AHP_HOOK_STATE_DIR: join(dir, "state") };
    const hookBin = join(AARTS, "bin", "ahp-aarts-hook.cjs");
    const runs = await Promise.all(
      hosts.map((host) =>
        Promise.all([
          ahp(["hook", host, "--connect", missing(), "--fail-closed"], "{}", env),
          ahp([host, "--connect", missing(), "--fail-closed"], "{}", env, hookBin),
        ]),
      ),
    );
    for (const [i, [viaAhp, direct]] of runs.entries()) {
      expect(viaAhp.stderr, hosts[i]).toMatch(/ahp-aarts-hook: trace \(ms since start\): launcher [\d.]+, bin loaded/);
      expect({ code: viaAhp.code, stdout: viaAhp.stdout }, hosts[i]).toEqual({ code: direct.code, stdout: direct.stdout });
    }
    const claude = await ahp(["hook", "claude-code", "--connect", missing(), "--fail-closed"], bash(), {
      AHP_HOOK_STATE_DIR: join(dir, "state"),
    });
    expect(JSON.parse(claude.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("needs none of the CLI's modules for a host's hook; everything else still goes through the CLI", async () => {
    // The bin alone, with @ahp/aarts beside it and no dist/ of the CLI.
    const pkg = join(dir, "bare-cli");
    await mkdir(join(pkg, "bin"), { recursive: true });
    await mkdir(join(pkg, "node_modules", "@ahp"), { recursive: true });
    await copyFile(BIN, join(pkg, "bin", "ahp.cjs"));
    await symlink(AARTS, join(pkg, "node_modules", "@ahp", "aarts"), "dir");
    const bare = join(pkg, "bin", "ahp.cjs");
    const hook = await ahp(
      ["hook", "claude-code", "--connect", missing(), "--fail-closed"],
      bash(),
      { AHP_HOOK_STATE_DIR: join(dir, "state") },
      bare,
    );
    expect(JSON.parse(hook.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    const version = await ahp(["--version"], "", {}, bare);
    expect(version.code).toBe(1);
    expect(version.stderr).toMatch(/^ahp: .*main\.js/);
    // The real bin: the CLI's commands, and `ahp hook` usage.
    expect((await ahp(["--version"])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const help = await ahp(["hook", "claude-code", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout.startsWith("Usage: ahp hook <host>")).toBe(true);
    expect(help.stderr).not.toContain("trace");
  });
});

describe("ahp hook through ahp serve --unix with the default policy", () => {
  it("uses the host's cwd for tool events: a Write outside it is blocked, inside it is allowed; SessionStart is not refused", async () => {
    const path = join(dir, "harness.sock");
    // The default policy with the AARTS canonical file tool names (`file_write`, the name hook
    // events carry) added to its workspace rule, which does not list them yet.
    const defaults = await readFile(fileURLToPath(new URL("../../../packages/policy/policies/default.yaml", import.meta.url)), "utf8");
    const policy = join(dir, "policy.yaml");
    await writeFile(
      policy,
      defaults.replace(/( {2}- id: block-write-outside-workspace\n[\s\S]*? {6}tool:\n)/, "$1        - file_write\n        - file_edit\n"),
    );
    await serveUnix(path, ["--policy", policy]);
    const hook = (fields: Record<string, unknown>) =>
      ahp(["hook", "claude-code", "--connect", `unix:${path}`, "--fail-closed"], claudeInput(fields), {
        AHP_HOOK_STATE_DIR: join(dir, "state2"),
      });
    const start = await hook({ hook_event_name: "SessionStart", source: "startup" });
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout.trim() === "" ? {} : JSON.parse(start.stdout)).toEqual({});

    const outside = await hook({
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(dir, "elsewhere", "x.txt"), content: "x" },
      tool_use_id: "t3",
    });
    expect(outside.code, outside.stderr).toBe(0);
    expect(JSON.parse(outside.stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: expect.stringContaining("Write outside the workspace") },
    });
    const inside = await hook({
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(dir, "project", "x.txt"), content: "x" },
      tool_use_id: "t4",
    });
    expect(inside.code, inside.stderr).toBe(0);
    expect(JSON.parse(inside.stdout)).toEqual({});
    const stop = await hook({ hook_event_name: "Stop", last_assistant_message: "done", stop_hook_active: false });
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout.trim() === "" ? {} : JSON.parse(stop.stdout)).toEqual({});
  });
});

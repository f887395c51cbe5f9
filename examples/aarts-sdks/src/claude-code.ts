/**
 * Installing the Claude Code hook, and what Claude Code then does with it. Three steps, each the
 * command a user types:
 *
 * 1. a harness on a Unix socket: `ahp serve --unix SOCKET --policy policy.yaml`;
 * 2. the hook installed into Claude Code's user settings:
 *    `ahp hook install claude-code --connect unix:SOCKET --fail-closed --write`
 *    (without `--write` it only prints the settings);
 * 3. Claude Code runs the installed command for each hook event, with the event's JSON on stdin,
 *    and reads the answer on stdout. This file plays Claude Code for two `Bash` tool calls.
 *
 * Everything happens under a temporary HOME, so your own `~/.claude/settings.json` is not touched.
 *
 *   pnpm start:claude-code   # tsx src/claude-code.ts
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { POLICY_FILE } from "./guard.js";

const EXAMPLE = fileURLToPath(new URL("..", import.meta.url));
/** Where `ahp` and `ahp-aarts-hook` are installed (as `npm install -g @ahp/cli` would put them on PATH). */
const BIN = join(EXAMPLE, "node_modules", ".bin");

export interface ClaudeCodeHookSettings {
  hooks: Record<string, { matcher?: string; hooks: { type: "command"; command: string; timeout?: number }[] }[]>;
}

export interface InstalledHook {
  home: string;
  socket: string;
  settings: ClaudeCodeHookSettings;
  /** Runs the installed hook command for one event, as Claude Code does; resolves with its stdout. */
  fire(event: string, input: Record<string, unknown>): Promise<{ stdout: string; exitCode: number | null }>;
  /** Stops the harness (the hook then fails closed). */
  stopHarness(): Promise<void>;
  close(): Promise<void>;
}

const env = (home: string) => ({ ...process.env, HOME: home, PATH: `${BIN}${delimiter}${process.env.PATH ?? ""}` });

function run(command: string, args: readonly string[], home: string, input?: string) {
  const child = spawn(command, args, { env: env(home), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  child.stdin.end(input);
  return new Promise<{ stdout: string; stderr: string; exitCode: number | null }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (exitCode) => resolve({ stdout, stderr, exitCode }));
  });
}

/** `ahp serve --unix SOCKET`, resolved once it says it is listening. */
async function serveHarness(socket: string, home: string): Promise<ChildProcess> {
  const harness = spawn(join(BIN, "ahp"), ["serve", "--unix", socket, "--policy", POLICY_FILE], {
    env: env(home),
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines = createInterface({ input: harness.stderr });
  const exited = once(harness, "exit").then(([code]) => {
    throw new Error(`ahp serve exited (${String(code)}) before listening`);
  });
  const listening = (async () => {
    for await (const line of lines) if (line.includes('"listening"')) return;
  })();
  await Promise.race([listening, exited]);
  harness.stderr?.resume(); // keep draining its log
  return harness;
}

export async function installClaudeCodeHook(): Promise<InstalledHook> {
  const home = await mkdtemp(join(tmpdir(), "ahp-claude-code-"));
  const socket = join(home, "ahp.sock");
  const harness = await serveHarness(socket, home);
  const stopHarness = async () => {
    if (harness.exitCode !== null || harness.signalCode !== null) return;
    const exited = once(harness, "exit");
    harness.kill("SIGTERM");
    await exited;
  };
  try {
    const installed = await run(
      join(BIN, "ahp"),
      ["hook", "install", "claude-code", "--connect", `unix:${socket}`, "--fail-closed", "--write"],
      home,
    );
    if (installed.exitCode !== 0) throw new Error(`ahp hook install failed: ${installed.stderr}`);
    const settings = JSON.parse(await readFile(join(home, ".claude", "settings.json"), "utf8")) as ClaudeCodeHookSettings;
    return {
      home,
      socket,
      settings,
      fire: async (event, input) => {
        const command = settings.hooks[event]?.[0]?.hooks[0]?.command;
        if (command === undefined) throw new Error(`no hook installed for ${event}`);
        // Claude Code runs the command through a shell, with the event's JSON on stdin.
        const { stdout, exitCode } = await run("sh", ["-c", command], home, JSON.stringify({ hook_event_name: event, ...input }));
        return { stdout, exitCode };
      },
      stopHarness,
      close: async () => {
        await stopHarness();
        await rm(home, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopHarness();
    await rm(home, { recursive: true, force: true });
    throw error;
  }
}

/** Claude Code's PreToolUse input for a Bash call. */
export const bashCall = (command: string, home: string) => ({
  session_id: "3f1c0d2e-example",
  transcript_path: join(home, "transcript.jsonl"),
  cwd: home,
  permission_mode: "default",
  tool_name: "Bash",
  tool_input: { command, description: "example" },
  tool_use_id: `toolu_${command.length}`,
});

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const hook = await installClaudeCodeHook();
  try {
    console.log(`installed:    ${Object.keys(hook.settings.hooks).join(", ")}`);
    console.log(`command:      ${hook.settings.hooks.PreToolUse?.[0]?.hooks[0]?.command ?? ""}`);
    for (const command of ["ls build", "rm -rf build"]) {
      const { stdout } = await hook.fire("PreToolUse", bashCall(command, hook.home));
      console.log(`${command.padEnd(14)}${stdout.trim() || "{}"}`);
    }
  } finally {
    await hook.close();
  }
}

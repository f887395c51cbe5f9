/**
 * Runs the real Claude Code CLI once, non-interactively, against a model API stub: an isolated
 * HOME (its settings, hooks included, come from `<home>/.claude/settings.json`), telemetry and
 * non-essential traffic off, `IS_SANDBOX=1` when running as root. The CLI is started in its own
 * process group, and the whole group is killed when the run ends or times out.
 */
import { spawn } from "node:child_process";

export interface RunClaudeOptions {
  /** The CLI as an argv prefix, from `claudeCliPath()`. */
  cli: string[];
  cwd: string;
  home: string;
  baseUrl: string;
  prompt: string;
  /** Added after the defaults (`--allowedTools Bash,Write,Edit` is not added when this names `--allowedTools`). */
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Default 120 s. */
  timeoutMs?: number;
}

export interface ClaudeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The `stream-json` events of stdout, parsed (lines that are not JSON are left out). */
  events: Array<Record<string, unknown>>;
  timedOut: boolean;
}

/** The environment the CLI runs in: the caller's PATH and a few basics, nothing else inherited. */
export function claudeEnv(options: { home: string; baseUrl: string; env?: NodeJS.ProcessEnv }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: options.home,
    TMPDIR: process.env.TMPDIR,
    LANG: process.env.LANG ?? "C.UTF-8",
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-stub-key",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...(process.getuid?.() === 0 ? { IS_SANDBOX: "1" } : {}),
    ...options.env,
  };
  delete env.ANTHROPIC_AUTH_TOKEN;
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  return env;
}

export function runClaude(options: RunClaudeOptions): Promise<ClaudeRun> {
  const [command, ...prefix] = options.cli;
  if (!command) throw new TypeError("runClaude: `cli` is empty");
  const extra = options.extraArgs ?? [];
  const args = [
    ...prefix,
    "-p",
    options.prompt,
    "--output-format",
    "stream-json",
    "--verbose",
    ...(extra.includes("--allowedTools") ? [] : ["--allowedTools", "Bash,Write,Edit"]),
    ...extra,
  ];
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: claudeEnv(options),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const killGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is already gone.
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup("SIGKILL");
  }, options.timeoutMs ?? 120_000);
  return new Promise<ClaudeRun>((resolve, reject) => {
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      // Anything the CLI left running (hooks, shells) goes with it.
      killGroup("SIGKILL");
      const events: Array<Record<string, unknown>> = [];
      for (const line of stdout.split("\n")) {
        const trimmed = line.trim();
        if (!trimmed.startsWith("{")) continue;
        try {
          events.push(JSON.parse(trimmed) as Record<string, unknown>);
        } catch {
          // Not an event line.
        }
      }
      resolve({ code, signal, stdout, stderr, events, timedOut });
    });
  });
}

/**
 * `install <host>`: the host configuration that runs the hook command for the right events.
 * Printed by default; written with `--write` to the **user** scope (spec §2.7: never silently
 * to a project scope). Hosts whose hook configuration only exists per project need `--project`.
 */
import { join } from "node:path";
import { compareVersions } from "./versions.js";

export { CLAUDE_ASK_HONOURED_SINCE, compareVersions } from "./versions.js";

/** A host `ahp-aarts-hook install` can write a hook configuration for. */
export type InstallHost = "claude-code" | "cursor" | "copilot-cli" | "vscode" | "cline" | "windsurf";
/** Every {@link InstallHost}, in the order usage messages list them. */
export const INSTALL_HOSTS: readonly InstallHost[] = ["claude-code", "cursor", "copilot-cli", "vscode", "cline", "windsurf"];

/** Options of {@link installPlan}. */
export interface InstallOptions {
  /** The hook command prefix, e.g. `ahp-aarts-hook` or `ahp hook`. */
  readonly command: string;
  /** Extra arguments after the host name (`--connect …`, `--fail-closed`, …), already quoted. */
  readonly args: readonly string[];
  /** Also ask the host to block when the hook itself crashes, where it has such a setting (Cursor's `failClosed`). */
  readonly failClosed: boolean;
  /** Home directory: user-scope configuration files live under it. */
  readonly home: string;
  /** Project directory: project-scope configuration files (Copilot CLI, VS Code) live under it. */
  readonly cwd: string;
  /** Native events to register (default: every mapped event the host version accepts). */
  readonly events?: readonly string[];
  /** The host's version (Claude Code: `claude --version`); decides which events are written. */
  readonly hostVersion?: string;
  /** Per-hook timeout written into the configuration, in seconds, where the host has one. Default 60 for Claude Code. */
  readonly hookTimeoutSec?: number;
}

/** What `install` prints or writes for one host (see {@link installPlan}): a JSON configuration to merge, or hook scripts. */
export interface InstallPlan {
  /** Configuration file (JSON hosts) or directory (Cline hook scripts). */
  readonly path: string;
  /** `user` (written by `--write`) or `project` (written only with `--project`, spec §2.7). */
  readonly scope: "user" | "project";
  /** JSON hosts: merge our entries into an existing configuration (idempotent). */
  readonly merge?: (existing: Record<string, unknown> | undefined) => Record<string, unknown>;
  /** Script hosts: file name → content. */
  readonly files?: Readonly<Record<string, string>>;
  /** What to print. */
  readonly text: string;
  /** Remarks for the user (printed as `#` comments): what the configuration does and where it applies. */
  readonly notes: readonly string[];
}

/**
 * Claude Code events and the first version known to accept each (verified with the real CLI in
 * the real-host rig). Claude Code ignores the WHOLE hooks configuration when it meets an event
 * name it does not know (2.1.83 with `PermissionDenied`: no hook runs at all), so an event is
 * written only when the host's version is known to accept it.
 */
export const CLAUDE_EVENT_SINCE: Readonly<Record<string, string>> = {
  PermissionDenied: "2.1.332",
};
/** Claude Code versions whose acceptance of the events written was verified with the real CLI. */
export const CLAUDE_VERIFIED_VERSIONS = ["2.1.83", "2.1.332"] as const;

/** The Claude Code events a version accepts; without a version, the events every supported version accepts. */
export function claudeEventsFor(version: string | undefined): string[] {
  return Object.keys(CLAUDE_EVENTS).filter((event) => {
    const since = CLAUDE_EVENT_SINCE[event];
    return since === undefined || (version !== undefined && compareVersions(version, since) >= 0);
  });
}

const CLAUDE_EVENTS: Readonly<Record<string, boolean>> = {
  // event → takes a tool matcher
  SessionStart: false,
  UserPromptSubmit: false,
  PreToolUse: true,
  PostToolUse: true,
  PostToolUseFailure: true,
  PermissionDenied: true,
  PreCompact: false,
  PostCompact: false,
  SubagentStart: false,
  SubagentStop: false,
  Stop: false,
  SessionEnd: false,
};
const VSCODE_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PreCompact",
  "SubagentStart",
  "SubagentStop",
  "Stop",
];
// preToolUse covers every tool family, so the per-family before* events are not registered too (§4.2).
const CURSOR_EVENTS = [
  "sessionStart",
  "beforeSubmitPrompt",
  "preToolUse",
  "postToolUse",
  "postToolUseFailure",
  "subagentStart",
  "subagentStop",
  "preCompact",
  "afterAgentResponse",
  "sessionEnd",
];
const COPILOT_EVENTS = ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "subagentStop", "agentStop", "sessionEnd"];
const CLINE_HOOKS = [
  "TaskStart",
  "TaskResume",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PreCompact",
  "TaskCancel",
  "TaskComplete",
];
const WINDSURF_EVENTS = [
  "pre_user_prompt",
  "pre_run_command",
  "pre_write_code",
  "pre_read_code",
  "pre_mcp_tool_use",
  "post_run_command",
  "post_write_code",
  "post_read_code",
  "post_mcp_tool_use",
  "post_cascade_response",
];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function line(options: InstallOptions, host: string, extra: readonly string[] = []): string {
  return [options.command, host, ...extra, ...options.args].join(" ");
}

/** Removes our earlier entries (same command and host) so that installing twice is idempotent. */
function isOurs(command: unknown, prefix: string): boolean {
  return typeof command === "string" && (command === prefix || command.startsWith(`${prefix} `));
}

function pick(all: readonly string[], wanted: readonly string[] | undefined): string[] {
  if (wanted === undefined) return [...all];
  const unknown = wanted.filter((e) => !all.includes(e));
  if (unknown.length > 0) throw new Error(`unknown event(s) for this host: ${unknown.join(", ")} (known: ${all.join(", ")})`);
  return [...wanted];
}

function claudeLike(host: "claude-code" | "vscode", options: InstallOptions): InstallPlan {
  const accepted = host === "claude-code" ? claudeEventsFor(options.hostVersion) : VSCODE_EVENTS;
  if (host === "claude-code" && options.events !== undefined) {
    const rejected = options.events.filter((e) => e in CLAUDE_EVENTS && !accepted.includes(e));
    if (rejected.length > 0) {
      throw new Error(
        `Claude Code ${options.hostVersion ?? "(version unknown)"} is not known to accept ${rejected.join(", ")}; ` +
          "an unknown event makes it ignore every hook in the file (give --host-version when the host is newer)",
      );
    }
  }
  const events = pick(host === "claude-code" ? Object.keys(CLAUDE_EVENTS) : VSCODE_EVENTS, options.events ?? accepted);
  const command = line(options, host);
  const prefix = `${options.command} ${host}`;
  const ours: Record<string, unknown[]> = {};
  const timeout = options.hookTimeoutSec ?? 60;
  for (const event of events) {
    const hook = { type: "command", command, timeout };
    ours[event] = [CLAUDE_EVENTS[event] ? { matcher: "*", hooks: [hook] } : { hooks: [hook] }];
  }
  const merge = (existing: Record<string, unknown> | undefined) => {
    const settings = { ...(existing ?? {}) };
    const hooks: Record<string, unknown> = isRecord(settings.hooks) ? { ...settings.hooks } : {};
    for (const [event, entries] of Object.entries(ours)) {
      const current = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
      const kept = current
        .map((group) => {
          if (!isRecord(group) || !Array.isArray(group.hooks)) return group;
          const remaining = group.hooks.filter((h) => !(isRecord(h) && isOurs(h.command, prefix)));
          return remaining.length === 0 ? undefined : { ...group, hooks: remaining };
        })
        .filter((g) => g !== undefined);
      hooks[event] = [...kept, ...entries];
    }
    settings.hooks = hooks;
    return settings;
  };
  const path =
    host === "claude-code" ? join(options.home, ".claude", "settings.json") : join(options.cwd, ".github", "hooks", "ahp-aarts.json");
  return {
    path,
    scope: host === "claude-code" ? "user" : "project",
    merge,
    text: `${JSON.stringify({ hooks: ours }, null, 2)}\n`,
    notes:
      host === "claude-code"
        ? [
            "Claude Code: user settings (~/.claude/settings.json). Allow is rendered as {} so Claude Code's own permission prompts still apply.",
            `Claude Code ${options.hostVersion ?? "version unknown"}: events written: ${events.join(", ")}` +
              (options.hostVersion === undefined
                ? " (the ones every supported version accepts; give --host-version to add newer ones)"
                : ""),
            `Each hook may run ${timeout} s (Claude Code's per-hook timeout); a decision still held for a person after that is handed to Claude Code's own prompt, never allowed.`,
          ]
        : [
            "VS Code agent hooks use Claude-compatible JSON; their configuration lives in the workspace (.github/hooks): written only with --project.",
          ],
  };
}

/**
 * Builds the install plan for a host (pure: reads and writes nothing). Throws an `Error` naming
 * the known events when `options.events` has one the host does not know.
 */
export function installPlan(host: InstallHost, options: InstallOptions): InstallPlan {
  switch (host) {
    case "claude-code":
    case "vscode":
      return claudeLike(host, options);
    case "cursor": {
      const events = pick(CURSOR_EVENTS, options.events);
      const prefix = `${options.command} cursor`;
      const entry = { command: line(options, "cursor"), ...(options.failClosed ? { failClosed: true } : {}) };
      const ours = Object.fromEntries(events.map((e) => [e, [entry]]));
      return {
        path: join(options.home, ".cursor", "hooks.json"),
        scope: "user",
        merge: (existing) => {
          const config: Record<string, unknown> = { version: 1, ...(existing ?? {}) };
          const hooks: Record<string, unknown> = isRecord(config.hooks) ? { ...config.hooks } : {};
          for (const [event, entries] of Object.entries(ours)) {
            const current = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
            hooks[event] = [...current.filter((h) => !(isRecord(h) && isOurs(h.command, prefix))), ...entries];
          }
          return { ...config, hooks };
        },
        text: `${JSON.stringify({ version: 1, hooks: ours }, null, 2)}\n`,
        notes: [
          "Cursor: registers preToolUse (every tool family) and not the per-family before* events, so one action is evaluated once.",
          ...(options.failClosed ? ["failClosed: true is set so that a crash of the hook blocks."] : []),
        ],
      };
    }
    case "copilot-cli": {
      const events = pick(COPILOT_EVENTS, options.events);
      const prefix = `${options.command} copilot-cli`;
      const ours = Object.fromEntries(
        events.map((e) => {
          const command = line(options, "copilot-cli", ["--event", e]);
          return [e, [{ type: "command", bash: command, powershell: command, timeoutSec: 30 }]];
        }),
      );
      return {
        path: join(options.cwd, ".github", "hooks", "ahp-aarts.json"),
        scope: "project",
        merge: (existing) => {
          const config: Record<string, unknown> = { version: 1, ...(existing ?? {}) };
          const hooks: Record<string, unknown> = isRecord(config.hooks) ? { ...config.hooks } : {};
          for (const [event, entries] of Object.entries(ours)) {
            const current = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
            hooks[event] = [...current.filter((h) => !(isRecord(h) && isOurs(h.bash, prefix))), ...entries];
          }
          return { ...config, hooks };
        },
        text: `${JSON.stringify({ version: 1, hooks: ours }, null, 2)}\n`,
        notes: ["Copilot CLI reads hooks from the repository (.github/hooks/*.json): written only with --project."],
      };
    }
    case "cline": {
      const hooks = pick(CLINE_HOOKS, options.events);
      const files = Object.fromEntries(hooks.map((h) => [h, `#!/bin/sh\n# AARTS hook for Cline (${h})\nexec ${line(options, "cline")}\n`]));
      return {
        path: join(options.home, "Documents", "Cline", "Hooks"),
        scope: "user",
        files,
        text: hooks.map((h) => `# ${h}\n${files[h]}`).join("\n"),
        notes: ["Cline runs an executable named after each hook type from its global hooks directory."],
      };
    }
    case "windsurf": {
      const events = pick(WINDSURF_EVENTS, options.events);
      const prefix = `${options.command} windsurf`;
      const ours = Object.fromEntries(events.map((e) => [e, [{ command: line(options, "windsurf"), show_output: false }]]));
      return {
        path: join(options.home, ".codeium", "windsurf", "hooks.json"),
        scope: "user",
        merge: (existing) => {
          const config = { ...(existing ?? {}) };
          const hooks: Record<string, unknown> = isRecord(config.hooks) ? { ...config.hooks } : {};
          for (const [event, entries] of Object.entries(ours)) {
            const current = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
            hooks[event] = [...current.filter((h) => !(isRecord(h) && isOurs(h.command, prefix))), ...entries];
          }
          return { ...config, hooks };
        },
        text: `${JSON.stringify({ hooks: ours }, null, 2)}\n`,
        notes: ["Windsurf: user-level hooks.json; pre-hooks block with exit code 2 (no ask)."],
      };
    }
  }
}

/**
 * The policy finds shell commands with @ahp/shell's view of tool calls; the AARTS host tables
 * (spec §3.3) name the shell tools of each host. Both must agree, so that a shell tool of any
 * supported host is analysed (and escalated when its command cannot be found).
 */
import { describe, expect, it } from "vitest";
import { isShellToolName, toolCalls } from "@ahp/shell";
import { HOST_TOOL_TABLES, toAhpEvent, type AartsEvent } from "@ahp/aarts";

describe("AARTS host tables and @ahp/shell agree on shell tools", () => {
  for (const [host, table] of Object.entries(HOST_TOOL_TABLES)) {
    const shellNames = Object.entries(table.tools as Record<string, { canonical: string }>)
      .filter(([, e]) => e.canonical === "shell" || e.canonical === "package_install")
      .map(([name]) => name);
    it(`${host}: ${shellNames.join(", ") || "(none)"}`, () => {
      for (const name of shellNames) expect(isShellToolName(name), name).toBe(true);
    });
  }

  it("an AARTS PreToolUse bridged to AHP gives the command to @ahp/shell", () => {
    const event = {
      hook_point: "PreToolUse",
      session_id: "s",
      timestamp: "2026-05-01T10:00:00.000Z",
      host_id: "claude-code",
      aarts_version: "0.1",
      tool_name: "shell",
      tool_name_native: "Bash",
      tool_input: { command: "rm -rf /" },
      artifacts: [],
    } as unknown as AartsEvent;
    const [call] = toolCalls(toAhpEvent(event).params.payload);
    expect(call).toMatchObject({ name: "shell", aliases: ["Bash"], shell: true, commands: ["rm -rf /"] });
  });
});

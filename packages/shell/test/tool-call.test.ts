/** Tool-call payloads of agent frameworks, normalized to one view. */
import { describe, expect, it } from "vitest";
import { isShellToolName, quoteArg, shellCommands, toolCalls } from "@ahp/shell";

const one = (payload: unknown) => {
  const calls = toolCalls(payload);
  expect(calls).toHaveLength(1);
  return calls[0]!;
};

describe("toolCalls", () => {
  it.each<[string, unknown, { name?: string; shell: boolean; commands: string[]; cwd?: string }]>([
    [
      "AHP reference",
      { tool: "bash", arguments: { command: "ls" }, working_directory: "/w" },
      { name: "bash", shell: true, commands: ["ls"], cwd: "/w" },
    ],
    [
      "Claude Code hook",
      { tool_name: "Bash", tool_input: { command: "ls", description: "list" }, cwd: "/w" },
      { name: "Bash", shell: true, commands: ["ls"], cwd: "/w" },
    ],
    [
      "OpenAI JSON-string arguments",
      { tool_name: "bash", arguments: '{"command":"rm -rf /"}' },
      { name: "bash", shell: true, commands: ["rm -rf /"] },
    ],
    [
      "Chat Completions tool call",
      { id: "c1", type: "function", function: { name: "shell", arguments: '{"cmd":"ls"}' } },
      { name: "shell", shell: true, commands: ["ls"] },
    ],
    [
      "Responses function_call with an argv",
      { type: "function_call", name: "shell", arguments: '{"command":["bash","-lc","ls -la"],"workdir":"/w"}' },
      { name: "shell", shell: true, commands: ["bash -lc 'ls -la'"], cwd: "/w" },
    ],
    [
      "Responses local_shell_call",
      { type: "local_shell_call", action: { type: "exec", command: ["rm", "-rf", "/"], working_directory: "/" } },
      { name: "local_shell_call", shell: true, commands: ["rm -rf /"], cwd: "/" },
    ],
    [
      "LangChain tool call",
      { name: "terminal", args: { commands: ["ls", "pwd"] }, id: "x", type: "tool_call" },
      { name: "terminal", shell: true, commands: ["ls", "pwd"] },
    ],
    [
      "MCP tools/call request",
      { method: "tools/call", params: { name: "run_command", arguments: { command: "ls" } } },
      { name: "run_command", shell: true, commands: ["ls"] },
    ],
    [
      "MCP tools/call params",
      { name: "mcp__desktop__execute_command", arguments: { command: "ls" } },
      { name: "mcp__desktop__execute_command", shell: true, commands: ["ls"] },
    ],
    [
      "ACP permission request",
      { sessionId: "s", toolCall: { toolCallId: "t", title: "Run ls", kind: "execute", rawInput: { command: "ls" } }, options: [] },
      { name: "acp:execute", shell: true, commands: ["ls"] },
    ],
    ["Copilot CLI", { toolName: "bash", toolArgs: '{"command":"ls"}' }, { name: "bash", shell: true, commands: ["ls"] }],
    [
      "AARTS event bridged to AHP",
      { tool_name: "package_install", tool_name_native: "Bash", arguments: { command: "npm i x" } },
      { name: "package_install", shell: true, commands: ["npm i x"] },
    ],
    ["an argv without a tool", { command: ["rm", "-rf", "/"] }, { shell: false, commands: ["rm -rf /"] }],
    ["bare text to a shell tool", { tool_name: "bash", arguments: "rm -rf /" }, { name: "bash", shell: true, commands: ["rm -rf /"] }],
    [
      "a shell tool without a command member",
      { tool_name: "bash", arguments: { c: "rm -rf /" } },
      { name: "bash", shell: true, commands: [] },
    ],
    ["input.command (A3S)", { tool_name: "x", input: { command: "ls" } }, { name: "x", shell: false, commands: ["ls"] }],
    ["a read tool", { tool_name: "read_file", arguments: { path: "a" } }, { name: "read_file", shell: false, commands: [] }],
    ["nothing", {}, { shell: false, commands: [] }],
    ["not an object", [1], { shell: false, commands: [] }],
  ])("%s", (_name, payload, expected) => {
    const call = one(payload);
    expect({ name: call.name, shell: call.shell, commands: call.commands, cwd: call.cwd }).toEqual({
      name: expected.name,
      shell: expected.shell,
      commands: expected.commands,
      cwd: expected.cwd,
    });
  });

  it("keeps every call of a tool_calls list and the native name of AARTS events", () => {
    const calls = toolCalls({
      tool_calls: [
        { function: { name: "read_file", arguments: '{"path":"a"}' } },
        { function: { name: "bash", arguments: '{"command":"rm -rf /"}' } },
      ],
    });
    expect(calls.map((c) => [c.name, c.commands])).toEqual([
      ["read_file", []],
      ["bash", ["rm -rf /"]],
    ]);
    expect(one({ tool_name: "file_write", tool_name_native: "Write", arguments: {} }).aliases).toEqual(["Write"]);
  });

  it("the first string name wins", () => {
    expect(one({ tool_name: "read", tool: "bash" }).name).toBe("read");
    expect(one({ tool_name: 42, tool: "bash" }).name).toBe("bash");
  });
});

describe("shell tool names", () => {
  it.each([
    "bash",
    "Bash",
    "shell",
    "PowerShell",
    "execute_command",
    "run_in_terminal",
    "mcp__shell__run_command",
    "container.exec",
    "local_shell",
  ])("%s", (name) => expect(isShellToolName(name)).toBe(true));
  it.each(["read_file", "Write", "web_fetch", "bashful", "mcp__github__create_issue"])("not %s", (name) =>
    expect(isShellToolName(name)).toBe(false),
  );
});

describe("shellCommands and quoteArg (AARTS spec §3.5)", () => {
  it("joins argv arrays with POSIX quoting, one command per element of commands", () => {
    expect(quoteArg("plain")).toBe("plain");
    expect(quoteArg("it's here")).toBe(`'it'\\''s here'`);
    expect(quoteArg("")).toBe("''");
    expect(shellCommands({ command: ["echo", "a b", "$HOME"] })).toEqual([
      { command: "echo 'a b' '$HOME'", sourceField: "tool_input.command" },
    ]);
    expect(shellCommands({ commands: ["a", "b"] }).map((c) => c.sourceField)).toEqual(["tool_input.commands.0", "tool_input.commands.1"]);
    expect(shellCommands({ command: [] })).toEqual([]);
  });
});

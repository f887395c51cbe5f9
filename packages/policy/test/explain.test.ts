import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY, explainEvent } from "@ahp/policy";

const POLICY = `version: 1
extends: default
settings: { workspace_root: /srv/app }
rules:
  - id: no-ls
    events: pre_action
    match: { tool: bash, shell: { program: ls } }
    action: { decision: block, reason: no listing }
  - id: later
    events: pre_action
    action: { decision: allow }
`;
const shell = (command: string) => ({ event_type: "pre_action" as const, payload: { tool_name: "bash", arguments: { command } } });

describe("explain", () => {
  it("lists the rules in evaluation order, which matched and why, and which decided", () => {
    const x = explainEvent(POLICY, shell("ls -la /tmp"), { file: "p.yaml" });
    const builtin = (DEFAULT_POLICY.rules as { id: string }[]).length;
    expect(x.rules).toHaveLength(builtin + 2);
    expect(x.rules[0]!.origin).toBe("builtin");
    const noLs = x.rules.find((r) => r.id === "no-ls")!;
    expect(noLs).toMatchObject({ origin: "added", applies: true, matched: true, decided: true, afterDecision: false });
    expect(noLs.conditions).toEqual([
      { member: "tool", held: true },
      { member: "shell", held: true },
    ]);
    expect(x.rules.find((r) => r.id === "later")).toMatchObject({ matched: true, decided: false, afterDecision: true });
    expect(x.ruleId).toBe("no-ls");
    expect(x.decision).toMatchObject({ decision: "block", reason: "no listing" });
    // The recursive-delete rule applies to pre_action but its shell condition did not hold.
    expect(x.rules.find((r) => r.id === "block-recursive-delete-root")).toMatchObject({ applies: true, matched: false });
  });

  it("says which condition failed", () => {
    const x = explainEvent(POLICY, { event_type: "pre_action", payload: { tool_name: "sh", arguments: { command: "ls" } } });
    const noLs = x.rules.find((r) => r.id === "no-ls")!;
    expect(noLs.conditions).toEqual([
      { member: "tool", held: false },
      { member: "shell", held: true },
    ]);
    expect(noLs.matched).toBe(false);
  });

  it("shows the analysis the rules saw: programs, flags, paths written, what could not be analysed", () => {
    const x = explainEvent(POLICY, shell("cd /etc && sudo rm -rf ./x > /tmp/log; $(echo rm) -rf /"));
    const line = x.analysis.shell[0]!;
    expect(line.analysed).toBe(true);
    const rm = line.commands.find((c) => c.program === "rm" && c.wrappers.includes("sudo"))!;
    expect(rm.flags).toEqual(expect.arrayContaining(["r", "f", "rf"]));
    expect(rm.paths).toContain("/etc/x");
    expect(rm.writes).toEqual(expect.arrayContaining(["/etc/x", "/tmp/log"]));
    expect(line.commands.some((c) => c.opaque.includes("dynamic-command"))).toBe(true);
    expect(x.analysis.tool).toBe("bash");
  });

  it("resolves file paths of a tool call against the workspace root", () => {
    const x = explainEvent(POLICY, {
      event_type: "pre_action",
      payload: { tool_name: "write_file", arguments: { path: "../../home/dev/notes.md" } },
    });
    expect(x.analysis.workspaceRoot).toBe("/srv/app");
    expect(x.analysis.files).toEqual([{ path: "../../home/dev/notes.md", resolved: "/home/dev/notes.md", insideWorkspace: false }]);
    expect(x.ruleId).toBe("block-write-outside-workspace");
  });

  it("marks a line too long to analyse", () => {
    const x = explainEvent({ version: 1, settings: { max_match_length: 100 }, rules: [] }, shell(`echo ${"a".repeat(200)}`));
    expect(x.analysis.shell[0]).toMatchObject({ analysed: false, commands: [] });
  });
});

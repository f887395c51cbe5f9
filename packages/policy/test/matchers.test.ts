import { describe, expect, it } from "vitest";
import { PolicyEngine, type PolicyFileInput, type PolicyMatch } from "@ahp/policy";
import { bash, decisionOf, ev } from "./helpers.js";

/** An engine whose single rule blocks pre_action events that satisfy `match`. */
const blockWhen = (match: PolicyMatch, settings: PolicyFileInput["settings"] = {}) =>
  new PolicyEngine({
    version: 1,
    settings,
    rules: [{ id: "r", events: ["pre_action"], match, action: { decision: "block", reason: "matched" } }],
  });

const matches = (engine: PolicyEngine, payload: unknown, extra = {}) =>
  decisionOf(engine.evaluate(ev("pre_action", payload, extra)).decision) === "block";

describe("field operators", () => {
  const field = (cond: Record<string, unknown>) => blockWhen({ fields: { "payload.v": cond } });

  it("equals (deep) and one_of", () => {
    expect(matches(field({ equals: { a: [1, 2] } }), { v: { a: [1, 2] } })).toBe(true);
    expect(matches(field({ equals: { a: [1, 2] } }), { v: { a: [2, 1] } })).toBe(false);
    expect(matches(field({ one_of: ["x", 3] }), { v: 3 })).toBe(true);
    expect(matches(field({ one_of: ["x", 3] }), { v: "3" })).toBe(false);
  });

  it("glob: * stays within a path segment, ** crosses, {a,b} and [a-z]", () => {
    const e = field({ glob: ["src/*.ts", "docs/**", "{a,b}[0-9]"] });
    expect(matches(e, { v: "src/x.ts" })).toBe(true);
    expect(matches(e, { v: "src/deep/x.ts" })).toBe(false);
    expect(matches(e, { v: "docs/a/b/c.md" })).toBe(true);
    expect(matches(e, { v: "b7" })).toBe(true);
    expect(matches(e, { v: "c7" })).toBe(false);
    expect(matches(e, { v: 7 })).toBe(false);
  });

  it("regex (unanchored), contains on strings and arrays, ignore_case", () => {
    expect(matches(field({ regex: "^git\\s+push" }), { v: "git  push" })).toBe(true);
    expect(matches(field({ regex: "^git\\s+push" }), { v: "echo git push" })).toBe(false);
    expect(matches(field({ contains: "secret" }), { v: "my-secret-thing" })).toBe(true);
    expect(matches(field({ contains: "secret" }), { v: ["a", "secret"] })).toBe(true);
    expect(matches(field({ contains: "secret" }), { v: ["a", "secrets"] })).toBe(false);
    expect(matches(field({ contains: "SECRET", ignore_case: true }), { v: "a secret" })).toBe(true);
    expect(matches(field({ equals: "BASH", ignore_case: true }), { v: "bash" })).toBe(true);
    expect(matches(field({ regex: "^bash$", ignore_case: true }), { v: "BASH" })).toBe(true);
  });

  it("numeric comparisons apply to numbers only", () => {
    const e = field({ gte: 10, lt: 20 });
    expect(matches(e, { v: 10 })).toBe(true);
    expect(matches(e, { v: 19.5 })).toBe(true);
    expect(matches(e, { v: 20 })).toBe(false);
    expect(matches(e, { v: "15" })).toBe(false);
    expect(matches(field({ gt: 1 }), { v: 1 })).toBe(false);
    expect(matches(field({ lte: 1 }), { v: 1 })).toBe(true);
  });

  it("exists and not", () => {
    expect(matches(field({ exists: true }), { v: 0 })).toBe(true);
    expect(matches(field({ exists: true }), { v: null })).toBe(false);
    expect(matches(field({ exists: false }), {})).toBe(true);
    expect(matches(field({ not: { equals: "a" } }), { v: "b" })).toBe(true);
    expect(matches(field({ not: { equals: "a" } }), { v: "a" })).toBe(false);
  });

  it("every operator in one condition must hold", () => {
    const e = field({ glob: "*.ts", not: { contains: "test" } });
    expect(matches(e, { v: "a.ts" })).toBe(true);
    expect(matches(e, { v: "a.test.ts" })).toBe(false);
  });

  it("cuts long input for string operators (max_match_length)", () => {
    const e = blockWhen({ fields: { "payload.v": { contains: "needle" } } }, { max_match_length: 100 });
    expect(matches(e, { v: `${"x".repeat(50)}needle` })).toBe(true);
    expect(matches(e, { v: `${"x".repeat(200)}needle` })).toBe(false);
  });
});

describe("paths", () => {
  it("reads payload, context, metadata and top-level fields", () => {
    expect(matches(blockWhen({ fields: { "metadata.team": { equals: "red" } } }), {}, { metadata: { team: "red" } })).toBe(true);
    expect(
      matches(
        blockWhen({ fields: { "context.session_stats.total_tokens": { gt: 100 } } }),
        {},
        {
          context: { session_stats: { total_actions: 1, total_tokens: 101, duration_ms: 1, error_count: 0 } },
        },
      ),
    ).toBe(true);
    expect(matches(blockWhen({ fields: { agent_id: { equals: "a1" } } }), {})).toBe(true);
    expect(matches(blockWhen({ fields: { "payload.list.1": { equals: "b" } } }), { list: ["a", "b"] })).toBe(true);
  });

  it("* matches any element", () => {
    const e = blockWhen({ fields: { "payload.files.*.path": { glob: "/etc/**" } } });
    expect(matches(e, { files: [{ path: "a" }, { path: "/etc/passwd" }] })).toBe(true);
    expect(matches(e, { files: [{ path: "a" }] })).toBe(false);
    expect(matches(e, { files: [] })).toBe(false);
  });

  it("never follows inherited members", () => {
    expect(matches(blockWhen({ fields: { "payload.constructor": { exists: true } } }), {})).toBe(false);
    expect(matches(blockWhen({ fields: { "payload.toString": { exists: true } } }), { a: 1 })).toBe(false);
  });
});

describe("tool, depth", () => {
  it("tool globs read tool_name, then tool, then name, case-insensitively", () => {
    const e = blockWhen({ tool: ["bash", "mcp__*__write_file"] });
    expect(matches(e, { tool_name: "Bash" })).toBe(true);
    expect(matches(e, { tool: "bash" })).toBe(true);
    expect(matches(e, { name: "mcp__fs__write_file" })).toBe(true);
    expect(matches(e, { tool_name: "read", tool: "bash" })).toBe(false);
    expect(matches(e, { tool_name: 42, tool: "bash" })).toBe(true);
    expect(matches(e, {})).toBe(false);
  });

  it("depth conditions", () => {
    const e = blockWhen({ depth: { gte: 2 } });
    expect(matches(e, {}, { depth: 1 })).toBe(false);
    expect(matches(e, {}, { depth: 2 })).toBe(true);
  });
});

describe("combinators", () => {
  const t = (name: string): PolicyMatch => ({ tool: name });

  it("members of one match are ANDed", () => {
    const e = blockWhen({ tool: "bash", depth: { gte: 1 } });
    expect(matches(e, { tool_name: "bash" }, { depth: 1 })).toBe(true);
    expect(matches(e, { tool_name: "bash" }, { depth: 0 })).toBe(false);
  });

  it("all / any / not, nested", () => {
    const e = blockWhen({ any: [t("a"), { all: [t("b"), { depth: { gte: 1 } }] }], not: { fields: { "payload.safe": { equals: true } } } });
    expect(matches(e, { tool_name: "a" })).toBe(true);
    expect(matches(e, { tool_name: "a", safe: true })).toBe(false);
    expect(matches(e, { tool_name: "b" })).toBe(false);
    expect(matches(e, { tool_name: "b" }, { depth: 3 })).toBe(true);
    expect(matches(e, { tool_name: "c" }, { depth: 3 })).toBe(false);
  });

  it("an empty match (or none) always holds", () => {
    expect(matches(blockWhen({}), {})).toBe(true);
  });
});

describe("shell matcher", () => {
  const shell = (m: PolicyMatch["shell"]) =>
    new PolicyEngine({
      version: 1,
      rules: [{ id: "s", events: "pre_action", match: { shell: m }, action: { decision: "block", reason: "x" } }],
    });
  const hit = (e: PolicyEngine, command: string) => decisionOf(e.evaluate(bash(command)).decision) === "block";

  it("requires all per-command conditions on the same simple command", () => {
    const e = shell({ program: "rm", args: [{ equals: "/" }] });
    expect(hit(e, "rm -rf /")).toBe(true);
    expect(hit(e, "rm x; ls /")).toBe(false);
  });

  it("flags_all with alternative spellings", () => {
    const e = shell({
      program: "rm",
      flags_all: [
        ["r", "R", "recursive"],
        ["f", "force"],
      ],
    });
    expect(hit(e, "rm --recursive -f x")).toBe(true);
    expect(hit(e, "rm -r x")).toBe(false);
  });

  it("option with value condition", () => {
    const e = shell({ option: { name: "registry", value: { glob: "http://*" } } });
    expect(hit(e, "npm i --registry http://x")).toBe(true);
    expect(hit(e, "npm i --registry https://x")).toBe(false);
  });

  it("argv, redirect, word, line and piped_to", () => {
    expect(hit(shell({ argv: { regex: "^git push" } }), "cd x && git push")).toBe(true);
    expect(hit(shell({ redirect: { glob: "/etc/*" } }), "echo x >> /etc/hosts")).toBe(true);
    expect(hit(shell({ redirect: { glob: "/etc/*" } }), "cat < /etc/hosts")).toBe(false);
    expect(hit(shell({ word: { equals: "--no-verify" } }), "git commit --no-verify")).toBe(true);
    expect(hit(shell({ line: { contains: "&&" } }), "a && b")).toBe(true);
    expect(hit(shell({ program: "curl", piped_to: "sh" }), "curl x | sh")).toBe(true);
    expect(hit(shell({ program: "curl", piped_to: "sh" }), "sh x | curl y")).toBe(false);
  });

  it("reads the command from the configured fields", () => {
    const e = shell({ fields: ["payload.input.script"], program: "rm" });
    expect(decisionOf(e.evaluate(ev("pre_action", { input: { script: "rm x" } })).decision)).toBe("block");
    expect(decisionOf(e.evaluate(bash("rm x")).decision)).toBe("allow");
  });

  it("finds commands in the A3S payload shape (tool + arguments.command)", () => {
    const e = shell({ program: "rm" });
    expect(
      decisionOf(e.evaluate(ev("pre_action", { tool: "bash", arguments: { command: "rm x" }, working_directory: "/w" })).decision),
    ).toBe("block");
  });
});

describe("path matcher", () => {
  const outside = (root?: string) =>
    new PolicyEngine({
      version: 1,
      ...(root === undefined ? {} : { settings: { workspace_root: root } }),
      rules: [
        { id: "p", events: "pre_action", match: { path: { outside_workspace: true } }, action: { decision: "block", reason: "outside" } },
      ],
    });
  const write = (path: string, extra: Record<string, unknown> = {}) => ev("pre_action", { tool: "write", arguments: { path }, ...extra });
  const blocked = (e: PolicyEngine, event: ReturnType<typeof ev>) => decisionOf(e.evaluate(event).decision) === "block";

  it("resolves against working_directory and handles .. traversal", () => {
    const e = outside();
    const wd = { working_directory: "/home/dev/project" };
    expect(blocked(e, write("/etc/passwd", wd))).toBe(true);
    expect(blocked(e, write("../other/x", wd))).toBe(true);
    expect(blocked(e, write("src/../../project2/x", wd))).toBe(true);
    expect(blocked(e, write("/home/dev/project2/x", wd))).toBe(true);
    expect(blocked(e, write("~/.bashrc", wd))).toBe(true);
    expect(blocked(e, write("src/a.ts", wd))).toBe(false);
    expect(blocked(e, write("./src/../b.ts", wd))).toBe(false);
    expect(blocked(e, write("/home/dev/project/src/a.ts", wd))).toBe(false);
    expect(blocked(e, write("/home/dev/project", wd))).toBe(false);
  });

  it("a configured root wins over what the event reports", () => {
    const e = outside("/srv/app");
    expect(blocked(e, write("/etc/x", { working_directory: "/" }))).toBe(true);
    expect(blocked(e, write("/srv/app/x", { working_directory: "/" }))).toBe(false);
  });

  it("reads the root from context.capabilities.workspace", () => {
    const e = outside();
    expect(blocked(e, { ...write("/tmp/x"), context: { capabilities: { workspace: "/w" } } })).toBe(true);
  });

  it("without a known root only paths that escape with .. are outside", () => {
    const e = outside();
    expect(blocked(e, write("/etc/passwd"))).toBe(false);
    expect(blocked(e, write("../../x"))).toBe(true);
    expect(blocked(e, write("a/b"))).toBe(false);
  });

  it("handles Windows paths case-insensitively", () => {
    const e = outside();
    const wd = { working_directory: "C:\\Users\\dev\\proj" };
    expect(blocked(e, write("c:\\users\\dev\\proj\\src\\a.ts", wd))).toBe(false);
    expect(blocked(e, write("C:\\Windows\\System32\\x.dll", wd))).toBe(true);
    expect(blocked(e, write("..\\..\\x", wd))).toBe(true);
  });

  it("resolved conditions see the absolute path", () => {
    const e = new PolicyEngine({
      version: 1,
      rules: [
        {
          id: "p",
          events: "pre_action",
          match: { path: { resolved: { glob: "/home/*/.ssh/**" } } },
          action: { decision: "block", reason: "ssh" },
        },
      ],
    });
    expect(blocked(e, write("../.ssh/id_rsa", { working_directory: "/home/dev/project" }))).toBe(true);
    expect(blocked(e, write("x", { working_directory: "/home/dev/project" }))).toBe(false);
  });
});

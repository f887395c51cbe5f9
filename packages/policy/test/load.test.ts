import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PolicyError, loadPolicy, loadPolicyFile, loadPolicyFileSync, parsePolicy } from "@ahp/policy";

const errorOf = (fn: () => unknown): PolicyError => {
  try {
    fn();
  } catch (error) {
    if (PolicyError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a PolicyError");
};

const yaml = (text: string) => () => loadPolicy(text, { file: "policy.yaml" });
const json = (text: string) => () => loadPolicy(text, { file: "policy.json" });

describe("YAML errors name file, line, column and rule", () => {
  it("syntax error", () => {
    const e = errorOf(yaml("version: 1\nrules:\n  - id: a\n    events: [pre_action\n"));
    expect(e.file).toBe("policy.yaml");
    expect(e.line).toBeGreaterThanOrEqual(4);
    expect(e.message).toMatch(/^policy\.yaml:\d+:\d+: YAML: /);
  });

  it("duplicate keys are an error, not a silent override", () => {
    const e = errorOf(yaml("version: 1\nrules: []\nrules: []\n"));
    expect(e.line).toBe(3);
    expect(e.message).toContain("YAML");
  });

  it("unknown field points at the key", () => {
    const text = [
      "version: 1",
      "rules:",
      "  - id: first",
      "    events: pre_action",
      "    action: { decision: allow }",
      "  - id: second",
      "    events: pre_action",
      "    matchh:",
      "      tool: bash",
      "    action: { decision: allow }",
      "",
    ].join("\n");
    const e = errorOf(yaml(text));
    expect({ line: e.line, column: e.column, ruleId: e.ruleId, path: e.path }).toEqual({
      line: 8,
      column: 5,
      ruleId: "second",
      path: ["rules", 1, "matchh"],
    });
    expect(e.message).toBe('policy.yaml:8:5: rule "second": unknown field `matchh` (at rules[1].matchh)');
  });

  it("wrong value points at the value", () => {
    const text = "version: 1\nrules:\n  - id: r1\n    events: [pre_action, pre_acton]\n    action: {decision: allow}\n";
    const e = errorOf(yaml(text));
    expect({ line: e.line, column: e.column, ruleId: e.ruleId }).toEqual({ line: 4, column: 26, ruleId: "r1" });
    expect(e.message).toContain("pre_acton");
  });

  it("a single unknown event type is named with the valid ones, as in the list form", () => {
    const single = errorOf(yaml("version: 1\nrules:\n  - id: r1\n    events: pre_acton\n    action: {decision: allow}\n"));
    const list = errorOf(yaml("version: 1\nrules:\n  - id: r1\n    events: [pre_acton]\n    action: {decision: allow}\n"));
    expect(single.message).toContain('unknown event type "pre_acton"');
    expect(single.message).toContain("pre_action");
    expect(single.message).not.toContain("expected a string or a list");
    expect({ line: single.line, column: single.column, ruleId: single.ruleId }).toEqual({ line: 4, column: 13, ruleId: "r1" });
    expect(single.message.replace(/ \(at .*\)$/, "").replace(/^[^ ]+ rule "r1": /, "")).toBe(
      list.message.replace(/ \(at .*\)$/, "").replace(/^[^ ]+ rule "r1": /, ""),
    );
  });

  it("missing field points at the enclosing mapping", () => {
    const e = errorOf(yaml("version: 1\nrules:\n  - id: r1\n    action: {decision: allow}\n"));
    expect(e.message).toContain("missing field `events`");
    expect(e.line).toBe(3);
    expect(e.ruleId).toBe("r1");
  });

  it("invalid regex, with its position", () => {
    const text =
      'version: 1\nrules:\n  - id: bad-regex\n    events: pre_action\n    match:\n      fields:\n        payload.x:\n          regex: "([a-z"\n    action: {decision: allow}\n';
    const e = errorOf(yaml(text));
    expect({ line: e.line, column: e.column, ruleId: e.ruleId }).toEqual({ line: 8, column: 18, ruleId: "bad-regex" });
    expect(e.message).toContain("invalid regular expression");
  });

  it("catastrophic-looking regex is refused", () => {
    const e = errorOf(
      yaml(
        'version: 1\nrules:\n  - id: redos\n    events: pre_action\n    match: { fields: { payload.x: { regex: "^(a+)+$" } } }\n    action: {decision: allow}\n',
      ),
    );
    expect(e.message).toContain("nested quantifier");
    expect(e.line).toBe(5);
  });

  it("decision invalid for the event type points at the decision", () => {
    const text = "version: 1\nrules:\n  - id: idle-block\n    events: idle\n    action:\n      decision: block\n      reason: nope\n";
    const e = errorOf(yaml(text));
    expect({ line: e.line, column: e.column, ruleId: e.ruleId }).toEqual({ line: 6, column: 17, ruleId: "idle-block" });
  });

  it("bad field path, duplicate ids, bad ids, empty conditions", () => {
    expect(
      errorOf(
        yaml(
          "version: 1\nrules:\n  - id: p\n    events: pre_action\n    match: { fields: { payloads.x: { exists: true } } }\n    action: {decision: allow}\n",
        ),
      ).message,
    ).toContain("must start with one of");
    const dup = errorOf(
      yaml(
        "version: 1\nrules:\n  - {id: a, events: pre_action, action: {decision: allow}}\n  - {id: a, events: pre_action, action: {decision: allow}}\n",
      ),
    );
    expect(dup.message).toContain("duplicate rule id `a`");
    expect(dup.line).toBe(4);
    expect(errorOf(yaml("version: 1\nrules:\n  - {id: 'has space', events: pre_action, action: {decision: allow}}\n")).message).toContain(
      "invalid rule id",
    );
    expect(
      errorOf(yaml("version: 1\nrules:\n  - {id: e, events: pre_action, match: {fields: {payload.x: {}}}, action: {decision: allow}}\n"))
        .message,
    ).toContain("empty condition");
  });

  it("unbalanced glob brace", () => {
    expect(
      errorOf(yaml("version: 1\nrules:\n  - {id: g, events: pre_action, match: {tool: 'a{b'}, action: {decision: allow}}\n")).message,
    ).toContain("unbalanced");
  });

  it("a document that is not a mapping, and a wrong version", () => {
    expect(errorOf(yaml("- 1\n- 2\n")).message).toContain("must be a mapping");
    expect(errorOf(yaml("version: 2\nrules: []\n")).message).toMatch(/version/);
  });

  it("alias bombs are refused", () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "version: 1",
      "rules: []",
    ].join("\n");
    expect(errorOf(yaml(bomb)).message).toMatch(/YAML/);
  });
});

describe("JSON errors name file, line and column too", () => {
  it("syntax errors", () => {
    const e = errorOf(json('{\n  "version": 1,\n  "rules": [\n    {"id": "a",}\n  ]\n}'));
    expect({ line: e.line, column: e.column }).toEqual({ line: 4, column: 16 });
    expect(e.message).toMatch(/^policy\.json:4:16: JSON: expected a member name/);
    expect(errorOf(json('{"version": 1, "rules": []} x')).message).toContain("after the document");
    expect(errorOf(json('{"a": "\\q"}')).message).toContain("invalid escape");
    expect(errorOf(json('{"version": 1, "version": 1, "rules": []}')).message).toContain("duplicate key `version`");
  });

  it("schema errors with positions", () => {
    const text =
      '{\n  "version": 1,\n  "rules": [\n    {\n      "id": "j1",\n      "events": "pre_action",\n      "action": {"decision": "defer", "retry_after_ms": -5}\n    }\n  ]\n}\n';
    const e = errorOf(json(text));
    expect({ line: e.line, column: e.column, ruleId: e.ruleId }).toEqual({ line: 7, column: 57, ruleId: "j1" });
  });

  it("unknown field points at the key", () => {
    const e = errorOf(json('{"version": 1, "rules": [], "extra": true}'));
    expect({ line: e.line, column: e.column, path: e.path }).toEqual({ line: 1, column: 29, path: ["extra"] });
  });

  it("parses what JSON.parse parses", () => {
    const text = JSON.stringify({
      version: 1,
      name: 'é \u2028 "q" \\',
      rules: [{ id: "x", events: "pre_action", match: { fields: { "payload.n": { gte: -1.5e3 } } }, action: { decision: "allow" } }],
    });
    expect(parsePolicy(text, { format: "json" })).toEqual(JSON.parse(text));
  });

  it("a member named __proto__ stays data", () => {
    const e = errorOf(json('{"version": 1, "rules": [], "__proto__": {"polluted": true}}'));
    expect(e.message).toContain("unknown field `__proto__`");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("format detection and files", () => {
  const dir = mkdtempSync(join(tmpdir(), "ahp-policy-load-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("picks JSON by extension or leading brace, YAML otherwise", () => {
    expect(loadPolicy('{"version": 1, "rules": []}').policy.rules).toEqual([]);
    expect(loadPolicy("version: 1\nrules: []\n").policy.version).toBe(1);
  });

  it("loads files (async and sync) and reports the file name in errors", async () => {
    const good = join(dir, "good.yaml");
    writeFileSync(good, "version: 1\nname: from-file\nrules: []\n");
    expect((await loadPolicyFile(good)).name).toBe("from-file");
    expect(loadPolicyFileSync(good).file).toBe(good);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, '{"version": 1, "rules": [{"id": "x"}]}');
    const e = await loadPolicyFile(bad).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(PolicyError.isInstance(e)).toBe(true);
    expect((e as PolicyError).file).toBe(bad);
    expect((e as PolicyError).message.startsWith(`${bad}:1:`)).toBe(true);
    await expect(loadPolicyFile(join(dir, "missing.yaml"))).rejects.toThrow(/ENOENT/);
  });

  it("policy objects from code are validated too (paths, no positions)", () => {
    const e = errorOf(() => loadPolicy({ version: 1, rules: [{ id: "x", events: "pre_action", action: { decision: "nope" } }] } as never));
    expect(e.line).toBeUndefined();
    expect(e.path).toEqual(["rules", 0, "action", "decision"]);
    expect(e.ruleId).toBe("x");
  });

  it("details lists every issue", () => {
    const e = errorOf(
      yaml(
        "version: 1\nrules:\n  - {id: a, events: pre_action, bogus: 1, action: {decision: allow}}\n  - {id: b, events: nope, action: {decision: allow}}\n",
      ),
    );
    expect(e.issues).toHaveLength(2);
    expect(e.details.split("\n")).toHaveLength(2);
  });
});

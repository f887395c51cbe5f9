import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY, PolicyEngine, PolicyError, loadPolicy } from "@ahp/policy";
import { bash, decisionOf } from "./helpers.js";

const builtinIds = (DEFAULT_POLICY.rules as { id: string }[]).map((r) => r.id);

describe("extends: default", () => {
  it("puts the built-in rules first, then the file's own", () => {
    const policy = loadPolicy(
      `version: 1
extends: default
rules:
  - id: no-ls
    events: pre_action
    match: { shell: { program: ls } }
    action: { decision: block, reason: no listing }
`,
      { file: "site.yaml" },
    );
    expect(policy.ruleIds).toEqual([...builtinIds, "no-ls"]);
    expect(policy.origins?.at(-1)).toEqual({ kind: "added", index: 0 });
    const engine = new PolicyEngine(policy);
    expect(decisionOf(engine.evaluate(bash("ls -la")).decision)).toBe("block");
    // A built-in rule still applies: it comes before the file's rules.
    const rm = engine.evaluate(bash("rm -rf /"));
    expect(rm.ruleId).toBe("block-recursive-delete-root");
  });

  it("replaces a built-in rule with the same id in place", () => {
    const target = "block-recursive-delete-root";
    const policy = loadPolicy({
      version: 1,
      extends: "default",
      rules: [
        { id: "first-own", events: "pre_action", match: { tool: "never-called" }, action: { decision: "allow" } },
        { id: target, events: "pre_action", match: { shell: { program: "rm" } }, action: { decision: "escalate", reason: "ask first" } },
      ],
    });
    expect(policy.ruleIds.indexOf(target)).toBe(builtinIds.indexOf(target));
    expect(policy.ruleIds.filter((id) => id === target)).toHaveLength(1);
    expect(policy.origins?.[builtinIds.indexOf(target)]).toEqual({ kind: "replaced", index: 1 });
    const engine = new PolicyEngine(policy);
    const result = engine.evaluate(bash("rm -rf /"));
    expect(decisionOf(result.decision)).toBe("escalate");
    expect(result.ruleId).toBe(target);
  });

  it("turns a built-in rule off with `enabled: false` and nothing else", () => {
    const target = "escalate-unnamed-action";
    const policy = loadPolicy(`version: 1\nextends: default\nrules:\n  - id: ${target}\n    enabled: false\n`, { file: "site.yaml" });
    expect(policy.ruleIds).not.toContain(target);
    expect(policy.ruleIds).toHaveLength(builtinIds.length - 1);
    const engine = new PolicyEngine(policy);
    const unnamed = engine.evaluate({ event_type: "pre_action", session_id: "s", agent_id: "a", depth: 0, timestamp: "", payload: {} });
    expect(unnamed.ruleId).not.toBe(target);
    // Without the override the same event is escalated by that rule.
    const base = new PolicyEngine(DEFAULT_POLICY).evaluate({
      event_type: "pre_action",
      session_id: "s",
      agent_id: "a",
      depth: 0,
      timestamp: "",
      payload: {},
    });
    expect(base.ruleId).toBe(target);
  });

  it("merges settings (the file's win) and keeps the built-in default decision unless the file sets one", () => {
    const policy = loadPolicy({ version: 1, extends: "default", settings: { max_sessions: 7 }, rules: [] });
    expect(policy.data.settings.maxSessions).toBe(7);
    expect(policy.data.defaultDecision).toEqual({ decision: "allow" });
    const blocking = loadPolicy({ version: 1, extends: "default", default: { decision: "block", reason: "closed" }, rules: [] });
    expect(blocking.data.defaultDecision).toMatchObject({ decision: "block", reason: "closed" });
  });

  it("without extends a rule with only id and enabled is still an error", () => {
    expect(() => loadPolicy("version: 1\nrules:\n  - id: escalate-unnamed-action\n    enabled: false\n", { file: "p.yaml" })).toThrow(
      PolicyError,
    );
  });

  it("names the file, line and rule when turning off a rule the default policy does not have", () => {
    let error: PolicyError | undefined;
    try {
      loadPolicy("version: 1\nextends: default\nrules:\n  - id: no-such-rule\n    enabled: false\n", { file: "site.yaml" });
    } catch (e) {
      error = e as PolicyError;
    }
    expect(error).toBeInstanceOf(PolicyError);
    expect(error!.file).toBe("site.yaml");
    expect(error!.ruleId).toBe("no-such-rule");
    expect(error!.line).toBe(4);
    expect(error!.message).toMatch(
      /site\.yaml:4:\d+: rule "no-such-rule": turns off rule `no-such-rule`, but the default policy has no rule/,
    );
  });

  it("maps a compile error in an overriding rule to the file's own position", () => {
    let error: PolicyError | undefined;
    try {
      loadPolicy(
        `version: 1
extends: default
rules:
  - id: fine
    events: pre_action
    action: { decision: allow }
  - id: block-mkfs
    events: idle
    action: { decision: block, reason: x }
`,
        { file: "site.yaml" },
      );
    } catch (e) {
      error = e as PolicyError;
    }
    expect(error).toBeInstanceOf(PolicyError);
    expect(error!.ruleId).toBe("block-mkfs");
    expect(error!.path.slice(0, 2)).toEqual(["rules", 1]);
    expect(error!.line).toBeGreaterThanOrEqual(7);
  });

  it("refuses a rule id used twice in the extending file", () => {
    expect(() =>
      loadPolicy(
        "version: 1\nextends: default\nrules:\n  - { id: a, events: pre_action, action: { decision: allow } }\n  - { id: a, events: pre_action, action: { decision: allow } }\n",
        { file: "site.yaml" },
      ),
    ).toThrow(/site\.yaml:5:\d+: rule "a": duplicate rule id/);
  });
});

import { describe, expect, it } from "vitest";
import { EVENT_TABLE } from "@ahp/core";
import { PolicyEngine, PolicyError, loadPolicy, type PolicyFileInput } from "@ahp/policy";
import { ev } from "./helpers.js";

const load = (rules: PolicyFileInput["rules"]) => () => loadPolicy({ version: 1, rules });
const errorOf = (fn: () => unknown): PolicyError => {
  try {
    fn();
  } catch (error) {
    if (PolicyError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a PolicyError");
};

describe("typed decisions", () => {
  const engine = new PolicyEngine({
    version: 1,
    rules: [
      {
        id: "confirm-cost",
        events: "confirmation",
        match: { fields: { "payload.confirmation_type": { equals: "cost_confirm" } } },
        action: { decision: "reject", reason: "no spending" },
      },
      { id: "confirm-rest", events: "confirmation", action: { decision: "escalate" } },
      { id: "plan", events: "planning", action: { decision: "allow", selected_strategy: "step_by_step", metadata: { by: "policy" } } },
      { id: "plan-custom", events: "planning", action: { decision: "allow", selected_strategy: { custom: "mine" } } },
      { id: "retry", events: "rate_limit", action: { decision: "retry", retry_after_ms: 1500 } },
      { id: "intent", events: "intent_detection", action: { decision: "allow", detected_intent: "code_review", confidence: 0.8 } },
      { id: "memory", events: "memory_recall", action: { decision: "block", reason: "no memory" } },
      { id: "reason", events: "reasoning", action: { decision: "allow", hints: ["think"] } },
      { id: "perceive", events: "context_perception", action: { decision: "refine", scope_hints: ["src"] } },
      { id: "idle", events: "idle", action: { decision: "defer", reason: "busy" } },
    ],
  });

  it.each([
    [
      "confirmation",
      { session_id: "s1", confirmation_type: "cost_confirm", message: "pay?" },
      { decision: "reject", reason: "no spending [rule: confirm-cost]" },
    ],
    ["confirmation", { session_id: "s1", confirmation_type: "user_confirm", message: "ok?" }, { decision: "escalate" }],
    [
      "planning",
      { session_id: "s1", task_description: "x", available_strategies: ["none"] },
      { decision: "allow", selected_strategy: "step_by_step", metadata: { by: "policy", rule: "plan" } },
    ],
    [
      "rate_limit",
      { session_id: "s1", limit_type: "llm_request_limit", retry_after_ms: 10, current_usage: "9/10" },
      { decision: "retry", retry_after_ms: 1500, metadata: { rule: "retry" } },
    ],
    [
      "intent_detection",
      { session_id: "s1", prompt: "review", workspace: "/w" },
      { decision: "allow", detected_intent: "code_review", confidence: 0.8 },
    ],
    [
      "memory_recall",
      { session_id: "s1", query: "q", memory_type: "m", max_results: 1, working_directory: "/w" },
      { decision: "block", reason: "no memory", metadata: { rule: "memory" } },
    ],
    [
      "reasoning",
      { session_id: "s1", reasoning_type: "re_act", problem_statement: "p" },
      { decision: "allow", hints: ["think"], metadata: { rule: "reason" } },
    ],
    [
      "context_perception",
      {
        session_id: "s1",
        intent: "locate",
        target: { location: { path: "src", location_type: "directory" } },
        context: { workspace: "/w" },
      },
      { decision: "refine", scope_hints: ["src"] },
    ],
    ["idle", { idle_duration_ms: 1000, idle_reason: "no input" }, { decision: "defer", reason: "busy [rule: idle]" }],
  ] as const)("%s", (type, payload, expected) => {
    const decision = engine.evaluate(ev(type, payload)).decision;
    expect(decision).toEqual(expected);
    expect(EVENT_TABLE[type].decisionSchema!.safeParse(decision).success).toBe(true);
  });

  it("typed points without a matching rule get no policy decision (idle: allow)", () => {
    const e = new PolicyEngine({ version: 1, rules: [] });
    expect(e.evaluate(ev("planning", {})).decision).toBeUndefined();
    expect(e.evaluate(ev("idle", {})).decision).toEqual({ decision: "allow" });
  });
});

describe("load-time validation of decisions against every event type of the rule", () => {
  it("refuses a decision the event type does not have", () => {
    const e = errorOf(load([{ id: "bad", events: "idle", action: { decision: "block", reason: "x" } }]));
    expect(e.message).toContain("decision `block` is not valid for event type `idle`");
    expect(e.ruleId).toBe("bad");
    expect(e.path).toEqual(["rules", 0, "action", "decision"]);
  });

  it("checks each event type of a multi-type rule", () => {
    const e = errorOf(load([{ id: "multi", events: ["pre_action", "idle"], action: { decision: "defer", retry_after_ms: 10 } }]));
    expect(e.message).toContain("unknown field `retry_after_ms` for decision `defer` of event type `idle`");
  });

  it("refuses missing required fields", () => {
    expect(errorOf(load([{ id: "r", events: "pre_action", action: { decision: "block" } }])).message).toContain("missing field `reason`");
    expect(errorOf(load([{ id: "r", events: "pre_action", action: { decision: "defer" } }])).message).toContain(
      "missing field `retry_after_ms`",
    );
    expect(errorOf(load([{ id: "r", events: "planning", action: { decision: "allow" } }])).message).toContain(
      "missing field `selected_strategy`",
    );
    expect(errorOf(load([{ id: "r", events: "rate_limit", action: { decision: "skip" } }])).message).toContain("missing field `reason`");
  });

  it("refuses fields of the wrong type and unknown fields", () => {
    expect(errorOf(load([{ id: "r", events: "reasoning", action: { decision: "allow", hints: "x" } }])).message).toMatch(/invalid type/);
    expect(
      errorOf(load([{ id: "r", events: "pre_action", action: { decision: "escalate", reason: "x", escalation_targt: "ops" } }])).message,
    ).toContain("unknown field `escalation_targt`");
  });

  it("refuses merge_patch or redact_secrets where there is no payload to modify", () => {
    expect(
      errorOf(load([{ id: "r", events: "pre_action", action: { decision: "block", reason: "x", redact_secrets: true } }])).message,
    ).toContain("need a decision with modified_payload");
    expect(errorOf(load([{ id: "r", events: "idle", action: { decision: "allow", merge_patch: {} } }])).message).toContain(
      "need a decision with modified_payload",
    );
  });

  it("a generic decision is valid for notifications (they get one inside batches)", () => {
    expect(() => load([{ id: "r", events: ["post_action", "error"], action: { decision: "block", reason: "x" } }])()).not.toThrow();
  });

  it("collects every problem", () => {
    const e = errorOf(
      load([
        { id: "a", events: "idle", action: { decision: "block", reason: "x" } },
        { id: "b", events: "pre_action", action: { decision: "approve" } },
      ]),
    );
    expect(e.issues.map((i) => i.ruleId)).toEqual(["a", "b"]);
    expect(e.message).toContain("(and 1 more problem)");
  });
});

describe("modify", () => {
  it("merge_patch (RFC 7396) on a copy of the payload", () => {
    const engine = new PolicyEngine({
      version: 1,
      rules: [
        {
          id: "sandbox",
          events: "pre_action",
          match: { tool: "bash" },
          action: { decision: "modify", merge_patch: { arguments: { sandbox: true, env: null } } },
        },
      ],
    });
    const payload = { tool_name: "bash", arguments: { command: "ls", env: { A: "1" } } };
    const r = engine.evaluate(ev("pre_action", payload));
    expect(r.decision).toEqual({
      decision: "modify",
      modified_payload: { tool_name: "bash", arguments: { command: "ls", sandbox: true } },
      metadata: { rule: "sandbox" },
    });
    expect(payload.arguments.env).toEqual({ A: "1" });
  });

  it("modified_payload as a literal, and allow with a modified payload", () => {
    const engine = new PolicyEngine({
      version: 1,
      rules: [
        { id: "lit", events: "pre_action", match: { tool: "a" }, action: { decision: "modify", modified_payload: { tool_name: "noop" } } },
        { id: "allow-patched", events: "pre_action", match: { tool: "b" }, action: { decision: "allow", merge_patch: { dry_run: true } } },
      ],
    });
    expect(engine.evaluate(ev("pre_action", { tool_name: "a" })).decision).toEqual({
      decision: "modify",
      modified_payload: { tool_name: "noop" },
      metadata: { rule: "lit" },
    });
    expect(engine.evaluate(ev("pre_action", { tool_name: "b" })).decision).toEqual({
      decision: "allow",
      modified_payload: { tool_name: "b", dry_run: true },
      metadata: { rule: "allow-patched" },
    });
  });

  it("redact_secrets with a kind filter, then merge_patch", () => {
    const gh = ["ghp", "_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].join("");
    const engine = new PolicyEngine({
      version: 1,
      rules: [
        {
          id: "r",
          events: "pre_prompt",
          match: { secrets: {} },
          action: { decision: "modify", redact_secrets: { kinds: ["github_token"] }, merge_patch: { redacted: true } },
        },
      ],
    });
    const r = engine.evaluate(ev("pre_prompt", { prompt: `${gh} AKIAIOSFODNN7EXAMPLE` }));
    expect(r.decision).toEqual({
      decision: "modify",
      modified_payload: { prompt: "[REDACTED:github_token] AKIAIOSFODNN7EXAMPLE", redacted: true },
      metadata: { rule: "r" },
    });
  });
});

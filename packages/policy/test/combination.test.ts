import { describe, expect, it } from "vitest";
import { PolicyEngine, type PolicyEvaluation, type PolicyFileInput } from "@ahp/policy";
import { ev } from "./helpers.js";

const policy: PolicyFileInput = {
  version: 1,
  name: "combo",
  default: { decision: "block", reason: "default deny" },
  rules: [
    { id: "allow-ls", events: "pre_action", match: { tool: "ls" }, action: { decision: "allow" } },
    { id: "block-bash", events: "pre_action", match: { tool: "bash" }, action: { decision: "block", reason: "no shell" } },
    {
      id: "escalate-bash-or-git",
      events: ["pre_action"],
      match: { tool: ["bash", "git"] },
      action: { decision: "escalate", reason: "ask", escalation_target: "ops" },
    },
    { id: "disabled", enabled: false, events: "pre_action", match: { tool: "curl" }, action: { decision: "allow" } },
    { id: "prompt-defer", events: "pre_prompt", action: { decision: "defer", retry_after_ms: 250, reason: "later" } },
    { id: "meta", events: "pre_action", match: { tool: "meta" }, action: { decision: "allow", metadata: { team: "blue" } } },
  ],
};

describe("combination rule: first match in file order wins, default when none", () => {
  const engine = new PolicyEngine(policy);
  const decide = (tool: string) => engine.evaluate(ev("pre_action", { tool_name: tool }));

  it("the earlier rule wins over a later, stricter one", () => {
    expect(decide("bash")).toMatchObject({
      ruleId: "block-bash",
      decision: { decision: "block", reason: "no shell", metadata: { rule: "block-bash" } },
    });
    expect(decide("ls")).toMatchObject({ ruleId: "allow-ls", decision: { decision: "allow", metadata: { rule: "allow-ls" } } });
  });

  it("a later rule decides when the earlier ones do not match", () => {
    expect(decide("git").decision).toEqual({ decision: "escalate", reason: "ask [rule: escalate-bash-or-git]", escalation_target: "ops" });
  });

  it("the default decides when no rule matches; disabled rules never match", () => {
    const r = decide("curl");
    expect(r).toMatchObject({ source: "default", ruleId: undefined, decision: { decision: "block", reason: "default deny" } });
  });

  it("rules apply only to their event types", () => {
    const r = engine.evaluate(ev("pre_prompt", { tool_name: "ls", prompt: "hi" }));
    expect(r.decision).toEqual({ decision: "defer", retry_after_ms: 250, reason: "later [rule: prompt-defer]" });
  });

  it("the rule id joins metadata the action already has", () => {
    expect(decide("meta").decision).toEqual({ decision: "allow", metadata: { team: "blue", rule: "meta" } });
  });

  it("the default of the default is allow", () => {
    const e = new PolicyEngine({ version: 1, rules: [] });
    expect(e.evaluate(ev("pre_action", {})).decision).toEqual({ decision: "allow" });
    expect(e.evaluate(ev("pre_prompt", {})).decision).toEqual({ decision: "allow" });
  });

  it("decisions are frozen so that a consumer cannot change the policy's next answer", () => {
    const d = decide("bash").decision as { reason: string };
    expect(() => {
      d.reason = "changed";
    }).toThrow(TypeError);
  });
});

describe("onDecision", () => {
  it("reports decision, rule id, latency and the event for every evaluation", () => {
    const seen: PolicyEvaluation[] = [];
    const engine = new PolicyEngine(policy, { onDecision: (e) => seen.push(e) });
    const event = ev("pre_action", { tool_name: "bash" });
    engine.evaluate(event);
    engine.evaluate(ev("pre_action", { tool_name: "zzz" }));
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ ruleId: "block-bash", source: "rule", event, notification: false, policy: "combo" });
    expect(seen[0]!.latencyNs).toBeGreaterThan(0);
    expect(Number.isInteger(seen[0]!.latencyNs)).toBe(true);
    expect(seen[1]).toMatchObject({ ruleId: undefined, source: "default" });
  });

  it("a throwing onDecision goes to onerror and does not change the decision", () => {
    const errors: Error[] = [];
    const engine = new PolicyEngine(policy, {
      onDecision: () => {
        throw new Error("sink down");
      },
      onerror: (e) => errors.push(e),
    });
    expect(engine.evaluate(ev("pre_action", { tool_name: "bash" })).decision).toMatchObject({ decision: "block" });
    expect(errors.map((e) => e.message)).toEqual(["sink down"]);
  });

  it("notifications are evaluated for reporting only", () => {
    const seen: PolicyEvaluation[] = [];
    const engine = new PolicyEngine(
      { version: 1, rules: [{ id: "obs", events: "post_action", match: { tool: "bash" }, action: { decision: "block", reason: "seen" } }] },
      { onDecision: (e) => seen.push(e) },
    );
    engine.evaluate(ev("post_action", { tool_name: "bash" }), { notification: true });
    engine.evaluate(ev("post_action", { tool_name: "ls" }), { notification: true });
    expect(seen.map((s) => [s.notification, s.ruleId, s.source, (s.decision as { decision?: string } | undefined)?.decision])).toEqual([
      [true, "obs", "rule", "block"],
      [true, undefined, "none", undefined],
    ]);
  });
});

describe("evaluate input checks", () => {
  it("rejects something that is not an event", () => {
    const engine = new PolicyEngine({ version: 1, rules: [] });
    expect(() => engine.evaluate({ event_type: "nope" } as never)).toThrow(TypeError);
    expect(() => engine.evaluate(null as never)).toThrow(TypeError);
  });
});

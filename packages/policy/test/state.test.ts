import { describe, expect, it } from "vitest";
import { PolicyEngine, type PolicyFileInput } from "@ahp/policy";
import { bash, decisionOf, ev, fakeClock } from "./helpers.js";

const stats = (s: { total_actions?: number; total_tokens?: number; duration_ms?: number; error_count?: number }) => ({
  session_stats: { total_actions: 0, total_tokens: 0, duration_ms: 0, error_count: 0, ...s },
});

describe("rate limits (token buckets)", () => {
  const limited = (scope: "session" | "agent" | "global", extra: Partial<PolicyFileInput> = {}) => {
    const clock = fakeClock();
    const engine = new PolicyEngine(
      {
        version: 1,
        rules: [
          {
            id: "shell-rate",
            events: "pre_action",
            match: { tool: "bash" },
            rate_limit: { scope, rate: 2, interval_ms: 1000, burst: 3 },
            action: { decision: "defer", reason: "slow down" },
          },
        ],
        ...extra,
      },
      { clock: clock.now },
    );
    return { clock, engine };
  };

  it("allows the burst, then defers with the exact time until the next token", () => {
    const { clock, engine } = limited("session");
    const d = () => engine.evaluate(bash("ls")).decision;
    expect([d(), d(), d()]).toEqual([{ decision: "allow" }, { decision: "allow" }, { decision: "allow" }]);
    // 2 tokens per 1000 ms: one token every 500 ms.
    expect(d()).toEqual({ decision: "defer", retry_after_ms: 500, reason: "slow down [rule: shell-rate]" });
    clock.advance(123);
    expect(d()).toEqual({ decision: "defer", retry_after_ms: 377, reason: "slow down [rule: shell-rate]" });
    clock.advance(376);
    expect((d() as { retry_after_ms: number }).retry_after_ms).toBe(1);
    clock.advance(1);
    expect(d()).toEqual({ decision: "allow" });
    expect((d() as { retry_after_ms: number }).retry_after_ms).toBe(500);
  });

  it("retry_after_ms is an integer even when the wait is fractional", () => {
    const clock = fakeClock();
    const engine = new PolicyEngine(
      { version: 1, rules: [{ id: "r", events: "pre_action", rate_limit: { rate: 3, interval_ms: 1000 } }] },
      { clock: clock.now },
    );
    for (let i = 0; i < 3; i++) engine.evaluate(bash("ls"));
    const d = engine.evaluate(bash("ls")).decision as { decision: string; retry_after_ms: number };
    expect(d.decision).toBe("defer");
    expect(d.retry_after_ms).toBe(334); // ceil(1000 / 3)
    clock.advance(333);
    expect((engine.evaluate(bash("ls")).decision as { retry_after_ms: number }).retry_after_ms).toBe(1);
    clock.advance(1);
    expect(decisionOf(engine.evaluate(bash("ls")).decision)).toBe("allow");
  });

  it("session scope: one bucket per session", () => {
    const { engine } = limited("session");
    for (let i = 0; i < 3; i++) engine.evaluate(bash("ls", { session_id: "A" }));
    expect(decisionOf(engine.evaluate(bash("ls", { session_id: "A" })).decision)).toBe("defer");
    expect(decisionOf(engine.evaluate(bash("ls", { session_id: "B" })).decision)).toBe("allow");
  });

  it("agent scope: one bucket per agent across its sessions", () => {
    const { engine } = limited("agent");
    for (let i = 0; i < 3; i++) engine.evaluate(bash("ls", { session_id: `s${i}`, agent_id: "X" }));
    expect(decisionOf(engine.evaluate(bash("ls", { session_id: "s9", agent_id: "X" })).decision)).toBe("defer");
    expect(decisionOf(engine.evaluate(bash("ls", { session_id: "s9", agent_id: "Y" })).decision)).toBe("allow");
  });

  it("global scope: one bucket for everyone", () => {
    const { engine } = limited("global");
    for (let i = 0; i < 3; i++) engine.evaluate(bash("ls", { session_id: `s${i}`, agent_id: `a${i}` }));
    expect(decisionOf(engine.evaluate(bash("ls", { session_id: "new", agent_id: "new" })).decision)).toBe("defer");
  });

  it("only events matching the rule take tokens; earlier matching rules take none", () => {
    const clock = fakeClock();
    const engine = new PolicyEngine(
      {
        version: 1,
        rules: [
          { id: "block-rm", events: "pre_action", match: { shell: { program: "rm" } }, action: { decision: "block", reason: "no" } },
          { id: "rate", events: "pre_action", match: { tool: "bash" }, rate_limit: { rate: 1, interval_ms: 60_000 } },
        ],
      },
      { clock: clock.now },
    );
    for (let i = 0; i < 5; i++) expect(decisionOf(engine.evaluate(bash("rm x")).decision)).toBe("block");
    expect(decisionOf(engine.evaluate(ev("pre_action", { tool_name: "read" })).decision)).toBe("allow");
    expect(decisionOf(engine.evaluate(bash("ls")).decision)).toBe("allow");
    expect(engine.evaluate(bash("ls")).decision).toEqual({ decision: "defer", retry_after_ms: 60_000, reason: "rule: rate" });
  });

  it("a rate-limited rule can block or escalate instead, and answer typed rate_limit events with retry", () => {
    const clock = fakeClock();
    const engine = new PolicyEngine(
      {
        version: 1,
        rules: [
          {
            id: "cap",
            events: "pre_prompt",
            rate_limit: { rate: 1, interval_ms: 1000 },
            action: { decision: "block", reason: "too many prompts" },
          },
          { id: "llm", events: "rate_limit", rate_limit: { rate: 1, interval_ms: 2000 }, action: { decision: "retry" } },
        ],
      },
      { clock: clock.now },
    );
    engine.evaluate(ev("pre_prompt", {}));
    expect(engine.evaluate(ev("pre_prompt", {})).decision).toEqual({
      decision: "block",
      reason: "too many prompts",
      metadata: { rule: "cap" },
    });
    const rl = ev("rate_limit", { session_id: "s1", limit_type: "llm_request_limit", retry_after_ms: 5, current_usage: "x" });
    expect(engine.evaluate(rl).decision).toBeUndefined();
    clock.advance(500);
    expect(engine.evaluate(rl).decision).toEqual({ decision: "retry", retry_after_ms: 1500, metadata: { rule: "llm" } });
  });

  it("a changed configuration starts a fresh bucket; unchanged ones survive a reload", () => {
    const { clock, engine } = limited("global");
    for (let i = 0; i < 3; i++) engine.evaluate(bash("ls"));
    engine.swap(engine.policy.policy); // same configuration
    expect(decisionOf(engine.evaluate(bash("ls")).decision)).toBe("defer");
    engine.swap({
      version: 1,
      rules: [
        { id: "shell-rate", events: "pre_action", match: { tool: "bash" }, rate_limit: { scope: "global", rate: 5, interval_ms: 1000 } },
      ],
    });
    clock.advance(0);
    expect(decisionOf(engine.evaluate(bash("ls")).decision)).toBe("allow");
  });

  it("retry_after_ms in a rate-limited rule is refused (it is computed)", () => {
    expect(
      () =>
        new PolicyEngine({
          version: 1,
          rules: [
            { id: "x", events: "pre_action", rate_limit: { rate: 1, interval_ms: 1 }, action: { decision: "defer", retry_after_ms: 5 } },
          ],
        }),
    ).toThrow(/computed from the token bucket/);
  });
});

describe("quotas", () => {
  const quota: PolicyFileInput = {
    version: 1,
    rules: [
      {
        id: "max-actions",
        events: "pre_action",
        match: { session: { actions: { gte: 3 } } },
        action: { decision: "block", reason: "action quota" },
      },
      {
        id: "max-tokens",
        events: ["pre_action", "pre_prompt"],
        match: { session: { tokens: { gt: 1000 } } },
        action: { decision: "block", reason: "token quota" },
      },
      {
        id: "max-errors",
        events: "pre_action",
        match: { session: { errors: { gte: 2 } } },
        action: { decision: "escalate", reason: "too many errors" },
      },
    ],
  };

  it("counts allowed actions per session when the agent reports no stats", () => {
    const engine = new PolicyEngine(quota);
    for (let i = 0; i < 3; i++) expect(decisionOf(engine.evaluate(bash("ls")).decision)).toBe("allow");
    expect(engine.evaluate(bash("ls")).ruleId).toBe("max-actions");
    expect(decisionOf(engine.evaluate(bash("ls", { session_id: "other" })).decision)).toBe("allow");
    expect(engine.sessionCounters("s1")).toMatchObject({ actions: 3, events: 4 });
  });

  it("blocked actions do not count", () => {
    const engine = new PolicyEngine({
      ...quota,
      rules: [
        { id: "no-rm", events: "pre_action", match: { shell: { program: "rm" } }, action: { decision: "block", reason: "x" } },
        ...quota.rules,
      ],
    });
    for (let i = 0; i < 5; i++) engine.evaluate(bash("rm x"));
    expect(engine.sessionCounters("s1")?.actions).toBe(0);
  });

  it("reads context.session_stats when present", () => {
    const engine = new PolicyEngine(quota);
    expect(engine.evaluate(bash("ls", { context: stats({ total_actions: 2 }) })).ruleId).toBeUndefined();
    expect(engine.evaluate(bash("ls", { context: stats({ total_actions: 3 }) })).ruleId).toBe("max-actions");
    expect(engine.evaluate(bash("ls", { session_id: "t", context: stats({ total_tokens: 1001 }) })).ruleId).toBe("max-tokens");
    expect(engine.evaluate(bash("ls", { session_id: "u", context: stats({ error_count: 2 }) })).ruleId).toBe("max-errors");
  });

  it("counts tokens from post_response usage and heartbeats, errors from error events", () => {
    const engine = new PolicyEngine(quota);
    engine.evaluate(ev("post_response", { usage: { input_tokens: 300, output_tokens: 200 } }), { notification: true });
    expect(engine.evaluate(ev("pre_prompt", { prompt: "x" })).ruleId).toBeUndefined();
    engine.evaluate(ev("post_response", { usage: { total_tokens: 501 } }), { notification: true });
    expect(engine.evaluate(ev("pre_prompt", { prompt: "x" })).ruleId).toBe("max-tokens");
    engine.evaluate(
      ev("heartbeat", { uptime_ms: 1, total_events_processed: 1, current_state: "x", tokens_used: 5000 }, { session_id: "hb" }),
      { notification: true },
    );
    expect(engine.evaluate(ev("pre_prompt", { prompt: "x" }, { session_id: "hb" })).ruleId).toBe("max-tokens");

    engine.evaluate(ev("error", { error_type: "x", error_message: "y" }, { session_id: "e" }), { notification: true });
    expect(engine.evaluate(bash("ls", { session_id: "e" })).ruleId).toBeUndefined();
    engine.evaluate(ev("error", { error_type: "x", error_message: "y" }, { session_id: "e" }), { notification: true });
    expect(engine.evaluate(bash("ls", { session_id: "e" })).decision).toEqual({
      decision: "escalate",
      reason: "too many errors [rule: max-errors]",
    });
  });

  it("session duration from the injected clock", () => {
    const clock = fakeClock();
    const engine = new PolicyEngine(
      {
        version: 1,
        rules: [
          {
            id: "long",
            events: "pre_action",
            match: { session: { duration_ms: { gte: 60_000 } } },
            action: { decision: "block", reason: "session too long" },
          },
        ],
      },
      { clock: clock.now },
    );
    expect(engine.evaluate(bash("ls")).ruleId).toBeUndefined();
    clock.advance(59_999);
    expect(engine.evaluate(bash("ls")).ruleId).toBeUndefined();
    clock.advance(1);
    expect(engine.evaluate(bash("ls")).ruleId).toBe("long");
  });
});

describe("depth-aware strictness", () => {
  it("rules that apply only to sub-agents", () => {
    const engine = new PolicyEngine({
      version: 1,
      rules: [
        {
          id: "subagent-no-shell",
          events: "pre_action",
          match: { depth: { gte: 1 }, tool: "bash" },
          action: { decision: "escalate", reason: "sub-agents need approval for shell" },
        },
        {
          id: "deep-block",
          events: ["pre_action", "pre_prompt"],
          match: { depth: { gte: 3 } },
          action: { decision: "block", reason: "too deep" },
        },
      ],
    });
    expect(decisionOf(engine.evaluate(bash("ls", { depth: 0 })).decision)).toBe("allow");
    expect(decisionOf(engine.evaluate(bash("ls", { depth: 1 })).decision)).toBe("escalate");
    expect(decisionOf(engine.evaluate(ev("pre_action", { tool_name: "read" }, { depth: 2 })).decision)).toBe("allow");
    expect(decisionOf(engine.evaluate(ev("pre_prompt", {}, { depth: 3 })).decision)).toBe("block");
  });
});

describe("idle / background budgets", () => {
  const idle = (extra = {}) => ev("idle", { idle_duration_ms: 30_000, idle_reason: "no input" }, extra);

  it("defers idle events once the session's background runs are spent", () => {
    const engine = new PolicyEngine({
      version: 1,
      rules: [
        {
          id: "background-budget",
          events: "idle",
          match: { session: { background_runs: { gte: 2 } } },
          action: { decision: "defer", reason: "background budget spent" },
        },
      ],
    });
    expect(engine.evaluate(idle()).decision).toEqual({ decision: "allow" });
    expect(engine.evaluate(idle()).decision).toEqual({ decision: "allow" });
    expect(engine.evaluate(idle()).decision).toEqual({ decision: "defer", reason: "background budget spent [rule: background-budget]" });
    expect(engine.evaluate(idle({ session_id: "fresh" })).decision).toEqual({ decision: "allow" });
  });

  it("counts background time from an allowed idle event to the session's next event", () => {
    const clock = fakeClock();
    const engine = new PolicyEngine(
      {
        version: 1,
        rules: [
          {
            id: "bg-time",
            events: "idle",
            match: { session: { background_ms: { gte: 10_000 } } },
            action: { decision: "defer", reason: "budget" },
          },
        ],
      },
      { clock: clock.now },
    );
    expect(decisionOf(engine.evaluate(idle()).decision)).toBe("allow");
    clock.advance(4_000);
    engine.evaluate(ev("heartbeat", { uptime_ms: 1, total_events_processed: 1, current_state: "bg" }), { notification: true }); // heartbeats do not end it
    clock.advance(2_000);
    engine.evaluate(bash("ls")); // background work ended after 6 s
    expect(engine.sessionCounters("s1")?.background_ms).toBe(6_000);
    clock.advance(50_000);
    expect(decisionOf(engine.evaluate(idle()).decision)).toBe("allow");
    clock.advance(3_999);
    expect(engine.sessionCounters("s1")?.background_ms).toBe(9_999);
    clock.advance(1);
    expect(decisionOf(engine.evaluate(idle()).decision)).toBe("defer");
  });
});

describe("bounded state", () => {
  it("evicts the least recently used session beyond max_sessions", () => {
    const engine = new PolicyEngine({ version: 1, settings: { max_sessions: 3 }, rules: [] });
    for (const s of ["a", "b", "c"]) engine.evaluate(bash("ls", { session_id: s }));
    engine.evaluate(bash("ls", { session_id: "a" })); // a is now the most recent
    engine.evaluate(bash("ls", { session_id: "d" })); // evicts b
    expect(engine.stateSize.sessions).toBe(3);
    expect(engine.sessionCounters("b")).toBeUndefined();
    expect(engine.sessionCounters("a")?.events).toBe(2);
    expect(engine.sessionCounters("c")?.events).toBe(1);
  });

  it("drops state of sessions idle longer than the TTL", () => {
    const clock = fakeClock();
    const engine = new PolicyEngine(
      {
        version: 1,
        rules: [
          { id: "q", events: "pre_action", match: { session: { actions: { gte: 1 } } }, action: { decision: "block", reason: "quota" } },
        ],
      },
      { clock: clock.now, stateTtlMs: 1000 },
    );
    engine.evaluate(bash("ls"));
    expect(decisionOf(engine.evaluate(bash("ls")).decision)).toBe("block");
    clock.advance(1001);
    expect(engine.sessionCounters("s1")).toBeUndefined();
    expect(decisionOf(engine.evaluate(bash("ls")).decision)).toBe("allow");
    // Expired entries are also swept when other sessions arrive.
    clock.advance(5000);
    engine.evaluate(bash("ls", { session_id: "other" }));
    expect(engine.stateSize.sessions).toBe(1);
  });

  it("bounds agents too, and code options win over file settings", () => {
    const engine = new PolicyEngine(
      {
        version: 1,
        settings: { max_agents: 100 },
        rules: [{ id: "r", events: "pre_action", rate_limit: { scope: "agent", rate: 1, interval_ms: 1000 } }],
      },
      { maxAgents: 2 },
    );
    expect(engine.limits.maxAgents).toBe(2);
    for (const a of ["x", "y", "z"]) engine.evaluate(bash("ls", { agent_id: a }));
    expect(engine.stateSize.agents).toBe(2);
  });

  it("many sessions stay within the bound", () => {
    const engine = new PolicyEngine({ version: 1, settings: { max_sessions: 100 }, rules: [] });
    for (let i = 0; i < 5000; i++) engine.evaluate(bash("ls", { session_id: `s${i}` }));
    expect(engine.stateSize.sessions).toBe(100);
  });
});

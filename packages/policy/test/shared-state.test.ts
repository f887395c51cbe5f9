import { describe, expect, it } from "vitest";
import type { AhpEvent } from "@ahp/core";
import {
  MemoryStateStore,
  PolicyEngine,
  PolicyStateError,
  composeHandlers,
  type PolicyEvaluation,
  type PolicyFileInput,
  type PolicyStateStore,
} from "@ahp/policy";
import { bash, decisionOf, ev, fakeClock } from "./helpers.js";

const policy: PolicyFileInput = {
  version: 1,
  rules: [
    { id: "no-rm", events: "pre_action", match: { shell: { program: "rm" } }, action: { decision: "block", reason: "no rm" } },
    {
      id: "bash-session-rate",
      events: "pre_action",
      match: { tool: "bash" },
      rate_limit: { scope: "session", rate: 2, interval_ms: 1000, burst: 3 },
    },
    { id: "agent-rate", events: "pre_action", rate_limit: { scope: "agent", rate: 5, interval_ms: 1000, burst: 5 } },
    { id: "global-rate", events: ["pre_action", "pre_prompt"], rate_limit: { scope: "global", rate: 20, interval_ms: 1000, burst: 8 } },
    {
      id: "action-quota",
      events: "pre_action",
      match: { session: { actions: { gte: 12 } } },
      action: { decision: "block", reason: "quota" },
    },
    {
      id: "token-quota",
      events: "pre_prompt",
      match: { session: { tokens: { gt: 500 } } },
      action: { decision: "block", reason: "tokens" },
    },
    {
      id: "bg-budget",
      events: "idle",
      match: { session: { background_runs: { gte: 2 }, background_ms: { gte: 100 } } },
      action: { decision: "defer" },
    },
  ],
};

/** A deterministic pseudo-random sequence of events and clock steps. */
function* script(seed: number): Generator<{ advance: number; event: AhpEvent }> {
  let x = seed;
  const rnd = (n: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
  for (let i = 0; i < 400; i++) {
    const extra = { session_id: `s${rnd(3)}`, agent_id: `a${rnd(2)}` };
    const kind = rnd(7);
    const event =
      kind === 0
        ? bash("rm -rf build", extra)
        : kind === 1
          ? ev("pre_action", { tool_name: "read", arguments: { path: "a" } }, extra)
          : kind === 2
            ? ev("pre_prompt", { text: "hi" }, extra)
            : kind === 3
              ? ev("post_response", { usage: { total_tokens: rnd(120) } }, extra)
              : kind === 4
                ? ev("idle", { reason: "waiting" }, extra)
                : bash("ls", extra);
    yield { advance: rnd(4) === 0 ? rnd(700) : 0, event };
  }
}

describe("policy state in a shared store", () => {
  it("decides exactly as the in-memory engine on a long mixed sequence (every scope, quotas, background budget)", async () => {
    for (const seed of [1, 7, 42]) {
      const clock = fakeClock();
      const local = new PolicyEngine(policy, { clock: clock.now });
      const shared = new PolicyEngine(policy, { clock: clock.now, stateStore: new MemoryStateStore({ clock: clock.now }) });
      const localHandlers = composeHandlers(local);
      const sharedHandlers = composeHandlers(shared);
      let n = 0;
      const sources = new Set<string>();
      for (const { advance, event } of script(seed)) {
        clock.advance(advance);
        const call = (h: typeof localHandlers) =>
          event.event_type === "idle" ? h.typed!.idle!(event.payload as never, event, {} as never) : h.onEvent!(event, {} as never);
        const a = await call(localHandlers);
        const b = await call(sharedHandlers);
        expect(b, `seed ${seed}, event ${n}`).toEqual(a);
        sources.add(`${decisionOf(a)}`);
        n++;
      }
      // The sequence reaches allow, block and defer.
      expect([...sources].sort()).toEqual(expect.arrayContaining(["allow", "block", "defer"]));
    }
  });

  it("takes the buckets and updates the counters in one store step; a counter rule adds one read", async () => {
    const steps: string[] = [];
    const memory = new MemoryStateStore();
    const spy: PolicyStateStore = {
      step: (s) => {
        steps.push(`${s.readSession === true ? "read" : "step"}:${s.takes.length}`);
        return memory.step(s);
      },
      reset: () => memory.reset(),
      close: () => memory.close(),
    };
    const engine = new PolicyEngine(policy, { stateStore: spy });
    await engine.evaluateShared(bash("ls"), { decision: { decision: "allow" }, source: "default" });
    expect(steps).toEqual(["read:0", "step:3"]); // action-quota reads the counters (it follows the rate limits)
    steps.length = 0;
    await engine.evaluateShared(ev("post_response", { usage: { total_tokens: 3 } }), { decision: undefined, source: "none" }, true);
    expect(steps).toEqual(["step:0"]);
    steps.length = 0;
    const noCounters = new PolicyEngine(
      { version: 1, rules: [{ id: "r", events: "pre_action", rate_limit: { scope: "global", rate: 1, interval_ms: 1000, burst: 1 } }] },
      { stateStore: spy },
    );
    await noCounters.evaluateShared(bash("ls"), { decision: { decision: "allow" }, source: "default" });
    expect(steps).toEqual(["step:1"]);
  });

  it("fails closed when a decision needs the store and it is down; a counter-only update keeps its decision", async () => {
    const errors: Error[] = [];
    const evaluations: PolicyEvaluation[] = [];
    const down: PolicyStateStore = {
      step: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6399")),
      reset: () => Promise.resolve(),
      close: () => Promise.resolve(),
    };
    const engine = new PolicyEngine(
      { version: 1, rules: [{ id: "rate", events: "pre_action", match: { tool: "bash" }, rate_limit: { rate: 10, interval_ms: 1000 } }] },
      { stateStore: down, onerror: (e) => errors.push(e), onDecision: (e) => evaluations.push(e) },
    );
    const h = composeHandlers(engine);
    expect(await h.onEvent!(bash("ls"), {} as never)).toEqual({
      decision: "block",
      reason: "policy state store unavailable: connect ECONNREFUSED 127.0.0.1:6399",
    });
    expect(evaluations.at(-1)?.source).toBe("state_unavailable");
    expect(errors.at(-1)).toBeInstanceOf(PolicyStateError);
    // A tool no rate limit reaches: the decision stands, the lost counter update is reported.
    expect(await h.onEvent!(ev("pre_action", { tool_name: "read" }), {} as never)).toEqual({ decision: "allow" });
    expect(errors).toHaveLength(2);
    // A typed point that needs the store gets its own fail-closed decision.
    const idle = new PolicyEngine(
      {
        version: 1,
        rules: [{ id: "bg", events: "idle", match: { session: { background_runs: { gte: 1 } } }, action: { decision: "defer" } }],
      },
      { stateStore: down, onerror: () => {} },
    );
    const d = await composeHandlers(idle).typed!.idle!({ reason: "x" } as never, ev("idle", { reason: "x" }), {} as never);
    expect(decisionOf(d)).not.toBe("allow");
  });

  it("records a fall-through handler's decision after it answers, and its failures", async () => {
    const clock = fakeClock();
    const store = new MemoryStateStore({ clock: clock.now });
    const engine = new PolicyEngine(
      {
        version: 1,
        rules: [
          {
            id: "quota",
            events: "pre_action",
            match: { session: { actions: { gte: 2 } } },
            action: { decision: "block", reason: "quota" },
          },
        ],
      },
      { clock: clock.now, stateStore: store },
    );
    let answer: unknown = { decision: "allow" };
    const h = composeHandlers(engine, {
      onEvent: () => {
        if (answer instanceof Error) throw answer;
        return answer as never;
      },
    });
    expect(decisionOf(await h.onEvent!(bash("a"), {} as never))).toBe("allow");
    answer = new Error("handler broke");
    await expect(h.onEvent!(bash("b"), {} as never)).rejects.toThrow("handler broke");
    answer = { decision: "allow" };
    expect(decisionOf(await h.onEvent!(bash("c"), {} as never))).toBe("allow");
    // Two allowed actions counted (the failed one is not): the quota blocks the next.
    expect(decisionOf(await h.onEvent!(bash("d"), {} as never))).toBe("block");
  });
});

/** Specialized points: defaults, typed decisions, payload decoding and member defaults (spec §7, §11.4; §17 items 45–49). */
import { ALLOW, SESSION, area, err, event, eventRequest, ok, request, text } from "../dsl.js";
import { typedDecision } from "../profile.js";

const { cases, simple } = area("typed");

const notSupported = (label: string) => `Handler error: Capability not supported: ${label} not supported`;
const SERIALIZATION = "Handler error: Serialization error:";
const target = { location: { path: "src", location_type: "directory" } };
const perception = (intent: string, extra: Record<string, unknown> = {}) => ({
  session_id: SESSION,
  intent,
  target,
  context: { workspace: "/home/dev/project" },
  ...extra,
});

// ---------------------------------------------------------------- defaults (no table row)

simple("idle.default-allow", {
  title: 'idle with a valid payload and no matching row -> {"decision":"allow"} (the default); optional members may be given',
  checklist: [45],
  spec: ["§7.1", "§7.9"],
  send: [
    eventRequest("idle-1", "idle", { idle_duration_ms: 60000, idle_reason: "no input" }),
    eventRequest("idle-2", "idle", {
      idle_duration_ms: 0,
      idle_reason: "waiting",
      last_event_type: "post_action",
      suggested_action: "dream",
    }),
  ],
  expect: [ok("idle-1", ALLOW), ok("idle-2", ALLOW)],
});

/** The fail-closed decision of each point (this implementation's `handlerFailure: "decision"`). */
const FAIL_CLOSED: Record<string, string> = { rate_limit: "skip", confirmation: "reject" };
const defaults: Array<[string, string, unknown]> = [
  ["context_perception", "Context perception", perception("track")],
  [
    "memory_recall",
    "Memory recall",
    { session_id: SESSION, query: "deploy steps", memory_type: "episodic", max_results: 5, working_directory: "/w" },
  ],
  ["planning", "Planning", { session_id: SESSION, task_description: "plan a release", available_strategies: ["step_by_step"] }],
  ["reasoning", "Reasoning", { session_id: SESSION, reasoning_type: "chain_of_thought", problem_statement: "why does the build fail" }],
  [
    "rate_limit",
    "Rate limit decisions",
    { session_id: SESSION, limit_type: "tool_execution_limit", retry_after_ms: 1000, current_usage: "95%" },
  ],
  ["confirmation", "Confirmation", { session_id: SESSION, confirmation_type: { custom: "legal_confirm" }, message: "sign?" }],
  ["intent_detection", "Intent detection", { session_id: SESSION, prompt: "what is this?", workspace: "/w" }],
];
simple("defaults-not-supported", {
  title:
    "The 7 points other than idle with a valid payload and no matching row -> -32603 Handler error: Capability not supported: <Point> not supported",
  checklist: [47, 48],
  spec: ["§7.9"],
  send: defaults.map(([type, , payload]) => eventRequest(`def-${type}`, type, payload)),
  outcomes: [
    {
      name: "reference",
      note: "§7.9: a point without a handler is answered with its Capability not supported error",
      expect: defaults.map(([type, label]) => err(`def-${type}`, -32603, notSupported(label))),
    },
    {
      name: "fail-closed",
      note: 'not in the specification: a harness that answers every handler failure with the point\'s fail-closed decision (block, or reject/skip) carrying the error text as reason — ahp serve does (handlerFailure: "decision"), so that an agent treating errors as allow still stops',
      expect: defaults.map(([type, label]) => ok(`def-${type}`, { decision: FAIL_CLOSED[type] ?? "block", reason: notSupported(label) })),
    },
  ],
});

// ---------------------------------------------------------------- typed decisions

simple("idle.defer", {
  title: "idle -> defer with a reason (an IdleDecision defer needs no retry_after_ms)",
  checklist: [49],
  spec: ["§7.1"],
  send: [eventRequest("idle-defer", "idle", { idle_duration_ms: 3600000, idle_reason: "nightly" })],
  expect: [ok("idle-defer", typedDecision("idle-nightly"))],
});

simple("intent_detection.decisions", {
  title: "intent_detection -> allow with detected_intent, confidence (f32: compare within 1e-6) and target_hints; block with a reason",
  checklist: [49],
  spec: ["§7.2", "§3.9"],
  send: [
    eventRequest("intent-allow", "intent_detection", {
      session_id: SESSION,
      prompt: "review src/server.ts",
      workspace: "/w",
      language_hint: "en",
    }),
    eventRequest("intent-block", "intent_detection", { session_id: SESSION, prompt: "classify locally", workspace: "/w" }),
  ],
  expect: [
    ok("intent-allow", { ...typedDecision("intent-review"), confidence: { $approx: 0.82 } }),
    ok("intent-block", typedDecision("intent-local")),
  ],
});

const explore = typedDecision("perception-explore") as { injected_context: { facts: object[]; file_contents: object[] } };
simple("context_perception.decisions", {
  title:
    "context_perception -> allow with injected_context (f32 scores within 1e-6); refine with scope_hints (refined_intent/refined_target absent or null)",
  checklist: [49],
  spec: ["§7.3", "§14"],
  send: [
    eventRequest("cp-allow", "context_perception", perception("explore")),
    eventRequest("cp-refine", "context_perception", perception("compare")),
  ],
  expect: [
    ok("cp-allow", {
      decision: "allow",
      injected_context: {
        facts: [{ ...explore.injected_context.facts[0], confidence: { $approx: 0.9 } }],
        file_contents: [{ ...explore.injected_context.file_contents[0], relevance_score: { $approx: 0.7 } }],
      },
      metadata: { rule: "perception-explore" },
    }),
    ok("cp-refine", { decision: "refine", scope_hints: ["src/"], refined_intent: { $nullish: true }, refined_target: { $nullish: true } }),
  ],
});

simple("memory_recall.allow", {
  title: "memory_recall -> allow with injected_facts",
  checklist: [49],
  spec: ["§7.4"],
  send: [
    eventRequest("mem", "memory_recall", {
      session_id: SESSION,
      query: "build flags",
      memory_type: "semantic",
      max_results: 3,
      working_directory: "/w",
    }),
  ],
  expect: [ok("mem", typedDecision("memory-build-flags"))],
});

simple("planning.decisions", {
  title: 'planning -> allow with a custom strategy object {"custom":…}; modify with modified_task and hints',
  checklist: [49],
  spec: ["§7.5"],
  send: [
    eventRequest("plan-allow", "planning", {
      session_id: SESSION,
      task_description: "refactor the parser",
      available_strategies: ["none", "step_by_step", "tree_of_thoughts", "graph_planning", { custom: "mine" }],
      constraints: { budget_minutes: 30 },
    }),
    eventRequest("plan-modify", "planning", { session_id: SESSION, task_description: "rewrite everything", available_strategies: [] }),
  ],
  expect: [ok("plan-allow", typedDecision("planning-parser")), ok("plan-modify", typedDecision("planning-rewrite"))],
});

simple("reasoning.allow", {
  title: "reasoning (re_act) -> allow with hints",
  checklist: [49],
  spec: ["§7.6"],
  send: [
    eventRequest("reason", "reasoning", {
      session_id: SESSION,
      reasoning_type: "re_act",
      problem_statement: "flaky test",
      hints: ["look at timing"],
    }),
  ],
  expect: [ok("reason", typedDecision("reasoning-re-act"))],
});

simple("rate_limit.decisions", {
  title: "rate_limit -> retry with retry_after_ms; queue (a bare tag); skip with a reason for a custom limit type",
  checklist: [49],
  spec: ["§7.7"],
  send: [
    eventRequest("rl-retry", "rate_limit", {
      session_id: SESSION,
      limit_type: "llm_token_limit",
      retry_after_ms: 1200,
      current_usage: "100%",
    }),
    eventRequest("rl-queue", "rate_limit", {
      session_id: SESSION,
      limit_type: "api_request_limit",
      retry_after_ms: 0,
      current_usage: "60/60",
    }),
    eventRequest("rl-skip", "rate_limit", {
      session_id: SESSION,
      limit_type: { custom: "gpu" },
      retry_after_ms: 5000,
      current_usage: "8/8",
    }),
  ],
  expect: [
    ok("rl-retry", typedDecision("rate-tokens")),
    ok("rl-queue", typedDecision("rate-api")),
    ok("rl-skip", typedDecision("rate-gpu")),
  ],
});

simple("confirmation.decisions", {
  title: "confirmation -> escalate and approve (bare tags); reject with a reason",
  checklist: [49],
  spec: ["§7.8"],
  send: [
    eventRequest("cf-escalate", "confirmation", { session_id: SESSION, confirmation_type: "safety_confirm", message: "delete build/?" }),
    eventRequest("cf-approve", "confirmation", {
      session_id: SESSION,
      confirmation_type: "user_confirm",
      message: "continue?",
      options: ["yes", "no"],
    }),
    eventRequest("cf-reject", "confirmation", { session_id: SESSION, confirmation_type: "cost_confirm", message: "spend $40?" }),
  ],
  expect: [
    ok("cf-escalate", typedDecision("confirm-safety")),
    ok("cf-approve", typedDecision("confirm-user")),
    ok("cf-reject", typedDecision("confirm-cost")),
  ],
});

// ---------------------------------------------------------------- payload decoding at dispatch

simple("idle.bad-payload", {
  title: "idle without idle_duration_ms, or with a fraction -> -32603 Handler error: Serialization error:",
  checklist: [46],
  spec: ["§7.1", "§11.3", "§14"],
  send: [
    eventRequest("idle-bad-1", "idle", { idle_reason: "no input" }),
    eventRequest("idle-bad-2", "idle", { idle_duration_ms: 1.5, idle_reason: "x" }),
    eventRequest("idle-bad-3", "idle", null),
  ],
  expect: [
    err("idle-bad-1", -32603, { prefix: SERIALIZATION, contains: ["idle_duration_ms"] }),
    err("idle-bad-2", -32603, { prefix: SERIALIZATION }),
    err("idle-bad-3", -32603, { prefix: SERIALIZATION }),
  ],
});

simple("enumerations", {
  title:
    'Enumerations are exact: react (not re_act), a bare "custom", a custom object with two members, an unknown intent -> -32603 Handler error: Serialization error:',
  checklist: [46],
  spec: ["§7", "§7.5", "§7.6", "§16"],
  send: [
    eventRequest("en-1", "reasoning", { session_id: SESSION, reasoning_type: "react", problem_statement: "x" }),
    eventRequest("en-2", "planning", { session_id: SESSION, task_description: "x", available_strategies: ["custom"] }),
    eventRequest("en-3", "rate_limit", {
      session_id: SESSION,
      limit_type: { custom: "a", other: "b" },
      retry_after_ms: 1,
      current_usage: "x",
    }),
    eventRequest("en-4", "context_perception", perception("Explore")),
    eventRequest("en-5", "confirmation", { session_id: SESSION, confirmation_type: "SafetyConfirm", message: "x" }),
  ],
  expect: ["en-1", "en-2", "en-3", "en-4", "en-5"].map((id) => err(id, -32603, { prefix: SERIALIZATION })),
});

simple("context_perception.member-defaults", {
  title:
    "context_perception: dflt members may be absent (minimal payload), but an explicit null is rejected; PerceptionTarget has exactly one kind",
  checklist: [46],
  spec: ["§0", "§7.3", "§14"],
  send: [
    eventRequest("cpd-minimal", "context_perception", perception("explore")),
    eventRequest("cpd-explicit", "context_perception", {
      ...perception("explore"),
      domain: "general",
      preferred_modality: "any",
      urgency: "normal",
      freshness: "static",
      constraints: { max_results: null, max_context_length: null, include_sources: true },
    }),
    eventRequest("cpd-constraints-null", "context_perception", { ...perception("explore"), constraints: null }),
    eventRequest("cpd-domain-null", "context_perception", { ...perception("explore"), domain: null }),
    eventRequest("cpd-two-targets", "context_perception", {
      ...perception("explore"),
      target: { ...target, entity: { name: "f", entity_type: "function" } },
    }),
    eventRequest("cpd-target-string", "context_perception", { ...perception("explore"), target: "location" }),
  ],
  expect: [
    ok("cpd-minimal", { ...okExplore() }),
    ok("cpd-explicit", { ...okExplore() }),
    err("cpd-constraints-null", -32603, { prefix: SERIALIZATION }),
    err("cpd-domain-null", -32603, { prefix: SERIALIZATION }),
    err("cpd-two-targets", -32603, { prefix: SERIALIZATION }),
    err("cpd-target-string", -32603, { prefix: SERIALIZATION }),
  ],
});

function okExplore(): Record<string, unknown> {
  return {
    decision: "allow",
    injected_context: {
      facts: [{ ...explore.injected_context.facts[0], confidence: { $approx: 0.9 } }],
      file_contents: [{ ...explore.injected_context.file_contents[0], relevance_score: { $approx: 0.7 } }],
    },
    metadata: { rule: "perception-explore" },
  };
}

simple("rate_limit.u64-beyond-javascript", {
  title:
    "retry_after_ms 9007199254740993 (a u64 above 2^53): decoded by a 64-bit harness, refused by one limited to JavaScript's safe integers",
  spec: ["§0", "§3.9"],
  // Raw text: the literal must reach the harness digit for digit (a JavaScript number cannot hold it).
  send: [
    text(
      JSON.stringify(
        request(
          "u64",
          "ahp/event",
          event("rate_limit", { session_id: SESSION, limit_type: "llm_token_limit", retry_after_ms: 0, current_usage: "x" }),
        ),
      ).replace('"retry_after_ms":0', '"retry_after_ms":9007199254740993'),
    ),
  ],
  outcomes: [
    { name: "reference", note: "§0: uint is a 64-bit integer; the payload decodes", expect: [ok("u64", typedDecision("rate-tokens"))] },
    {
      name: "safe-integer",
      note: "a harness whose JSON numbers are IEEE doubles (JavaScript) cannot hold the value exactly and refuses it (this implementation; docs/adr/0060)",
      expect: [err("u64", -32603, { prefix: SERIALIZATION })],
    },
  ],
});

export default cases;

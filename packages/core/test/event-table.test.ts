import { describe, expect, it } from "vitest";
import {
  AHP_SCHEMA_TYPES,
  BATCHABLE_EVENT_TYPES,
  BLOCKING_EVENT_TYPES,
  EVENT_TABLE,
  EVENT_TYPES,
  isBatchableEventType,
  isBlockingEventType,
  isEventType,
  NON_BLOCKING_EVENT_TYPES,
  RUN_CONTRACT_EVENT_TYPES,
  SPECIALIZED_EVENT_TYPES,
  type EventType,
} from "../src/index.js";

/** Spec §5.1, row by row: blocking, result shape, batchable, server validates payload. */
const SPEC_5_1: ReadonlyArray<[EventType, boolean, string | undefined, boolean, "none" | "shape" | "dispatch", string | undefined]> = [
  ["handshake", true, "Decision", false, "none", undefined],
  ["pre_action", true, "Decision", true, "none", undefined],
  ["post_action", false, undefined, true, "none", undefined],
  ["pre_prompt", true, "Decision", true, "none", undefined],
  ["post_response", false, undefined, true, "none", undefined],
  ["session_start", false, undefined, true, "none", undefined],
  ["session_end", false, undefined, true, "none", undefined],
  ["error", false, undefined, true, "none", undefined],
  ["query", true, "Decision", false, "none", undefined],
  ["heartbeat", false, undefined, true, "none", "HeartbeatEvent"],
  ["idle", true, "IdleDecision", false, "dispatch", "IdleEvent"],
  ["context_perception", true, "ContextPerceptionDecision", false, "dispatch", "ContextPerceptionEvent"],
  ["success", false, undefined, true, "none", "SuccessEvent"],
  ["memory_recall", true, "MemoryRecallDecision", false, "dispatch", "MemoryRecallEvent"],
  ["planning", true, "PlanningDecision", false, "dispatch", "PlanningEvent"],
  ["reasoning", true, "ReasoningDecision", false, "dispatch", "ReasoningEvent"],
  ["rate_limit", true, "RateLimitDecision", false, "dispatch", "RateLimitEvent"],
  ["confirmation", true, "ConfirmationDecision", false, "dispatch", "ConfirmationEvent"],
  ["intent_detection", true, "IntentDetectionDecision", false, "dispatch", "IntentDetectionEvent"],
  ["run_lifecycle", false, undefined, true, "shape", "RunLifecycleEvent"],
  ["task_list", false, undefined, true, "shape", "TaskListEvent"],
  ["verification", false, undefined, true, "shape", "VerificationEvent"],
];

describe("event table (spec §5.1)", () => {
  it("lists the 22 event types in the order of the specification", () => {
    expect(EVENT_TYPES).toEqual(SPEC_5_1.map((row) => row[0]));
    expect(Object.keys(EVENT_TABLE)).toEqual([...EVENT_TYPES]);
  });

  it.each(SPEC_5_1.map((row) => [row[0], row] as const))(
    "%s matches its row",
    (type, [, blocking, decision, batchable, check, payload]) => {
      const info = EVENT_TABLE[type];
      expect(info.type).toBe(type);
      expect(info.blocking).toBe(blocking);
      expect(info.decisionTypeName).toBe(decision);
      expect(info.batchable).toBe(batchable);
      expect(info.payloadCheck).toBe(check);
      expect(info.payloadTypeName).toBe(payload);
      expect(info.specialized).toBe(check === "dispatch");
      // The schemas behind the names are the registered ones.
      if (payload !== undefined) expect(info.payloadSchema).toBe(AHP_SCHEMA_TYPES[payload]);
      else expect(info.payloadSchema).toBeUndefined();
      if (decision !== undefined) expect(info.decisionSchema).toBe(AHP_SCHEMA_TYPES[decision]);
      else expect(info.decisionSchema).toBeUndefined();
    },
  );

  it("derives the sets exactly as §5.1 lists them (12 / 10 / 8 / 12)", () => {
    expect(BLOCKING_EVENT_TYPES).toEqual([
      "handshake",
      "pre_action",
      "pre_prompt",
      "query",
      "idle",
      "context_perception",
      "memory_recall",
      "planning",
      "reasoning",
      "rate_limit",
      "confirmation",
      "intent_detection",
    ]);
    expect(NON_BLOCKING_EVENT_TYPES).toEqual([
      "post_action",
      "post_response",
      "session_start",
      "session_end",
      "error",
      "heartbeat",
      "success",
      "run_lifecycle",
      "task_list",
      "verification",
    ]);
    expect(SPECIALIZED_EVENT_TYPES).toEqual([
      "idle",
      "context_perception",
      "memory_recall",
      "planning",
      "reasoning",
      "rate_limit",
      "confirmation",
      "intent_detection",
    ]);
    expect(BATCHABLE_EVENT_TYPES).toEqual([
      "pre_action",
      "post_action",
      "pre_prompt",
      "post_response",
      "session_start",
      "session_end",
      "error",
      "heartbeat",
      "success",
      "run_lifecycle",
      "task_list",
      "verification",
    ]);
    expect(RUN_CONTRACT_EVENT_TYPES).toEqual(["run_lifecycle", "task_list", "verification"]);
    expect(Object.isFrozen(BLOCKING_EVENT_TYPES)).toBe(true);
  });

  it("batchable = not handshake, not query, not specialized", () => {
    for (const type of EVENT_TYPES) {
      const expected = type !== "handshake" && type !== "query" && !SPECIALIZED_EVENT_TYPES.includes(type);
      expect(isBatchableEventType(type), type).toBe(expected);
      expect(isBlockingEventType(type), type).toBe(BLOCKING_EVENT_TYPES.includes(type));
    }
  });

  it("uses the capability labels of the reference's 'not supported' messages (§7.9)", () => {
    const labels = Object.fromEntries(SPECIALIZED_EVENT_TYPES.map((t) => [t, EVENT_TABLE[t].capabilityLabel]));
    expect(labels).toEqual({
      idle: "Idle",
      context_perception: "Context perception",
      memory_recall: "Memory recall",
      planning: "Planning",
      reasoning: "Reasoning",
      rate_limit: "Rate limit decisions",
      confirmation: "Confirmation",
      intent_detection: "Intent detection",
    });
  });

  it("fail-closed decisions are valid decisions of the event's own type", () => {
    for (const type of BLOCKING_EVENT_TYPES) {
      const info = EVENT_TABLE[type];
      expect(info.failClosed, type).toBeDefined();
      const decision = info.failClosed!("Handler error: boom");
      expect(info.decisionSchema!.safeParse(decision).success, `${type}: ${JSON.stringify(decision)}`).toBe(true);
    }
    expect(EVENT_TABLE.pre_action.failClosed!("r")).toEqual({ decision: "block", reason: "r" });
  });

  it("isEventType accepts exactly the 22 names, case-sensitively", () => {
    for (const type of EVENT_TYPES) expect(isEventType(type)).toBe(true);
    for (const value of ["Pre_Action", "pre_tool_use", "toString", "__proto__", "", 1, null, undefined]) {
      expect(isEventType(value), String(value)).toBe(false);
    }
  });
});

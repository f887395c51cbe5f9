/**
 * Type-level event table: checked by `tsc --noEmit` (the package typecheck includes test/).
 * A wrong mapping is a compile error here.
 */
import { expectTypeOf } from "vitest";
import type {
  BatchableEventType,
  BlockingEventType,
  ConfirmationDecision,
  ContextPerceptionDecision,
  ContextPerceptionEvent,
  Decision,
  DecisionFor,
  DecisionInput,
  DecisionInputFor,
  EventType,
  HeartbeatEvent,
  IdleDecision,
  IdleDecisionInput,
  IdleEvent,
  IntentDetectionDecision,
  MemoryRecallDecision,
  NonBlockingEventType,
  PayloadFor,
  PayloadInputFor,
  PlanningDecision,
  RateLimitDecision,
  ReasoningDecision,
  RunLifecycleEvent,
  SpecializedEventType,
  SuccessEvent,
  TaskListEvent,
  TaskListEventInput,
  VerificationEvent,
} from "../src/index.js";
import { createEvent } from "../src/index.js";

// DecisionFor: typed decisions for the 8 specialized points, the generic Decision for the
// other blocking types, nothing for notifications.
expectTypeOf<DecisionFor<"idle">>().toEqualTypeOf<IdleDecision>();
expectTypeOf<DecisionFor<"context_perception">>().toEqualTypeOf<ContextPerceptionDecision>();
expectTypeOf<DecisionFor<"memory_recall">>().toEqualTypeOf<MemoryRecallDecision>();
expectTypeOf<DecisionFor<"planning">>().toEqualTypeOf<PlanningDecision>();
expectTypeOf<DecisionFor<"reasoning">>().toEqualTypeOf<ReasoningDecision>();
expectTypeOf<DecisionFor<"rate_limit">>().toEqualTypeOf<RateLimitDecision>();
expectTypeOf<DecisionFor<"confirmation">>().toEqualTypeOf<ConfirmationDecision>();
expectTypeOf<DecisionFor<"intent_detection">>().toEqualTypeOf<IntentDetectionDecision>();
expectTypeOf<DecisionFor<"pre_action">>().toEqualTypeOf<Decision>();
expectTypeOf<DecisionFor<"pre_prompt">>().toEqualTypeOf<Decision>();
expectTypeOf<DecisionFor<"handshake">>().toEqualTypeOf<Decision>();
expectTypeOf<DecisionFor<"query">>().toEqualTypeOf<Decision>();
expectTypeOf<DecisionFor<"post_action">>().toEqualTypeOf<undefined>();
expectTypeOf<DecisionFor<"task_list">>().toEqualTypeOf<undefined>();

expectTypeOf<DecisionInputFor<"idle">>().toEqualTypeOf<IdleDecisionInput>();
expectTypeOf<DecisionInputFor<"pre_action">>().toEqualTypeOf<DecisionInput>();
expectTypeOf<DecisionInputFor<"post_action">>().toBeNever();

// A generic Decision is not an IdleDecision: `block` does not exist there.
expectTypeOf<{ decision: "block"; reason: string }>().not.toExtend<IdleDecision>();
expectTypeOf<{ decision: "defer" }>().toExtend<IdleDecisionInput>();
expectTypeOf<{ decision: "defer" }>().not.toExtend<DecisionInput>();

// PayloadFor: typed payloads where the protocol fixes them, unknown where it is free-form.
expectTypeOf<PayloadFor<"idle">>().toEqualTypeOf<IdleEvent>();
expectTypeOf<PayloadFor<"context_perception">>().toEqualTypeOf<ContextPerceptionEvent>();
expectTypeOf<PayloadFor<"run_lifecycle">>().toEqualTypeOf<RunLifecycleEvent>();
expectTypeOf<PayloadFor<"task_list">>().toEqualTypeOf<TaskListEvent>();
expectTypeOf<PayloadFor<"verification">>().toEqualTypeOf<VerificationEvent>();
expectTypeOf<PayloadFor<"heartbeat">>().toEqualTypeOf<HeartbeatEvent>();
expectTypeOf<PayloadFor<"success">>().toEqualTypeOf<SuccessEvent>();
expectTypeOf<PayloadFor<"pre_action">>().toEqualTypeOf<unknown>();
expectTypeOf<PayloadInputFor<"task_list">>().toEqualTypeOf<TaskListEventInput>();

// Parsed form: list0 members are always present; input form: they may be left out.
expectTypeOf<TaskListEvent["tasks"][number]["depends_on"]>().toEqualTypeOf<string[]>();
expectTypeOf<{ id: string; title: string; status: "pending" }>().toExtend<TaskListEventInput["tasks"][number]>();

// The derived unions partition the 22 event types.
expectTypeOf<BlockingEventType | NonBlockingEventType>().toEqualTypeOf<EventType>();
expectTypeOf<Extract<BlockingEventType, NonBlockingEventType>>().toBeNever();
expectTypeOf<Extract<BatchableEventType, SpecializedEventType | "handshake" | "query">>().toBeNever();
expectTypeOf<SpecializedEventType>().toEqualTypeOf<
  "idle" | "context_perception" | "memory_recall" | "planning" | "reasoning" | "rate_limit" | "confirmation" | "intent_detection"
>();

// The builders check payloads per event type.
createEvent("idle", { idle_duration_ms: 1, idle_reason: "quiet" }, { sessionId: "s", agentId: "a" });
// @ts-expect-error idle_reason is required in an idle payload
createEvent("idle", { idle_duration_ms: 1 }, { sessionId: "s", agentId: "a" });
createEvent(
  "task_list",
  { run_id: "r", session_id: "s", updated_at: "u", tasks: [{ id: "t", title: "x", status: "in_progress" }] },
  { sessionId: "s", agentId: "a" },
);
createEvent(
  "task_list",
  // @ts-expect-error "InProgress" is not a task status
  { run_id: "r", session_id: "s", updated_at: "u", tasks: [{ id: "t", title: "x", status: "InProgress" }] },
  { sessionId: "s", agentId: "a" },
);

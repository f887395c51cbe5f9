/**
 * The event table (spec §5.1) as data: for every event type, whether it is blocking, whether
 * it may travel in `ahp/batch`, which payload schema applies and when the server checks it,
 * and which decision schema answers it. Clients, servers, builders, policies and the schema
 * generator all read this one table.
 */
import type { z } from "zod";
import { DecisionSchema, type Decision, type DecisionInput } from "./schema/decision.js";
import { EVENT_TYPES, type EventType } from "./schema/event.js";
import { HeartbeatEventSchema, SuccessEventSchema, type HeartbeatEvent, type SuccessEvent } from "./schema/informative.js";
import {
  RunLifecycleEventSchema,
  TaskListEventSchema,
  VerificationEventSchema,
  type RunLifecycleEvent,
  type RunLifecycleEventInput,
  type TaskListEvent,
  type TaskListEventInput,
  type VerificationEvent,
  type VerificationEventInput,
} from "./schema/run-contracts.js";
import {
  ConfirmationDecisionSchema,
  ConfirmationEventSchema,
  ContextPerceptionDecisionSchema,
  ContextPerceptionEventSchema,
  IdleDecisionSchema,
  IdleEventSchema,
  IntentDetectionDecisionSchema,
  IntentDetectionEventSchema,
  MemoryRecallDecisionSchema,
  MemoryRecallEventSchema,
  PlanningDecisionSchema,
  PlanningEventSchema,
  RateLimitDecisionSchema,
  RateLimitEventSchema,
  ReasoningDecisionSchema,
  ReasoningEventSchema,
  type ConfirmationDecision,
  type ConfirmationDecisionInput,
  type ConfirmationEvent,
  type ContextPerceptionDecision,
  type ContextPerceptionDecisionInput,
  type ContextPerceptionEvent,
  type IdleDecision,
  type IdleDecisionInput,
  type IdleEvent,
  type IntentDetectionDecision,
  type IntentDetectionDecisionInput,
  type IntentDetectionEvent,
  type MemoryRecallDecision,
  type MemoryRecallDecisionInput,
  type MemoryRecallEvent,
  type PlanningDecision,
  type PlanningDecisionInput,
  type PlanningEvent,
  type RateLimitDecision,
  type RateLimitDecisionInput,
  type RateLimitEvent,
  type ReasoningDecision,
  type ReasoningDecisionInput,
  type ReasoningEvent,
} from "./schema/typed.js";

/**
 * When the server decodes the payload:
 * - `none`: never (free-form, or informative only);
 * - `shape`: before the request/notification check, error -32602 `Invalid event: Serialization error: …`;
 * - `dispatch`: when the typed handler is called, error -32603 `Handler error: Serialization error: …`.
 */
export type PayloadCheck = "none" | "shape" | "dispatch";

/**
 * One row of {@link EVENT_TABLE}: how an event type travels, which schemas apply to its payload and its answer, and what a
 * fail-closed harness answers.
 */
export interface EventTypeInfo {
  readonly type: EventType;
  /** Blocking types travel as requests and get a decision; the others travel as notifications. */
  readonly blocking: boolean;
  /** May appear in `ahp/batch` (answered by the generic handler with a generic Decision). */
  readonly batchable: boolean;
  /** Answered by a typed decision and a typed handler (the 8 specialized points). */
  readonly specialized: boolean;
  readonly payloadCheck: PayloadCheck;
  /** Payload schema, for `shape`/`dispatch` checks and for informative shapes (heartbeat, success). */
  readonly payloadSchema?: z.ZodType;
  /** JSON Schema `$defs` name of the payload type, when one is defined. */
  readonly payloadTypeName?: string;
  /** Schema of the result for blocking types. */
  readonly decisionSchema?: z.ZodType;
  /** JSON Schema `$defs` name of the result type. */
  readonly decisionTypeName?: string;
  /** Human label used in the reference's "not supported" messages (spec §7.9). */
  readonly capabilityLabel?: string;
  /** The decision a fail-closed harness answers when the handler fails (this implementation, opt-in). */
  readonly failClosed?: (reason: string) => unknown;
}

const generic = (type: EventType, blocking: boolean, batchable = true): EventTypeInfo => ({
  type,
  blocking,
  batchable,
  specialized: false,
  payloadCheck: "none",
  ...(blocking
    ? { decisionSchema: DecisionSchema, decisionTypeName: "Decision", failClosed: (reason: string) => ({ decision: "block", reason }) }
    : {}),
});

const contract = (type: EventType, schema: z.ZodType, name: string): EventTypeInfo => ({
  type,
  blocking: false,
  batchable: true,
  specialized: false,
  payloadCheck: "shape",
  payloadSchema: schema,
  payloadTypeName: name,
});

const specialized = (
  type: EventType,
  payloadSchema: z.ZodType,
  payloadTypeName: string,
  decisionSchema: z.ZodType,
  decisionTypeName: string,
  capabilityLabel: string,
  failClosed: (reason: string) => unknown,
): EventTypeInfo => ({
  type,
  blocking: true,
  batchable: false,
  specialized: true,
  payloadCheck: "dispatch",
  payloadSchema,
  payloadTypeName,
  decisionSchema,
  decisionTypeName,
  capabilityLabel,
  failClosed,
});

const block = (reason: string) => ({ decision: "block", reason });

/**
 * Facts about each of the 22 event types (spec §5.1): blocking, batchable, specialized, payload and decision schemas, when the
 * server checks the payload, and the fail-closed decision.
 */
export const EVENT_TABLE: { readonly [T in EventType]: EventTypeInfo } = {
  handshake: { ...generic("handshake", true, false) },
  pre_action: generic("pre_action", true),
  post_action: generic("post_action", false),
  pre_prompt: generic("pre_prompt", true),
  post_response: generic("post_response", false),
  session_start: generic("session_start", false),
  session_end: generic("session_end", false),
  error: generic("error", false),
  query: { ...generic("query", true, false) },
  heartbeat: { ...generic("heartbeat", false), payloadSchema: HeartbeatEventSchema, payloadTypeName: "HeartbeatEvent" },
  idle: specialized("idle", IdleEventSchema, "IdleEvent", IdleDecisionSchema, "IdleDecision", "Idle", (reason) => ({
    decision: "defer",
    reason,
  })),
  context_perception: specialized(
    "context_perception",
    ContextPerceptionEventSchema,
    "ContextPerceptionEvent",
    ContextPerceptionDecisionSchema,
    "ContextPerceptionDecision",
    "Context perception",
    block,
  ),
  success: { ...generic("success", false), payloadSchema: SuccessEventSchema, payloadTypeName: "SuccessEvent" },
  memory_recall: specialized(
    "memory_recall",
    MemoryRecallEventSchema,
    "MemoryRecallEvent",
    MemoryRecallDecisionSchema,
    "MemoryRecallDecision",
    "Memory recall",
    block,
  ),
  planning: specialized("planning", PlanningEventSchema, "PlanningEvent", PlanningDecisionSchema, "PlanningDecision", "Planning", block),
  reasoning: specialized(
    "reasoning",
    ReasoningEventSchema,
    "ReasoningEvent",
    ReasoningDecisionSchema,
    "ReasoningDecision",
    "Reasoning",
    block,
  ),
  rate_limit: specialized(
    "rate_limit",
    RateLimitEventSchema,
    "RateLimitEvent",
    RateLimitDecisionSchema,
    "RateLimitDecision",
    "Rate limit decisions",
    (reason) => ({ decision: "skip", reason }),
  ),
  confirmation: specialized(
    "confirmation",
    ConfirmationEventSchema,
    "ConfirmationEvent",
    ConfirmationDecisionSchema,
    "ConfirmationDecision",
    "Confirmation",
    (reason) => ({ decision: "reject", reason }),
  ),
  intent_detection: specialized(
    "intent_detection",
    IntentDetectionEventSchema,
    "IntentDetectionEvent",
    IntentDetectionDecisionSchema,
    "IntentDetectionDecision",
    "Intent detection",
    block,
  ),
  run_lifecycle: contract("run_lifecycle", RunLifecycleEventSchema, "RunLifecycleEvent"),
  task_list: contract("task_list", TaskListEventSchema, "TaskListEvent"),
  verification: contract("verification", VerificationEventSchema, "VerificationEvent"),
};

const where = (pred: (info: EventTypeInfo) => boolean): readonly EventType[] =>
  Object.freeze(EVENT_TYPES.filter((t) => pred(EVENT_TABLE[t])));

/** The 12 blocking event types (spec §5.1), in spec order: sent as requests and answered with a decision. */
export const BLOCKING_EVENT_TYPES = where((i) => i.blocking);
/** The 10 non-blocking event types (spec §5.1), in spec order: sent as notifications and never answered. */
export const NON_BLOCKING_EVENT_TYPES = where((i) => !i.blocking);
/** The eight specialized event types (spec §7), answered by a typed decision from a typed handler instead of the generic Decision. */
export const SPECIALIZED_EVENT_TYPES = where((i) => i.specialized);
/** The 12 event types allowed in `ahp/batch` (spec §5.1): all but `handshake`, `query` and the eight specialized types. */
export const BATCHABLE_EVENT_TYPES = where((i) => i.batchable);
/**
 * The run-contract event types `run_lifecycle`, `task_list` and `verification` (spec §8), whose payload shape the server checks on
 * arrival.
 */
export const RUN_CONTRACT_EVENT_TYPES = where((i) => i.payloadCheck === "shape");

/** Type guard: true when `value` is one of the 22 event type names (exact, case sensitive). */
export const isEventType = (value: unknown): value is EventType =>
  typeof value === "string" && Object.prototype.hasOwnProperty.call(EVENT_TABLE, value);
/** True when `type` is blocking: it travels as a request and is answered with a decision (spec §5.1). */
export const isBlockingEventType = (type: EventType): boolean => EVENT_TABLE[type].blocking;
/** True when events of `type` may travel inside `ahp/batch` (spec §5.1). */
export const isBatchableEventType = (type: EventType): boolean => EVENT_TABLE[type].batchable;

// ---------------------------------------------------------------- type-level table

type SpecializedMap = {
  idle: [IdleEvent, IdleDecision, IdleDecisionInput, z.input<typeof IdleEventSchema>];
  context_perception: [
    ContextPerceptionEvent,
    ContextPerceptionDecision,
    ContextPerceptionDecisionInput,
    z.input<typeof ContextPerceptionEventSchema>,
  ];
  memory_recall: [MemoryRecallEvent, MemoryRecallDecision, MemoryRecallDecisionInput, z.input<typeof MemoryRecallEventSchema>];
  planning: [PlanningEvent, PlanningDecision, PlanningDecisionInput, z.input<typeof PlanningEventSchema>];
  reasoning: [ReasoningEvent, ReasoningDecision, ReasoningDecisionInput, z.input<typeof ReasoningEventSchema>];
  rate_limit: [RateLimitEvent, RateLimitDecision, RateLimitDecisionInput, z.input<typeof RateLimitEventSchema>];
  confirmation: [ConfirmationEvent, ConfirmationDecision, ConfirmationDecisionInput, z.input<typeof ConfirmationEventSchema>];
  intent_detection: [
    IntentDetectionEvent,
    IntentDetectionDecision,
    IntentDetectionDecisionInput,
    z.input<typeof IntentDetectionEventSchema>,
  ];
};
/** The eight specialized event types (spec §7) as a type; see {@link SPECIALIZED_EVENT_TYPES}. */
export type SpecializedEventType = keyof SpecializedMap;
/** The blocking event types answered with a generic Decision: `handshake`, `pre_action`, `pre_prompt`, `query`. */
export type GenericBlockingEventType = "handshake" | "pre_action" | "pre_prompt" | "query";
/** The blocking event types as a type: the four generic ones and the eight specialized ones (spec §5.1). */
export type BlockingEventType = GenericBlockingEventType | SpecializedEventType;
/** The non-blocking event types as a type (spec §5.1); see {@link NON_BLOCKING_EVENT_TYPES}. */
export type NonBlockingEventType = Exclude<EventType, BlockingEventType>;
/** The event types allowed in `ahp/batch` as a type (spec §5.1); see {@link BATCHABLE_EVENT_TYPES}. */
export type BatchableEventType = Exclude<EventType, SpecializedEventType | "handshake" | "query">;

/** Payload type of each event type (parsed form); `unknown` where the protocol leaves it free. */
export type PayloadFor<T extends EventType> = T extends SpecializedEventType
  ? SpecializedMap[T][0]
  : T extends "run_lifecycle"
    ? RunLifecycleEvent
    : T extends "task_list"
      ? TaskListEvent
      : T extends "verification"
        ? VerificationEvent
        : T extends "heartbeat"
          ? HeartbeatEvent
          : T extends "success"
            ? SuccessEvent
            : unknown;

/** Payload type accepted by the builders (input form: defaulted members may be left out). */
export type PayloadInputFor<T extends EventType> = T extends SpecializedEventType
  ? SpecializedMap[T][3]
  : T extends "run_lifecycle"
    ? RunLifecycleEventInput
    : T extends "task_list"
      ? TaskListEventInput
      : T extends "verification"
        ? VerificationEventInput
        : PayloadFor<T>;

/** What a blocking event returns (parsed form); `undefined` for non-blocking types. */
export type DecisionFor<T extends EventType> = T extends SpecializedEventType
  ? SpecializedMap[T][1]
  : T extends GenericBlockingEventType
    ? Decision
    : undefined;

/** What a handler may return for a blocking event (input form). */
export type DecisionInputFor<T extends EventType> = T extends SpecializedEventType
  ? SpecializedMap[T][2]
  : T extends GenericBlockingEventType
    ? DecisionInput
    : never;

/**
 * Every named AHP wire type, under the name the specification uses. The JSON Schema bundle
 * (`schemas/ahp.schema.json`) is generated from this list; nothing else registers ids.
 */
import type { z } from "zod";
import * as auth from "./auth.js";
import * as common from "./common.js";
import * as context from "./context.js";
import * as decision from "./decision.js";
import * as event from "./event.js";
import * as informative from "./informative.js";
import * as jsonrpc from "./jsonrpc.js";
import * as methods from "./methods.js";
import * as run from "./run-contracts.js";
import * as typed from "./typed.js";

/** Every named AHP wire type (zod), keyed by the specification's names; `schemas/ahp.schema.json` is generated from it. */
export const AHP_SCHEMA_TYPES: Readonly<Record<string, z.ZodType>> = Object.freeze({
  // JSON-RPC envelope
  JsonRpcId: jsonrpc.JsonRpcIdSchema,
  JsonRpcRequest: jsonrpc.JsonRpcRequestSchema,
  JsonRpcNotification: jsonrpc.JsonRpcNotificationSchema,
  JsonRpcErrorObject: jsonrpc.JsonRpcErrorObjectSchema,
  JsonRpcSuccessResponse: jsonrpc.JsonRpcSuccessResponseSchema,
  JsonRpcErrorResponse: jsonrpc.JsonRpcErrorResponseSchema,
  JsonRpcResponse: jsonrpc.JsonRpcResponseSchema,
  JsonRpcMessage: jsonrpc.JsonRpcMessageSchema,
  // methods
  AgentInfo: methods.AgentInfoSchema,
  HarnessInfo: methods.HarnessInfoSchema,
  HarnessConfig: methods.HarnessConfigSchema,
  HandshakeRequest: methods.HandshakeRequestSchema,
  HandshakeResponse: methods.HandshakeResponseSchema,
  QueryRequest: methods.QueryRequestSchema,
  QueryResponse: methods.QueryResponseSchema,
  BatchRequest: methods.BatchRequestSchema,
  BatchResponse: methods.BatchResponseSchema,
  // events
  EventType: event.EventTypeSchema,
  AhpEvent: event.AhpEventSchema,
  EventContext: context.EventContextSchema,
  Fact: context.FactSchema,
  MemorySummary: context.MemorySummarySchema,
  SessionStats: context.SessionStatsSchema,
  // generic decision
  Decision: decision.DecisionSchema,
  // specialized points
  IdleEvent: typed.IdleEventSchema,
  IdleDecision: typed.IdleDecisionSchema,
  IntentDetectionEvent: typed.IntentDetectionEventSchema,
  TargetHints: typed.TargetHintsSchema,
  IntentDetectionDecision: typed.IntentDetectionDecisionSchema,
  PerceptionIntent: typed.PerceptionIntentSchema,
  PerceptionDomain: typed.PerceptionDomainSchema,
  PerceptionModality: typed.PerceptionModalitySchema,
  PerceptionUrgency: typed.PerceptionUrgencySchema,
  PerceptionFreshness: typed.PerceptionFreshnessSchema,
  PerceptionTarget: typed.PerceptionTargetSchema,
  TimeRange: typed.TimeRangeSchema,
  HistoryItem: typed.HistoryItemSchema,
  PerceptionContext: typed.PerceptionContextSchema,
  PerceptionConstraints: typed.PerceptionConstraintsSchema,
  ContextPerceptionEvent: typed.ContextPerceptionEventSchema,
  FileContentSnippet: typed.FileContentSnippetSchema,
  ProjectSummary: typed.ProjectSummarySchema,
  InjectedContext: typed.InjectedContextSchema,
  ContextPerceptionDecision: typed.ContextPerceptionDecisionSchema,
  MemoryRecallEvent: typed.MemoryRecallEventSchema,
  MemoryRecallDecision: typed.MemoryRecallDecisionSchema,
  PlanningStrategy: typed.PlanningStrategySchema,
  PlanningEvent: typed.PlanningEventSchema,
  PlanningDecision: typed.PlanningDecisionSchema,
  ReasoningType: typed.ReasoningTypeSchema,
  ReasoningEvent: typed.ReasoningEventSchema,
  ReasoningDecision: typed.ReasoningDecisionSchema,
  RateLimitType: typed.RateLimitTypeSchema,
  RateLimitEvent: typed.RateLimitEventSchema,
  RateLimitDecision: typed.RateLimitDecisionSchema,
  ConfirmationType: typed.ConfirmationTypeSchema,
  ConfirmationEvent: typed.ConfirmationEventSchema,
  ConfirmationDecision: typed.ConfirmationDecisionSchema,
  // run contracts
  RunStatus: run.RunStatusSchema,
  TaskStatus: run.TaskStatusSchema,
  VerificationStatus: run.VerificationStatusSchema,
  ArtifactRef: run.ArtifactRefSchema,
  EvidenceRef: run.EvidenceRefSchema,
  RunLifecycleEvent: run.RunLifecycleEventSchema,
  TaskItem: run.TaskItemSchema,
  TaskListEvent: run.TaskListEventSchema,
  VerificationCheck: run.VerificationCheckSchema,
  VerificationEvent: run.VerificationEventSchema,
  // informative payloads
  HeartbeatEvent: informative.HeartbeatEventSchema,
  SuccessEvent: informative.SuccessEventSchema,
  // configuration
  AuthConfig: auth.AuthConfigSchema,
  // integer kinds (spec §0); their exact bounds are applied by the generator from INTEGER_WIDTHS
  U64: common.U64Schema,
  U32: common.U32Schema,
  I32: common.I32Schema,
  I64: common.I64Schema,
});

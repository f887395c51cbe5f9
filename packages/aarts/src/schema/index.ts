/**
 * Every named AARTS wire type, under the name the adapter specification uses. The JSON Schema
 * bundle `schemas/aarts.schema.json` is generated from this list.
 */
import type { z } from "zod";
import * as m from "./model.js";

export * from "./model.js";

/** The named AARTS wire types (zod), keyed by the specification's names; `schemas/aarts.schema.json` is generated from it. */
export const AARTS_SCHEMA_TYPES: Readonly<Record<string, z.ZodType>> = Object.freeze({
  // enumerations and scalars
  HookPoint: m.HookPointSchema,
  CanonicalToolName: m.CanonicalToolNameSchema,
  HostId: m.HostIdSchema,
  Timestamp: m.Rfc3339Schema,
  Locale: m.LocaleSchema,
  TrustSourceKind: m.TrustSourceKindSchema,
  ConfigSource: m.ConfigSourceSchema,
  ArtifactType: m.ArtifactTypeSchema,
  Resolution: m.ResolutionSchema,
  Severity: m.SeveritySchema,
  VerdictDecision: m.VerdictDecisionSchema,
  // version check
  VersionCheckRequest: m.VersionCheckRequestSchema,
  VersionCheckResponse: m.VersionCheckResponseSchema,
  // envelope and extensions
  Envelope: m.EnvelopeSchema,
  TurnExtension: m.TurnExtensionSchema,
  ToolContextExtension: m.ToolContextExtensionSchema,
  TrustSourceExtension: m.TrustSourceExtensionSchema,
  ModificationExtension: m.ModificationExtensionSchema,
  ProvenanceExtension: m.ProvenanceExtensionSchema,
  ModifierEntry: m.ModifierEntrySchema,
  // item shapes
  PluginInfo: m.PluginInfoSchema,
  ConfigurationSource: m.ConfigurationSourceSchema,
  EnvironmentInfo: m.EnvironmentInfoSchema,
  SessionSummary: m.SessionSummarySchema,
  DeclaredHook: m.DeclaredHookSchema,
  CustomInstruction: m.CustomInstructionSchema,
  ContextInjection: m.ContextInjectionSchema,
  PlannedAction: m.PlannedActionSchema,
  // artifact, verdict, directives
  Artifact: m.ArtifactSchema,
  Verdict: m.VerdictSchema,
  Directives: m.DirectivesSchema,
  InjectContextDirective: m.InjectContextDirectiveSchema,
  XAhpDirective: m.XAhpDirectiveSchema,
  // hook events
  SessionStartEvent: m.SessionStartEventSchema,
  SessionEndEvent: m.SessionEndEventSchema,
  PrePluginLoadEvent: m.PrePluginLoadEventSchema,
  PreSkillLoadEvent: m.PreSkillLoadEventSchema,
  PreMCPConnectEvent: m.PreMCPConnectEventSchema,
  PreUserInputEvent: m.PreUserInputEventSchema,
  PostInputProcessingEvent: m.PostInputProcessingEventSchema,
  PreLLMRequestEvent: m.PreLLMRequestEventSchema,
  PostLLMResponseEvent: m.PostLLMResponseEventSchema,
  PreToolUseEvent: m.PreToolUseEventSchema,
  PostToolUseEvent: m.PostToolUseEventSchema,
  PreToolInputModificationEvent: m.PreToolInputModificationEventSchema,
  PreSubAgentSpawnEvent: m.PreSubAgentSpawnEventSchema,
  PostSubAgentResultEvent: m.PostSubAgentResultEventSchema,
  PreOutputDeliverEvent: m.PreOutputDeliverEventSchema,
  PreMemoryWriteEvent: m.PreMemoryWriteEventSchema,
  PreMemoryReadEvent: m.PreMemoryReadEventSchema,
  PreCompactEvent: m.PreCompactEventSchema,
  PostCompactEvent: m.PostCompactEventSchema,
  PostAskResolutionEvent: m.PostAskResolutionEventSchema,
  AartsEvent: m.AartsEventSchema,
});

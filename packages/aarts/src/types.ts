/**
 * TypeScript types of the AARTS data model, inferred from the zod schemas. Type-only: importing
 * this module loads nothing at run time.
 */
import type { z } from "zod";
import type * as S from "./schema/model.js";
import type { HookPoint } from "./catalog.js";

export type Artifact = z.infer<typeof S.ArtifactSchema>;
export type ModifierEntry = z.infer<typeof S.ModifierEntrySchema>;
export type InjectContextDirective = z.infer<typeof S.InjectContextDirectiveSchema>;
export type XAhpDirective = z.infer<typeof S.XAhpDirectiveSchema>;
export type Directives = z.infer<typeof S.DirectivesSchema>;
export type Verdict = z.infer<typeof S.VerdictSchema>;
export type VerdictInput = z.input<typeof S.VerdictSchema>;
export type VersionCheckRequest = z.infer<typeof S.VersionCheckRequestSchema>;
export type VersionCheckResponse = z.infer<typeof S.VersionCheckResponseSchema>;

export type Envelope = z.infer<typeof S.EnvelopeSchema>;
export type TurnExtension = z.infer<typeof S.TurnExtensionSchema>;
export type ToolContextExtension = z.infer<typeof S.ToolContextExtensionSchema>;
export type TrustSourceExtension = z.infer<typeof S.TrustSourceExtensionSchema>;
export type ModificationExtension = z.infer<typeof S.ModificationExtensionSchema>;
export type ProvenanceExtension = z.infer<typeof S.ProvenanceExtensionSchema>;

export type SessionStartEvent = z.infer<typeof S.SessionStartEventSchema>;
export type SessionEndEvent = z.infer<typeof S.SessionEndEventSchema>;
export type PrePluginLoadEvent = z.infer<typeof S.PrePluginLoadEventSchema>;
export type PreSkillLoadEvent = z.infer<typeof S.PreSkillLoadEventSchema>;
export type PreMCPConnectEvent = z.infer<typeof S.PreMCPConnectEventSchema>;
export type PreUserInputEvent = z.infer<typeof S.PreUserInputEventSchema>;
export type PostInputProcessingEvent = z.infer<typeof S.PostInputProcessingEventSchema>;
export type PreLLMRequestEvent = z.infer<typeof S.PreLLMRequestEventSchema>;
export type PostLLMResponseEvent = z.infer<typeof S.PostLLMResponseEventSchema>;
export type PreToolUseEvent = z.infer<typeof S.PreToolUseEventSchema>;
export type PostToolUseEvent = z.infer<typeof S.PostToolUseEventSchema>;
export type PreToolInputModificationEvent = z.infer<typeof S.PreToolInputModificationEventSchema>;
export type PreSubAgentSpawnEvent = z.infer<typeof S.PreSubAgentSpawnEventSchema>;
export type PostSubAgentResultEvent = z.infer<typeof S.PostSubAgentResultEventSchema>;
export type PreOutputDeliverEvent = z.infer<typeof S.PreOutputDeliverEventSchema>;
export type PreMemoryWriteEvent = z.infer<typeof S.PreMemoryWriteEventSchema>;
export type PreMemoryReadEvent = z.infer<typeof S.PreMemoryReadEventSchema>;
export type PreCompactEvent = z.infer<typeof S.PreCompactEventSchema>;
export type PostCompactEvent = z.infer<typeof S.PostCompactEventSchema>;
export type PostAskResolutionEvent = z.infer<typeof S.PostAskResolutionEventSchema>;

/** Any AARTS hook event. */
export type AartsEvent = z.infer<typeof S.AartsEventSchema>;
/** The event of one hook point. */
export type AartsEventOf<H extends HookPoint> = Extract<AartsEvent, { hook_point: H }>;

/**
 * TypeScript types of the AARTS data model, inferred from the zod schemas. Type-only: importing
 * this module loads nothing at run time.
 */
import type { z } from "zod";
import type * as S from "./schema/model.js";
import type { HookPoint } from "./catalog.js";

/** A security-relevant value pulled verbatim out of an event (spec §1.6), e.g. a URL, a command or a package. */
export type Artifact = z.infer<typeof S.ArtifactSchema>;
/** One hook or processor in a Modification Tracking chain (spec §1.3 ModifierEntry). */
export type ModifierEntry = z.infer<typeof S.ModifierEntrySchema>;
/** `inject_context` directive (spec §1.8): content a PostCompact `allow` asks the host to add to the compacted context. */
export type InjectContextDirective = z.infer<typeof S.InjectContextDirectiveSchema>;
/** `x-ahp` directive (spec §1.8, §5.5): the original AHP decision and request id, carried on verdicts the bridge produces. */
export type XAhpDirective = z.infer<typeof S.XAhpDirectiveSchema>;
/** Hook-specific directives of a verdict (spec §1.8); a directive on a hook or decision it does not apply to is ignored. */
export type Directives = z.infer<typeof S.DirectivesSchema>;
/** An engine's answer to a blocking hook event (spec §1.7), as validated (output of {@link VerdictSchema}). */
export type Verdict = z.infer<typeof S.VerdictSchema>;
/** Input type of {@link VerdictSchema}: what an engine may return before parsing (same fields as {@link Verdict}). */
export type VerdictInput = z.input<typeof S.VerdictSchema>;
/** Version check request, host → engine, sent before the first hook event (spec §1.1). */
export type VersionCheckRequest = z.infer<typeof S.VersionCheckRequestSchema>;
/** Version check response, engine → host (spec §1.1); `compatible: false` means the host must not send hook events to that engine. */
export type VersionCheckResponse = z.infer<typeof S.VersionCheckResponseSchema>;

/** Fields every hook event carries (spec §1.2). */
export type Envelope = z.infer<typeof S.EnvelopeSchema>;
/** Turn extension (spec §1.3): the conversation turn an event belongs to. */
export type TurnExtension = z.infer<typeof S.TurnExtensionSchema>;
/** Tool Context extension (spec §1.3): the canonical tool, its native name, its input and the artifacts extracted from it. */
export type ToolContextExtension = z.infer<typeof S.ToolContextExtensionSchema>;
/** Trust Source extension (spec §1.3): origin of a component crossing a trust boundary (plugin, skill, MCP server, modifier). */
export type TrustSourceExtension = z.infer<typeof S.TrustSourceExtensionSchema>;
/**
 * Modification Tracking extension (spec §1.3): content before and after hooks changed it; `deny` rejects the modification, not the action.
 */
export type ModificationExtension = z.infer<typeof S.ModificationExtensionSchema>;
/** Provenance extension (spec §1.3): causal context of a PreToolUse (modified prompt, active skill, sub-agent parentage). */
export type ProvenanceExtension = z.infer<typeof S.ProvenanceExtensionSchema>;

/** Hook 1 `SessionStart` (spec §1.5): the session is being set up; `deny` aborts the start-up. */
export type SessionStartEvent = z.infer<typeof S.SessionStartEventSchema>;
/** Hook 2 `SessionEnd` (spec §1.5): the session is ending; Notification, audit only. */
export type SessionEndEvent = z.infer<typeof S.SessionEndEventSchema>;
/** Hook 3 `PrePluginLoad` (spec §1.5): a plugin or extension is about to load; `deny` keeps it unloaded. */
export type PrePluginLoadEvent = z.infer<typeof S.PrePluginLoadEventSchema>;
/** Hook 4 `PreSkillLoad` (spec §1.5): a skill or agent-definition file is about to load; honours `strip_hooks`. */
export type PreSkillLoadEvent = z.infer<typeof S.PreSkillLoadEventSchema>;
/** Hook 5 `PreMCPConnect` (spec §1.5): a connection to an MCP server is about to open; `deny` prevents it. */
export type PreMCPConnectEvent = z.infer<typeof S.PreMCPConnectEventSchema>;
/** Hook 6 `PreUserInput` (spec §1.5): user input as received, before any processing; `deny` discards it. */
export type PreUserInputEvent = z.infer<typeof S.PreUserInputEventSchema>;
/** Hook 7 `PostInputProcessing` (spec §1.5): input after processing hooks (raw input as `original_value`); `deny` uses the raw input. */
export type PostInputProcessingEvent = z.infer<typeof S.PostInputProcessingEventSchema>;
/** Hook 8 `PreLLMRequest` (spec §1.5): the assembled prompt about to go to the model; `deny` does not send it. */
export type PreLLMRequestEvent = z.infer<typeof S.PreLLMRequestEventSchema>;
/** Hook 9 `PostLLMResponse` (spec §1.5): the model's response before the host parses or shows it; `deny` discards it. */
export type PostLLMResponseEvent = z.infer<typeof S.PostLLMResponseEventSchema>;
/** Hook 10 `PreToolUse` (spec §1.5): a tool call about to execute, the primary enforcement point; `deny` skips the call. */
export type PreToolUseEvent = z.infer<typeof S.PreToolUseEventSchema>;
/** Hook 11 `PostToolUse` (spec §1.5): a tool's result before it goes back to the model; `deny` redacts the result. */
export type PostToolUseEvent = z.infer<typeof S.PostToolUseEventSchema>;
/** Hook 12 `PreToolInputModification` (spec §1.5): a hook is about to change a tool's input; `deny` keeps the original input. */
export type PreToolInputModificationEvent = z.infer<typeof S.PreToolInputModificationEventSchema>;
/** Hook 13 `PreSubAgentSpawn` (spec §1.5): a sub-agent is about to be created; honours `permitted_tools`. */
export type PreSubAgentSpawnEvent = z.infer<typeof S.PreSubAgentSpawnEventSchema>;
/** Hook 14 `PostSubAgentResult` (spec §1.5): a sub-agent's result before it reaches the parent; `deny` withholds it. */
export type PostSubAgentResultEvent = z.infer<typeof S.PostSubAgentResultEventSchema>;
/** Hook 15 `PreOutputDeliver` (spec §1.5): the turn's final response before it is shown; `deny` hides it. */
export type PreOutputDeliverEvent = z.infer<typeof S.PreOutputDeliverEventSchema>;
/** Hook 16 `PreMemoryWrite` (spec §1.5): a write to long-term memory; `deny` writes nothing. */
export type PreMemoryWriteEvent = z.infer<typeof S.PreMemoryWriteEventSchema>;
/** Hook 17 `PreMemoryRead` (spec §1.5): persistent memory about to enter the context; `deny` does not load it. */
export type PreMemoryReadEvent = z.infer<typeof S.PreMemoryReadEventSchema>;
/** Hook 18 `PreCompact` (spec §1.5): the context is about to be compacted; `deny` skips the compaction. */
export type PreCompactEvent = z.infer<typeof S.PreCompactEventSchema>;
/** Hook 19 `PostCompact` (spec §1.5): the compacted context before use; `deny` restores the old context; honours `inject_context`. */
export type PostCompactEvent = z.infer<typeof S.PostCompactEventSchema>;
/** Hook 20 `PostAskResolution` (spec §1.5, §2.4): the user's answer to an `ask`; Notification, so the engine can learn from it. */
export type PostAskResolutionEvent = z.infer<typeof S.PostAskResolutionEventSchema>;

/** Any AARTS hook event. */
export type AartsEvent = z.infer<typeof S.AartsEventSchema>;
/** The event of one hook point. */
export type AartsEventOf<H extends HookPoint> = Extract<AartsEvent, { hook_point: H }>;

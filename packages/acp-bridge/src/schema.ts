/**
 * The suspend/resume wire types as zod schemas (the source of `schemas/acp-bridge.schema.json`),
 * under the names of the specification. What a receiver accepts: the rules of §4 that JSON
 * Schema can express. Two rules live only in the runtime validator (`validation.ts`), because no
 * schema language states them: the 16 KiB serialized size of a `trigger` (V5) and the agent's
 * `resumeCauses` (V10).
 */
import { z } from "zod";
import { INITIATOR_DETAILS, INITIATORS, LIMITS, META, METHODS, ON_TIMEOUT_ACTIONS, RESUME_CAUSES, SUSPEND_MODES } from "./constants.js";

const Meta = z.record(z.string(), z.unknown()).nullable().optional();
const opt = <T extends z.ZodType>(s: T) => s.nullable().optional();

/** zod schema of a suspend mode (`finish_step`, `interrupt_immediate`, `wait_for_completion`). */
export const SuspendModeSchema = z.enum(SUSPEND_MODES);
/** zod schema of {@link OnTimeout}. */
export const OnTimeoutSchema = z.enum(ON_TIMEOUT_ACTIONS);
/** zod schema of {@link ResumeCause}. */
export const ResumeCauseSchema = z.enum(RESUME_CAUSES);
/** zod schema of {@link Initiator}. */
export const InitiatorSchema = z.enum(INITIATORS);
/** zod schema of {@link InitiatorDetail}. */
export const InitiatorDetailSchema = z.enum(INITIATOR_DETAILS);

/** V4: trimmed, non-empty, no whitespace or control characters inside. */
export const EventNameSchema = z
  .string()
  .max(LIMITS.onEventMaxLength)
  // eslint-disable-next-line no-control-regex -- V4 rejects control characters in an event name: the range is the point.
  .regex(/^\s*[^\s\u0000-\u001f\u007f-\u009f]+\s*$/u);

/** `resumeWhen.timeout`: minutes until the timeout fires and what it does then. */
export const ResumeTimeoutSpecSchema = z.strictObject({
  durationMinutes: z.int().min(1).max(LIMITS.durationMinutesMax),
  onTimeout: opt(OnTimeoutSchema),
  _meta: Meta,
});

/**
 * `resumeWhen` / `conditions`: an event name, a host trigger, a timeout (each optional). The schema
 * bundle's shape; the bridge's own checks are in `validateResumeConditions`.
 */
export const ResumeConditionsSchema = z.strictObject({
  onEvent: opt(EventNameSchema),
  trigger: opt(z.record(z.string(), z.unknown())),
  timeout: opt(ResumeTimeoutSpecSchema),
  _meta: Meta,
});

/** Params of `session/suspend` and `_ahpHarness/session/suspend` (§3). */
export const SessionSuspendRequestSchema = z.strictObject({
  sessionId: z.string().min(1),
  reason: opt(z.string().max(LIMITS.reasonMaxLength)),
  resumeWhen: opt(ResumeConditionsSchema),
  mode: opt(SuspendModeSchema),
  _meta: Meta,
});

/** Result of `session/suspend`: the handle, when it was suspended, the echoed conditions (extra keys allowed). */
export const SessionSuspendResponseSchema = z.looseObject({
  handle: z.string().min(1).max(LIMITS.handleMaxLength),
  reason: opt(z.string()),
  suspendedAt: z.iso.datetime({ offset: true }),
  resumeWhen: opt(ResumeConditionsSchema),
  summary: opt(z.string().max(LIMITS.summaryMaxLength)),
  _meta: Meta,
});

/**
 * Params of `session/await_resumption`, the agent parking itself (§3): a reason, optional
 * conditions and a summary.
 */
export const SessionAwaitResumptionRequestSchema = z.strictObject({
  sessionId: z.string().min(1),
  reason: z.string().max(LIMITS.reasonMaxLength).regex(/\S/u),
  conditions: opt(ResumeConditionsSchema),
  summary: opt(z.string().max(LIMITS.summaryMaxLength)),
  _meta: Meta,
});

/** Result of `session/await_resumption`: the handle and when the session was suspended. */
export const SessionAwaitResumptionResponseSchema = z.looseObject({
  handle: z.string().min(1).max(LIMITS.handleMaxLength),
  suspendedAt: z.iso.datetime({ offset: true }),
  _meta: Meta,
});

/** `session/resume` params `_meta["ahpHarness/resume"]` (V14–V16). */
export const ResumeEnrichmentSchema = z.looseObject({
  handle: opt(z.string().min(1).max(LIMITS.handleMaxLength)),
  // null = absent; a string must not be blank; anything else is any JSON value.
  input: z
    .union([z.string().regex(/\S/u), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())])
    .optional(),
  continueTranscript: opt(z.boolean()),
});

/** `session/resume` result `_meta["ahpHarness/resume"]`. */
export const ResumeOutcomeSchema = z.looseObject({
  handle: z.string(),
  cause: ResumeCauseSchema,
  hadResumeInput: z.boolean(),
  continueTranscript: z.boolean(),
  resumedAt: z.iso.datetime({ offset: true }),
  state: z.string(),
});

const LifecycleBase = {
  handle: z.string(),
  initiatorDetail: opt(InitiatorDetailSchema),
  state: opt(z.string()),
};

/** The `suspended` lifecycle event, as carried in `_meta["ahpHarness/lifecycle"]` of a `session_info_update`. */
export const LifecycleSuspendedSchema = z.looseObject({
  event: z.literal("suspended"),
  ...LifecycleBase,
  reason: opt(z.string()),
  initiator: InitiatorSchema,
  suspendedAt: z.iso.datetime({ offset: true }),
  resumeWhen: opt(ResumeConditionsSchema),
  escalated: opt(z.boolean()),
});

/** The `resumed` lifecycle event: cause, whether resume input came with it, whether the transcript continues. */
export const LifecycleResumedSchema = z.looseObject({
  event: z.literal("resumed"),
  ...LifecycleBase,
  cause: ResumeCauseSchema,
  hadResumeInput: z.boolean(),
  continueTranscript: z.boolean(),
  resumedAt: z.iso.datetime({ offset: true }),
});

/** The progress events of a suspend in flight: `suspend_requested` and `quiescing`. */
export const LifecycleProgressSchema = z.looseObject({
  event: z.enum(["suspend_requested", "quiescing"]),
  ...LifecycleBase,
  mode: opt(SuspendModeSchema),
});

/**
 * The terminal lifecycle events of a suspension: `failed` (a timeout with `fail`) and `discarded`
 * (closed or deleted while suspended).
 */
export const LifecycleTerminalSchema = z.looseObject({
  event: z.enum(["failed", "discarded"]),
  ...LifecycleBase,
  at: z.iso.datetime({ offset: true }),
  reason: opt(z.string()),
});

/** `session_info_update._meta["ahpHarness/lifecycle"]`. */
export const LifecycleEventSchema = z.discriminatedUnion("event", [
  LifecycleSuspendedSchema,
  LifecycleResumedSchema,
  LifecycleProgressSchema,
  LifecycleTerminalSchema,
]);

/** `agentCapabilities._meta["ahpHarness/suspend"]` (§6.1). */
export const AgentSuspendCapabilitiesSchema = z.looseObject({
  version: z.int().min(1),
  supportsSuspend: opt(z.boolean()),
  supportsAwaitResumption: opt(z.boolean()),
  resumeCauses: opt(z.array(ResumeCauseSchema)),
  modes: opt(z.array(SuspendModeSchema)),
  freshTranscript: opt(z.boolean()),
  firstClass: opt(z.boolean()),
});

/** `clientCapabilities._meta["ahpHarness/suspend"]` (§6.1). */
export const ClientSuspendCapabilitiesSchema = z.looseObject({
  version: z.int().min(1),
  awaitResumption: opt(z.boolean()),
  lifecycle: opt(z.array(z.enum(["meta", "first_class"]))),
  agentInitiatedTurns: opt(z.boolean()),
  firstClass: opt(z.boolean()),
});

/** `_ahpHarness/session/suspension` params and result. */
export const SuspensionStatusRequestSchema = z.looseObject({ sessionId: z.string().min(1), _meta: Meta });
/**
 * Result of `_ahpHarness/session/suspension`: the session's state and, while there is a suspension,
 * its handle, time, reason and conditions.
 */
export const SuspensionStatusResponseSchema = z.looseObject({
  state: z.string(),
  handle: opt(z.string()),
  suspendedAt: opt(z.iso.datetime({ offset: true })),
  reason: opt(z.string()),
  resumeWhen: opt(ResumeConditionsSchema),
});

/** `data` of a bridge error (§4 error form, §5.9). */
export const BridgeErrorDataSchema = z.looseObject({
  reason: z.string(),
  field: z.string().optional(),
  detail: z.string().optional(),
});

/** A harness-driven park (§7.3) kept with the suspension: the event to re-send on resume. */
export const HarnessParkSchema = z.looseObject({
  eventType: z.string(),
  eventId: z.string(),
  waitingOn: z.string(),
  event: z.record(z.string(), z.unknown()),
});

/** What the file store writes per session (one JSON document per file). */
export const StoredSuspensionSchema = z.looseObject({
  v: z.literal(1),
  sessionId: z.string().min(1),
  state: z.enum(["active", "suspended", "failed", "closed"]),
  handle: opt(z.string()),
  reason: opt(z.string()),
  initiator: opt(InitiatorSchema),
  initiatorDetail: opt(InitiatorDetailSchema),
  mode: opt(SuspendModeSchema),
  suspendedAt: opt(z.iso.datetime({ offset: true })),
  resumeWhen: opt(ResumeConditionsSchema),
  timeoutInput: z.unknown().optional(),
  stopReason: opt(z.string()),
  summary: opt(z.string()),
  cwd: z.string(),
  additionalDirectories: opt(z.array(z.string())),
  mcpServers: opt(z.array(z.unknown())),
  issuedHandles: z.array(z.string()),
  consumedHandles: z.array(z.string()),
  runId: opt(z.string()),
  downstreamHandle: opt(z.string()),
  emulated: opt(z.union([z.boolean(), z.literal("cancel")])),
  park: opt(HarnessParkSchema),
  pendingInput: z.unknown().optional(),
  continueTranscript: opt(z.boolean()),
});
/**
 * One stored record: what the bridge needs to restore a suspended session after a restart (state,
 * handles, conditions, drain outcome, park).
 */
export type StoredSuspension = z.infer<typeof StoredSuspensionSchema>;

/** Every named type of the bundle, under the specification's names. */
export const ACP_BRIDGE_SCHEMA_TYPES: Readonly<Record<string, z.ZodType>> = Object.freeze({
  SuspendMode: SuspendModeSchema,
  OnTimeout: OnTimeoutSchema,
  ResumeCause: ResumeCauseSchema,
  Initiator: InitiatorSchema,
  InitiatorDetail: InitiatorDetailSchema,
  EventName: EventNameSchema,
  ResumeTimeoutSpec: ResumeTimeoutSpecSchema,
  ResumeConditions: ResumeConditionsSchema,
  SessionSuspendRequest: SessionSuspendRequestSchema,
  SessionSuspendResponse: SessionSuspendResponseSchema,
  SessionAwaitResumptionRequest: SessionAwaitResumptionRequestSchema,
  SessionAwaitResumptionResponse: SessionAwaitResumptionResponseSchema,
  ResumeEnrichment: ResumeEnrichmentSchema,
  ResumeOutcome: ResumeOutcomeSchema,
  LifecycleSuspended: LifecycleSuspendedSchema,
  LifecycleResumed: LifecycleResumedSchema,
  LifecycleProgress: LifecycleProgressSchema,
  LifecycleTerminal: LifecycleTerminalSchema,
  LifecycleEvent: LifecycleEventSchema,
  AgentSuspendCapabilities: AgentSuspendCapabilitiesSchema,
  ClientSuspendCapabilities: ClientSuspendCapabilitiesSchema,
  SuspensionStatusRequest: SuspensionStatusRequestSchema,
  SuspensionStatusResponse: SuspensionStatusResponseSchema,
  BridgeErrorData: BridgeErrorDataSchema,
  HarnessPark: HarnessParkSchema,
  StoredSuspension: StoredSuspensionSchema,
});

/** Facts of the bridge's wire for `schemas/meta.json` (methods, `_meta` keys, error codes). */
export const ACP_BRIDGE_META = {
  bundle: "acp-bridge.schema.json",
  methods: {
    [METHODS.suspend]: {
      direction: "client_to_agent",
      params: "acp-bridge.schema.json#/$defs/SessionSuspendRequest",
      result: "acp-bridge.schema.json#/$defs/SessionSuspendResponse",
    },
    [METHODS.tunnelSuspend]: {
      direction: "client_to_agent",
      params: "acp-bridge.schema.json#/$defs/SessionSuspendRequest",
      result: "acp-bridge.schema.json#/$defs/SessionSuspendResponse",
    },
    [METHODS.awaitResumption]: {
      direction: "agent_to_client",
      params: "acp-bridge.schema.json#/$defs/SessionAwaitResumptionRequest",
      result: "acp-bridge.schema.json#/$defs/SessionAwaitResumptionResponse",
    },
    [METHODS.tunnelAwaitResumption]: {
      direction: "agent_to_client",
      params: "acp-bridge.schema.json#/$defs/SessionAwaitResumptionRequest",
      result: "acp-bridge.schema.json#/$defs/SessionAwaitResumptionResponse",
    },
    [METHODS.tunnelSuspension]: {
      direction: "client_to_agent",
      params: "acp-bridge.schema.json#/$defs/SuspensionStatusRequest",
      result: "acp-bridge.schema.json#/$defs/SuspensionStatusResponse",
    },
  },
  meta_keys: {
    [META.suspend]:
      "capabilities (AgentSuspendCapabilities, ClientSuspendCapabilities), suspend request/response extras, interrupted-turn marker",
    [META.resume]: "session/resume params (ResumeEnrichment) and result (ResumeOutcome)",
    [META.lifecycle]: "session_info_update carrier of a LifecycleEvent",
  },
  error_codes: {
    "-32602":
      "invalid_resume_conditions | unsupported_resume_condition | invalid_suspend_params | invalid_resume_input | fresh_transcript_unsupported",
    "-32002": "unknown_session | unknown_handle | suspension_discarded",
    "-31001":
      "not_suspended | suspend_in_progress | resume_in_progress | resume_conflict | handle_consumed | prompt_while_suspended | session_failed",
    "-31002": "blocked | deferred | escalated (the AHP gate refused)",
    "-31003": "harness_unavailable (fail-closed gate failure)",
  },
} as const;

/**
 * Names the bridge puts on the ACP wire. Every extension method and `_meta` key derives from the
 * one prefix below (`ahpHarness`: "AHP" alone is also the name of the unrelated Agent Host
 * Protocol), so a rename is a one-line change.
 */

/** The project-wide prefix of every bridge-owned `_meta` key and extension method. */
export const AHP_HARNESS_PREFIX = "ahpHarness";

/** `_meta` keys the bridge reads and writes. */
export const META = {
  /** Capabilities, suspend request/response extras, interrupted-turn marker. */
  suspend: `${AHP_HARNESS_PREFIX}/suspend`,
  /** Resume enrichment on requests and the resume outcome on results. */
  resume: `${AHP_HARNESS_PREFIX}/resume`,
  /** Lifecycle events carried by `session_info_update`. */
  lifecycle: `${AHP_HARNESS_PREFIX}/lifecycle`,
  /** A harness decision about an agent's tool call (refusal reason and rule), on the client's update and the agent's answer. */
  decision: `${AHP_HARNESS_PREFIX}/decision`,
} as const;

/** ACP methods: first-class (RFC) names and their tunnel forms (§6.3). */
export const METHODS = {
  suspend: "session/suspend",
  awaitResumption: "session/await_resumption",
  tunnelSuspend: `_${AHP_HARNESS_PREFIX}/session/suspend`,
  tunnelAwaitResumption: `_${AHP_HARNESS_PREFIX}/session/await_resumption`,
  tunnelSuspension: `_${AHP_HARNESS_PREFIX}/session/suspension`,
} as const;

/** The v2 draft's custom stop reason for a parked session (§6.7). */
export const V2_SUSPENDED_STOP_REASON = `_${AHP_HARNESS_PREFIX}/suspended`;

/** Version of the capability descriptor and of the stored record. */
export const DESCRIPTOR_VERSION = 1;

/**
 * The suspend modes of §3, from the gentlest drain to the hardest: wait for the turn, stop at the
 * next step boundary, cancel now.
 */
export const SUSPEND_MODES = ["interrupt_immediate", "finish_step", "wait_for_completion"] as const;
/** How a suspend drains a running turn (see {@link SUSPEND_MODES}). */
export type SuspendMode = (typeof SUSPEND_MODES)[number];

/** Strength order used when coalescing suspends (T3): higher wins. */
export const MODE_STRENGTH: Record<SuspendMode, number> = { wait_for_completion: 0, finish_step: 1, interrupt_immediate: 2 };

/**
 * What a `resumeWhen.timeout` does when it fires: resume with a summary, fail the session, or
 * resume with the stored `timeoutInput`.
 */
export const ON_TIMEOUT_ACTIONS = ["resume_with_summary", "fail", "resume_with_input"] as const;
/** One of {@link ON_TIMEOUT_ACTIONS}. */
export type OnTimeout = (typeof ON_TIMEOUT_ACTIONS)[number];

/**
 * Why a suspended session woke up, as the `resumed` lifecycle event and the resume result report
 * it; an agent advertises the ones it honours.
 */
export const RESUME_CAUSES = ["explicit_resume", "condition_fired", "timeout", "external_event"] as const;
/** One of {@link RESUME_CAUSES}. */
export type ResumeCause = (typeof RESUME_CAUSES)[number];

/** Which side of the ACP connection asked for a suspension. */
export const INITIATORS = ["client", "agent"] as const;
/** One of {@link INITIATORS}. */
export type Initiator = (typeof INITIATORS)[number];

/**
 * Who exactly started a suspension: the client's user, an operator, the harness (a park), the agent
 * itself, or a trigger.
 */
export const INITIATOR_DETAILS = ["client", "operator", "harness", "self", "trigger"] as const;
/** One of {@link INITIATOR_DETAILS}. */
export type InitiatorDetail = (typeof INITIATOR_DETAILS)[number];

/** Limits of §4 (bridge limits where the RFC is silent). */
export const LIMITS = {
  onEventMaxLength: 256,
  triggerMaxBytes: 16 * 1024,
  durationMinutesMax: 527_040,
  reasonMaxLength: 2048,
  handleMaxLength: 256,
  summaryMaxLength: 4096,
} as const;

/** `setTimeout` cannot wait longer than this; longer timers are re-armed in chunks. */
export const MAX_TIMER_CHUNK_MS = 2_147_483_647;

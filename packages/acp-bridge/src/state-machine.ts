/**
 * The session state machine of §5 as data: the states of §5.1, the numbered transitions
 * T1–T24 of §5.2 (26 rows with T14b and T14c), the unnumbered internal moves the numbered rows
 * imply (a turn starting and ending, the drain, the commits), and one transition function.
 * The bridge moves a session only through {@link transition}; a move the table does not allow
 * is an internal error, never a silent state change.
 */
import type { ConflictReason, NotFoundReason } from "./errors.js";

/** Every session state of the bridge's state table (§5.1, ADR 0022), in order. */
export const STATES = [
  "active.idle",
  "active.running",
  "suspending.requested",
  "suspending.quiescing",
  "suspended",
  "resuming",
  "failed",
  "closed",
  "deleted",
] as const;
/** A session state of §5.1 (one of {@link STATES}). */
export type BridgeState = (typeof STATES)[number];

/** The states in which a session takes prompts (idle or running a turn). */
export const ACTIVE: readonly BridgeState[] = ["active.idle", "active.running"];
/** The states of a suspend in progress: requested (gate, reservation) and quiescing (the turn drains). */
export const SUSPENDING: readonly BridgeState[] = ["suspending.requested", "suspending.quiescing"];

/**
 * What can happen to a session: the events of the numbered rows (requests, conditions, transport
 * drops) and the internal moves (turn end, drain, commits).
 */
export type BridgeEvent =
  // numbered rows
  | "suspend"
  | "self_park"
  | "prompt"
  | "cancel"
  | "resume"
  | "resume_consumed_handle"
  | "resume_unknown_handle"
  | "resume_enrichment_without_handle"
  | "plain_resume"
  | "gate_revert"
  | "condition_fired"
  | "timeout_fail"
  | "close"
  | "delete"
  | "transport_drop"
  | "load"
  // internal moves
  | "turn_end"
  | "quiesce"
  | "commit"
  | "commit_failed"
  | "resume_commit";

/** The wire error a refusing row produces: a `-31001` state conflict or a `-32002` not found, with its reason. */
export type RowError = { code: -31001; reason: ConflictReason } | { code: -32002; reason: NotFoundReason };

/**
 * One row of the state table: the event, the states it applies in, where it leads or which error it
 * raises, and its effects in order.
 */
export interface TransitionRow {
  id: string;
  event: BridgeEvent;
  from: readonly BridgeState[];
  /** Target state; `"same"` leaves the state as it is. Absent when the row is an error. */
  to?: BridgeState | "same";
  error?: RowError;
  /** Effects and wire output, in order (documentation; the bridge performs them). */
  effects: string;
}

const ALL = STATES;

/** T1–T24 of §5.2, in the specification's order. */
export const NUMBERED_TRANSITIONS: readonly TransitionRow[] = [
  {
    id: "T1",
    event: "suspend",
    from: ["active.idle"],
    to: "suspended",
    effects: "validate; gate; commit; arm conditions; lifecycle suspended; suspend response",
  },
  {
    id: "T2",
    event: "suspend",
    from: ["active.running"],
    to: "suspending.requested",
    effects:
      "validate; gate; lifecycle suspend_requested; drain per mode; turn updates; prompt response; commit; lifecycle suspended; suspend response",
  },
  {
    id: "T3",
    event: "suspend",
    from: SUSPENDING,
    to: "same",
    effects: "coalesce: same result; a stronger mode upgrades; first reason wins",
  },
  {
    id: "T4",
    event: "suspend",
    from: ["suspended"],
    to: "same",
    effects: "idempotent: same handle and suspendedAt; no lifecycle; no gate",
  },
  { id: "T5", event: "suspend", from: ["resuming"], error: { code: -31001, reason: "resume_in_progress" }, effects: "error" },
  {
    id: "T6",
    event: "suspend",
    from: ["failed", "closed", "deleted"],
    error: { code: -31001, reason: "session_failed" },
    effects: "-31001 session_failed (failed) / -32002 (closed, deleted, unknown)",
  },
  {
    id: "T7",
    event: "self_park",
    from: ["active.running"],
    to: "suspending.requested",
    effects: "as T2 with initiator agent; await_resumption first when supported",
  },
  { id: "T8", event: "prompt", from: SUSPENDING, error: { code: -31001, reason: "suspend_in_progress" }, effects: "error" },
  {
    id: "T9",
    event: "prompt",
    from: ["suspended"],
    to: "resuming",
    effects: "policy P1: reject prompt_while_suspended, or implicit resume (input = the prompt) then run the turn",
  },
  { id: "T10", event: "cancel", from: SUSPENDING, to: "same", effects: "escalate to interrupt_immediate; the suspension still commits" },
  { id: "T11", event: "cancel", from: ["suspended", "active.idle"], to: "same", effects: "no-op" },
  {
    id: "T12",
    event: "resume",
    from: ["suspended"],
    to: "resuming",
    effects: "CAS win; gate; restore; disarm; lifecycle resumed; resume response; continuation per P2",
  },
  { id: "T13", event: "resume", from: ["resuming"], error: { code: -31001, reason: "resume_conflict" }, effects: "error" },
  { id: "T14", event: "resume_consumed_handle", from: ACTIVE, error: { code: -31001, reason: "handle_consumed" }, effects: "error" },
  { id: "T14b", event: "resume_unknown_handle", from: ALL, error: { code: -32002, reason: "unknown_handle" }, effects: "state unchanged" },
  {
    id: "T14c",
    event: "resume_enrichment_without_handle",
    from: ACTIVE,
    error: { code: -31001, reason: "not_suspended" },
    effects: "error",
  },
  { id: "T15", event: "plain_resume", from: ACTIVE, to: "same", effects: "standard ACP re-attach, no lifecycle output" },
  {
    id: "T16",
    event: "gate_revert",
    from: ["resuming"],
    to: "suspended",
    effects: "handle stays valid; conditions stay armed; -31002 to the resumer",
  },
  { id: "T17", event: "condition_fired", from: ["suspended"], to: "resuming", effects: "as T12 with the matching cause; gate applies" },
  {
    id: "T18",
    event: "condition_fired",
    from: ["resuming"],
    to: "same",
    effects: "held as pending; replayed if the resume reverts, dropped if it commits",
  },
  { id: "T19", event: "timeout_fail", from: ["suspended"], to: "failed", effects: "lifecycle failed; AHP run_lifecycle failed + error" },
  { id: "T20", event: "close", from: [...SUSPENDING, "suspended"], to: "closed", effects: "cancel drain; disarm; lifecycle discarded; {}" },
  { id: "T21", event: "delete", from: ALL, to: "deleted", effects: "as T20, session removed" },
  { id: "T22", event: "transport_drop", from: ["suspended"], to: "same", effects: "nothing lost; resume allowed on a new connection" },
  {
    id: "T23",
    event: "transport_drop",
    from: SUSPENDING,
    to: "same",
    effects: "drain completes, suspension commits (to suspended), responses undeliverable",
  },
  { id: "T24", event: "load", from: ["suspended"], to: "same", effects: "replay ends with a lifecycle suspended update" },
];

/** Moves the numbered rows imply but do not name. */
export const INTERNAL_TRANSITIONS: readonly TransitionRow[] = [
  { id: "I1", event: "prompt", from: ["active.idle"], to: "active.running", effects: "turn starts (AHP run_lifecycle executing)" },
  { id: "I2", event: "prompt", from: ["active.running"], to: "same", effects: "forwarded; the agent answers a second concurrent prompt" },
  { id: "I3", event: "prompt", from: ["resuming"], error: { code: -31001, reason: "resume_in_progress" }, effects: "error" },
  { id: "I4", event: "prompt", from: ["failed"], error: { code: -31001, reason: "session_failed" }, effects: "error" },
  { id: "I5", event: "turn_end", from: ["active.running"], to: "active.idle", effects: "prompt response" },
  { id: "I6", event: "turn_end", from: [...SUSPENDING, "active.idle"], to: "same", effects: "drain finished; commit follows" },
  { id: "I7", event: "quiesce", from: ["suspending.requested"], to: "suspending.quiescing", effects: "drain per mode" },
  {
    id: "I8",
    event: "commit",
    from: ["active.idle", ...SUSPENDING],
    to: "suspended",
    effects: "persist; arm conditions; lifecycle suspended",
  },
  { id: "I9", event: "resume_commit", from: ["resuming"], to: "active.idle", effects: "disarm; lifecycle resumed" },
  { id: "I10", event: "cancel", from: ["active.running"], to: "same", effects: "forwarded to the agent" },
  { id: "I11", event: "cancel", from: ["resuming", "failed", "closed", "deleted"], to: "same", effects: "no-op" },
  { id: "I12", event: "close", from: ACTIVE, to: "closed", effects: "plain ACP close" },
  { id: "I13", event: "close", from: ["closed", "failed"], to: "closed", effects: "idempotent close" },
  { id: "I14", event: "resume", from: ["failed"], error: { code: -31001, reason: "session_failed" }, effects: "error" },
  { id: "I15", event: "resume", from: ["closed", "deleted"], error: { code: -32002, reason: "suspension_discarded" }, effects: "error" },
  {
    id: "I16",
    event: "condition_fired",
    from: ["active.idle", "active.running", ...SUSPENDING, "failed", "closed", "deleted"],
    to: "same",
    effects: "stale wake-up ignored",
  },
  {
    id: "I17",
    event: "transport_drop",
    from: [...ACTIVE, "resuming", "failed", "closed", "deleted"],
    to: "same",
    effects: "session detached from the connection",
  },
  {
    id: "I18",
    event: "load",
    from: ["active.idle", "active.running", "failed", "closed"],
    to: "same",
    effects: "forwarded (a closed session becomes active again)",
  },
  { id: "I19", event: "plain_resume", from: ["failed"], error: { code: -31001, reason: "session_failed" }, effects: "error" },
  {
    id: "I20",
    event: "resume_consumed_handle",
    from: [...SUSPENDING, "suspended", "resuming", "failed"],
    error: { code: -31001, reason: "handle_consumed" },
    effects: "error",
  },
  {
    id: "I21",
    event: "resume_consumed_handle",
    from: ["closed", "deleted"],
    error: { code: -32002, reason: "suspension_discarded" },
    effects: "error",
  },
  {
    id: "I22",
    event: "commit_failed",
    from: SUSPENDING,
    to: "active.idle",
    effects: "the record could not be stored: the suspend is refused, never reported",
  },
  { id: "I23", event: "plain_resume", from: ["suspended"], to: "same", effects: "P3 off: re-attach only, result state suspended" },
  {
    id: "I24",
    event: "plain_resume",
    from: ["resuming"],
    to: "same",
    effects: "waits for the resume in progress, then re-attaches (§5.5)",
  },
  { id: "I25", event: "plain_resume", from: ["closed"], to: "active.idle", effects: "a plain ACP resume reopens a closed session" },
  {
    id: "I26",
    event: "resume_enrichment_without_handle",
    from: ["failed"],
    error: { code: -31001, reason: "session_failed" },
    effects: "error",
  },
  {
    id: "I27",
    event: "resume_enrichment_without_handle",
    from: ["closed"],
    error: { code: -31001, reason: "not_suspended" },
    effects: "error",
  },
  { id: "I28", event: "self_park", from: ["active.idle"], to: "suspended", effects: "as T1 with initiator agent" },
  { id: "I29", event: "self_park", from: [...SUSPENDING, "suspended"], to: "same", effects: "already parking: coalesced / idempotent" },
  {
    id: "I31",
    event: "prompt",
    from: ["closed"],
    error: { code: -32002, reason: "unknown_session" },
    effects: "a closed session takes no turns until it is loaded or resumed",
  },
  {
    id: "I32",
    event: "resume",
    from: SUSPENDING,
    error: { code: -31001, reason: "suspend_in_progress" },
    effects: "the suspension has not committed yet",
  },
  { id: "I33", event: "resume", from: ACTIVE, error: { code: -31001, reason: "not_suspended" }, effects: "error" },
  {
    id: "I34",
    event: "resume_enrichment_without_handle",
    from: SUSPENDING,
    error: { code: -31001, reason: "suspend_in_progress" },
    effects: "error",
  },
  { id: "I35", event: "plain_resume", from: SUSPENDING, to: "same", effects: "re-attach; the drain goes on" },
  { id: "I36", event: "close", from: ["resuming"], to: "closed", effects: "as T20: the resume in progress is abandoned" },
  { id: "I37", event: "load", from: [...SUSPENDING, "resuming"], to: "same", effects: "forwarded; state unchanged" },
  { id: "I38", event: "turn_end", from: ["suspended", "resuming", "failed", "closed", "deleted"], to: "same", effects: "a late turn end" },
  {
    id: "I39",
    event: "commit_failed",
    from: ["suspended"],
    to: "active.idle",
    effects: "an idle suspend whose record could not be stored",
  },
  {
    id: "I30",
    event: "self_park",
    from: ["resuming", "failed", "closed"],
    error: { code: -31001, reason: "resume_in_progress" },
    effects: "error",
  },
];

/**
 * The whole state table: the numbered rows of §5.2 followed by the internal moves. {@link
 * transition} looks rows up here.
 */
export const TRANSITIONS: readonly TransitionRow[] = [...NUMBERED_TRANSITIONS, ...INTERNAL_TRANSITIONS];

/** What {@link transition} found: the target state, the row's error, or no row at all (an illegal move, a bug). */
export type TransitionResult =
  | { ok: true; row: TransitionRow; to: BridgeState }
  | { ok: false; row: TransitionRow; error: RowError }
  | { ok: false; row: undefined; illegal: true; state: BridgeState; event: BridgeEvent };

/** The rows by state, then event (no key string built per lookup: it runs several times a turn). */
const INDEX = new Map<BridgeState, Map<BridgeEvent, TransitionRow>>();
for (const row of TRANSITIONS) {
  for (const from of row.from) {
    let byEvent = INDEX.get(from);
    if (byEvent === undefined) INDEX.set(from, (byEvent = new Map<BridgeEvent, TransitionRow>()));
    if (byEvent.has(row.event)) throw new Error(`transition table: two rows for ${from}|${row.event}`);
    byEvent.set(row.event, row);
  }
}

/** The one transition function: the row that applies to `event` in `state`, and where it leads. */
export function transition(state: BridgeState, event: BridgeEvent): TransitionResult {
  const row = INDEX.get(state)?.get(event);
  if (row === undefined) return { ok: false, row: undefined, illegal: true, state, event };
  if (row.error !== undefined) return { ok: false, row, error: row.error };
  return { ok: true, row, to: row.to === "same" || row.to === undefined ? state : row.to };
}

/** True while a suspend is in progress (requested or quiescing). */
export const isSuspending = (s: BridgeState): boolean => s === "suspending.requested" || s === "suspending.quiescing";
/** True when the session takes prompts (idle or running). */
export const isActive = (s: BridgeState): boolean => s === "active.idle" || s === "active.running";

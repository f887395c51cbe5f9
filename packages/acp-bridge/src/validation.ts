/**
 * Validation and normalization of the suspend/resume inputs (§4, V1–V17). Pure functions that
 * return either the normalized value or the `{reason, field, detail}` of the first failure; the
 * bridge turns a failure into a `-32602` before any state change, AHP call or wire output (V11).
 */
import {
  LIMITS,
  META,
  MODE_STRENGTH,
  ON_TIMEOUT_ACTIONS,
  SUSPEND_MODES,
  type OnTimeout,
  type ResumeCause,
  type SuspendMode,
} from "./constants.js";
import type { ValidationErrorData, ValidationReason } from "./errors.js";

/** A validated resume timeout (§4): after `durationMinutes` the bridge does `onTimeout` (`resume_with_summary`, `resume_with_input` or `fail`). */
export interface ResumeTimeoutSpec {
  durationMinutes: number;
  onTimeout: OnTimeout;
}

/** Normalized conditions: at least one member (an empty object is treated as absent, V9). */
export interface ResumeConditions {
  onEvent?: string;
  trigger?: Record<string, unknown>;
  timeout?: ResumeTimeoutSpec;
}

/** The outcome of a validator: the normalized value, or the `data` of the `-32602` to answer with. */
export type Validated<T> = { ok: true; value: T } | { ok: false; error: ValidationErrorData };

const fail = (reason: ValidationReason, field: string, detail: string): { ok: false; error: ValidationErrorData } => ({
  ok: false,
  error: { reason, field, detail },
});

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A host's deeper check of a `trigger`; a string is reported verbatim as the failure detail (V5). */
export type TriggerValidator = (trigger: Record<string, unknown>) => string | undefined;

/** What a conditions check accepts: the resume causes honoured and the host's trigger validator. */
export interface ConditionOptions {
  /** Causes the agent advertises (V10). Absent = only `explicit_resume`. */
  resumeCauses?: readonly ResumeCause[];
  triggerValidator?: TriggerValidator;
}

const CONDITION_KEYS = new Set(["onEvent", "trigger", "timeout", "_meta"]);
const TIMEOUT_KEYS = new Set(["durationMinutes", "onTimeout", "_meta"]);
// Whitespace or control characters (C0, DEL, C1) anywhere in the trimmed name.
// eslint-disable-next-line no-control-regex -- matching control characters is what this validation is for.
const BAD_EVENT_CHAR = /[\s\u0000-\u001f\u007f-\u009f]/u;

/** V1–V10 for `resumeWhen` (suspend) or `conditions` (await_resumption). */
export function validateResumeConditions(
  value: unknown,
  field: string,
  options: ConditionOptions = {},
): Validated<ResumeConditions | undefined> {
  const reason = "invalid_resume_conditions";
  if (value === undefined || value === null) return { ok: true, value: undefined }; // V1
  if (!isPlainObject(value)) return fail(reason, field, "must be a JSON object"); // V2
  for (const key of Object.keys(value)) {
    if (!CONDITION_KEYS.has(key))
      return fail(reason, `${field}.${key}`, `unknown key ${JSON.stringify(key)}; allowed: onEvent, trigger, timeout`); // V3
  }
  const out: ResumeConditions = {};
  // V4
  const onEvent = value.onEvent;
  if (onEvent !== undefined && onEvent !== null) {
    const f = `${field}.onEvent`;
    if (typeof onEvent !== "string") return fail(reason, f, "must be a string");
    if (onEvent.length > LIMITS.onEventMaxLength) return fail(reason, f, `longer than ${LIMITS.onEventMaxLength} characters`);
    const trimmed = onEvent.trim();
    if (trimmed === "") return fail(reason, f, "must not be empty");
    if (BAD_EVENT_CHAR.test(trimmed)) return fail(reason, f, "must not contain whitespace or control characters");
    out.onEvent = trimmed;
  }
  // V5
  const trigger = value.trigger;
  if (trigger !== undefined && trigger !== null) {
    const f = `${field}.trigger`;
    if (!isPlainObject(trigger)) return fail(reason, f, "must be a JSON object");
    let size: number;
    try {
      size = Buffer.byteLength(JSON.stringify(trigger), "utf8");
    } catch {
      return fail(reason, f, "is not serializable JSON");
    }
    if (size > LIMITS.triggerMaxBytes) return fail(reason, f, `larger than ${LIMITS.triggerMaxBytes} bytes when serialized`);
    const verdict = options.triggerValidator?.(trigger);
    if (verdict !== undefined) return fail(reason, f, verdict);
    out.trigger = trigger;
  }
  // V6–V8
  const timeout = value.timeout;
  if (timeout !== undefined && timeout !== null) {
    const f = `${field}.timeout`;
    if (!isPlainObject(timeout)) return fail(reason, f, "must be a JSON object");
    for (const key of Object.keys(timeout)) {
      if (!TIMEOUT_KEYS.has(key))
        return fail(reason, `${f}.${key}`, `unknown key ${JSON.stringify(key)}; allowed: durationMinutes, onTimeout`);
    }
    const d = timeout.durationMinutes;
    const df = `${f}.durationMinutes`;
    if (d === undefined || d === null) return fail(reason, df, "is required");
    if (typeof d !== "number" || !Number.isInteger(d)) return fail(reason, df, "must be an integer number of minutes");
    if (d < 1) return fail(reason, df, "must be at least 1");
    if (d > LIMITS.durationMinutesMax) return fail(reason, df, `must be at most ${LIMITS.durationMinutesMax} (366 days)`);
    const o = timeout.onTimeout;
    let onTimeout: OnTimeout = "resume_with_summary";
    if (o !== undefined && o !== null) {
      if (typeof o !== "string" || !(ON_TIMEOUT_ACTIONS as readonly string[]).includes(o)) {
        return fail(reason, `${f}.onTimeout`, `must be one of ${ON_TIMEOUT_ACTIONS.join(", ")}`);
      }
      onTimeout = o as OnTimeout;
    }
    out.timeout = { durationMinutes: d, onTimeout };
  }
  // V10
  const causes = options.resumeCauses ?? ["explicit_resume"];
  const needs: Array<[keyof ResumeConditions, ResumeCause]> = [
    ["onEvent", "external_event"],
    ["trigger", "condition_fired"],
    ["timeout", "timeout"],
  ];
  for (const [key, cause] of needs) {
    if (out[key] !== undefined && !causes.includes(cause)) {
      return fail("unsupported_resume_condition", `${field}.${key}`, `the agent does not support resume cause ${cause}`);
    }
  }
  // V9
  return { ok: true, value: Object.keys(out).length === 0 ? undefined : out };
}

/** Suspend params after validation: `mode` defaults to `finish_step`, conditions normalized. */
export interface SuspendRequest {
  sessionId: string;
  reason?: string;
  resumeWhen?: ResumeConditions;
  mode: SuspendMode;
  /** `_meta["ahpHarness/suspend"].timeoutInput`, fed on `resume_with_input` timeouts. */
  timeoutInput?: unknown;
  _meta?: Record<string, unknown>;
}

const SUSPEND_KEYS = new Set(["sessionId", "reason", "resumeWhen", "mode", "_meta"]);

function validateSessionId(value: unknown, reason: ValidationReason): Validated<string> {
  if (typeof value !== "string" || value === "") return fail(reason, "sessionId", "must be a non-empty string");
  return { ok: true, value };
}

function validateMeta(value: unknown, reason: ValidationReason): Validated<Record<string, unknown> | undefined> {
  if (value === undefined || value === null) return { ok: true, value: undefined };
  if (!isPlainObject(value)) return fail(reason, "_meta", "must be a JSON object");
  return { ok: true, value };
}

/** `session/suspend` params (V1–V13). */
export function validateSuspendRequest(params: unknown, options: ConditionOptions = {}): Validated<SuspendRequest> {
  const reason = "invalid_suspend_params";
  if (!isPlainObject(params)) return fail(reason, "params", "must be a JSON object");
  for (const key of Object.keys(params)) {
    if (!SUSPEND_KEYS.has(key)) return fail(reason, key, `unknown key ${JSON.stringify(key)}`);
  }
  const sessionId = validateSessionId(params.sessionId, reason);
  if (!sessionId.ok) return sessionId;
  const out: SuspendRequest = { sessionId: sessionId.value, mode: "finish_step" };
  const r = params.reason;
  if (r !== undefined && r !== null) {
    if (typeof r !== "string") return fail(reason, "reason", "must be a string");
    if (r.length > LIMITS.reasonMaxLength) return fail(reason, "reason", `longer than ${LIMITS.reasonMaxLength} characters`);
    out.reason = r;
  }
  const m = params.mode;
  if (m !== undefined && m !== null) {
    if (typeof m !== "string" || !(m in MODE_STRENGTH)) return fail(reason, "mode", `must be one of ${SUSPEND_MODES.join(", ")}`);
    out.mode = m as SuspendMode;
  }
  const meta = validateMeta(params._meta, reason);
  if (!meta.ok) return meta;
  if (meta.value !== undefined) {
    out._meta = meta.value;
    const own = meta.value[META.suspend];
    if (own !== undefined && own !== null) {
      if (!isPlainObject(own)) return fail(reason, `_meta["${META.suspend}"]`, "must be a JSON object");
      if (own.timeoutInput !== undefined && own.timeoutInput !== null) out.timeoutInput = own.timeoutInput;
    }
  }
  const conditions = validateResumeConditions(params.resumeWhen, "resumeWhen", options);
  if (!conditions.ok) return conditions;
  if (conditions.value !== undefined) out.resumeWhen = conditions.value;
  return { ok: true, value: out };
}

/** `session/await_resumption` params after validation. */
export interface AwaitResumptionRequest {
  sessionId: string;
  reason: string;
  conditions?: ResumeConditions;
  summary?: string;
  _meta?: Record<string, unknown>;
}

const AWAIT_KEYS = new Set(["sessionId", "reason", "conditions", "summary", "_meta"]);

/** `session/await_resumption` params (V12 required reason, V17 summary). */
export function validateAwaitResumptionRequest(params: unknown, options: ConditionOptions = {}): Validated<AwaitResumptionRequest> {
  const reason = "invalid_suspend_params";
  if (!isPlainObject(params)) return fail(reason, "params", "must be a JSON object");
  for (const key of Object.keys(params)) {
    if (!AWAIT_KEYS.has(key)) return fail(reason, key, `unknown key ${JSON.stringify(key)}`);
  }
  const sessionId = validateSessionId(params.sessionId, reason);
  if (!sessionId.ok) return sessionId;
  const r = params.reason;
  if (typeof r !== "string") return fail(reason, "reason", "is required and must be a string");
  if (r.trim() === "") return fail(reason, "reason", "must not be empty");
  if (r.length > LIMITS.reasonMaxLength) return fail(reason, "reason", `longer than ${LIMITS.reasonMaxLength} characters`);
  const out: AwaitResumptionRequest = { sessionId: sessionId.value, reason: r };
  const s = params.summary;
  if (s !== undefined && s !== null) {
    if (typeof s !== "string") return fail(reason, "summary", "must be a string");
    if (s.length > LIMITS.summaryMaxLength) return fail(reason, "summary", `longer than ${LIMITS.summaryMaxLength} characters`);
    out.summary = s;
  }
  const meta = validateMeta(params._meta, reason);
  if (!meta.ok) return meta;
  if (meta.value !== undefined) out._meta = meta.value;
  const conditions = validateResumeConditions(params.conditions, "conditions", options);
  if (!conditions.ok) return conditions;
  if (conditions.value !== undefined) out.conditions = conditions.value;
  return { ok: true, value: out };
}

/** Resume enrichment read from `session/resume` `_meta["ahpHarness/resume"]` (V14–V16). */
export interface ResumeEnrichment {
  handle?: string;
  /** Present when a non-null input was given. */
  input?: unknown;
  hasInput: boolean;
  /** Present only when given. */
  continueTranscript?: boolean;
}

const RESUME_FIELD = `_meta["${META.resume}"]`;

/**
 * Validates `_meta["ahpHarness/resume"]` of a `session/resume` (handle, input, continueTranscript);
 * undefined when there is none. `continueTranscript: false` is refused unless the bridge can start
 * a fresh transcript.
 */
export function validateResumeEnrichment(
  meta: unknown,
  options: { freshTranscript?: boolean } = {},
): Validated<ResumeEnrichment | undefined> {
  if (!isPlainObject(meta)) return { ok: true, value: undefined };
  const own = meta[META.resume];
  if (own === undefined || own === null) return { ok: true, value: undefined };
  if (!isPlainObject(own)) return fail("invalid_resume_input", RESUME_FIELD, "must be a JSON object");
  const out: ResumeEnrichment = { hasInput: false };
  const h = own.handle;
  if (h !== undefined && h !== null) {
    if (typeof h !== "string" || h === "") return fail("invalid_resume_input", `${RESUME_FIELD}.handle`, "must be a non-empty string");
    if (h.length > LIMITS.handleMaxLength)
      return fail("invalid_resume_input", `${RESUME_FIELD}.handle`, `longer than ${LIMITS.handleMaxLength} characters`);
    out.handle = h;
  }
  const input = own.input;
  if (input !== undefined && input !== null) {
    if (typeof input === "string" && input.trim() === "")
      return fail("invalid_resume_input", `${RESUME_FIELD}.input`, "a string input must not be empty");
    out.input = input;
    out.hasInput = true;
  }
  const c = own.continueTranscript;
  if (c !== undefined && c !== null) {
    if (typeof c !== "boolean") return fail("invalid_resume_input", `${RESUME_FIELD}.continueTranscript`, "must be a boolean");
    if (c === false && options.freshTranscript === false) {
      return fail("fresh_transcript_unsupported", `${RESUME_FIELD}.continueTranscript`, "this agent cannot start from a digest");
    }
    out.continueTranscript = c;
  }
  return { ok: true, value: out };
}

/** The strongest of two modes (T3). */
export const strongerMode = (a: SuspendMode, b: SuspendMode): SuspendMode => (MODE_STRENGTH[b] > MODE_STRENGTH[a] ? b : a);

/** The wire echo of normalized conditions (V9: absent when empty). */
export function echoConditions(c: ResumeConditions | undefined): ResumeConditions | undefined {
  if (c === undefined) return undefined;
  const out: ResumeConditions = {};
  if (c.onEvent !== undefined) out.onEvent = c.onEvent;
  if (c.trigger !== undefined) out.trigger = c.trigger;
  if (c.timeout !== undefined) out.timeout = { durationMinutes: c.timeout.durationMinutes, onTimeout: c.timeout.onTimeout };
  return Object.keys(out).length === 0 ? undefined : out;
}

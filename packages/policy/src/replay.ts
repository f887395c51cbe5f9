/**
 * Replay: re-decides recorded decisions with a candidate policy, in recorded order, with the
 * candidate's session state (rate limits, counters, budgets) built up by the replayed events
 * themselves, on a clock that follows the recorded times. Reports every decision that would
 * change and a summary. Works record by record: memory holds the candidate's state and the
 * summary's counts, never the records.
 *
 * A record is replayable when it carries its payload (the audit log stores payloads only when
 * the writer opted in, `--audit-payloads`) and the payload was not left out for its size.
 * Records without one are counted as not replayable and skipped: they are not re-decided and
 * do not reach the candidate's state. Context and metadata of the event are not in the record,
 * so rules that read `context.*` or `metadata.*` see nothing during a replay.
 */
import { EVENT_TABLE, type AhpEvent, type EventType } from "@ahp/core";
import { EvalContext } from "./compile.js";
import { compileFieldList, DEFAULT_PATH_FIELDS } from "./compile/fields.js";
import { Issues } from "./compile/conditions.js";
import { PolicyEngine } from "./engine.js";
import { loadPolicy, type LoadPolicyOptions, type PolicySource } from "./load.js";
import { decisionTag } from "./shadow.js";
import { SessionState } from "./state.js";

/** The members of an audit record replay reads (a structural subset of `AuditRecord` of `@ahp/audit`). */
export interface ReplayRecord {
  kind: string;
  time: string;
  seq?: number;
  session?: string;
  agent?: string;
  event_type?: string;
  depth?: number;
  form?: string;
  decision?: string;
  rule?: string;
  payload?: unknown;
  payload_truncated?: boolean;
  replica?: string;
}

/** A recorded decision the candidate would decide differently. */
export interface ReplayChange {
  time: string;
  seq?: number;
  replica?: string;
  session: string;
  agent: string;
  event_type: string;
  tool?: string;
  /** A short form of what was asked: the command line or file path (at most 80 characters). */
  subject?: string;
  recorded: { decision: string; rule?: string };
  candidate: { decision: string; rule?: string };
}

/** What a replay found. */
export interface ReplaySummary {
  /** Records read (all kinds). */
  records: number;
  /** Decision records among them. */
  decisions: number;
  /** Decision records re-decided by the candidate. */
  replayed: number;
  /** Decision records that carry no payload (or a truncated one): not re-decided. */
  notReplayable: number;
  /** Notifications replayed into the candidate's state only. */
  notifications: number;
  changed: number;
  /** Changes by `from→to` decision tags. */
  byChange: Record<string, number>;
  /** Changes by the rule behind them: the candidate's deciding rule, else the recorded rule it no longer applies, else `(default)`. */
  byRule: Record<string, number>;
}

/** Options of {@link PolicyReplay}: how the candidate is loaded and where changes go. */
export interface ReplayOptions extends LoadPolicyOptions {
  /** Called with each change as it is found (print it, stream it out). */
  onChange?: (change: ReplayChange) => void;
}

const SUBJECT_MAX = 80;
const short = (s: string) => (s.length > SUBJECT_MAX ? `${s.slice(0, SUBJECT_MAX - 1)}…` : s);

/** Re-decides records one at a time (feed them in recorded order with {@link add}). */
export class PolicyReplay {
  readonly #engine: PolicyEngine;
  readonly #onChange: ((change: ReplayChange) => void) | undefined;
  readonly #paths = compileFieldList(DEFAULT_PATH_FIELDS, [], new Issues(() => undefined));
  #now = 0;
  readonly summary: ReplaySummary = {
    records: 0,
    decisions: 0,
    replayed: 0,
    notReplayable: 0,
    notifications: 0,
    changed: 0,
    byChange: {},
    byRule: {},
  };

  constructor(candidate: PolicySource, options: ReplayOptions = {}) {
    const { onChange, ...load } = options;
    this.#engine = new PolicyEngine(loadPolicy(candidate, load), { clock: () => this.#now });
    this.#onChange = onChange;
  }

  /** Replays one record; returns the change when the candidate decides differently. */
  add(record: ReplayRecord): ReplayChange | undefined {
    const s = this.summary;
    s.records++;
    const isDecision = record.kind === "decision";
    const isNotification = record.kind === "event";
    if (!isDecision && !isNotification) return undefined;
    const type = record.event_type;
    if (type === undefined || !Object.hasOwn(EVENT_TABLE, type)) {
      if (isDecision) {
        s.decisions++;
        s.notReplayable++;
      }
      return undefined;
    }
    if (isDecision) s.decisions++;
    if (record.payload === undefined || record.payload_truncated === true) {
      if (isDecision) s.notReplayable++;
      return undefined;
    }
    const time = Date.parse(record.time);
    if (Number.isFinite(time)) this.#now = Math.max(this.#now, time);
    const event: AhpEvent = {
      event_type: type as EventType,
      session_id: record.session ?? "",
      agent_id: record.agent ?? "",
      depth: record.depth ?? 0,
      timestamp: record.time,
      payload: record.payload,
    };
    if (isNotification) {
      s.notifications++;
      this.#engine.evaluate(event, { notification: true });
      return undefined;
    }
    s.replayed++;
    const result = this.#decide(event, record);
    const recorded = { decision: record.decision ?? "none", ...(record.rule === undefined ? {} : { rule: record.rule }) };
    const candidate = { decision: decisionTag(result.decision), ...(result.ruleId === undefined ? {} : { rule: result.ruleId }) };
    if (recorded.decision === candidate.decision) return undefined;
    const change: ReplayChange = {
      time: record.time,
      ...(record.seq === undefined ? {} : { seq: record.seq }),
      ...(record.replica === undefined ? {} : { replica: record.replica }),
      session: event.session_id,
      agent: event.agent_id,
      event_type: type,
      ...this.#describe(event),
      recorded,
      candidate,
    };
    s.changed++;
    const key = `${recorded.decision}→${candidate.decision}`;
    s.byChange[key] = (s.byChange[key] ?? 0) + 1;
    const rule = candidate.rule ?? recorded.rule ?? "(default)";
    s.byRule[rule] = (s.byRule[rule] ?? 0) + 1;
    this.#onChange?.(change);
    return change;
  }

  /**
   * The candidate's decision: its first matching rule; else, for generic events, its `default`;
   * for typed points, what was recorded (a handler or the protocol default decided then, and
   * would again).
   */
  #decide(event: AhpEvent, record: ReplayRecord): { decision: unknown; ruleId: string | undefined } {
    const engine = this.#engine;
    const outcome = engine.match(event);
    if (outcome.decision !== undefined) {
      engine.complete(event, outcome, outcome.decision, "rule");
      return { decision: outcome.decision, ruleId: outcome.ruleId };
    }
    if (EVENT_TABLE[event.event_type].specialized) {
      const same = record.decision === undefined ? undefined : { decision: record.decision };
      engine.complete(event, outcome, same, "handler");
      return { decision: same, ruleId: undefined };
    }
    const fallback = engine.fallback(event.event_type);
    engine.complete(event, outcome, fallback, "default");
    return { decision: fallback, ruleId: undefined };
  }

  #describe(event: AhpEvent): { tool?: string; subject?: string } {
    const ctx = new EvalContext(event, this.#now, this.#engine.policy.data.settings, () => new SessionState(this.#now));
    const tool = ctx.toolName;
    const text = ctx.shellTexts[0] ?? ctx.strings(this.#paths)[0];
    return { ...(tool === undefined ? {} : { tool }), ...(text === undefined ? {} : { subject: short(text.replace(/\s+/g, " ").trim()) }) };
  }
}

/** Replays `records` (in recorded order) against `candidate` and returns the summary. */
export async function replayRecords(
  records: AsyncIterable<ReplayRecord> | Iterable<ReplayRecord>,
  candidate: PolicySource,
  options: ReplayOptions = {},
): Promise<ReplaySummary> {
  const replay = new PolicyReplay(candidate, options);
  for await (const record of records) replay.add(record);
  return replay.summary;
}

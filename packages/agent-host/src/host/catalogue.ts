/**
 * The catalogue notifier (spec §6.3): derives each session's `SessionSummary` (status aggregated
 * over its chats) and tells root subscribers with `root/sessionAdded`, `root/sessionSummaryChanged`
 * (only the changed fields) and `root/sessionRemoved`. Notifications are not sequenced and never
 * replayed.
 */
import { HARNESS_PROVIDER, ROOT_URI, SessionStatus, STATUS_ACTIVITY_MASK } from "../wire/constants.js";
import type { ChatState, SessionState, SessionSummary } from "../wire/types.js";
import type { SessionRecord } from "./model.js";
import type { ChannelStore } from "./store.js";

const FLAG_MASK = SessionStatus.IsRead | SessionStatus.IsArchived;
const MUTABLE: Array<keyof SessionSummary> = ["title", "status", "activity", "modifiedAt"];

export class Catalogue {
  readonly #last = new Map<string, SessionSummary>();
  /** Per session, the values its last summary compared in `touched` was derived from (see {@link summaryInputs}). */
  readonly #inputs = new Map<string, unknown[]>();

  constructor(readonly store: ChannelStore) {}

  /** The current summary of a session. */
  summary(session: SessionRecord): SessionSummary | undefined {
    const state = this.store.get<SessionState>(session.uri);
    if (state === undefined) return undefined;
    const chats: ChatState[] = [];
    for (const chat of session.chats.values()) {
      const c = this.store.get<ChatState>(chat.uri);
      if (c !== undefined) chats.push(c);
    }
    const main =
      chats.find((c) => c.resource === state.defaultChat) ??
      chats.reduce<ChatState | undefined>((a, c) => (a === undefined || c.modifiedAt > a.modifiedAt ? c : a), undefined);
    let activity = main === undefined ? SessionStatus.Idle : main.status & STATUS_ACTIVITY_MASK;
    let activityText = main?.activity;
    const waiting = chats.find((c) => (c.status & STATUS_ACTIVITY_MASK) === SessionStatus.InputNeeded);
    if (waiting !== undefined) {
      activity = SessionStatus.InputNeeded;
      activityText = waiting.activity ?? activityText;
    } else if (chats.some((c) => (c.status & STATUS_ACTIVITY_MASK) === SessionStatus.Error)) activity = SessionStatus.Error;
    let modifiedAt = session.createdAt;
    for (const c of chats) if (c.modifiedAt > modifiedAt) modifiedAt = c.modifiedAt;
    const summary: SessionSummary = {
      resource: session.uri,
      provider: HARNESS_PROVIDER,
      title: state.title,
      status: (state.status & FLAG_MASK) | activity,
      createdAt: session.createdAt,
      modifiedAt,
    };
    if (activityText !== undefined) summary.activity = activityText;
    const runMeta = this.#meta(session);
    if (runMeta !== undefined) summary._meta = runMeta;
    return summary;
  }

  readonly #metaCache = new WeakMap<object, Record<string, unknown> | undefined>();

  /** The summary `_meta`, recomputed only when the session's `_meta` object was replaced. */
  #meta(session: SessionRecord): Record<string, unknown> | undefined {
    if (this.#metaCache.has(session.meta)) return this.#metaCache.get(session.meta);
    const meta = summaryMeta(session);
    this.#metaCache.set(session.meta, meta);
    return meta;
  }

  added(session: SessionRecord): void {
    const summary = this.summary(session);
    if (summary === undefined) return;
    this.#last.set(session.uri, summary);
    this.#inputs.delete(session.uri);
    this.store.notify(ROOT_URI, "root/sessionAdded", { channel: ROOT_URI, summary });
  }

  /**
   * Sends the fields that changed since the last notification, if any. When everything the summary
   * is derived from is the same as at the previous call, the summary is the same too and was
   * already compared (and, if it differed, sent), so nothing is built.
   */
  touched(session: SessionRecord): void {
    const previous = this.#last.get(session.uri);
    if (previous === undefined) return;
    const state = this.store.get<SessionState>(session.uri);
    if (state === undefined) return;
    let inputs = this.#inputs.get(session.uri);
    if (inputs === undefined) this.#inputs.set(session.uri, (inputs = []));
    if (!summaryInputs(this.store, session, state, inputs)) return;
    const summary = this.summary(session);
    if (summary === undefined) return;
    const changes: Partial<SessionSummary> = {};
    let changed = false;
    for (const key of MUTABLE) {
      if (previous[key] !== summary[key]) {
        (changes as Record<string, unknown>)[key] = summary[key];
        changed = true;
      }
    }
    // Same session `_meta` object means the same summary `_meta` object (cached).
    if (previous._meta !== summary._meta) {
      changes._meta = summary._meta;
      changed = true;
    }
    if (!changed) return;
    this.#last.set(session.uri, summary);
    this.store.notify(ROOT_URI, "root/sessionSummaryChanged", { channel: ROOT_URI, session: session.uri, changes });
  }

  removed(session: SessionRecord): void {
    this.#last.delete(session.uri);
    this.#inputs.delete(session.uri);
    this.store.notify(ROOT_URI, "root/sessionRemoved", { channel: ROOT_URI, session: session.uri });
  }

  /** Every known summary, most recently modified first. */
  list(sessions: Iterable<SessionRecord>): SessionSummary[] {
    const out: SessionSummary[] = [];
    for (const s of sessions) {
      const summary = this.summary(s);
      if (summary !== undefined) out.push(summary);
    }
    return out.sort((a, b) => (a.modifiedAt < b.modifiedAt ? 1 : a.modifiedAt > b.modifiedAt ? -1 : 0));
  }
}

/**
 * Writes into `inputs` every value {@link Catalogue.summary} reads that can change: the session
 * state's title, status and default chat, the session `_meta` object, and per chat (in order) its
 * URI and its state's resource, status, activity and modification time (undefined when the chat
 * has no state). Returns whether anything differed from what `inputs` held.
 */
function summaryInputs(store: ChannelStore, session: SessionRecord, state: SessionState, inputs: unknown[]): boolean {
  let changed = put(inputs, 0, state.title);
  changed = put(inputs, 1, state.status) || changed;
  changed = put(inputs, 2, state.defaultChat) || changed;
  changed = put(inputs, 3, session.meta) || changed;
  let at = 4;
  for (const chat of session.chats.values()) {
    const c = store.get<ChatState>(chat.uri);
    changed = put(inputs, at, chat.uri) || changed;
    changed = put(inputs, at + 1, c?.resource) || changed;
    changed = put(inputs, at + 2, c?.status) || changed;
    changed = put(inputs, at + 3, c?.activity) || changed;
    changed = put(inputs, at + 4, c?.modifiedAt) || changed;
    at += 5;
  }
  if (inputs.length !== at) {
    inputs.length = at;
    changed = true;
  }
  return changed;
}

/** Stores `value` at `inputs[at]`; true when the slot did not hold it. */
function put(inputs: unknown[], at: number, value: unknown): boolean {
  if (at < inputs.length && inputs[at] === value) return false;
  inputs[at] = value;
  return true;
}

/** The small `_meta` subset of a summary: the session's lifecycle, run status and task counts per chat. */
function summaryMeta(session: SessionRecord): Record<string, unknown> | undefined {
  const runs = session.meta["ahpHarness/run"] as Record<string, { status?: unknown }> | undefined;
  const tasks = session.meta["ahpHarness/taskList"] as Record<string, { tasks?: Array<{ status?: unknown }> }> | undefined;
  const lifecycle = session.meta["ahpHarness/lifecycle"];
  if (runs === undefined && tasks === undefined && lifecycle === undefined) return undefined;
  const out: Record<string, unknown> = {};
  if (lifecycle !== undefined) out["ahpHarness/lifecycle"] = lifecycle;
  if (runs !== undefined) out["ahpHarness/runStatus"] = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v.status]));
  if (tasks !== undefined) {
    out["ahpHarness/tasks"] = Object.fromEntries(
      Object.entries(tasks).map(([k, v]) => [
        k,
        { done: (v.tasks ?? []).filter((t) => t.status === "completed").length, total: (v.tasks ?? []).length },
      ]),
    );
  }
  return out;
}

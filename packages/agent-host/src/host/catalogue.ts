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
    this.store.notify(ROOT_URI, "root/sessionAdded", { channel: ROOT_URI, summary });
  }

  /** Sends the fields that changed since the last notification, if any. */
  touched(session: SessionRecord): void {
    const previous = this.#last.get(session.uri);
    const summary = this.summary(session);
    if (previous === undefined || summary === undefined) return;
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

/** The small `_meta` subset of a summary: run status and task counts per chat. */
function summaryMeta(session: SessionRecord): Record<string, unknown> | undefined {
  const runs = session.meta["ahpHarness/run"] as Record<string, { status?: unknown }> | undefined;
  const tasks = session.meta["ahpHarness/taskList"] as Record<string, { tasks?: Array<{ status?: unknown }> }> | undefined;
  if (runs === undefined && tasks === undefined) return undefined;
  const out: Record<string, unknown> = {};
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

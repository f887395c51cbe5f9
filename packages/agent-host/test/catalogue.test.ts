/**
 * The catalogue's `root/sessionSummaryChanged` (spec §6.3): sent once per change of a summary
 * field, never when nothing the summary is derived from changed (the catalogue then skips building
 * the summary), and always with the fields a summary computed from scratch has.
 */
import { describe, expect, it } from "vitest";
import { Catalogue } from "../src/host/catalogue.js";
import type { OutFrame } from "../src/host/fanout.js";
import { initialChatState, initialSessionState, type ChatRecord, type SessionRecord } from "../src/host/model.js";
import { ChannelStore } from "../src/host/store.js";
import { ROOT_URI, SessionStatus } from "../src/wire/constants.js";
import type { ChatState, SessionSummary } from "../src/wire/types.js";

const SESSION = "ahp-session:/s1";
const MAIN = "ahp-chat:/s1-main";
const SUB = "ahp-chat:/s1-sub";

function chatRecord(uri: string): ChatRecord {
  return {
    agentId: uri,
    uri,
    depth: 0,
    implicit: false,
    turnStartedAt: 0,
    turnCounter: 0,
    toolCounter: 0,
    partCounter: 0,
    requestCounter: 0,
    lastEventAt: 0,
    tools: new Map(),
  };
}

function setup() {
  let now = Date.parse("2026-11-01T00:00:00Z");
  const store = new ChannelStore(() => now);
  const frames: Array<{ method: string; params: { changes?: Partial<SessionSummary>; summary?: SessionSummary } }> = [];
  store.addSubscriber(ROOT_URI, { send: (frame: OutFrame) => frames.push(JSON.parse(frame.text)) });
  const session: SessionRecord = {
    sessionId: "s1",
    agentSessionId: "s1",
    run: 1,
    hadTurns: false,
    perCall: false,
    owners: new Set(),
    uri: SESSION,
    createdAt: "2026-11-01T00:00:00.000Z",
    ended: false,
    chats: new Map([["main", chatRecord(MAIN)]]),
    rules: [],
    meta: {},
    connections: new Set(),
  };
  store.create(SESSION, initialSessionState("Agent session s1"));
  store.create(MAIN, initialChatState(MAIN, "Main agent", "2026-11-01T00:00:00.000Z"));
  store.commit(SESSION, { type: "session/defaultChatChanged", defaultChat: MAIN });
  const catalogue = new Catalogue(store);
  catalogue.added(session);
  return { store, session, catalogue, frames, tick: () => (now += 1000) };
}

describe("catalogue summary changes", () => {
  it("sends each change once, nothing when no input changed, and the fields of a fresh summary", () => {
    const { store, session, catalogue, frames, tick } = setup();
    expect(frames.map((f) => f.method)).toEqual(["root/sessionAdded"]);
    const changes = () => {
      const out = frames.splice(1).map((f) => f.params.changes);
      return out;
    };
    // A turn with a tool call: status and modification time change once.
    tick();
    store.commit(MAIN, { type: "chat/turnStarted", turnId: "t1", startedAt: "x", message: { text: "go", origin: { kind: "agent" } } });
    catalogue.touched(session);
    catalogue.touched(session);
    expect(changes()).toEqual([{ status: SessionStatus.InProgress | (SessionStatus.IsRead * 0), modifiedAt: "2026-11-01T00:00:01.000Z" }]);
    // Actions that leave every summary input alone send nothing.
    store.commit(MAIN, { type: "chat/toolCallStart", turnId: "t1", toolCallId: "c1", toolName: "bash", displayName: "Bash" });
    catalogue.touched(session);
    store.commit(MAIN, { type: "chat/toolCallReady", turnId: "t1", toolCallId: "c1", invocationMessage: "bash", confirmed: "not-needed" });
    catalogue.touched(session);
    expect(changes()).toEqual([]);
    // Activity, then back: two changes ("" is not how a summary clears it: the field is absent, so undefined).
    store.commit(MAIN, { type: "chat/activityChanged", activity: "Executing" });
    catalogue.touched(session);
    catalogue.touched(session);
    store.commit(MAIN, { type: "chat/activityChanged" });
    catalogue.touched(session);
    expect(changes()).toEqual([{ activity: "Executing" }, { activity: undefined }]);
    // A new session `_meta` object (run status) reaches the summary's `_meta`.
    session.meta = { "ahpHarness/run": { [MAIN]: { runId: "r1", status: "executing" } } };
    catalogue.touched(session);
    catalogue.touched(session);
    expect(changes()).toEqual([{ _meta: { "ahpHarness/runStatus": { [MAIN]: "executing" } } }]);
    // A second chat that waits for input makes the session wait; its removal from the record undoes it.
    tick();
    session.chats.set("sub", chatRecord(SUB));
    store.create(SUB, {
      ...initialChatState(SUB, "sub", "2026-11-01T00:00:02.000Z"),
      status: SessionStatus.InputNeeded,
      activity: "Asking",
    });
    catalogue.touched(session);
    catalogue.touched(session);
    session.chats.delete("sub");
    catalogue.touched(session);
    expect(changes()).toEqual([
      { status: SessionStatus.InputNeeded, activity: "Asking", modifiedAt: "2026-11-01T00:00:02.000Z" },
      { status: SessionStatus.InProgress, activity: undefined, modifiedAt: "2026-11-01T00:00:01.000Z" },
    ]);
    // Only the modification time of a chat (its state replaced, as replication does).
    store.create(MAIN, { ...store.get<ChatState>(MAIN)!, modifiedAt: "2026-11-01T00:00:05.000Z" });
    catalogue.touched(session);
    catalogue.touched(session);
    expect(changes()).toEqual([{ modifiedAt: "2026-11-01T00:00:05.000Z" }]);
    // The title of the session state.
    store.commit(SESSION, { type: "session/titleChanged", title: "Renamed" });
    catalogue.touched(session);
    expect(changes()).toEqual([{ title: "Renamed" }]);
    // After all of that, the last sent values are those of a summary built from scratch.
    const fresh = new Catalogue(store).summary(session)!;
    expect(fresh).toMatchObject({ title: "Renamed", status: SessionStatus.InProgress, modifiedAt: "2026-11-01T00:00:05.000Z" });
    expect(fresh.activity).toBeUndefined();
    expect(store.get<ChatState>(MAIN)!.activeTurn!.responseParts).toHaveLength(1);
  });
});

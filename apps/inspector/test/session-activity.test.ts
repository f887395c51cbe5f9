/** The line under a session's title follows its main chat's turn, not the session's first activity (pure; no browser). */
import type { ChatState, SessionState, Turn } from "@ahp/agent-host/client";
import { describe, expect, it } from "vitest";
import { mainChatOf, sessionActivity } from "../src/page/session-activity.js";

const session = { activity: "Started", defaultChat: "ahp-chat:/main", chats: [] } as unknown as SessionState;
const turn = (state: Turn["state"]) =>
  ({ id: "t1", startedAt: "2026-11-28T00:00:00Z", message: { text: "run it" }, responseParts: [], duration: 5, state }) as unknown as Turn;
const chat = (c: Partial<ChatState>) => ({ turns: [], ...c }) as unknown as ChatState;

describe("session activity", () => {
  it("says Started only before the first turn; then the running turn's activity, then how the last turn ended", () => {
    expect(sessionActivity(false, session, undefined)).toBe("Started");
    expect(sessionActivity(false, session, chat({}))).toBe("Started");
    const active = { id: "t1", startedAt: "2026-11-28T00:00:00Z", message: { text: "run it" }, responseParts: [] };
    expect(sessionActivity(false, session, chat({ activeTurn: active as never, activity: "Running Bash" }))).toBe("Running Bash");
    expect(sessionActivity(false, session, chat({ activeTurn: active as never }))).toBe("turn running");
    expect(sessionActivity(false, session, chat({ turns: [turn("complete")] }))).toBe("turn complete");
    expect(sessionActivity(false, session, chat({ turns: [turn("complete"), turn("cancelled")] }))).toBe("turn cancelled");
    expect(sessionActivity(false, session, chat({ turns: [turn("error")] }))).toBe("turn failed");
    expect(sessionActivity(true, session, chat({ turns: [turn("complete")] }))).toBe("ended");
  });

  it("reads the main chat from the default chat, else the first chat", () => {
    expect(mainChatOf(session)).toBe("ahp-chat:/main");
    expect(mainChatOf({ chats: [{ resource: "ahp-chat:/first" }] } as unknown as SessionState)).toBe("ahp-chat:/first");
    expect(mainChatOf({} as SessionState)).toBeUndefined();
  });
});

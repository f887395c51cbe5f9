/** The line under a session's title: what the session is doing now, from the state of its main chat. */
import type { ChatState, SessionState } from "@ahp/agent-host/client";

const TURN_ENDED: Record<string, string> = { complete: "turn complete", cancelled: "turn cancelled", error: "turn failed" };

/**
 * `ended` for an ended session; while a turn of the main chat runs, its activity (or `turn running`);
 * after it, how the last turn ended; before any turn, the session's own activity (`Started`).
 */
export function sessionActivity(ended: boolean, session: SessionState, main: ChatState | undefined): string | undefined {
  if (ended) return "ended";
  if (main?.activeTurn !== undefined) return main.activity ?? "turn running";
  const last = main?.turns.at(-1);
  if (last !== undefined) return TURN_ENDED[last.state] ?? `turn ${last.state}`;
  return session.activity;
}

/** The URI of a session's main chat: its default chat, else its first. */
export const mainChatOf = (session: SessionState): string | undefined => session.defaultChat ?? session.chats?.[0]?.resource;

/** The reducers of the channels this package serves. Browser-safe. */
import type { ChannelState, ChatState, RootState, SessionState, StateAction } from "../wire/types.js";
import { CHAT_SCHEME, ROOT_URI, SESSION_SCHEME } from "../wire/constants.js";
import { reduceChat } from "./chat.js";
import { reduceRoot, reduceSession } from "./session.js";
import type { Clock } from "./clock.js";

export { reduceChat, chatStatus } from "./chat.js";
export { reduceRoot, reduceSession, blocksOnHuman } from "./session.js";
export { systemClock, isoNow, type Clock } from "./clock.js";

/** The kind of channel a URI names (see {@link channelKind}); `unknown` for a scheme this package does not serve. */
export type ChannelKind = "root" | "session" | "chat" | "telemetry" | "unknown";

/** The kind of channel a URI names, from its scheme. */
export function channelKind(uri: string): ChannelKind {
  if (uri === ROOT_URI) return "root";
  if (uri.startsWith(SESSION_SCHEME)) return "session";
  if (uri.startsWith(CHAT_SCHEME)) return "chat";
  if (uri.startsWith("ahp-otlp:")) return "telemetry";
  return "unknown";
}

/** Reduces an action on the channel named by `uri` with the reducer of its kind. */
export function reduceChannel(uri: string, state: ChannelState, action: StateAction, clock: Clock): ChannelState {
  switch (channelKind(uri)) {
    case "root":
      return reduceRoot(state as RootState, action, clock);
    case "session":
      return reduceSession(state as SessionState, action, clock);
    case "chat":
      return reduceChat(state as ChatState, action, clock);
    default:
      return state;
  }
}

/**
 * Client-dispatched actions (spec §5.5–§5.6): validation pipeline and this host's stance per
 * action type. A rejected action is echoed (sequenced, logged, broadcast, never reduced); an
 * accepted one is committed with its `origin`, then its side effect runs.
 */
import { channelKind } from "../reducers/index.js";
import type { ActionOrigin, ChatState, StateAction } from "../wire/types.js";
import { ROLE_RANK, type ApprovalBroker, type Dispatcher } from "./approvals.js";
import { commitChat } from "./model.js";
import type { Projector } from "./projector.js";
import type { Sessions } from "./sessions.js";

const NO_INPUT = "this host supervises agents; it cannot send them input";
const NO_CLIENT_TOOLS = "this host has no client-executed tools and no result review";
const UNSUPPORTED = "not supported by this host";

const INPUT_STARTING = new Set([
  "chat/turnStarted",
  "chat/pendingMessageSet",
  "chat/pendingMessageRemoved",
  "chat/queuedMessagesReordered",
  "chat/truncated",
]);
const CLIENT_TOOLS = new Set(["chat/toolCallComplete", "chat/toolCallContentChanged", "chat/toolCallResultConfirmed"]);
const PRESENTATION = new Set(["session/isReadChanged", "session/isArchivedChanged", "session/titleChanged"]);

export class ClientActions {
  constructor(
    readonly sessions: Sessions,
    readonly broker: ApprovalBroker,
    readonly projector: Projector,
    readonly touched: (sessionUri: string) => void,
  ) {}

  get store() {
    return this.sessions.store;
  }

  /**
   * Runs the pipeline for one `dispatchAction`. Returns "dropped" when nothing was sent (malformed
   * or unknown channel), otherwise "committed" or "rejected".
   */
  dispatch(params: unknown, who: Dispatcher): "dropped" | "committed" | "rejected" {
    if (params === null || typeof params !== "object") return "dropped";
    const { channel, clientSeq, action } = params as { channel?: unknown; clientSeq?: unknown; action?: unknown };
    if (typeof channel !== "string" || typeof clientSeq !== "number" || !Number.isFinite(clientSeq)) return "dropped";
    if (action === null || typeof action !== "object" || typeof (action as StateAction).type !== "string") return "dropped";
    if (!this.store.has(channel)) return "dropped";
    const origin: ActionOrigin = { clientId: who.clientId, clientSeq };
    const reason = this.#apply(channel, action as StateAction, origin, who);
    if (reason === undefined) return "committed";
    this.store.reject(channel, action as StateAction, origin, reason);
    return "rejected";
  }

  /** Returns a rejection reason, or undefined after committing. */
  #apply(channel: string, action: StateAction, origin: ActionOrigin, who: Dispatcher): string | undefined {
    const type = action.type;
    const kind = channelKind(channel);
    if (INPUT_STARTING.has(type)) return NO_INPUT;
    if (CLIENT_TOOLS.has(type)) return NO_CLIENT_TOOLS;
    const scope = type.slice(0, type.indexOf("/"));
    if ((scope === "chat" || scope === "session") && scope !== kind) return `${type} does not belong on a ${kind} channel`;
    const a = action as Record<string, unknown>;
    switch (type) {
      case "chat/toolCallConfirmed":
        return this.broker.answerTool(channel, action, origin, who);
      case "chat/inputCompleted":
        return this.broker.answerInput(channel, action, origin, who);
      case "chat/inputAnswerChanged":
        if (ROLE_RANK[who.role] < ROLE_RANK.approver) return "answering input requests needs the approver role";
        if (!this.broker.hasOpenInput(channel, a.requestId)) return "no open input request with that id";
        if (typeof a.questionId !== "string") return "questionId must be a string";
        this.#commitChat(channel, action, origin);
        return undefined;
      case "chat/turnCancelled": {
        if (who.role !== "operator") return "cancelling a run needs the operator role";
        const entry = this.sessions.chatsByUri.get(channel);
        const state = this.store.get<ChatState>(channel);
        if (entry === undefined || state?.activeTurn === undefined || state.activeTurn.id !== a.turnId)
          return "no active turn with that id";
        this.projector.cancelled(entry.session, entry.chat, who.principal, () => this.#commitChat(channel, action, origin));
        return undefined;
      }
      case "chat/draftChanged":
        if (who.role === "viewer") return "viewers cannot change state";
        this.#commitChat(channel, action, origin);
        return undefined;
      case "session/activeClientSet":
      case "session/activeClientRemoved": {
        const clientId = type === "session/activeClientSet" ? (a.activeClient as { clientId?: unknown } | undefined)?.clientId : a.clientId;
        if (clientId !== who.clientId) return "a client may only set or remove itself";
        this.store.commit(channel, action, origin);
        return undefined;
      }
      default:
        if (PRESENTATION.has(type)) {
          if (who.role === "viewer") return "viewers cannot change state";
          this.store.commit(channel, action, origin);
          this.touched(channel);
          return undefined;
        }
        return UNSUPPORTED;
    }
  }

  #commitChat(channel: string, action: StateAction, origin: ActionOrigin): void {
    const entry = this.sessions.chatsByUri.get(channel);
    if (entry === undefined) {
      this.store.commit(channel, action, origin);
      return;
    }
    commitChat(this.store, entry.session, entry.chat, action, origin);
    this.touched(entry.session.uri);
  }
}

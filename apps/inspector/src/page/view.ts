/**
 * Rendering: the session list, and for the selected session its run status, task list,
 * verification, and each chat's timeline of tool calls with the decision, reason and rule, with
 * the approval buttons on pending escalations for principals who may approve.
 */
import {
  META,
  needsInput,
  type ChatInputRequest,
  type ChatInputResponse,
  type ChatState,
  type Meta,
  type ResponsePart,
  type SessionState,
  type StringOrMarkdown,
  type ToolCallState,
} from "@ahp/agent-host/client";
import { h, type Child } from "./dom.js";
import { inputCard, type InputHandlers } from "./input-card.js";
import { decisionOf, ownReason, recordOf, toolOutcome, type Decision } from "./outcome.js";
import { mainChatOf, sessionActivity } from "./session-activity.js";

export interface ApprovalHandlers extends InputHandlers {
  canApprove: boolean;
  approve(chat: string, turnId: string, tool: ToolCallState): void;
  deny(chat: string, turnId: string, tool: ToolCallState): void;
  editAndApprove(chat: string, turnId: string, tool: ToolCallState, input: string): void;
  /** Tool calls whose input editor is open, with the text typed so far. */
  drafts: Map<string, string>;
  redraw(): void;
}

const text = (v: StringOrMarkdown | undefined): string | undefined =>
  v === undefined ? undefined : typeof v === "string" ? v : v.markdown;
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const perChat = (session: SessionState, key: string, chat: string): Record<string, unknown> | undefined => {
  const value = obj(session._meta?.[key])[chat];
  return value === undefined ? undefined : obj(value);
};

/** Time left until `deadline` for people: "answer within 4:59", or "deadline passed". */
export function countdownText(deadline: string, now = Date.now()): string {
  const left = Date.parse(deadline) - now;
  if (!Number.isFinite(left)) return "";
  if (left <= 0) return "deadline passed";
  const total = Math.ceil(left / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = String(total % 60).padStart(2, "0");
  return `answer within ${h > 0 ? `${h}:${String(m).padStart(2, "0")}` : m}:${sec}`;
}

/** Updates every countdown on the page (called once a second; no full redraw). */
export function tickCountdowns(root: ParentNode, now = Date.now()): void {
  for (const el of root.querySelectorAll<HTMLElement>("[data-deadline]")) el.textContent = countdownText(el.dataset.deadline ?? "", now);
}

/** A tool call's status in words (the raw status stays in `data-status`). */
function statusWords(tool: ToolCallState, d: Decision): string {
  switch (tool.status) {
    case "pending-confirmation":
      return "waiting for approval";
    case "streaming":
      return "preparing";
    case "running":
      return "running";
    case "completed":
      return "done";
    case "cancelled":
      return d.decision === "allow" || d.decision === "modify" ? "stopped" : "not run";
    default:
      return String(tool.status);
  }
}

/** What a waiting card says besides its buttons: who it waits for, for how long. */
function waitingFor(d: Decision): HTMLElement {
  const target = d.escalationTarget;
  return h(
    "p",
    { class: "waiting-for" },
    "Waiting for a person",
    ...(target === undefined ? [] : [" · escalated to ", h("span", { class: "target", "data-target": target }, target)]),
    ...(d.deadline === undefined
      ? []
      : [" · ", h("span", { class: "countdown", "data-deadline": d.deadline, title: d.deadline }, countdownText(d.deadline))]),
  );
}

/** The tool input as pretty JSON (the host sends compact JSON text). */
export function prettyInput(input: unknown): string {
  if (typeof input === "string") {
    try {
      return JSON.stringify(JSON.parse(input), null, 2);
    } catch {
      return input;
    }
  }
  return JSON.stringify(input ?? {}, null, 2);
}

function toolCard(chat: string, turnId: string, tool: ToolCallState, actions: ApprovalHandlers): HTMLElement {
  const d = decisionOf(tool);
  const outcome = toolOutcome(tool);
  const pending = tool.status === "pending-confirmation";
  // The reason, unless it only repeats the outcome line ("Denied by bob").
  const reason = ownReason(d.reason ?? text(tool.reasonMessage), outcome);
  const draft = actions.drafts.get(tool.toolCallId);
  const buttons: Child =
    pending && actions.canApprove
      ? h(
          "div",
          { class: "actions" },
          h("button", { class: "approve", "data-action": "approve", onclick: () => actions.approve(chat, turnId, tool) }, "Approve"),
          h("button", { class: "deny", "data-action": "deny", onclick: () => actions.deny(chat, turnId, tool) }, "Deny"),
          tool.editable === true && draft === undefined
            ? h(
                "button",
                {
                  class: "edit",
                  "data-action": "edit",
                  onclick: () => {
                    actions.drafts.set(tool.toolCallId, prettyInput(tool.toolInput));
                    actions.redraw();
                  },
                },
                "Edit and approve",
              )
            : null,
        )
      : null;
  const editor: Child =
    pending && actions.canApprove && draft !== undefined
      ? h(
          "form",
          {
            class: "editor",
            onsubmit: (event) => {
              event.preventDefault();
              actions.editAndApprove(chat, turnId, tool, actions.drafts.get(tool.toolCallId) ?? draft);
            },
          },
          (() => {
            const area = h("textarea", {
              "aria-label": "Tool input (JSON)",
              rows: 6,
              spellcheck: "false",
              "data-draft-key": `tool:${tool.toolCallId}`,
            });
            area.value = draft;
            area.addEventListener("input", () => actions.drafts.set(tool.toolCallId, area.value));
            return area;
          })(),
          h("button", { type: "submit", class: "approve", "data-action": "submit-edit" }, "Approve edited input"),
          h(
            "button",
            {
              type: "button",
              onclick: () => {
                actions.drafts.delete(tool.toolCallId);
                actions.redraw();
              },
            },
            "Cancel",
          ),
        )
      : null;
  const input = tool.toolInput ?? text(tool.invocationMessage);
  return h(
    "article",
    { class: `tool status-${tool.status}${pending ? " pending" : ""}`, "data-tool-call-id": tool.toolCallId, "data-status": tool.status },
    h(
      "header",
      {},
      h("b", {}, tool.displayName || tool.toolName),
      h("span", { class: "status" }, statusWords(tool, d)),
      d.decision === undefined ? null : h("span", { class: `decision decision-${d.decision}`, "data-decision": d.decision }, d.decision),
    ),
    input === undefined ? null : h("pre", { class: "input" }, typeof input === "string" ? input : JSON.stringify(input)),
    reason === undefined ? null : h("p", { class: "reason" }, reason),
    d.rules === undefined || d.rules.length === 0 ? null : h("p", { class: "rule" }, "rule: ", h("code", {}, d.rules.join(", "))),
    outcome === undefined
      ? pending
        ? waitingFor(d)
        : d.decidedBy === undefined
          ? null
          : h("p", { class: "by" }, d.decidedBy === "policy" ? "decided by policy" : `decided by ${d.decidedBy}`)
      : h("p", { class: `outcome outcome-${outcome.kind}`, "data-outcome": outcome.kind }, outcome.text),
    pending && !actions.canApprove ? h("p", { class: "waiting" }, "Waiting for an approver") : null,
    buttons,
    editor,
  );
}

/** The records of confirmation outcomes in a turn, by input request id (the notices the host adds after each). */
function inputRecords(parts: readonly ResponsePart[]): Map<string, Decision> {
  const records = new Map<string, Decision>();
  for (const p of parts) {
    const record = p.kind === "systemNotification" ? recordOf((p as { _meta?: Meta })._meta) : undefined;
    if (record?.requestId !== undefined) records.set(record.requestId, record);
  }
  return records;
}

function part(
  chat: string,
  turnId: string,
  p: ResponsePart,
  records: Map<string, Decision>,
  over: boolean,
  actions: ApprovalHandlers,
): Child {
  if (p.kind === "toolCall") return toolCard(chat, turnId, (p as { toolCall: ToolCallState }).toolCall, actions);
  if (p.kind === "systemNotification") {
    // A confirmation's outcome is shown on its card.
    if (recordOf((p as { _meta?: Meta })._meta)?.requestId !== undefined) return null;
    return h("p", { class: "notice" }, text((p as { content: StringOrMarkdown }).content) ?? "");
  }
  if (p.kind === "markdown") return h("p", { class: "message" }, String((p as { content: unknown }).content));
  if (p.kind === "inputRequest") {
    const { request, response } = p as { request: ChatInputRequest; response?: ChatInputResponse };
    return inputCard(chat, request, response, records.get(request.id), over, actions);
  }
  return null;
}

function chatView(session: SessionState, uri: string, chat: ChatState | undefined, actions: ApprovalHandlers): HTMLElement {
  if (chat === undefined) return h("section", { class: "chat" }, h("p", { class: "dim" }, "Loading…"));
  const run = perChat(session, META.run, uri);
  const tasks = perChat(session, META.taskList, uri);
  const verification = perChat(session, META.verification, uri);
  const turns = [...chat.turns, ...(chat.activeTurn === undefined ? [] : [chat.activeTurn])];
  return h(
    "section",
    { class: "chat", "data-chat": uri },
    h(
      "h3",
      {},
      chat.title,
      run === undefined ? null : h("span", { class: "run", "data-run-status": String(run.status) }, `run ${String(run.status)}`),
    ),
    chat.activity === undefined ? null : h("p", { class: "dim" }, chat.activity),
    tasks === undefined
      ? null
      : h(
          "ul",
          { class: "tasks" },
          ...(Array.isArray(tasks.tasks) ? tasks.tasks : []).map((t) => {
            const task = obj(t);
            return h(
              "li",
              { class: `task task-${String(task.status)}` },
              h("span", { class: "status" }, String(task.status)),
              String(task.title ?? task.id),
            );
          }),
        ),
    verification === undefined
      ? null
      : h(
          "div",
          { class: `verification verification-${String(verification.status)}` },
          `verification ${String(verification.status)}`,
          ...(Array.isArray(verification.checks) ? verification.checks : []).map((c) =>
            h("div", { class: "dim" }, `${String(obj(c).subject)}: ${String(obj(c).status)}`),
          ),
          ...(Array.isArray(verification.residualRisks) ? verification.residualRisks : []).map((r) =>
            h("div", { class: "risk" }, `risk: ${String(r)}`),
          ),
        ),
    ...turns.map((turn) =>
      h(
        "div",
        { class: "turn" },
        h("p", { class: "prompt" }, turn.message.text),
        ...((records) => turn.responseParts.map((p) => part(uri, turn.id, p, records, "state" in turn, actions)))(
          inputRecords(turn.responseParts),
        ),
        "state" in turn ? h("p", { class: "dim" }, `turn ${String(turn.state)}`) : null,
      ),
    ),
  );
}

/** One session in the list: its summary, its reduced state once subscribed, and its lifecycle (ADR 0161). */
export interface SessionEntry {
  uri: string;
  title: string;
  status: number;
  state: SessionState | undefined;
  /** The agent ended it (or went away past the grace period). */
  ended: boolean;
  /** It never had a turn (e.g. the session of a handshake alone). */
  empty: boolean;
  /** The session id the agent used (several runs may share one). */
  agentSessionId?: string;
}

export interface PageModel {
  sessions: SessionEntry[];
  selected: string | undefined;
  chat(uri: string): ChatState | undefined;
  select(uri: string): void;
  /** Whether the "N ended sessions" group is open, and whether it also lists the empty ones. */
  showEnded: boolean;
  showEmpty: boolean;
  setShowEnded(open: boolean): void;
  setShowEmpty(show: boolean): void;
  /** A `#session=` link that names no session here (removed after retention, or a mistyped link). */
  missingLink?: string;
}

/** A session's lifecycle from its summary `_meta` (a host without it: active, not empty). */
export function lifecycleOf(meta: Meta | undefined): { ended: boolean; empty: boolean; agentSessionId?: string } {
  const l = obj(meta?.[META.lifecycle]);
  return {
    ended: l.state === "ended",
    empty: l.hadTurns === false,
    ...(typeof l.agentSessionId === "string" ? { agentSessionId: l.agentSessionId } : {}),
  };
}

function sessionButton(model: PageModel, s: SessionEntry): HTMLElement {
  return h(
    "button",
    {
      class: `session${s.uri === model.selected ? " selected" : ""}${needsInput(s.status) ? " needs-input" : ""}${s.empty ? " empty" : ""}`,
      "data-session": s.uri,
      "data-lifecycle": s.ended ? "ended" : "active",
      onclick: () => model.select(s.uri),
    },
    s.title,
    needsInput(s.status) ? h("span", { class: "badge" }, "approval needed") : null,
    s.ended ? h("span", { class: "ended" }, s.empty ? "ended · empty" : "ended") : null,
  );
}

/**
 * The session list: active sessions on top (newest first); ended ones collapsed into an "N ended
 * sessions" group, where ended sessions that never had a turn are left out unless asked for.
 */
export function sessionList(model: PageModel): HTMLElement {
  const missing =
    model.missingLink === undefined
      ? null
      : h(
          "p",
          { class: "missing-link", role: "status" },
          "The linked session is not on this harness (it may have been removed after it ended).",
        );
  if (model.sessions.length === 0) return h("nav", { class: "sessions" }, missing, h("p", { class: "dim" }, "No sessions yet."));
  const active = model.sessions.filter((s) => !s.ended);
  const ended = model.sessions.filter((s) => s.ended);
  const listed = ended.filter((s) => model.showEmpty || !s.empty || s.uri === model.selected);
  const hiddenEmpty = ended.length - listed.length;
  const emptyCount = ended.filter((s) => s.empty).length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  return h(
    "nav",
    { class: "sessions" },
    missing,
    active.length === 0 ? h("p", { class: "dim no-active" }, "No active sessions.") : null,
    ...active.map((s) => sessionButton(model, s)),
    ended.length === 0
      ? null
      : h(
          "details",
          {
            class: "ended-sessions",
            open: model.showEnded,
            ontoggle: (event: Event) => {
              const open = (event.currentTarget as HTMLDetailsElement).open;
              if (open !== model.showEnded) model.setShowEnded(open);
            },
          },
          h("summary", { "data-count": listed.length }, plural(listed.length, "ended session")),
          ...listed.map((s) => sessionButton(model, s)),
          emptyCount === 0
            ? null
            : h(
                "button",
                {
                  class: "toggle-empty",
                  "data-action": model.showEmpty ? "hide-empty" : "show-empty",
                  onclick: () => model.setShowEmpty(!model.showEmpty),
                },
                model.showEmpty ? `hide ${plural(emptyCount, "empty session")}` : `show ${plural(hiddenEmpty, "empty session")}`,
              ),
        ),
  );
}

export function sessionDetail(model: PageModel, actions: ApprovalHandlers): HTMLElement {
  const entry = model.sessions.find((s) => s.uri === model.selected);
  if (entry?.state === undefined) return h("main", {}, h("p", { class: "dim" }, entry === undefined ? "Select a session." : "Loading…"));
  const state = entry.state;
  const agent = obj(state._meta?.[META.agent]);
  const lifecycle = obj(state._meta?.[META.lifecycle]);
  const main = mainChatOf(state);
  return h(
    "main",
    { "data-session": entry.uri },
    h("h2", {}, state.title),
    h(
      "p",
      { class: "dim session-activity" },
      [
        sessionActivity(entry.ended, state, main === undefined ? undefined : model.chat(main)),
        typeof agent.framework === "string" ? `agent ${agent.framework}` : undefined,
        typeof lifecycle.agentSessionId === "string" ? `session id ${lifecycle.agentSessionId}` : undefined,
        typeof lifecycle.run === "number" ? `run ${lifecycle.run} of that id` : undefined,
      ]
        .filter(Boolean)
        .join(" · "),
    ),
    ...(state.chats ?? []).map((c) => chatView(state, c.resource, model.chat(c.resource), actions)),
  );
}

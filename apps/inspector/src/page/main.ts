/** The inspector page: token, role, live link, and a redraw on every change (one per frame). */
import { needsInput, type ChatState, type ToolCallState } from "@ahp/agent-host/client";
import { h } from "./dom.js";
import { Live } from "./live.js";
import { canApprove, takeToken, whoAmI, type WhoAmI } from "./token.js";
import { lifecycleOf, sessionDetail, sessionList, tickCountdowns, type ApprovalHandlers, type PageModel } from "./view.js";

/** The session a link names in its fragment (`#session=<uri or session id>`, as notifications link it). */
function linkedSession(): string | undefined {
  const value = new URLSearchParams(location.hash.slice(1)).get("session");
  return value === null || value === "" ? undefined : value;
}

const root = document.getElementById("app")!;
const bar = document.getElementById("link")!;
const who = document.getElementById("who")!;
const toast = document.getElementById("toast")!;

function fatal(message: string, reason = "error"): void {
  bar.dataset.status = "closed";
  bar.textContent = "closed";
  root.replaceChildren(h("p", { id: "fatal", class: "fatal", role: "alert", "data-reason": reason }, message));
}

async function boot(): Promise<void> {
  const token = takeToken();
  if (token === undefined) {
    // Served without a token in the URL (e.g. by the page cookie in a new tab): the token lives
    // only in the sessionStorage of the tab that opened the token link.
    fatal(
      `This tab has no token: open the inspector's token link again (/inspector/?token=YOUR_TOKEN, the same token as the Agent Host API). A reload keeps the token only in the tab that opened the link.${
        linkedSession() === undefined ? "" : " To open a linked session, put ?token=YOUR_TOKEN before the # of the link."
      }`,
      "no-token",
    );
    return;
  }
  const me = await whoAmI(token);
  if (me === "unauthorized") {
    fatal("This token is not accepted by the harness: open a current token link.", "unauthorized");
    return;
  }
  const identity: WhoAmI | undefined = me;
  const approver = canApprove(identity?.role);
  document.body.dataset.role = identity?.role ?? "unknown";
  who.textContent = identity === undefined ? "" : `${identity.principal} · ${identity.role}`;

  let selected: string | undefined;
  let picked = false;
  let showEnded = false;
  let showEmpty = false;
  // A session named by the link (`#session=`), opened once the list has it.
  let wanted = linkedSession();
  let missingLink: string | undefined;
  window.addEventListener("hashchange", () => {
    wanted = linkedSession();
    missingLink = undefined;
    redraw();
  });
  const drafts = new Map<string, string>();
  let scheduled = false;
  const redraw = () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      render();
    });
  };
  const showToast = (message: string) => {
    toast.textContent = message;
    toast.hidden = false;
  };

  const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/`;
  const live = new Live(wsUrl, token, { onchange: redraw, onrejected: (reason) => showToast(`The harness refused: ${reason}`) });

  const answer = (chat: string, action: Record<string, unknown>, tool: ToolCallState) => {
    drafts.delete(tool.toolCallId);
    toast.hidden = true;
    live.dispatch(chat, { type: "chat/toolCallConfirmed", toolCallId: tool.toolCallId, ...action });
  };
  const option = (tool: ToolCallState, id: string) => (tool.options?.some((o) => o.id === id) ? { selectedOptionId: id } : {});
  const inputDrafts = new Map<string, string>();
  const actions: ApprovalHandlers = {
    canApprove: approver,
    drafts,
    inputDrafts,
    redraw,
    answerInput: (chat, requestId, response, answers) => {
      for (const key of [...inputDrafts.keys()]) if (key.startsWith(`${chat}#${requestId}/`)) inputDrafts.delete(key);
      toast.hidden = true;
      live.dispatch(chat, { type: "chat/inputCompleted", requestId, response, answers });
    },
    approve: (chat, turnId, tool) =>
      answer(chat, { turnId, approved: true, confirmed: "user-action", ...option(tool, "allow-once") }, tool),
    deny: (chat, turnId, tool) => answer(chat, { turnId, approved: false, reason: "denied", ...option(tool, "deny") }, tool),
    editAndApprove: (chat, turnId, tool, input) => {
      try {
        const parsed: unknown = JSON.parse(input);
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      } catch {
        showToast("The edited input must be a JSON object.");
        return;
      }
      answer(
        chat,
        {
          turnId,
          approved: true,
          confirmed: "user-action",
          editedToolInput: JSON.stringify(JSON.parse(input)),
          ...option(tool, "allow-once"),
        },
        tool,
      );
    },
  };

  const model = (): PageModel => {
    const sessions = [...live.sessions.values()]
      .sort((a, b) => (a.modifiedAt < b.modifiedAt ? 1 : -1))
      .map((s) => ({ uri: s.resource, title: s.title, status: s.status, state: live.session(s.resource), ...lifecycleOf(s._meta) }));
    if (wanted !== undefined && live.listed) {
      // The URI, else the newest session of that agent session id.
      const link = wanted;
      const found = sessions.find((s) => s.uri === link) ?? sessions.find((s) => s.agentSessionId === link);
      wanted = undefined;
      if (found === undefined) missingLink = link;
      else {
        missingLink = undefined;
        selected = found.uri;
        picked = true;
        if (found.ended) showEnded = true;
      }
    }
    if (!picked || !sessions.some((s) => s.uri === selected)) {
      selected = (sessions.find((s) => needsInput(s.status)) ?? sessions.find((s) => !s.ended) ?? sessions[0])?.uri;
    }
    return {
      sessions,
      selected,
      chat: (uri) => live.client.state.view<ChatState>(uri),
      select: (uri) => {
        selected = uri;
        picked = true;
        redraw();
      },
      showEnded,
      showEmpty,
      setShowEnded: (open) => {
        showEnded = open;
        redraw();
      },
      setShowEmpty: (show) => {
        showEmpty = show;
        redraw();
      },
      ...(missingLink === undefined ? {} : { missingLink }),
    };
  };

  function render(): void {
    // A background tab says in its title how many sessions wait for a person.
    let waiting = 0;
    for (const s of live.sessions.values()) if (needsInput(s.status)) waiting++;
    const title = waiting === 0 ? "AHP inspector" : `(${waiting}) approval needed · AHP inspector`;
    if (document.title !== title) document.title = title;
    bar.dataset.status = live.status;
    if (live.lastResync !== undefined) bar.dataset.resync = live.lastResync.type;
    bar.textContent =
      live.status === "live"
        ? `live${live.lastResync?.type === "replay" ? ` · resumed, ${live.lastResync.actions} missed updates replayed` : live.lastResync?.type === "snapshot" ? " · resumed from snapshots" : ""}`
        : live.status === "reconnecting"
          ? "connection lost · reconnecting…"
          : live.status === "stopped"
            ? "harness stopped · it is not running or not reachable; this page resumes by itself when it is back"
            : live.status;
    // Keep the focus and caret of an open editor or answer field across the redraw.
    const active = document.activeElement;
    const focused = active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement ? active : undefined;
    const key = focused?.dataset.draftKey;
    let caret: readonly [number | null, number | null] | undefined;
    try {
      caret = focused === undefined ? undefined : [focused.selectionStart, focused.selectionEnd];
    } catch {
      caret = undefined; // inputs without a text selection (checkbox, number)
    }
    const m = model();
    root.replaceChildren(sessionList(m), sessionDetail(m, actions));
    if (key !== undefined) {
      const field = root.querySelector<HTMLTextAreaElement | HTMLInputElement>(`[data-draft-key="${CSS.escape(key)}"]`);
      field?.focus();
      if (caret !== undefined && caret[0] !== null && caret[1] !== null) {
        try {
          field?.setSelectionRange(caret[0], caret[1]);
        } catch {
          // not a text field
        }
      }
    }
  }

  render();
  live.start();
  // Countdowns on waiting cards move on their own, between redraws.
  setInterval(() => tickCountdowns(root), 1000);
}

toast.addEventListener("click", () => {
  toast.hidden = true;
});
void boot().catch((error: unknown) => fatal(`The inspector failed to start: ${error instanceof Error ? error.message : String(error)}`));

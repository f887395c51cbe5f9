/**
 * A confirmation the harness holds for a person (an Agent Host input request): its message and
 * questions, the answer controls for principals who may approve (one button per option of the
 * first single-select question, fields for the other questions, e.g. an optional reason), and
 * once answered, who answered and how.
 */
import type { ChatInputQuestion, ChatInputRequest, ChatInputResponse } from "@ahp/agent-host/client";
import { h, type Child } from "./dom.js";
import { inputOutcome, ownReason, type Decision } from "./outcome.js";

export interface InputHandlers {
  canApprove: boolean;
  /** What was typed so far, per {@link draftKey}. */
  inputDrafts: Map<string, string>;
  answerInput(chat: string, requestId: string, response: ChatInputResponse, answers: Record<string, unknown>): void;
}

/** The key of one question's draft (also the `data-draft-key` of its field, to keep focus across redraws). */
export const draftKey = (chat: string, requestId: string, questionId: string): string => `${chat}#${requestId}/${questionId}`;

const submitted = (value: Record<string, unknown>) => ({ state: "submitted", value });

/** The answer to one non-choice question from its draft, or undefined when left empty. */
function answerOf(question: ChatInputQuestion, draft: string | undefined): Record<string, unknown> | undefined {
  if (question.kind === "boolean") return submitted({ kind: "boolean", value: draft === "true" });
  if (draft === undefined || draft.trim() === "") return undefined;
  if (question.kind === "number" || question.kind === "integer") {
    const n = Number(draft);
    return Number.isFinite(n) ? submitted({ kind: "number", value: n }) : undefined;
  }
  if (question.kind === "single-select") return submitted({ kind: "selected", value: draft });
  if (question.kind === "multi-select") return submitted({ kind: "selected-many", value: [draft] });
  return submitted({ kind: "text", value: draft });
}

function field(question: ChatInputQuestion, key: string, drafts: Map<string, string>): HTMLElement {
  const label = question.message ?? question.id;
  const keep = <T extends HTMLInputElement | HTMLSelectElement>(el: T): T => {
    el.dataset.draftKey = key;
    el.addEventListener(el instanceof HTMLSelectElement || el.type === "checkbox" ? "change" : "input", () =>
      drafts.set(key, el instanceof HTMLInputElement && el.type === "checkbox" ? String(el.checked) : el.value),
    );
    return el;
  };
  if (question.kind === "boolean") {
    const box = keep(h("input", { type: "checkbox", "data-question": question.id }));
    box.checked = drafts.get(key) === "true";
    return h("label", { class: "field" }, box, ` ${label}`);
  }
  if ((question.kind === "single-select" || question.kind === "multi-select") && question.options !== undefined) {
    const select = keep(
      h(
        "select",
        { "data-question": question.id },
        h("option", { value: "" }, "—"),
        ...question.options.map((o) => h("option", { value: o.id }, o.label)),
      ),
    );
    select.value = drafts.get(key) ?? "";
    return h("label", { class: "field" }, `${label} `, select);
  }
  const numeric = question.kind === "number" || question.kind === "integer";
  const input = keep(
    h("input", { type: numeric ? "number" : "text", "data-question": question.id, "aria-label": label, placeholder: label }),
  );
  input.value = drafts.get(key) ?? "";
  return h("label", { class: "field" }, h("span", { class: "dim" }, label), input);
}

export function inputCard(
  chat: string,
  request: ChatInputRequest,
  response: ChatInputResponse | undefined,
  record: Decision | undefined,
  turnOver: boolean,
  actions: InputHandlers,
): HTMLElement {
  const pending = response === undefined && !turnOver;
  const outcome = inputOutcome(response, record);
  const questions = request.questions ?? [];
  const choice = questions.find((q) => q.kind === "single-select" && (q.options?.length ?? 0) > 0);
  const others = questions.filter((q) => q !== choice);
  const answersWith = (choiceId?: string): Record<string, unknown> => {
    const answers: Record<string, unknown> = {};
    for (const q of others) {
      const a = answerOf(q, actions.inputDrafts.get(draftKey(chat, request.id, q.id)));
      if (a !== undefined) answers[q.id] = a;
    }
    if (choice !== undefined && choiceId !== undefined) answers[choice.id] = submitted({ kind: "selected", value: choiceId });
    return answers;
  };
  const controls: Child =
    pending && actions.canApprove
      ? h(
          "form",
          { class: "answer", onsubmit: (event) => event.preventDefault() },
          ...others.map((q) => field(q, draftKey(chat, request.id, q.id), actions.inputDrafts)),
          h(
            "div",
            { class: "actions" },
            ...(choice?.options ?? []).map((o) =>
              h(
                "button",
                {
                  type: "button",
                  class: /^(approve|accept|allow|yes|confirm)/i.test(o.id)
                    ? "approve"
                    : /^(reject|deny|decline|no)/i.test(o.id)
                      ? "deny"
                      : "",
                  "data-action": "answer",
                  "data-option": o.id,
                  onclick: () => actions.answerInput(chat, request.id, "accept", answersWith(o.id)),
                },
                o.label,
              ),
            ),
            choice === undefined
              ? h(
                  "button",
                  {
                    type: "button",
                    class: "approve",
                    "data-action": "submit-answer",
                    onclick: () => actions.answerInput(chat, request.id, "accept", answersWith()),
                  },
                  "Submit",
                )
              : null,
          ),
        )
      : null;
  const status = pending ? "pending" : response === undefined ? "unanswered" : "answered";
  return h(
    "article",
    { class: `input-request${pending ? " pending" : ""}`, "data-request-id": request.id, "data-status": status },
    h("header", {}, h("b", {}, "Confirmation"), h("span", { class: "status" }, status === "unanswered" ? "not answered" : status)),
    h("p", { class: "message" }, request.message ?? choice?.message ?? ""),
    outcome === undefined ? null : h("p", { class: `outcome outcome-${outcome.kind}`, "data-outcome": outcome.kind }, outcome.text),
    ((reason) => (reason === undefined ? null : h("p", { class: "reason" }, reason)))(ownReason(record?.reason, outcome)),
    pending && !actions.canApprove ? h("p", { class: "waiting" }, "Waiting for an approver") : null,
    controls,
  );
}

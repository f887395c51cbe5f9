/**
 * The harness's decision records (`_meta["ahpHarness/decision"]`) and the one-line outcome the
 * page shows for a held request once it is answered: who approved, denied, rejected or
 * cancelled it, or that it timed out. Everything comes from the reduced channel state, so every
 * viewer sees the same line, also after a reload.
 */
import { META, type ChatInputResponse, type Meta, type ToolCallState } from "@ahp/agent-host/client";

export interface Decision {
  decision?: string;
  reason?: string;
  rules?: string[];
  decidedBy?: string;
  approver?: string;
  /** Set on the record of a confirmation (input request) outcome. */
  requestId?: string;
  /** What happened to a held request (ADR 0145): approved, edited, denied, handed-to-host, timed-out, agent-gone, cancelled, stopped. */
  outcome?: string;
  /** Set while the escalation waits for a person: when the hold ends, and who the policy escalated to. */
  waiting?: boolean;
  deadline?: string;
  escalationTarget?: string;
}

export interface Outcome {
  /** approved, denied, rejected, declined, cancelled, timed-out, escalated or sending. */
  kind: string;
  text: string;
}

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The decision record in a `_meta`, if any. */
export function recordOf(meta: Meta | undefined): Decision | undefined {
  const value = meta?.[META.decision];
  return value === undefined ? undefined : { ...(obj(value) as Decision) };
}

/**
 * The harness's decision on a tool call. The policy engine puts the rule id of an escalation
 * only in its reason (`… [rule: id]`): it is split out here.
 */
export function decisionOf(tool: ToolCallState): Decision {
  const d = recordOf(tool._meta) ?? {};
  const marker = d.reason === undefined ? null : /\s*(?:^|\[)rule: ([^\]\s]+)\]?$/.exec(d.reason);
  if (marker !== null && d.reason !== undefined) {
    d.rules ??= [marker[1]!];
    d.reason = d.reason.slice(0, marker.index) || undefined;
  }
  return d;
}

/**
 * The part of a decision's reason the outcome line does not already say: a typed reason loses the
 * "(denied by bob)" the host appends to it; a reason that only repeats the outcome is dropped.
 */
export function ownReason(reason: string | undefined, outcome: Outcome | undefined): string | undefined {
  if (reason === undefined) return undefined;
  const own = reason.replace(/ \((?:denied|rejected) by [^()]*\)$/, "");
  if (own === "" || own.toLowerCase() === outcome?.text.toLowerCase()) return undefined;
  if (outcome?.kind === "approved" && /^approved by /i.test(own)) return undefined;
  return own;
}

/** How a held tool call ended, once a person (or the clock) decided it; undefined for policy decisions and pending calls. */
export function toolOutcome(tool: ToolCallState): Outcome | undefined {
  const d = decisionOf(tool);
  const by = d.approver === undefined ? "" : ` by ${d.approver}`;
  // The host's word for what happened wins over what the tool call's status suggests: an approved
  // call that the agent later cancelled or failed was still approved.
  switch (d.outcome) {
    case "approved":
      return {
        kind: "approved",
        text:
          tool.confirmed === "setting"
            ? `approved by ${d.approver}'s rule for this session`
            : `approved${by}${d.rules?.some((r) => r.startsWith("allow-session:")) === true ? " for the rest of the session" : ""}`,
      };
    case "edited":
      return { kind: "approved", text: `approved${by} with edits` };
    case "denied":
      return { kind: "denied", text: `denied${by}` };
    case "handed-to-host":
      return { kind: "handed-to-host", text: "timed out · nobody answered in time; handed to the host's own prompt" };
    case "timed-out":
      return { kind: "timed-out", text: "timed out · nobody answered in time; blocked" };
    case "agent-gone":
      return { kind: "agent-gone", text: "the agent went away before an answer" };
    case "cancelled":
      return { kind: "cancelled", text: `run cancelled${by}` };
    case "stopped":
      return { kind: "stopped", text: "the harness stopped before an answer" };
  }
  if (d.decidedBy === "timeout") return { kind: "timed-out", text: "timed out" };
  if (d.decidedBy === "human" && d.approver !== undefined) {
    if (tool.status === "cancelled")
      return tool.reason === "skipped"
        ? { kind: "cancelled", text: `cancelled by ${d.approver}` }
        : { kind: "denied", text: `denied by ${d.approver}` };
    if (tool.confirmed === "setting") return { kind: "approved", text: `approved by ${d.approver}'s rule for this session` };
    return { kind: "approved", text: `approved by ${d.approver}${d.decision === "modify" ? " with edits" : ""}` };
  }
  // This page's own answer before the host's record arrives.
  if (tool.confirmed === "user-action") return { kind: "sending", text: "approved, sending…" };
  if (tool.status === "cancelled" && tool.reason === "denied" && d.decidedBy !== "policy")
    return { kind: "sending", text: "denied, sending…" };
  return undefined;
}

/** How a confirmation (input request) ended, from its response and the host's record. */
export function inputOutcome(response: ChatInputResponse | undefined, record: Decision | undefined): Outcome | undefined {
  if (record?.decidedBy === "timeout") return { kind: "timed-out", text: "timed out" };
  if (record?.decidedBy === "human" && record.approver !== undefined) {
    const by = record.approver;
    if (response === "decline") return { kind: "declined", text: `declined by ${by}` };
    if (response === "cancel")
      return record.decision === "escalate"
        ? { kind: "escalated", text: `handed back to the agent's own prompt by ${by}` }
        : { kind: "cancelled", text: `cancelled by ${by}` };
    if (record.decision === "approve") return { kind: "approved", text: `approved by ${by}` };
    return { kind: "rejected", text: `rejected by ${by}` };
  }
  if (response !== undefined) return { kind: "sending", text: "answered, sending…" };
  return undefined;
}

/** The adapter's log lines for operators: one line per hold and per outcome, without credentials. */
import type { ApprovalEvent } from "./approvals.js";

/** Where the adapter's log lines go (the harness's logger); library code never logs by itself. */
export type HostLog = (level: "info" | "warn", message: string, fields: Record<string, unknown>) => void;

const MESSAGES: Record<string, string> = {
  approved: "approval answered",
  edited: "approval answered",
  denied: "approval answered",
  "handed-to-host": "approval timed out; handed to the host's prompt",
  "timed-out": "approval timed out; blocked",
  "agent-gone": "approval ended: the agent is gone",
  cancelled: "approval ended: run cancelled",
  stopped: "approval ended: harness stopping",
};

/** The log line of one approval event. */
export function approvalLogLine(event: ApprovalEvent): { message: string; fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {
    id: event.id,
    session_id: event.sessionId,
    agent_id: event.agentId,
    subject: event.subject,
  };
  if (event.phase === "held") {
    fields.deadline = event.deadline;
    if (event.target !== undefined) fields.target = event.target;
    return { message: "approval held for a person", fields };
  }
  fields.decision = event.decision;
  fields.outcome = event.outcome;
  if (event.approver !== undefined) fields.by = event.approver;
  if (event.reason !== undefined) fields.reason = event.reason;
  return { message: MESSAGES[event.outcome ?? ""] ?? "approval ended", fields };
}

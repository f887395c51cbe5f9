/** The outcome line of an answered held request, for every way it can end (pure; no browser). */
import type { ToolCallState } from "@ahp/agent-host/client";
import { describe, expect, it } from "vitest";
import { inputOutcome, toolOutcome } from "../src/page/outcome.js";

const base = { toolCallId: "tc-1", toolName: "bash", displayName: "Bash", invocationMessage: "bash: ls" };
const record = (r: Record<string, unknown>) => ({ "ahpHarness/decision": r });

describe("outcome lines", () => {
  it("tool calls: approved, edited, by rule, denied, cancelled, timed out; none for policy decisions or pending", () => {
    const cases: Array<[Partial<ToolCallState>, string | undefined]> = [
      [
        { status: "running", confirmed: "user-action", _meta: record({ decision: "allow", decidedBy: "human", approver: "ana" }) },
        "approved by ana",
      ],
      [
        { status: "running", confirmed: "user-action", _meta: record({ decision: "modify", decidedBy: "human", approver: "ana" }) },
        "approved by ana with edits",
      ],
      [
        { status: "running", confirmed: "setting", _meta: record({ decision: "allow", decidedBy: "human", approver: "ana" }) },
        "approved by ana's rule for this session",
      ],
      [
        { status: "cancelled", reason: "denied", _meta: record({ decision: "block", decidedBy: "human", approver: "bob" }) },
        "denied by bob",
      ],
      [
        { status: "cancelled", reason: "skipped", _meta: record({ decision: "block", decidedBy: "human", approver: "op" }) },
        "cancelled by op",
      ],
      [
        {
          status: "cancelled",
          reason: "skipped",
          _meta: record({ decision: "block", decidedBy: "timeout", reason: "No decision within 5 s" }),
        },
        "timed out",
      ],
      [{ status: "cancelled", reason: "denied", _meta: record({ decision: "block", decidedBy: "policy", reason: "no rm" }) }, undefined],
      [{ status: "pending-confirmation", _meta: record({ decision: "escalate", decidedBy: "policy" }) }, undefined],
      [{ status: "running", confirmed: "user-action", _meta: record({ decision: "escalate", decidedBy: "policy" }) }, "approved, sending…"],
    ];
    for (const [fields, text] of cases) expect(toolOutcome({ ...base, status: "running", ...fields })?.text).toBe(text);
  });

  it("tool calls with the host's outcome: what happened wins over the tool call's later status", () => {
    const cases: Array<[Partial<ToolCallState>, Record<string, unknown>, string]> = [
      // Approved, then cancelled by the agent (the ACP path): still approved, never "cancelled by alice".
      [
        { status: "cancelled", reason: "skipped" },
        { decision: "allow", decidedBy: "human", approver: "alice", outcome: "approved" },
        "approved by alice",
      ],
      [
        { status: "running" },
        { decision: "modify", decidedBy: "human", approver: "alice", outcome: "edited" },
        "approved by alice with edits",
      ],
      [
        { status: "cancelled", reason: "denied" },
        { decision: "block", decidedBy: "human", approver: "bob", outcome: "denied" },
        "denied by bob",
      ],
      [
        { status: "cancelled", reason: "skipped" },
        { decision: "escalate", decidedBy: "timeout", outcome: "handed-to-host" },
        "timed out · nobody answered in time; handed to the host's own prompt",
      ],
      [
        { status: "cancelled", reason: "skipped" },
        { decision: "block", decidedBy: "timeout", outcome: "timed-out" },
        "timed out · nobody answered in time; blocked",
      ],
      [
        { status: "cancelled", reason: "skipped" },
        { decision: "block", decidedBy: "timeout", outcome: "agent-gone" },
        "the agent went away before an answer",
      ],
      [
        { status: "cancelled", reason: "skipped" },
        { decision: "block", decidedBy: "human", approver: "olga", outcome: "cancelled" },
        "run cancelled by olga",
      ],
      [
        { status: "cancelled", reason: "skipped" },
        { decision: "block", decidedBy: "timeout", outcome: "stopped" },
        "the harness stopped before an answer",
      ],
    ];
    for (const [fields, r, text] of cases)
      expect(toolOutcome({ ...base, status: "running", ...fields, _meta: record(r) })?.text).toBe(text);
  });

  it("confirmations: approved, rejected, declined, handed back, cancelled, timed out, unanswered", () => {
    const human = (decision: string) => ({ decision, decidedBy: "human", approver: "ana" });
    expect(inputOutcome("accept", human("approve"))?.text).toBe("approved by ana");
    expect(inputOutcome("accept", human("reject"))?.text).toBe("rejected by ana");
    expect(inputOutcome("decline", human("reject"))?.text).toBe("declined by ana");
    expect(inputOutcome("cancel", human("escalate"))?.text).toBe("handed back to the agent's own prompt by ana");
    expect(inputOutcome("cancel", human("reject"))?.text).toBe("cancelled by ana");
    expect(inputOutcome("cancel", { decision: "reject", decidedBy: "timeout" })?.kind).toBe("timed-out");
    expect(inputOutcome("accept", undefined)?.kind).toBe("sending");
    expect(inputOutcome(undefined, undefined)).toBeUndefined();
  });
});

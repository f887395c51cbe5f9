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

  it("confirmations: approved, rejected, declined, handed back, cancelled, timed out, unanswered", () => {
    const human = (decision: string) => ({ decision, decidedBy: "human", approver: "ana" });
    expect(inputOutcome("accept", human("approve"))?.text).toBe("approved by ana");
    expect(inputOutcome("accept", human("reject"))?.text).toBe("rejected by ana");
    expect(inputOutcome("decline", human("reject"))?.text).toBe("declined by ana");
    expect(inputOutcome("cancel", human("escalate"))?.text).toBe("handed back to the harness by ana");
    expect(inputOutcome("cancel", human("reject"))?.text).toBe("cancelled by ana");
    expect(inputOutcome("cancel", { decision: "reject", decidedBy: "timeout" })?.kind).toBe("timed-out");
    expect(inputOutcome("accept", undefined)?.kind).toBe("sending");
    expect(inputOutcome(undefined, undefined)).toBeUndefined();
  });
});

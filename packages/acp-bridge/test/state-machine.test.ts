/** The transition table: all states, T1–T24 as 26 numbered rows, one function. */
import { describe, expect, it } from "vitest";
import { INTERNAL_TRANSITIONS, NUMBERED_TRANSITIONS, STATES, transition } from "../src/index.js";

describe("state machine", () => {
  it("has the nine states of §5.1 and the 26 numbered rows of §5.2 in order", () => {
    expect(STATES).toEqual([
      "active.idle",
      "active.running",
      "suspending.requested",
      "suspending.quiescing",
      "suspended",
      "resuming",
      "failed",
      "closed",
      "deleted",
    ]);
    const ids = NUMBERED_TRANSITIONS.map((t) => t.id);
    expect(ids).toHaveLength(26);
    expect(ids).toEqual([
      "T1",
      "T2",
      "T3",
      "T4",
      "T5",
      "T6",
      "T7",
      "T8",
      "T9",
      "T10",
      "T11",
      "T12",
      "T13",
      "T14",
      "T14b",
      "T14c",
      "T15",
      "T16",
      "T17",
      "T18",
      "T19",
      "T20",
      "T21",
      "T22",
      "T23",
      "T24",
    ]);
    for (const row of [...NUMBERED_TRANSITIONS, ...INTERNAL_TRANSITIONS]) for (const s of row.from) expect(STATES).toContain(s);
  });

  it("picks the row for a state and an event, with its target or its error", () => {
    expect(transition("active.idle", "suspend")).toMatchObject({ ok: true, row: { id: "T1" }, to: "suspended" });
    expect(transition("active.running", "suspend")).toMatchObject({ ok: true, row: { id: "T2" }, to: "suspending.requested" });
    expect(transition("resuming", "suspend")).toMatchObject({ ok: false, error: { code: -31001, reason: "resume_in_progress" } });
    expect(transition("suspended", "resume")).toMatchObject({ ok: true, row: { id: "T12" }, to: "resuming" });
    expect(transition("resuming", "resume")).toMatchObject({ ok: false, row: { id: "T13" }, error: { reason: "resume_conflict" } });
    expect(transition("resuming", "condition_fired")).toMatchObject({ ok: true, row: { id: "T18" }, to: "resuming" });
    expect(transition("suspended", "timeout_fail")).toMatchObject({ ok: true, row: { id: "T19" }, to: "failed" });
    expect(transition("deleted", "prompt")).toMatchObject({ ok: false, illegal: true });
  });

  it("every numbered row is reachable through transition()", () => {
    for (const row of NUMBERED_TRANSITIONS) {
      const t = transition(row.from[0]!, row.event);
      expect(t.row?.id, row.id).toBe(row.id);
    }
  });
});

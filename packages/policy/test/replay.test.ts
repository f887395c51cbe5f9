import { describe, expect, it } from "vitest";
import { PolicyReplay, replayRecords, type ReplayChange, type ReplayRecord } from "@ahp/policy";

const CANDIDATE = `version: 1
rules:
  - { id: no-ls, events: pre_action, match: { shell: { program: ls } }, action: { decision: block, reason: no ls } }
  - { id: shell-rate, events: pre_action, match: { tool: bash }, rate_limit: { rate: 1, interval_ms: 60000, burst: 2 } }
`;

let seq = 0;
const decision = (command: string, recorded: string, at: number, extra: Partial<ReplayRecord> = {}): ReplayRecord => ({
  kind: "decision",
  seq: ++seq,
  time: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, at)).toISOString(),
  session: "s1",
  agent: "a1",
  event_type: "pre_action",
  depth: 0,
  decision: recorded,
  payload: { tool_name: "bash", arguments: { command } },
  ...extra,
});

describe("replay", () => {
  it("re-decides in recorded order with the candidate's state, and reports each change", async () => {
    const changes: ReplayChange[] = [];
    const summary = await replayRecords(
      [
        decision("ls -la", "allow", 0),
        decision("echo 1", "allow", 1000),
        decision("echo 2", "allow", 2000),
        decision("echo 3", "allow", 3000), // third within the burst of 2: deferred by the candidate
        decision("echo 4", "allow", 70_000), // a minute later: a token again
      ],
      CANDIDATE,
      { onChange: (c) => changes.push(c) },
    );
    expect(summary).toMatchObject({ records: 5, decisions: 5, replayed: 5, notReplayable: 0, changed: 2 });
    expect(summary.byChange).toEqual({ "allow→block": 1, "allow→defer": 1 });
    expect(summary.byRule).toEqual({ "no-ls": 1, "shell-rate": 1 });
    expect(changes.map((c) => [c.subject, c.recorded, c.candidate])).toEqual([
      ["ls -la", { decision: "allow" }, { decision: "block", rule: "no-ls" }],
      ["echo 3", { decision: "allow" }, { decision: "defer", rule: "shell-rate" }],
    ]);
    expect(changes[0]).toMatchObject({ session: "s1", tool: "bash", time: "2026-01-01T00:00:00.000Z", seq: expect.any(Number) });
  });

  it("a decision the candidate no longer takes is a change attributed to the recorded rule", () => {
    const replay = new PolicyReplay("version: 1\nrules: []\n");
    const change = replay.add(decision("rm -rf /", "block", 0, { rule: "block-recursive-delete-root" }));
    expect(change).toMatchObject({
      recorded: { decision: "block", rule: "block-recursive-delete-root" },
      candidate: { decision: "allow" },
    });
    expect(replay.summary.byRule).toEqual({ "block-recursive-delete-root": 1 });
  });

  it("counts records without payload as not replayable and never re-decides them", () => {
    const replay = new PolicyReplay(CANDIDATE);
    const { payload: _p, ...bare } = decision("ls", "allow", 0);
    expect(replay.add({ ...bare, payload_sha256: "x" } as ReplayRecord)).toBeUndefined();
    expect(replay.add({ ...decision("ls", "allow", 0), payload: undefined, payload_truncated: true })).toBeUndefined();
    expect(replay.add({ kind: "note", time: "2026-01-01T00:00:00Z" })).toBeUndefined();
    expect(replay.summary).toMatchObject({ records: 3, decisions: 2, replayed: 0, notReplayable: 2, changed: 0 });
  });

  it("replays notifications into the candidate's state without comparing them", () => {
    const replay = new PolicyReplay(`version: 1
rules:
  - { id: too-many-errors, events: pre_action, match: { session: { errors: { gte: 1 } } }, action: { decision: block, reason: errors } }
`);
    replay.add({
      kind: "event",
      time: "2026-01-01T00:00:00Z",
      session: "s1",
      agent: "a1",
      event_type: "error",
      payload: { error_type: "tool_failure", message: "boom" },
    });
    const change = replay.add(decision("echo", "allow", 1000));
    expect(replay.summary.notifications).toBe(1);
    expect(change?.candidate).toEqual({ decision: "block", rule: "too-many-errors" });
  });
});

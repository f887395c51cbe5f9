import type { AhpEvent, EventType } from "@ahp/core";

let seq = 0;

/** An AHP event with defaults (session s1, agent a1, depth 0). */
export function ev(type: EventType, payload: unknown, extra: Partial<AhpEvent> = {}): AhpEvent {
  seq++;
  return {
    event_type: type,
    session_id: "s1",
    agent_id: "a1",
    timestamp: `2026-06-01T12:00:${String(seq % 60).padStart(2, "0")}Z`,
    depth: 0,
    payload,
    ...extra,
  };
}

/** A pre_action for a shell tool (reference payload convention). */
export const bash = (command: string, extra: Partial<AhpEvent> = {}) =>
  ev("pre_action", { action_type: "tool_call", tool_name: "bash", arguments: { command } }, extra);

/** A manual clock for rate limits and TTLs. */
export function fakeClock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  };
}

export const decisionOf = (d: unknown) => (d as { decision?: string } | undefined)?.decision;

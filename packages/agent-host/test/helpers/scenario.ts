/** Small helpers shared by the scenario files. */
import type { RunStatus } from "@ahp/core";
import type { ChatState, ToolCallState } from "../../src/wire/types.js";

export const S1_URI = "ahp-session:/314e11d3-f522-5b46-a9b9-12fa7a613c0b";
export const S1_CHAT = "ahp-chat:/3550e7e9-63be-585b-852a-15f31bff222c";

export const runEvent = (run_id: string, status: RunStatus, extra: Record<string, unknown> = {}, session_id = "s1") => ({
  run_id,
  session_id,
  status,
  updated_at: "2026-11-01T12:00:00Z",
  ...extra,
});

/** Tool calls of the active (or last) turn. */
export function toolCalls(state: ChatState | undefined): ToolCallState[] {
  const turn = state?.activeTurn ?? state?.turns.at(-1);
  return (turn?.responseParts ?? []).filter((p) => p.kind === "toolCall").map((p) => (p as { toolCall: ToolCallState }).toolCall);
}

/** A settled-or-not probe for a promise. */
export function probe<T>(promise: Promise<T>): { settled: () => boolean; value: Promise<T> } {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return { settled: () => settled, value: promise };
}

/** Drops every `modifiedAt` (clients stamp with their own clock, spec §12). */
export function withoutModifiedAt(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutModifiedAt);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k, v]) => k !== "modifiedAt" && v !== undefined)
        .map(([k, v]) => [k, withoutModifiedAt(v)]),
    );
  }
  return value;
}

/**
 * Opt-in compatibility with AHP 1.x agents (spec §15.1): method `harness/event`, params
 * `{event_type, payload, meta:{depth}}`, v1 event names, results carrying an `action`.
 * The 2.4 reference does not speak it; AhpServer accepts it only with `compat: { v1: true }`.
 */
import { z } from "zod";
import type { DecisionInput } from "./schema/decision.js";
import type { AhpEvent, EventType } from "./schema/event.js";
import { decode } from "./validation.js";

const V1_EVENT_NAMES: Record<string, { type: EventType; blocking: boolean }> = {
  pre_tool_use: { type: "pre_action", blocking: true },
  post_tool_use: { type: "post_action", blocking: false },
  pre_prompt: { type: "pre_prompt", blocking: true },
  session_start: { type: "session_start", blocking: false },
  session_end: { type: "session_end", blocking: false },
};

const V1ParamsSchema = z.object({
  event_type: z.enum(Object.keys(V1_EVENT_NAMES) as [string, ...string[]]),
  payload: z.unknown().optional(),
  meta: z.object({ depth: z.int().min(0).optional() }).nullish(),
});

/** The `action` an AHP 1.x agent reads from a result (spec §15.1): `continue`, `block`, `skip` or `retry`. */
export type V1Action = "continue" | "block" | "skip" | "retry";
/** A 2.4 decision with the v1 `action` member added, as answered to `harness/event` requests when v1 compatibility is on. */
export type V1Outcome = DecisionInput & { action: V1Action };

/**
 * Turns the params of an AHP 1.x `harness/event` request (spec §15.1) into a 2.4 event, or returns why it cannot. The v1 event
 * name is mapped, `depth` comes from `meta`, `session_id` from the payload (else `"v1"`), and `metadata.ahp_v1_event_type` keeps the
 * original name; `blocking` says whether the agent waits for an answer.
 */
export function fromV1Request(params: unknown): { ok: true; event: AhpEvent; blocking: boolean } | { ok: false; detail: string } {
  const decoded = decode(V1ParamsSchema, params);
  if (!decoded.ok) return decoded;
  const v1 = decoded.value;
  const mapping = V1_EVENT_NAMES[v1.event_type]!;
  const payload = v1.payload ?? null;
  const sessionId =
    payload !== null && typeof payload === "object" && typeof (payload as Record<string, unknown>).session_id === "string"
      ? ((payload as Record<string, unknown>).session_id as string)
      : "v1";
  return {
    ok: true,
    blocking: mapping.blocking,
    event: {
      event_type: mapping.type,
      session_id: sessionId,
      agent_id: "v1",
      timestamp: new Date().toISOString(),
      depth: v1.meta?.depth ?? 0,
      payload,
      metadata: { ahp_v1_event_type: v1.event_type },
    },
  };
}

/** The 2.4 decision plus the v1 `action` member, so a v1 agent and a 2.x-aware one can both read it. */
export function toV1Result(decision: DecisionInput): V1Outcome {
  const action: V1Action =
    decision.decision === "allow" || decision.decision === "modify" ? "continue" : decision.decision === "defer" ? "retry" : "block";
  const out: V1Outcome = { ...decision, action };
  return out;
}

/** The event envelope, AhpEvent (spec §5). */
import { z } from "zod";
import { EventContextSchema } from "./context.js";
import { JsonMapSchema, opt, present, u32 } from "./common.js";

/** The 22 event types, in the order of spec §5.1. */
export const EVENT_TYPES = [
  "handshake",
  "pre_action",
  "post_action",
  "pre_prompt",
  "post_response",
  "session_start",
  "session_end",
  "error",
  "query",
  "heartbeat",
  "idle",
  "context_perception",
  "success",
  "memory_recall",
  "planning",
  "reasoning",
  "rate_limit",
  "confirmation",
  "intent_detection",
  "run_lifecycle",
  "task_list",
  "verification",
] as const;

/** Validates `event_type`: exactly one of the 22 names of spec §5.1; anything else (e.g. the v1 `pre_tool_use`) is rejected. */
export const EventTypeSchema = z.enum(EVENT_TYPES);
/** One of the 22 event type names of spec §5.1 (case sensitive). */
export type EventType = z.infer<typeof EventTypeSchema>;

/**
 * Validates the AhpEvent envelope (spec §5): all members but `context` and `metadata` required. `payload` must be present (may be
 * `null`); its shape is checked per event type (see {@link EVENT_TABLE}), not here.
 */
export const AhpEventSchema = z.object({
  event_type: EventTypeSchema,
  /** Not validated against the handshake. */
  session_id: z.string(),
  agent_id: z.string(),
  /** Free text to the server; RFC 3339 UTC by convention. */
  timestamp: z.string(),
  /** Nesting level of the emitting agent (0 = top level); checked against `max_depth`. */
  depth: u32(),
  /** The member must exist (`undefined` is refused: it would be missing on the wire); `null` is allowed. Its shape depends on `event_type`. */
  payload: present(),
  context: opt(EventContextSchema),
  metadata: opt(JsonMapSchema),
});
/** The event envelope (spec §5), as parsed: the `params` of `ahp/event` and each element of an `ahp/batch`. */
export type AhpEvent = z.infer<typeof AhpEventSchema>;
/** An event as a sender writes it; AhpClient checks it against {@link AhpEventSchema} before sending unless `validateEvents` is false. */
export type AhpEventInput = z.input<typeof AhpEventSchema>;

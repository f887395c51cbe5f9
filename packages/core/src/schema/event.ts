/** The event envelope, AhpEvent (spec §5). */
import { z } from "zod";
import { EventContextSchema } from "./context.js";
import { JsonMapSchema, opt, u32 } from "./common.js";

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

export const EventTypeSchema = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventTypeSchema>;

export const AhpEventSchema = z.object({
  event_type: EventTypeSchema,
  /** Not validated against the handshake. */
  session_id: z.string(),
  agent_id: z.string(),
  /** Free text to the server; RFC 3339 UTC by convention. */
  timestamp: z.string(),
  /** Nesting level of the emitting agent (0 = top level); checked against `max_depth`. */
  depth: u32(),
  /** The member must exist; `null` is allowed. Its shape depends on `event_type`. */
  payload: z.unknown(),
  context: opt(EventContextSchema),
  metadata: opt(JsonMapSchema),
});
export type AhpEvent = z.infer<typeof AhpEventSchema>;
export type AhpEventInput = z.input<typeof AhpEventSchema>;

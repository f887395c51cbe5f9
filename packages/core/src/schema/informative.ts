/** Structures the protocol defines but the reference never validates (spec §9). */
import { z } from "zod";
import { f32, i32, uint } from "./common.js";
import { opt } from "./common.js";

/** Validates the payload of a `heartbeat` notification: uptime, events processed, the agent's current state. */
export const HeartbeatEventSchema = z.object({
  uptime_ms: uint(),
  total_events_processed: uint(),
  current_state: z.string(),
  cpu_percent: opt(f32()),
  memory_bytes: opt(uint()),
  active_tools: opt(uint()),
  pending_actions: opt(uint()),
  queue_depth: opt(uint()),
  tokens_used: opt(i32()),
});
/**
 * The payload a `heartbeat` notification should carry (spec §9, informative): uptime, events processed, state and optional resource
 * figures. Servers do not validate it.
 */
export type HeartbeatEvent = z.infer<typeof HeartbeatEventSchema>;

/**
 * Validates a SuccessEvent (spec §9): `session_id`, `action_type`, `action_summary` and `duration_ms`, all required. Informative;
 * not applied to incoming events.
 */
export const SuccessEventSchema = z.object({
  session_id: z.string(),
  action_type: z.string(),
  action_summary: z.string(),
  duration_ms: uint(),
});
/**
 * The payload a `success` notification should carry (spec §9, informative): which action succeeded and how long it took. Servers do
 * not validate it.
 */
export type SuccessEvent = z.infer<typeof SuccessEventSchema>;

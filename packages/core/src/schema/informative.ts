/** Structures the protocol defines but the reference never validates (spec §9). */
import { z } from "zod";
import { f32, i32, uint } from "./common.js";
import { opt } from "./common.js";

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
export type HeartbeatEvent = z.infer<typeof HeartbeatEventSchema>;

export const SuccessEventSchema = z.object({
  session_id: z.string(),
  action_type: z.string(),
  action_summary: z.string(),
  duration_ms: uint(),
});
export type SuccessEvent = z.infer<typeof SuccessEventSchema>;

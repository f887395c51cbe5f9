/** Event context (spec §5.2). */
import { z } from "zod";
import { f32, i32, JsonMapSchema, opt, uint } from "./common.js";

export const FactSchema = z.object({
  content: z.string(),
  source: z.string(),
  /** f32, 0.0–1.0 by convention (not checked). */
  confidence: f32(),
});
export type Fact = z.infer<typeof FactSchema>;

export const MemorySummarySchema = z.object({
  memory_type: z.string(),
  total_items: uint(),
  recent_topics: z.array(z.string()),
});
export type MemorySummary = z.infer<typeof MemorySummarySchema>;

export const SessionStatsSchema = z.object({
  total_actions: uint(),
  /** i32 on the reference: values above 2 147 483 647 are rejected. */
  total_tokens: i32(),
  duration_ms: uint(),
  error_count: uint(),
});
export type SessionStats = z.infer<typeof SessionStatsSchema>;

export const EventContextSchema = z.object({
  recent_facts: opt(z.array(FactSchema)),
  memory_summary: opt(MemorySummarySchema),
  session_stats: opt(SessionStatsSchema),
  current_task: opt(z.string()),
  /** Client-defined entries, opaque to the protocol. */
  capabilities: opt(JsonMapSchema),
});
export type EventContext = z.infer<typeof EventContextSchema>;
export type EventContextInput = z.input<typeof EventContextSchema>;

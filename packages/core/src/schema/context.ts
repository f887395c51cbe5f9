/** Event context (spec §5.2). */
import { z } from "zod";
import { f32, i32, JsonMapSchema, opt, uint } from "./common.js";

/** Validates a fact of injected context (spec §7): content, source and a confidence. */
export const FactSchema = z.object({
  content: z.string(),
  source: z.string(),
  /** f32, 0.0–1.0 by convention (not checked). */
  confidence: f32(),
});
/**
 * A piece of knowledge with its source and confidence (spec §5.2), carried in event context and injected by context_perception and
 * memory_recall decisions.
 */
export type Fact = z.infer<typeof FactSchema>;

/** Validates a MemorySummary (spec §5.2): `memory_type`, `total_items` (uint) and `recent_topics`, all required. */
export const MemorySummarySchema = z.object({
  memory_type: z.string(),
  total_items: uint(),
  recent_topics: z.array(z.string()),
});
/** A summary of the agent's memory in an EventContext (spec §5.2): memory type, item count and recent topics. */
export type MemorySummary = z.infer<typeof MemorySummarySchema>;

/** Validates SessionStats (spec §5.2): all four members required; `total_tokens` is an i32, so values above 2 147 483 647 are rejected. */
export const SessionStatsSchema = z.object({
  total_actions: uint(),
  /** i32 on the reference: values above 2 147 483 647 are rejected. */
  total_tokens: i32(),
  duration_ms: uint(),
  error_count: uint(),
});
/** Session counters in an EventContext (spec §5.2): actions, tokens, duration and errors. */
export type SessionStats = z.infer<typeof SessionStatsSchema>;

/**
 * Validates an EventContext (spec §5.2); every member is optional. It is decoded with the event, so a malformed context makes the
 * whole event invalid (-32602).
 */
export const EventContextSchema = z.object({
  recent_facts: opt(z.array(FactSchema)),
  memory_summary: opt(MemorySummarySchema),
  session_stats: opt(SessionStatsSchema),
  current_task: opt(z.string()),
  /** Client-defined entries, opaque to the protocol. */
  capabilities: opt(JsonMapSchema),
});
/**
 * The optional `context` of an event (spec §5.2): recent facts, memory summary, session statistics, current task and client-defined
 * capabilities.
 */
export type EventContext = z.infer<typeof EventContextSchema>;
/** An EventContext as a sender writes it, e.g. the `context` option of `AhpClient.send`. */
export type EventContextInput = z.input<typeof EventContextSchema>;

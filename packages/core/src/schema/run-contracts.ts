/** Durable run contracts, new in AHP 2.4 (spec §8). */
import { z } from "zod";
import { JsonMapSchema, list0, opt, uint } from "./common.js";

export const RunStatusSchema = z.enum(["created", "planning", "executing", "verifying", "completed", "failed", "cancelled"]);
export type RunStatus = z.infer<typeof RunStatusSchema>;
export const TaskStatusSchema = z.enum(["pending", "in_progress", "completed", "failed", "skipped", "cancelled"]);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;
export const VerificationStatusSchema = z.enum(["pending", "running", "passed", "failed", "skipped", "needs_review"]);
export type VerificationStatus = z.infer<typeof VerificationStatusSchema>;

export const ArtifactRefSchema = z.object({
  id: z.string(),
  kind: opt(z.string()),
  uri: opt(z.string()),
  path: opt(z.string()),
  mime_type: opt(z.string()),
  sha256: opt(z.string()),
  size_bytes: opt(uint()),
  summary: opt(z.string()),
});
export type ArtifactRef = z.infer<typeof ArtifactRefSchema>;

export const EvidenceRefSchema = z.object({
  kind: z.string(),
  summary: z.string(),
  artifact: opt(ArtifactRefSchema),
  metadata: opt(JsonMapSchema),
});
export type EvidenceRef = z.infer<typeof EvidenceRefSchema>;

export const RunLifecycleEventSchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  status: RunStatusSchema,
  prompt: opt(z.string()),
  result_summary: opt(z.string()),
  error: opt(z.string()),
  started_at: opt(z.string()),
  updated_at: z.string(),
  metadata: opt(JsonMapSchema),
});
export type RunLifecycleEvent = z.infer<typeof RunLifecycleEventSchema>;
export type RunLifecycleEventInput = z.input<typeof RunLifecycleEventSchema>;

export const TaskItemSchema = z.object({
  id: z.string(),
  title: z.string(),
  status: TaskStatusSchema,
  depends_on: list0(z.string()),
  evidence: list0(EvidenceRefSchema),
  artifacts: list0(ArtifactRefSchema),
  error: opt(z.string()),
  updated_at: opt(z.string()),
  metadata: opt(JsonMapSchema),
});
export type TaskItem = z.infer<typeof TaskItemSchema>;

export const TaskListEventSchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  tasks: z.array(TaskItemSchema),
  updated_at: z.string(),
  metadata: opt(JsonMapSchema),
});
export type TaskListEvent = z.infer<typeof TaskListEventSchema>;
export type TaskListEventInput = z.input<typeof TaskListEventSchema>;

export const VerificationCheckSchema = z.object({
  id: z.string(),
  subject: z.string(),
  status: VerificationStatusSchema,
  command: opt(z.string()),
  message: opt(z.string()),
  evidence: list0(EvidenceRefSchema),
  artifacts: list0(ArtifactRefSchema),
  metadata: opt(JsonMapSchema),
});
export type VerificationCheck = z.infer<typeof VerificationCheckSchema>;

export const VerificationEventSchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  status: VerificationStatusSchema,
  checks: list0(VerificationCheckSchema),
  residual_risks: list0(z.string()),
  updated_at: z.string(),
  metadata: opt(JsonMapSchema),
});
export type VerificationEvent = z.infer<typeof VerificationEventSchema>;
export type VerificationEventInput = z.input<typeof VerificationEventSchema>;

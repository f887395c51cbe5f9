/** Durable run contracts, new in AHP 2.4 (spec §8). */
import { z } from "zod";
import { JsonMapSchema, list0, opt, uint } from "./common.js";

/** Validates a run status (spec §8.1). */
export const RunStatusSchema = z.enum(["created", "planning", "executing", "verifying", "completed", "failed", "cancelled"]);
/** The state of an agent run (spec §8.1): `created`, `planning`, `executing`, `verifying`, `completed`, `failed` or `cancelled`. */
export type RunStatus = z.infer<typeof RunStatusSchema>;
/** Validates a TaskStatus: one of the six plain strings of spec §8.2. */
export const TaskStatusSchema = z.enum(["pending", "in_progress", "completed", "failed", "skipped", "cancelled"]);
/** The state of one task (spec §8.2): `pending`, `in_progress`, `completed`, `failed`, `skipped` or `cancelled`. */
export type TaskStatus = z.infer<typeof TaskStatusSchema>;
/** Validates a VerificationStatus: one of the six plain strings of spec §8.3. */
export const VerificationStatusSchema = z.enum(["pending", "running", "passed", "failed", "skipped", "needs_review"]);
/** The state of a verification or of one check (spec §8.3): `pending`, `running`, `passed`, `failed`, `skipped` or `needs_review`. */
export type VerificationStatus = z.infer<typeof VerificationStatusSchema>;

/**
 * Validates an ArtifactRef (spec §8.4): `id` required; `kind`, `uri`, `path`, `mime_type`, `sha256`, `size_bytes` and `summary`
 * optional.
 */
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
/** A reference to a file or other artifact of a run (spec §8.4); only `id` is required. */
export type ArtifactRef = z.infer<typeof ArtifactRefSchema>;

/** Validates an EvidenceRef (spec §8.4): `kind` and `summary` required; `artifact` and `metadata` optional. */
export const EvidenceRefSchema = z.object({
  kind: z.string(),
  summary: z.string(),
  artifact: opt(ArtifactRefSchema),
  metadata: opt(JsonMapSchema),
});
/** Evidence backing a task or a verification check (spec §8.4): a kind, a summary and optionally an artifact. */
export type EvidenceRef = z.infer<typeof EvidenceRefSchema>;

/**
 * Validates the `run_lifecycle` payload (spec §8.1): `run_id`, `session_id`, `status` and `updated_at` required. The server checks
 * it when the event arrives (spec §8.5).
 */
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
/** The payload of a `run_lifecycle` notification (spec §8.1): a run's current status, with optional prompt, result summary or error. */
export type RunLifecycleEvent = z.infer<typeof RunLifecycleEventSchema>;
/** A RunLifecycleEvent as a sender writes it, e.g. for `AhpClient.send("run_lifecycle", …)`. */
export type RunLifecycleEventInput = z.input<typeof RunLifecycleEventSchema>;

/**
 * Validates a TaskItem (spec §8.2): `id`, `title` and `status` required; absent `depends_on`, `evidence` and `artifacts` become `[]`
 * (`null` is rejected).
 */
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
/** One task of a run's task list (spec §8.2), with its status, dependencies, evidence and artifacts. */
export type TaskItem = z.infer<typeof TaskItemSchema>;

/**
 * Validates the `task_list` payload (spec §8.2): `run_id`, `session_id`, `tasks` (may be empty, not `null`) and `updated_at`
 * required. The server checks it when the event arrives.
 */
export const TaskListEventSchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  tasks: z.array(TaskItemSchema),
  updated_at: z.string(),
  metadata: opt(JsonMapSchema),
});
/** The payload of a `task_list` notification (spec §8.2): the complete, authoritative task list of a run. */
export type TaskListEvent = z.infer<typeof TaskListEventSchema>;
/** A TaskListEvent as a sender writes it: the list members of each task may be left out. */
export type TaskListEventInput = z.input<typeof TaskListEventSchema>;

/** Validates a VerificationCheck (spec §8.3): `id`, `subject` and `status` required; absent `evidence` and `artifacts` become `[]`. */
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
/**
 * One check of a verification (spec §8.3): what was checked, its status, and optionally the command, a message, evidence and
 * artifacts.
 */
export type VerificationCheck = z.infer<typeof VerificationCheckSchema>;

/**
 * Validates the `verification` payload (spec §8.3): `run_id`, `session_id`, `status` and `updated_at` required; absent `checks` and
 * `residual_risks` become `[]`.
 */
export const VerificationEventSchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  status: VerificationStatusSchema,
  checks: list0(VerificationCheckSchema),
  residual_risks: list0(z.string()),
  updated_at: z.string(),
  metadata: opt(JsonMapSchema),
});
/** The payload of a `verification` notification (spec §8.3): a run's overall verification status, its checks and residual risks. */
export type VerificationEvent = z.infer<typeof VerificationEventSchema>;
/** A VerificationEvent as a sender writes it: `checks`, `residual_risks` and the lists inside each check may be left out. */
export type VerificationEventInput = z.input<typeof VerificationEventSchema>;

/** The generic Decision (spec §6). */
import { z } from "zod";
import { JsonMapSchema, opt, uint } from "./common.js";

export const AllowDecisionSchema = z.object({
  decision: z.literal("allow"),
  /** When present the agent uses it instead of the original payload. */
  modified_payload: z.unknown().optional(),
  metadata: opt(JsonMapSchema),
});
export const BlockDecisionSchema = z.object({
  decision: z.literal("block"),
  reason: z.string(),
  metadata: opt(JsonMapSchema),
});
export const ModifyDecisionSchema = z.object({
  decision: z.literal("modify"),
  /** The member must exist; `null` is allowed. */
  modified_payload: z.unknown(),
  metadata: opt(JsonMapSchema),
});
export const DeferDecisionSchema = z.object({
  decision: z.literal("defer"),
  retry_after_ms: uint(),
  reason: opt(z.string()),
});
export const EscalateDecisionSchema = z.object({
  decision: z.literal("escalate"),
  reason: z.string(),
  escalation_target: opt(z.string()),
});

export const DecisionSchema = z.discriminatedUnion("decision", [
  AllowDecisionSchema,
  BlockDecisionSchema,
  ModifyDecisionSchema,
  DeferDecisionSchema,
  EscalateDecisionSchema,
]);
export type Decision = z.infer<typeof DecisionSchema>;
export type DecisionInput = z.input<typeof DecisionSchema>;
export type DecisionKind = Decision["decision"];
export const DECISION_KINDS = ["allow", "block", "modify", "defer", "escalate"] as const satisfies readonly DecisionKind[];

/** The generic Decision (spec §6). */
import { z } from "zod";
import { JsonMapSchema, opt, present, uint } from "./common.js";

/** Validates an `allow` decision: optionally with a modified payload the agent uses instead of its own. */
export const AllowDecisionSchema = z.object({
  decision: z.literal("allow"),
  /** When present the agent uses it instead of the original payload. */
  modified_payload: z.unknown().optional(),
  metadata: opt(JsonMapSchema),
});
/** The `block` variant of the generic Decision (spec §6): do not proceed; `reason` required, `metadata` optional. */
export const BlockDecisionSchema = z.object({
  decision: z.literal("block"),
  reason: z.string(),
  metadata: opt(JsonMapSchema),
});
/** The `modify` variant of the generic Decision (spec §6): proceed with `modified_payload`, which must be present (may be `null`). */
export const ModifyDecisionSchema = z.object({
  decision: z.literal("modify"),
  /** The member must exist (`undefined` is refused: it would be missing on the wire); `null` is allowed. */
  modified_payload: present(),
  metadata: opt(JsonMapSchema),
});
/** The `defer` variant of the generic Decision (spec §6): retry after `retry_after_ms` (required); `reason` optional. */
export const DeferDecisionSchema = z.object({
  decision: z.literal("defer"),
  retry_after_ms: uint(),
  reason: opt(z.string()),
});
/**
 * The `escalate` variant of the generic Decision (spec §6): hand off to a human or external approver; `reason` required,
 * `escalation_target` optional.
 */
export const EscalateDecisionSchema = z.object({
  decision: z.literal("escalate"),
  reason: z.string(),
  escalation_target: opt(z.string()),
});

/**
 * Validates the generic Decision (spec §6), tagged by `decision` (case sensitive). Note `defer` requires `retry_after_ms` and
 * `modify` requires a `modified_payload` member.
 */
export const DecisionSchema = z.discriminatedUnion("decision", [
  AllowDecisionSchema,
  BlockDecisionSchema,
  ModifyDecisionSchema,
  DeferDecisionSchema,
  EscalateDecisionSchema,
]);
/**
 * The generic decision (spec §6), as parsed: the answer to `pre_action`, `pre_prompt`, `handshake`/`query` sent as events, and each
 * element of a batch result.
 */
export type Decision = z.infer<typeof DecisionSchema>;
/** What a generic event handler (`onEvent`) may return: the input form of {@link DecisionSchema}. */
export type DecisionInput = z.input<typeof DecisionSchema>;
/** A tag of the generic Decision: `allow`, `block`, `modify`, `defer` or `escalate`. */
export type DecisionKind = Decision["decision"];
/** The five tags of the generic Decision, in the order of spec §6. */
export const DECISION_KINDS = ["allow", "block", "modify", "defer", "escalate"] as const satisfies readonly DecisionKind[];

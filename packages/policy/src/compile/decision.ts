/**
 * A rule's `action`: checked at load time against the decision type of every event type the
 * rule matches, then built per evaluation (rule id annotation, merge patch, redaction, retry).
 */
import { DecisionSchema, EVENT_TABLE, redactSecretsIn, type EventType } from "@ahp/core";
import type { z } from "zod";
import { zodIssues } from "../issues.js";
import { applyMergePatch } from "../json.js";
import type { PolicyAction } from "../schema.js";
import type { DocPath, Issues } from "./conditions.js";
import type { EvalContext } from "./context.js";

const POLICY_ONLY_KEYS = new Set(["merge_patch", "redact_secrets"]);

/** Member names of the variant of `schema` whose `decision` tag is `tag`; undefined when the schema has no such variant. */
function variantKeys(schema: z.ZodType, tag: string): Set<string> | undefined {
  const options = (schema as unknown as { options?: readonly { shape?: Record<string, unknown> }[] }).options;
  if (options === undefined) return undefined;
  for (const option of options) {
    const literal = option.shape?.decision as { value?: unknown; values?: Set<unknown> } | undefined;
    if (literal === undefined) continue;
    if (literal.values?.has(tag) || literal.value === tag) return new Set(Object.keys(option.shape ?? {}));
  }
  return undefined;
}

/** Decision schema answering an event of this type: the typed one, or the generic Decision (also for batched notifications). */
export function decisionSchemaFor(type: EventType): z.ZodType {
  return EVENT_TABLE[type].decisionSchema ?? DecisionSchema;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const annotateReason = (reason: string | undefined, ruleId: string) =>
  reason === undefined || reason.length === 0 ? `rule: ${ruleId}` : `${reason} [rule: ${ruleId}]`;

export type DecisionBuilder = (ctx: EvalContext, retryAfterMs?: number) => unknown;

/**
 * Checks `action` against the decision type of `type` and returns a builder. `ruleId` is added
 * as `metadata.rule` where the variant has `metadata`, else to `reason` where it has one.
 */
export function compileDecision(
  action: PolicyAction,
  type: EventType,
  ruleId: string | undefined,
  rateLimited: boolean,
  at: DocPath,
  issues: Issues,
): DecisionBuilder | undefined {
  const schema = decisionSchemaFor(type);
  const tag = action.decision;
  const keys = variantKeys(schema, tag);
  const typeName = EVENT_TABLE[type].decisionTypeName ?? "Decision";
  if (keys === undefined) {
    const allowed = (schema as unknown as { options: { shape: { decision: { value: string } } }[] }).options.map(
      (o) => `\`${o.shape.decision.value}\``,
    );
    issues.add(
      [...at, "decision"],
      `decision \`${tag}\` is not valid for event type \`${type}\` (${typeName} allows ${allowed.join(", ")})`,
    );
    return undefined;
  }
  const { merge_patch: mergePatch, redact_secrets: redact, ...base } = action as Record<string, unknown> & PolicyAction;
  for (const key of Object.keys(base)) {
    if (!keys.has(key) && !POLICY_ONLY_KEYS.has(key)) {
      issues.add([...at, key], `unknown field \`${key}\` for decision \`${tag}\` of event type \`${type}\` (${typeName})`, true);
    }
  }
  const computesPayload = mergePatch !== undefined || (redact !== undefined && redact !== false);
  if (computesPayload && !keys.has("modified_payload")) {
    issues.add(
      [...at, mergePatch !== undefined ? "merge_patch" : "redact_secrets"],
      `merge_patch and redact_secrets need a decision with modified_payload (allow or modify of a generic event), not \`${tag}\` of \`${type}\``,
    );
    return undefined;
  }
  if (computesPayload && base.modified_payload !== undefined) {
    issues.add([...at, "modified_payload"], "give either modified_payload or merge_patch/redact_secrets, not both");
  }
  const computesRetry = rateLimited && keys.has("retry_after_ms");
  if (computesRetry && base.retry_after_ms !== undefined) {
    issues.add([...at, "retry_after_ms"], "retry_after_ms is computed from the token bucket for rate-limited rules; leave it out");
  }
  // Check the decision as written, with placeholders for the computed members.
  const sample: Record<string, unknown> = { ...base };
  if (computesPayload) sample.modified_payload = {};
  if (computesRetry) sample.retry_after_ms = 0;
  const checked = schema.safeParse(sample);
  if (!checked.success) {
    for (const issue of zodIssues(checked.error.issues, sample)) {
      issues.add([...at, ...issue.path], `${issue.message} (decision \`${tag}\` of ${typeName}, event type \`${type}\`)`);
    }
    return undefined;
  }
  const template: Record<string, unknown> = { ...base };
  if (ruleId !== undefined) {
    if (keys.has("metadata")) template.metadata = { ...base.metadata, rule: ruleId };
    else if (keys.has("reason")) template.reason = annotateReason(base.reason, ruleId);
  }
  if (!computesPayload && !computesRetry) {
    const frozen = deepFreeze(template);
    return () => frozen;
  }
  const redactOptions = typeof redact === "object" && redact !== null ? { kinds: redact.kinds } : {};
  return (ctx, retryAfterMs) => {
    const out: Record<string, unknown> = { ...template };
    if (computesRetry) out.retry_after_ms = retryAfterMs ?? 0;
    if (computesPayload) {
      let payload: unknown = ctx.event.payload;
      if (redact !== undefined && redact !== false) payload = redactSecretsIn(payload, redactOptions);
      if (mergePatch !== undefined) payload = applyMergePatch(payload, mergePatch);
      out.modified_payload = payload;
    }
    return out;
  };
}

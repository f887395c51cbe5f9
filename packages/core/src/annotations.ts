/**
 * A side channel from whoever decides (a policy engine, an application handler) to whoever
 * records and measures (audit log, metrics, spans), without a package dependency between them.
 *
 * The annotation lives on the event object itself under the registry symbol
 * `Symbol.for("@ahp/decision-annotation")`, non-enumerable, so it never reaches JSON, never
 * travels on the wire and is shared by every copy of every package that knows the key.
 *
 * Used by `@ahp/audit` and `@ahp/observability`; available to any handler wrapper.
 */

/** What a decider can tell the recorders about one decision. */
export interface DecisionAnnotation {
  /** Id of the rule that produced the decision. */
  ruleId?: string;
  /** Time the decider itself spent (policy evaluation), in nanoseconds. */
  latencyNs?: number | bigint;
  /**
   * A candidate policy evaluated beside the enforced one and never enforced (shadow mode): its
   * decision and rule, set only when it disagrees with the enforced decision.
   */
  shadow?: { decision: string; ruleId?: string };
}

/** The registry key; other packages may use it directly without importing this one. */
export const DECISION_ANNOTATION = Symbol.for("@ahp/decision-annotation");

/**
 * Attaches (merges) an annotation to an event, query or any other object a handler received.
 * Call it inside the handler, before returning the decision.
 */
export function annotate<T extends object>(target: T, annotation: DecisionAnnotation): T {
  const previous = readAnnotation(target);
  const merged: DecisionAnnotation = { ...previous, ...annotation };
  Object.defineProperty(target, DECISION_ANNOTATION, { value: merged, enumerable: false, configurable: true, writable: true });
  return target;
}

/** The annotation attached with {@link annotate}, if any. */
export function readAnnotation(target: unknown): DecisionAnnotation | undefined {
  if (target === null || typeof target !== "object") return undefined;
  const value = (target as Record<symbol, unknown>)[DECISION_ANNOTATION];
  return value !== null && typeof value === "object" ? value : undefined;
}

/**
 * Default pattern for a rule id carried in a reason text: `rule:<id>`, `rule=<id>`,
 * `rule <id>` in brackets or parentheses, e.g. `"rate limited [rule: sessions.burst]"`.
 */
export const RULE_IN_REASON = /(?:^|[\s([{,;])rule(?:_id|Id)?\s*[:=]\s*([A-Za-z0-9_.:/@-]+)|[([]rule\s+([A-Za-z0-9_.:/@-]+)[)\]]/;

/**
 * Where {@link findRuleId} looks for the id of the rule behind a decision: the handled object's annotation, then the result's
 * metadata, then its reason text.
 */
export interface RuleIdSources {
  /** The event (or query) the handler received; its annotation wins. */
  target?: unknown;
  /** What the handler returned. `metadata.rule` / `metadata.rule_id` / `metadata.ruleId` are read. */
  result?: unknown;
  /** Pattern for a rule id inside `result.reason`; `false` disables. Default {@link RULE_IN_REASON}. */
  reasonPattern?: RegExp | false;
}

/** Finds the matched rule id: explicit annotation, then decision metadata, then reason text. */
export function findRuleId({ target, result, reasonPattern = RULE_IN_REASON }: RuleIdSources): string | undefined {
  const annotated = readAnnotation(target)?.ruleId;
  if (typeof annotated === "string" && annotated.length > 0) return annotated;
  if (result === null || typeof result !== "object") return undefined;
  const r = result as { metadata?: unknown; reason?: unknown };
  if (r.metadata !== null && typeof r.metadata === "object") {
    const m = r.metadata as Record<string, unknown>;
    for (const key of ["rule", "rule_id", "ruleId"]) {
      const value = m[key];
      if (typeof value === "string" && value.length > 0) return value;
    }
  }
  if (reasonPattern !== false && typeof r.reason === "string") {
    reasonPattern.lastIndex = 0;
    const match = reasonPattern.exec(r.reason);
    const id = match?.slice(1).find((g) => typeof g === "string" && g.length > 0);
    if (id !== undefined) return id;
  }
  return undefined;
}

/**
 * Shadow mode: a candidate policy evaluated beside the enforced one on live traffic and never
 * enforced. After every evaluation of the enforced engine, the candidate decides the same event
 * with its own state (rate limits, counters, budgets); when its decision tag differs from the
 * enforced one, the event is annotated (`annotate(event, { shadow })`, which `withAudit` copies
 * into the audit record as `shadow: { decision, rule }`) and the disagreement is reported.
 */
import { annotate } from "@ahp/core";
import type { PolicyEvaluation, ShadowCandidate } from "./evaluation.js";

/** One event on which the candidate (shadow) policy decided differently from the enforced one. */
export interface ShadowDisagreement {
  event: PolicyEvaluation["event"];
  /** The enforced decision's tag (`none` when nothing was decided). */
  from: string;
  /** The candidate's decision tag (`none` when it would decide nothing). */
  to: string;
  /** The enforced rule, when a rule decided. */
  enforcedRule: string | undefined;
  /** The candidate's rule, when a rule of it decided. */
  shadowRule: string | undefined;
  /** The candidate's whole decision. */
  decision: unknown;
}

/** The tag of a decision (`allow`, `block`, `approve`, ...), or `none`. */
export function decisionTag(decision: unknown): string {
  const tag = (decision as { decision?: unknown } | null | undefined)?.decision;
  return typeof tag === "string" ? tag : "none";
}

/**
 * The candidate side of shadow mode. `PolicyEngine` creates one from its `shadow` option and
 * calls {@link observe} after each of its own evaluations.
 */
export class ShadowPolicy<E extends ShadowCandidate = ShadowCandidate> {
  constructor(
    /** The candidate's engine: swap or watch it to reload the candidate (`engine.watch()`). */
    readonly engine: E,
    readonly onDisagreement: ((disagreement: ShadowDisagreement) => void) | undefined,
    readonly onerror: ((error: Error) => void) | undefined,
  ) {}

  /**
   * Lets the candidate decide the event of an enforced evaluation. When no rule of the
   * candidate matches, it falls back the way the enforced side did: to the same user handler's
   * decision when a handler decided, else to its own `default` (generic events) or the protocol
   * default. Never throws: a failure goes to `onerror`, and the enforced decision is untouched.
   */
  observe(enforced: PolicyEvaluation): ShadowDisagreement | undefined {
    try {
      const event = enforced.event;
      const engine = this.engine;
      const outcome = engine.match(event);
      let decision = outcome.decision;
      let source: PolicyEvaluation["source"] = "rule";
      if (decision === undefined) {
        if (enforced.source === "handler") {
          decision = enforced.decision;
          source = "handler";
        } else if (enforced.notification) source = "none";
        else {
          decision = engine.fallback(event.event_type);
          source = "default";
          if (decision === undefined) {
            decision = event.event_type === "idle" ? { decision: "allow" } : undefined;
            source = "none";
          }
        }
      }
      engine.complete(event, outcome, decision, source, enforced.notification);
      const from = decisionTag(enforced.decision);
      const to = decisionTag(decision);
      if (from === to) return undefined;
      // A notification's decision is never sent: a candidate rule matching it changes nothing.
      // A fail-closed answer for an unreachable state store is no policy decision to compare with.
      if (enforced.notification || enforced.source === "state_unavailable") return undefined;
      const disagreement: ShadowDisagreement = {
        event,
        from,
        to,
        enforcedRule: enforced.ruleId,
        shadowRule: outcome.ruleId,
        decision,
      };
      annotate(event, { shadow: { decision: to, ...(outcome.ruleId === undefined ? {} : { ruleId: outcome.ruleId }) } });
      this.onDisagreement?.(disagreement);
      return disagreement;
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return undefined;
    }
  }
}

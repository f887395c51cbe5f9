/**
 * What one evaluation of a policy produces: the outcome of matching an event against the rules
 * and the evaluation reported once the decision is final. Shared by the engine and the shadow
 * (candidate) side, which only needs an engine's {@link ShadowCandidate} face.
 */
import type { AhpEvent, EventType } from "@ahp/core";
import type { CompiledPolicy } from "./load.js";

/** Who produced the final decision of an evaluation. */
export type DecisionSource =
  /** A policy rule matched. */
  | "rule"
  /** No rule matched; the policy's `default` decided (generic events). */
  | "default"
  /** No rule matched; a composed user handler decided. */
  | "handler"
  /** No rule matched and nobody else decided: the protocol default (`allow` for idle) or no decision (typed points, notifications). */
  | "none"
  /** The shared state store could not be reached: the event type's fail-closed decision. */
  | "state_unavailable";

/** One evaluation, as reported to `onDecision` (for the audit log and metrics). */
export interface PolicyEvaluation {
  /** The decision sent back; undefined for notifications without a matching rule and unanswered typed points. */
  decision: unknown;
  /** Id of the matching rule, when one matched. */
  ruleId: string | undefined;
  source: DecisionSource;
  /** Time spent evaluating the policy (not the user handler), in nanoseconds. */
  latencyNs: number;
  event: AhpEvent;
  /** The event arrived as a notification: the decision (if a rule matched) could not be sent. */
  notification: boolean;
  /** `name` of the policy that decided. */
  policy: string | undefined;
}

/** Result of matching an event against the rules, before anything is recorded. */
export interface PolicyMatchOutcome {
  /** Decision of the matching rule, or undefined when none matched. */
  decision: unknown;
  ruleId: string | undefined;
  latencyNs: number;
  /** The policy version that was used. */
  policy: CompiledPolicy;
  /** @internal The facts of the evaluation, opaque (what an allowed action teaches the session is read from them). */
  facts?: unknown;
}

/** What shadow mode needs of the candidate's engine (a `PolicyEngine`). */
export interface ShadowCandidate {
  match(event: AhpEvent): PolicyMatchOutcome;
  complete(
    event: AhpEvent,
    outcome: PolicyMatchOutcome,
    decision: unknown,
    source: DecisionSource,
    notification?: boolean,
  ): PolicyEvaluation;
  fallback(type: EventType): unknown;
}

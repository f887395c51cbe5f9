/**
 * A policy as an `AhpServer` handler set, and its composition with user handlers.
 *
 * Composition rule ("policy first, then fall through"): for every event the policy's rules are
 * evaluated first; the first matching rule decides and the user handler is not called. When no
 * rule matches, the user's handler for that event decides. When there is no user handler, the
 * policy's `default` decides generic events (`pre_action`, `pre_prompt`, batched events), and
 * typed points get the protocol default (`allow` for idle, "Capability not supported" for the
 * others, as the reference server answers). Notifications are observed by the policy (counters,
 * `onDecision`) and then passed to the user's `onNotification`. Queries and handshakes go to the
 * user's handlers unchanged.
 */
import {
  EVENT_TABLE,
  SPECIALIZED_EVENT_TYPES,
  type AhpEvent,
  type AhpHandlerContext,
  type AhpServerHandlers,
  type DecisionInput,
  type SpecializedEventType,
  type TypedEventHandler,
} from "@ahp/core";
import { PolicyEngine, type DecisionSource, type PolicyEngineOptions, type PolicyMatchOutcome } from "./engine.js";
import type { PolicySource } from "./load.js";
import { composeSharedHandlers } from "./shared-handlers.js";

/** Handlers backed by a policy engine; pass them to `new AhpServer({ handlers })`. */
export interface PolicyHandlers extends AhpServerHandlers {
  readonly engine: PolicyEngine;
}

/** Turns a policy (text, object, compiled policy or engine) into `AhpServer` handlers. */
export function createPolicyHandler(policy: PolicySource | PolicyEngine, options: PolicyEngineOptions = {}): PolicyHandlers {
  const engine = policy instanceof PolicyEngine ? policy : new PolicyEngine(policy, options);
  return composeHandlers(engine);
}

type Awaitable<T> = T | Promise<T>;

/**
 * Composes a policy with user handlers: the policy decides first; on "no match" the user's
 * handler decides (see the module comment for the complete rule).
 */
export function composeHandlers(policy: PolicyHandlers | PolicyEngine, user: AhpServerHandlers = {}): PolicyHandlers {
  const engine = policy instanceof PolicyEngine ? policy : policy.engine;
  // State in a shared store: every evaluation is asynchronous (one store step).
  if (engine.stateStore !== undefined) return composeSharedHandlers(engine, user);

  /** Runs the user's handler after a miss, recording its decision (or the failure) afterwards. */
  const fallThrough = async <R>(event: AhpEvent, outcome: PolicyMatchOutcome, call: () => Awaitable<R>): Promise<R> => {
    let decision: unknown;
    try {
      decision = await call();
      return decision as R;
    } finally {
      engine.complete(event, outcome, decision, "handler");
    }
  };

  const onEvent = (event: AhpEvent, ctx: AhpHandlerContext): Awaitable<DecisionInput> => {
    const outcome = engine.match(event);
    if (outcome.decision !== undefined) {
      engine.complete(event, outcome, outcome.decision, "rule");
      return outcome.decision as DecisionInput;
    }
    const handler = user.onEvent;
    if (handler !== undefined) return fallThrough(event, outcome, () => handler(event, ctx));
    const fallback = engine.fallback(event.event_type);
    engine.complete(event, outcome, fallback, "default");
    return fallback as DecisionInput;
  };

  const typedHandler = <T extends SpecializedEventType>(type: T): TypedEventHandler<T> => {
    return (payload, event, ctx) => {
      const outcome = engine.match(event);
      if (outcome.decision !== undefined) {
        engine.complete(event, outcome, outcome.decision, "rule");
        return outcome.decision as never;
      }
      const handler = user.typed?.[type];
      if (handler !== undefined) return fallThrough(event, outcome, () => handler(payload, event, ctx));
      // The protocol default (spec §7.9), as AhpServer would answer without a typed handler.
      if (type === "idle") {
        const allow = { decision: "allow" as const };
        engine.complete(event, outcome, allow, "none" satisfies DecisionSource);
        return allow as never;
      }
      engine.complete(event, outcome, undefined, "none");
      throw new Error(`Capability not supported: ${EVENT_TABLE[type].capabilityLabel} not supported`);
    };
  };

  const typed: NonNullable<AhpServerHandlers["typed"]> = {};
  for (const type of SPECIALIZED_EVENT_TYPES as readonly SpecializedEventType[]) {
    (typed as Record<string, unknown>)[type] = typedHandler(type);
  }

  const onNotification = (event: AhpEvent, ctx: AhpHandlerContext): Awaitable<void> => {
    engine.evaluate(event, { notification: true });
    return user.onNotification?.(event, ctx);
  };

  return { ...user, onEvent, onNotification, typed, engine };
}

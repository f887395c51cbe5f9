/**
 * `composeHandlers` for an engine with a shared state store: the same composition rule (see
 * `handlers.ts`), with every evaluation going through {@link PolicyEngine.evaluateShared}.
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
import type { PolicyEngine } from "./engine.js";

export function composeSharedHandlers(engine: PolicyEngine, user: AhpServerHandlers): AhpServerHandlers & { engine: PolicyEngine } {
  const onEvent = async (event: AhpEvent, ctx: AhpHandlerContext): Promise<DecisionInput> => {
    const handler = user.onEvent;
    const evaluation = await engine.evaluateShared(
      event,
      handler !== undefined ? { handler: () => handler(event, ctx) } : { decision: engine.fallback(event.event_type), source: "default" },
    );
    return evaluation.decision as DecisionInput;
  };

  const typedHandler = <T extends SpecializedEventType>(type: T): TypedEventHandler<T> => {
    return async (payload, event, ctx) => {
      const handler = user.typed?.[type];
      const evaluation = await engine.evaluateShared(
        event,
        handler !== undefined
          ? { handler: () => handler(payload, event, ctx) }
          : // The protocol default (spec §7.9), as AhpServer would answer without a typed handler.
            { decision: type === "idle" ? { decision: "allow" as const } : undefined, source: "none" },
      );
      if (evaluation.decision === undefined && evaluation.source === "none") {
        throw new Error(`Capability not supported: ${EVENT_TABLE[type].capabilityLabel} not supported`);
      }
      return evaluation.decision as never;
    };
  };

  const typed: NonNullable<AhpServerHandlers["typed"]> = {};
  for (const type of SPECIALIZED_EVENT_TYPES as readonly SpecializedEventType[]) {
    (typed as Record<string, unknown>)[type] = typedHandler(type);
  }

  const onNotification = async (event: AhpEvent, ctx: AhpHandlerContext): Promise<void> => {
    await engine.evaluateShared(event, { decision: undefined, source: "none" }, true);
    await user.onNotification?.(event, ctx);
  };

  return { ...user, onEvent, onNotification, typed, engine };
}

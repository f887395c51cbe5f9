/** One handler invocation as handler middleware (`middleware.ts`) and the handler-failure answers (`handler-timeout.ts`) see it. */
import type { AhpEvent } from "./schema/event.js";
import type { HandshakeRequest, QueryRequest } from "./schema/methods.js";
import type { AhpHandlerContext } from "./server-types.js";

/** Which handler is being called. */
export type HandlerKind = "event" | "typed" | "notification" | "query" | "handshake";
/** How the message travelled: a single request, a notification, or one element of `ahp/batch`. */
export type HandlerForm = "request" | "notification" | "batch";

/** One handler invocation as a middleware sees it. */
export interface HandlerCall {
  readonly kind: HandlerKind;
  readonly form: HandlerForm;
  /** The event type; `"query"` for `ahp/query`, `"handshake"` for `ahp/handshake`. */
  readonly eventType: string;
  readonly sessionId: string;
  readonly agentId: string;
  /** Present for `event`, `typed` and `notification` calls. */
  readonly event?: AhpEvent;
  readonly query?: QueryRequest;
  readonly handshake?: HandshakeRequest;
  /** The object handed to the handler; annotations (`annotate()`) are read from it. */
  readonly target: object;
  readonly ctx: AhpHandlerContext;
}

/** One log line per handler call that ran past the server's handler time limit. */
import { handlerFailureAnswer, handlerTimeoutOf, observeHandlers, type HandlerMiddleware } from "@ahp/core";
import type { Logger } from "./logger.js";

/** Options of {@link timeoutLogging}. */
export interface TimeoutLoggingOptions {
  /** The server's `handlerFailure` option, so that the line says what the agent was answered. Default `error`. */
  handlerFailure?: "error" | "decision";
}

/**
 * A middleware that writes one `warn` line `handler timeout` for every call the server gave up
 * on at its handler time limit: the event type, session, agent, connection, request id, the
 * limit, and what the agent was answered (`answered`: the decision tag, or `error <code>`).
 * Never the payload.
 */
export function timeoutLogging(logger: Logger, options: TimeoutLoggingOptions = {}): HandlerMiddleware {
  return observeHandlers({
    end: (call, outcome) => {
      if (outcome.ok) return;
      const timeout = handlerTimeoutOf(outcome.error);
      if (timeout === undefined) return;
      const answer = handlerFailureAnswer(call, outcome.error, options.handlerFailure);
      const { ctx } = call;
      logger.warn("handler timeout", {
        event_type: call.eventType,
        form: call.form,
        session: call.sessionId,
        agent: call.agentId,
        connection: ctx.connection.id,
        transport: ctx.connection.info.transport,
        ...(ctx.requestId === undefined ? {} : { request_id: ctx.requestId }),
        timeout_ms: timeout.timeoutMs,
        answered: answer === undefined ? "nothing" : "decision" in answer ? answer.decision.decision : `error ${answer.error.code}`,
      });
    },
  });
}

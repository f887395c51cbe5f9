import { describe, expect, it } from "vitest";
import {
  AhpServer,
  applyHandlerMiddleware,
  handlerFailureAnswer,
  handlerTimeoutOf,
  observeHandlers,
  type HandlerCall,
  type HandlerOutcome,
} from "../src/index.js";
import { until } from "./wait.js";

const params = (session = "s") => ({
  event_type: "pre_action",
  session_id: session,
  agent_id: "a",
  timestamp: "t",
  depth: 0,
  payload: { tool_name: "bash" },
});

const never = () => new Promise<never>(() => undefined);

/** What the server answered, in the shape of handlerFailureAnswer. */
function answered(response: Record<string, unknown>): unknown {
  if ("error" in response) return { error: response.error };
  const result = response.result as { decisions?: unknown[] };
  return { decision: result.decisions === undefined ? result : result.decisions[0] };
}

describe("handler timeouts as middleware sees them", () => {
  for (const handlerFailure of ["error", "decision"] as const) {
    it(`handlerFailureAnswer states what the server answered at the time limit (handlerFailure: ${handlerFailure})`, async () => {
      const seen: Array<{ call: HandlerCall; outcome: HandlerOutcome }> = [];
      const handlers = applyHandlerMiddleware(
        { onEvent: never, onQuery: never, onHandshake: never },
        observeHandlers({ end: (call, outcome) => seen.push({ call, outcome }) }),
      );
      const server = new AhpServer({ handlers, handlerTimeoutMs: 20, handlerFailure });
      const connection = server.openConnection({ transport: "memory" });
      const requests = [
        { jsonrpc: "2.0", id: "e", method: "ahp/event", params: params() },
        { jsonrpc: "2.0", id: "b", method: "ahp/batch", params: { events: [params()] } },
        { jsonrpc: "2.0", id: "q", method: "ahp/query", params: { session_id: "s", agent_id: "a", query_type: "t", payload: null } },
        {
          jsonrpc: "2.0",
          id: "h",
          method: "ahp/handshake",
          params: {
            protocol_version: "2.4",
            session_id: "s",
            agent_id: "a",
            agent_info: { name: "n", version: "1", framework: "f", capabilities: [] },
          },
        },
      ];
      for (const [i, request] of requests.entries()) {
        const result = await server.process(connection, request);
        expect(result.kind).toBe("response");
        // The middleware sees the abort in the same turn; its observer runs a few microtasks later.
        await until(() => seen.length > i, `the observer's report of request ${String(request.id)}`);
        const call = seen[i]!;
        expect(handlerTimeoutOf(call.outcome.error)).toEqual({ timeoutMs: 20 });
        expect(handlerFailureAnswer(call.call, call.outcome.error, handlerFailure)).toEqual(
          answered((result as { response: Record<string, unknown> }).response),
        );
      }
      expect(handlerTimeoutOf(new Error("Timeout after 20ms"))).toBeUndefined();
      await server.close({ graceMs: 0 });
    });
  }
});

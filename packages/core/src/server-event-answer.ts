/**
 * The answer of an `ahp/event` request as one object: the handler's outcome becomes the
 * response inside the single promise of the handler call (see `call` in server-handler-call.ts).
 */
import type { JsonRpcId } from "./schema/jsonrpc.js";
import type { CallThen } from "./server-handler-call.js";
import { failedResult, resultOf } from "./server-replies.js";
import type { AhpProcessResult } from "./server-types.js";

/** How a server checks a generic event's decision and maps a failure (shared by all its answers). */
export interface AnswerKit {
  check(decision: unknown): unknown;
  failure(info: { failClosed?: ((reason: string) => unknown) | undefined }, error: unknown): unknown;
}

/**
 * The answer of one `ahp/event` request: maps the handler's outcome to the response (result,
 * fail-closed decision or JSON-RPC error). One object per async request instead of a promise
 * per step; its methods never throw.
 */
export class EventAnswer implements CallThen<unknown, AhpProcessResult> {
  constructor(
    readonly kit: AnswerKit,
    readonly id: JsonRpcId,
    readonly info: { failClosed?: ((reason: string) => unknown) | undefined },
  ) {}

  /** A generic event's decision: checked against the decision schema first. */
  value(decision: unknown): AhpProcessResult {
    let checked: unknown;
    try {
      checked = this.kit.check(decision);
    } catch (error) {
      return this.error(error);
    }
    return resultOf(this.id, checked);
  }

  /** A result that is already checked (typed events check their own). */
  settled(result: unknown): AhpProcessResult {
    return resultOf(this.id, result);
  }

  error(error: unknown): AhpProcessResult {
    try {
      return resultOf(this.id, this.kit.failure(this.info, error));
    } catch (failure) {
      return failedResult(this.id, failure);
    }
  }
}

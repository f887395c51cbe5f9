/** `ahp/batch` (spec §11.5): checked as a whole, every event validated before any handler runs. */
import { AhpError, AhpErrorCode } from "./errors.js";
import { EVENT_TABLE } from "./event-table.js";
import { connectionLimit, limitError } from "./limits.js";
import type { AhpEvent } from "./schema/event.js";
import { BatchRequestSchema, type HarnessConfig } from "./schema/methods.js";
import { HandlerFailure, failureText } from "./server-handler-call.js";
import { invalidParams } from "./server-replies.js";
import { validateEvent, type LimitReportTarget } from "./server-validate.js";
import { decode } from "./validation.js";

/**
 * Answers one batch: `handle` decides each event (a HandlerFailure or any error blocks that slot
 * only); throws the AhpError to answer when the batch itself is refused. A batch over
 * `batch_size` and an event over `max_depth` are also reported to `report.onerror`.
 */
export async function handleBatch(
  params: unknown,
  config: HarnessConfig,
  handle: (event: AhpEvent, batch: { index: number; size: number }) => unknown,
  report: LimitReportTarget,
): Promise<unknown> {
  const decoded = decode(BatchRequestSchema, params);
  if (!decoded.ok) throw invalidParams(decoded.detail);
  // Validate the raw events (not the decoded ones) so that details name the element.
  const rawEvents = (params as { events: unknown[] }).events;
  const limit = config.batch_size;
  if (limit !== undefined && limit !== null && rawEvents.length > limit) {
    report.onerror?.(limitError(connectionLimit(report.connection, "batch_size", limit, "answered_error")));
    throw new AhpError(AhpErrorCode.InvalidParams, `Batch size ${rawEvents.length} exceeds configured limit ${limit}`);
  }
  // Recommended (§11.5): validate every event first, then handle; no partial side effects.
  const events = rawEvents.map((raw) => {
    const event = validateEvent(raw, true, config.max_depth, report.connection, report.onerror);
    if (!EVENT_TABLE[event.event_type].batchable) {
      throw new AhpError(
        AhpErrorCode.InvalidParams,
        `Event type ${event.event_type} cannot be batched because it does not return a generic Decision`,
      );
    }
    return event;
  });
  const size = events.length;
  const decisions = await Promise.all(
    events.map(async (event, index) => {
      try {
        return await handle(event, { index, size });
      } catch (error) {
        // Fail closed: a failing handler blocks that slot only.
        const text = error instanceof HandlerFailure ? error.text : failureText(error);
        return { decision: "block", reason: `Handler error: ${text}` };
      }
    }),
  );
  return { decisions };
}

/**
 * What the server checks before anything is dispatched (spec §11.3): the kind of a JSON-RPC
 * message, and an event's shape, depth and payload.
 */
import { AhpError, AhpErrorCode } from "./errors.js";
import { EVENT_TABLE } from "./event-table.js";
import { LargeIntegerId } from "./large-id.js";
import { connectionLimit, limitError } from "./limits.js";
import { AhpEventSchema, type AhpEvent } from "./schema/event.js";
import { invalidParams } from "./server-replies.js";
import { decode } from "./validation.js";

/**
 * Request, notification, response or invalid (§11.3 steps 1–2); ids that are not strings or
 * accepted integers make a notification. A `jsonrpc` other than `"2.0"` (`"1.0"`, `"2"`, absent)
 * makes the message invalid: it is answered -32600 when its id can be read (JSON-RPC 2.0).
 */
export function classify(message: unknown, acceptNumericIds: boolean | undefined): "request" | "notification" | "response" | "invalid" {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return "invalid";
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return "invalid";
  if (typeof m.method !== "string") {
    return "id" in m && ("result" in m || "error" in m) ? "response" : "invalid";
  }
  if (!("params" in m)) return "invalid";
  const id = m.id;
  if (typeof id === "string") return "request";
  if (typeof id === "number" && Number.isInteger(id) && acceptNumericIds !== false) return "request";
  if (id instanceof LargeIntegerId && acceptNumericIds !== false) return "request";
  return "notification";
}

/** The connection a limit acted on and where the report goes (the server's `onerror`). */
export interface LimitReportTarget {
  readonly connection: { readonly id: number; readonly info: { readonly transport: string; readonly remote?: string } };
  readonly onerror: ((error: Error) => void) | undefined;
}

/**
 * §11.3 steps 3.1–3.3, shared by requests, notifications and batch elements. An event deeper than
 * `maxDepth` is also reported to `onerror` (with `connection`) as a limit that acted.
 */
export function validateEvent(
  params: unknown,
  inBatch: boolean,
  maxDepth: number | null | undefined,
  connection?: LimitReportTarget["connection"],
  onerror?: LimitReportTarget["onerror"],
): AhpEvent {
  const decoded = decode(AhpEventSchema, params);
  if (!decoded.ok) {
    throw inBatch
      ? new AhpError(AhpErrorCode.InvalidParams, `Invalid event: Serialization error: ${decoded.detail}`)
      : invalidParams(decoded.detail);
  }
  const event = decoded.value;
  if (maxDepth !== undefined && maxDepth !== null && event.depth > maxDepth) {
    if (connection !== undefined) onerror?.(limitError(connectionLimit(connection, "max_depth", maxDepth, "answered_error")));
    throw new AhpError(
      AhpErrorCode.InvalidParams,
      `Invalid event: Protocol error: Event depth ${event.depth} exceeds configured max depth ${maxDepth}`,
    );
  }
  const info = EVENT_TABLE[event.event_type];
  if (info.payloadCheck === "shape" && info.payloadSchema !== undefined) {
    const payload = decode(info.payloadSchema, event.payload);
    if (!payload.ok) {
      throw new AhpError(AhpErrorCode.InvalidParams, `Invalid event: Serialization error: ${payload.detail}`);
    }
  }
  return event;
}

/** JSON-RPC 2.0 envelope (spec §3). */
import { z } from "zod";
import { i32 } from "./common.js";

/**
 * Request id. The reference uses strings only (UUID v4) and treats a numeric id as a
 * notification; this implementation also accepts integer ids and echoes them (spec §3.4).
 */
export const JsonRpcIdSchema = z.union([z.string(), z.int()]);
/** A JSON-RPC request id: a string, or an integer (accepted and echoed by this implementation, spec §3.4). */
export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;

/** Validates a JSON-RPC request (spec §3.1): `jsonrpc` "2.0", a string or integer `id`, `method`, and a `params` member. */
export const JsonRpcRequestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema,
  method: z.string(),
  /** Required member; every AHP method takes an object. */
  params: z.unknown(),
});
/** A JSON-RPC request (spec §3.1): a method call with an id, to be answered by one response. */
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

/** Validates a JSON-RPC notification (spec §3.2): `jsonrpc` "2.0", `method` and a `params` member. */
export const JsonRpcNotificationSchema = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.string(),
  params: z.unknown(),
});
/** A JSON-RPC notification (spec §3.2): a method call without `id`, never answered. */
export type JsonRpcNotification = z.infer<typeof JsonRpcNotificationSchema>;

/** Validates the `error` member of a JSON-RPC error response (spec §3.3): an i32 `code`, a `message` and optional `data`. */
export const JsonRpcErrorObjectSchema = z.object({
  code: i32(),
  message: z.string(),
  data: z.unknown().optional(),
});

/** Validates a JSON-RPC success response (spec §3.3); a `null` result is rejected. */
export const JsonRpcSuccessResponseSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema,
  /** Anything but `null`. */
  result: z.union([z.string(), z.number(), z.boolean(), z.array(z.unknown()), z.record(z.string(), z.unknown())]),
});
/** A JSON-RPC success response (spec §3.3): the request's `id` and a non-null `result`. */
export type JsonRpcSuccessResponse = z.infer<typeof JsonRpcSuccessResponseSchema>;

/** Validates a JSON-RPC error response (spec §3.3): `jsonrpc` "2.0", an `id` (string, integer or `null`) and an error object. */
export const JsonRpcErrorResponseSchema = z.object({
  jsonrpc: z.literal("2.0"),
  /** `null` when the request id could not be read (parse error); `""` on the reference's HTTP notification errors. */
  id: JsonRpcIdSchema.nullable(),
  error: JsonRpcErrorObjectSchema,
});
/** A JSON-RPC error response (spec §3.3); `id` is `null` when the request's id could not be read. */
export type JsonRpcErrorResponse = z.infer<typeof JsonRpcErrorResponseSchema>;

/** Validates a JSON-RPC response, success or error (spec §3.3). */
export const JsonRpcResponseSchema = z.union([JsonRpcSuccessResponseSchema, JsonRpcErrorResponseSchema]);
/** A JSON-RPC response, success or error (spec §3.3). */
export type JsonRpcResponse = JsonRpcSuccessResponse | JsonRpcErrorResponse;

/** Validates any single JSON-RPC message: request, notification, success response or error response (spec §3). */
export const JsonRpcMessageSchema = z.union([
  JsonRpcRequestSchema,
  JsonRpcNotificationSchema,
  JsonRpcSuccessResponseSchema,
  JsonRpcErrorResponseSchema,
]);
/** Any single JSON-RPC 2.0 message AHP exchanges: a request, a notification or a response (spec §3). */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** JSON-RPC 2.0 envelope (spec §3). */
import { z } from "zod";
import { i32 } from "./common.js";

/**
 * Request id. The reference uses strings only (UUID v4) and treats a numeric id as a
 * notification; this implementation also accepts integer ids and echoes them (spec §3.4).
 */
export const JsonRpcIdSchema = z.union([z.string(), z.int()]);
export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;

export const JsonRpcRequestSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema,
  method: z.string(),
  /** Required member; every AHP method takes an object. */
  params: z.unknown(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

export const JsonRpcNotificationSchema = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.string(),
  params: z.unknown(),
});
export type JsonRpcNotification = z.infer<typeof JsonRpcNotificationSchema>;

export const JsonRpcErrorObjectSchema = z.object({
  code: i32(),
  message: z.string(),
  data: z.unknown().optional(),
});

export const JsonRpcSuccessResponseSchema = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcIdSchema,
  /** Anything but `null`. */
  result: z.union([z.string(), z.number(), z.boolean(), z.array(z.unknown()), z.record(z.string(), z.unknown())]),
});
export type JsonRpcSuccessResponse = z.infer<typeof JsonRpcSuccessResponseSchema>;

export const JsonRpcErrorResponseSchema = z.object({
  jsonrpc: z.literal("2.0"),
  /** `null` when the request id could not be read (parse error); `""` on the reference's HTTP notification errors. */
  id: JsonRpcIdSchema.nullable(),
  error: JsonRpcErrorObjectSchema,
});
export type JsonRpcErrorResponse = z.infer<typeof JsonRpcErrorResponseSchema>;

export const JsonRpcResponseSchema = z.union([JsonRpcSuccessResponseSchema, JsonRpcErrorResponseSchema]);
export type JsonRpcResponse = JsonRpcSuccessResponse | JsonRpcErrorResponse;

export const JsonRpcMessageSchema = z.union([
  JsonRpcRequestSchema,
  JsonRpcNotificationSchema,
  JsonRpcSuccessResponseSchema,
  JsonRpcErrorResponseSchema,
]);
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

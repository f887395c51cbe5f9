/** Params and results of the four AHP methods (spec §4). */
import { z } from "zod";
import { AhpEventSchema } from "./event.js";
import { DecisionSchema } from "./decision.js";
import { opt, u32, uint } from "./common.js";

export const AHP_PROTOCOL_VERSION = "2.4";
/** Crate version of the reference; default `harness_info.version` / `agent_info.version`. */
export const AHP_REFERENCE_CRATE_VERSION = "2.4.0";

export const AHP_METHODS = {
  handshake: "ahp/handshake",
  event: "ahp/event",
  query: "ahp/query",
  batch: "ahp/batch",
} as const;
export type AhpMethod = (typeof AHP_METHODS)[keyof typeof AHP_METHODS];

export const AgentInfoSchema = z.object({
  framework: z.string(),
  version: z.string(),
  /** Free-form. */
  capabilities: z.array(z.string()),
});
export type AgentInfo = z.infer<typeof AgentInfoSchema>;

export const HarnessInfoSchema = z.object({
  name: z.string(),
  version: z.string(),
  capabilities: z.array(z.string()),
});
export type HarnessInfo = z.infer<typeof HarnessInfoSchema>;

/** A limit that is not set is omitted from the JSON and is not enforced. */
export const HarnessConfigSchema = z.object({
  /** Advisory on the reference. */
  timeout_ms: opt(uint()),
  batch_size: opt(uint()),
  max_depth: opt(u32()),
});
export type HarnessConfig = z.infer<typeof HarnessConfigSchema>;
export type HarnessConfigInput = z.input<typeof HarnessConfigSchema>;

export const HandshakeRequestSchema = z.object({
  protocol_version: z.string(),
  agent_info: AgentInfoSchema,
  session_id: z.string(),
  agent_id: z.string(),
});
export type HandshakeRequest = z.infer<typeof HandshakeRequestSchema>;

export const HandshakeResponseSchema = z.object({
  protocol_version: z.string(),
  harness_info: HarnessInfoSchema,
  /** Reserved; the reference never sets it. */
  session_token: opt(z.string()),
  config: opt(HarnessConfigSchema),
});
export type HandshakeResponse = z.infer<typeof HandshakeResponseSchema>;
export type HandshakeResponseInput = z.input<typeof HandshakeResponseSchema>;

export const QueryRequestSchema = z.object({
  session_id: z.string(),
  agent_id: z.string(),
  /** Free-form, e.g. `"approval_check"`. */
  query_type: z.string(),
  /** The member must exist; `null` is allowed. */
  payload: z.unknown(),
});
export type QueryRequest = z.infer<typeof QueryRequestSchema>;

export const QueryResponseSchema = z.object({
  /** The member must exist; `null` is allowed. */
  answer: z.unknown(),
  reason: opt(z.string()),
  alternatives: opt(z.array(z.string())),
});
export type QueryResponse = z.infer<typeof QueryResponseSchema>;
export type QueryResponseInput = z.input<typeof QueryResponseSchema>;

export const BatchRequestSchema = z.object({
  events: z.array(AhpEventSchema),
});
export type BatchRequest = z.infer<typeof BatchRequestSchema>;

export const BatchResponseSchema = z.object({
  decisions: z.array(DecisionSchema),
});
export type BatchResponse = z.infer<typeof BatchResponseSchema>;

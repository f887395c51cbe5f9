/** Params and results of the four AHP methods (spec §4). */
import { z } from "zod";
import { AhpEventSchema } from "./event.js";
import { DecisionSchema } from "./decision.js";
import { opt, present, u32, uint } from "./common.js";

/** The protocol version this package speaks and answers in handshakes (`protocol_version`). */
export const AHP_PROTOCOL_VERSION = "2.4";
/** Crate version of the reference (`a3s-ahp` 2.4.0): the default `harness_info.version` of an `AhpServer` (the client sends its own version). */
export const AHP_REFERENCE_CRATE_VERSION = "2.4.0";

/** The JSON-RPC method names of the four AHP methods (spec §4), keyed by short name. */
export const AHP_METHODS = {
  handshake: "ahp/handshake",
  event: "ahp/event",
  query: "ahp/query",
  batch: "ahp/batch",
} as const;
/** One of the four AHP method names: `ahp/handshake`, `ahp/event`, `ahp/query`, `ahp/batch`. */
export type AhpMethod = (typeof AHP_METHODS)[keyof typeof AHP_METHODS];

/** Validates `agent_info` of `ahp/handshake` (spec §4.1): `framework`, `version` and `capabilities`, all required. */
export const AgentInfoSchema = z.object({
  framework: z.string(),
  version: z.string(),
  /** Free-form. */
  capabilities: z.array(z.string()),
});
/** Who the agent is, sent as `agent_info` in the handshake request (spec §4.1): framework, version and free-form capability strings. */
export type AgentInfo = z.infer<typeof AgentInfoSchema>;

/** Validates `harness_info` of the handshake result (spec §4.1): `name`, `version` and `capabilities`, all required. */
export const HarnessInfoSchema = z.object({
  name: z.string(),
  version: z.string(),
  capabilities: z.array(z.string()),
});
/**
 * Who the harness is, answered as `harness_info` in the handshake (spec §4.1): name, version and capability strings (static text,
 * not derived from the handlers).
 */
export type HarnessInfo = z.infer<typeof HarnessInfoSchema>;

/** A limit that is not set is omitted from the JSON and is not enforced. */
export const HarnessConfigSchema = z.object({
  /** Advisory on the reference. */
  timeout_ms: opt(uint()),
  batch_size: opt(uint()),
  max_depth: opt(u32()),
});
/**
 * The limits a harness advertises in its handshake (spec §4.1): `timeout_ms`, `batch_size`, `max_depth`. A limit that is absent is
 * not enforced.
 */
export type HarnessConfig = z.infer<typeof HarnessConfigSchema>;
/** Input form of {@link HarnessConfig}: each member may be absent or `null`. */
export type HarnessConfigInput = z.input<typeof HarnessConfigSchema>;

/**
 * Validates the `params` of `ahp/handshake` (spec §4.1). All four members are required; requests that leave out `capabilities`,
 * `session_id` or `agent_id` are rejected.
 */
export const HandshakeRequestSchema = z.object({
  protocol_version: z.string(),
  agent_info: AgentInfoSchema,
  session_id: z.string(),
  agent_id: z.string(),
});
/** The `params` of `ahp/handshake` (spec §4.1): the client's protocol version, its AgentInfo, and its session and agent ids. */
export type HandshakeRequest = z.infer<typeof HandshakeRequestSchema>;

/**
 * Validates the result of `ahp/handshake` (spec §4.1): `protocol_version` and `harness_info` required; `session_token` (never set by
 * the reference) and `config` optional.
 */
export const HandshakeResponseSchema = z.object({
  protocol_version: z.string(),
  harness_info: HarnessInfoSchema,
  /** Reserved; the reference never sets it. */
  session_token: opt(z.string()),
  config: opt(HarnessConfigSchema),
});
/** The result of `ahp/handshake` (spec §4.1): the harness's protocol version, its HarnessInfo and the limits it enforces. */
export type HandshakeResponse = z.infer<typeof HandshakeResponseSchema>;
/** Input form of {@link HandshakeResponse}: `session_token` and `config` may be absent or `null`. */
export type HandshakeResponseInput = z.input<typeof HandshakeResponseSchema>;

/** Validates the `params` of `ahp/query` (spec §4.3): all four members required; `payload` must be present but may be `null`. */
export const QueryRequestSchema = z.object({
  session_id: z.string(),
  agent_id: z.string(),
  /** Free-form, e.g. `"approval_check"`. */
  query_type: z.string(),
  /** The member must exist (`undefined` is refused: it would be missing on the wire); `null` is allowed. */
  payload: present(),
});
/** The `params` of `ahp/query` (spec §4.3): a free-form question (`query_type` and `payload`) from one session and agent. */
export type QueryRequest = z.infer<typeof QueryRequestSchema>;

/** Validates the result of `ahp/query` (spec §4.3): `answer` must be present (may be `null`); `reason` and `alternatives` optional. */
export const QueryResponseSchema = z.object({
  /** The member must exist (`undefined` is refused: it would be missing on the wire); `null` is allowed. */
  answer: present(),
  reason: opt(z.string()),
  alternatives: opt(z.array(z.string())),
});
/** The result of `ahp/query` (spec §4.3): an answer (any JSON value, possibly `null`), an optional reason and optional alternatives. */
export type QueryResponse = z.infer<typeof QueryResponseSchema>;
/** What a query handler (`onQuery`) may return: the input form of {@link QueryResponseSchema}. */
export type QueryResponseInput = z.input<typeof QueryResponseSchema>;

/**
 * Validates the `params` of `ahp/batch` (spec §4.4): `{events: AhpEvent[]}`. Which event types may be batched is checked separately
 * (spec §11.5).
 */
export const BatchRequestSchema = z.object({
  events: z.array(AhpEventSchema),
});
/** The `params` of `ahp/batch` (spec §4.4): the events to decide, possibly none. */
export type BatchRequest = z.infer<typeof BatchRequestSchema>;

/** Validates the result of `ahp/batch` (spec §4.4): `{decisions: Decision[]}`. */
export const BatchResponseSchema = z.object({
  decisions: z.array(DecisionSchema),
});
/** The result of `ahp/batch` (spec §4.4): one generic Decision per submitted event, in the same order. */
export type BatchResponse = z.infer<typeof BatchResponseSchema>;

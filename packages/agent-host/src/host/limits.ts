/** The per-connection limits of the Agent Host server and their defaults. */

/**
 * Per-connection limits of the Agent Host server (spec §3), set with `AgentHostOptions.limits`. Exceeding
 * one closes the connection, except `maxSubscriptions`: further subscriptions are refused.
 */
export interface ConnectionLimits {
  /** Largest inbound frame in bytes (larger frames close the connection with 1009). Default 1 MiB. */
  maxFrameBytes: number;
  /** Deepest JSON nesting of an inbound message (deeper closes with 1008). Default 64. */
  maxJsonDepth: number;
  /** Subscriptions per connection. Default 256. */
  maxSubscriptions: number;
  /** `dispatchAction` per second per connection (more closes with 1008). Default 50. */
  maxDispatchPerSecond: number;
  /** Unsent outbound bytes before the connection is closed with 1008. Default 16 MiB. */
  maxOutboundBytes: number;
  /** Consecutive unparseable frames before the connection is closed with 1008. Default 5. */
  maxParseErrors: number;
}

/**
 * Defaults of {@link ConnectionLimits} (spec §3): 1 MiB frames, JSON depth 64, 256 subscriptions, 50
 * `dispatchAction` per second, 16 MiB unsent outbound data, 5 unparseable frames in a row.
 * `AgentHostOptions.limits` overrides single members. A shared, unfrozen object: do not modify it.
 */
export const DEFAULT_LIMITS: ConnectionLimits = {
  maxFrameBytes: 1024 * 1024,
  maxJsonDepth: 64,
  maxSubscriptions: 256,
  maxDispatchPerSecond: 50,
  maxOutboundBytes: 16 * 1024 * 1024,
  maxParseErrors: 5,
};

/**
 * `@ahp/agent-host/client`: a small Agent Host client for inspectors (browser or Node) with
 * write-ahead reconciliation, plus everything of `./reducers`. Browser-safe.
 */
export * from "./reducers-entry.js";
export { ClientState, type PendingAction } from "./client/state.js";
export { AgentHostClient, AgentHostRequestError, withToken, type AgentHostClientOptions, type SocketLike } from "./client/connection.js";

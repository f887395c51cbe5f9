/** `@ahp/agent-host`: the Agent Host channel adapter (Node). The browser-safe parts are also at `./reducers` and `./client`. */
export * from "./reducers-entry.js";
export { AgentHost, PACKAGE_NAME, PACKAGE_VERSION, type AgentHostOptions } from "./host/agent-host.js";
export { listenAgentHost, type AgentHostListener, type ListenOptions } from "./host/server.js";
export { TokenAuthenticator, loadTokenFile, parseTokenFile, tokenOf, type Principal, type TokenEntry } from "./host/auth.js";
export { staticFiles, type RouteHandler } from "./host/static.js";
export { DEFAULT_LIMITS, type ConnectionLimits } from "./host/limits.js";
export { realScheduler, type Scheduler } from "./host/scheduler.js";
export { sessionUri, chatUri, uuidV5, URI_NAMESPACE } from "./host/uri.js";
export type { Role, Dispatcher, DecidedInfo, ApprovalEvent } from "./host/approvals.js";
export { WAIT_MARGIN_MS, parseClientWait, type ClientWait, type HoldOutcome } from "./host/hold-wait.js";
export {
  ApprovalNotifier,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  signWebhook,
  webhookText,
  type ApprovalWebhook,
  type NotifierOptions,
} from "./host/webhooks.js";
export type { HostLog } from "./host/host-log.js";
export type { ReplayLogLimits } from "./host/store.js";
export type { ActionRelay, ActionRelayListener, ReplicationOptions, ReplicationStats } from "./host/replication.js";
export { DEFAULT_LABELS, type ApprovalLabels } from "./host/tool-calls.js";
export {
  ClientState,
  AgentHostClient,
  AgentHostRequestError,
  withToken,
  type PendingAction,
  type AgentHostClientOptions,
  type SocketLike,
} from "./client-entry.js";

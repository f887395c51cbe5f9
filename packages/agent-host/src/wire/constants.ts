/** Protocol constants: status bits, error codes, URIs, method names. Browser-safe. */

/** `SessionStatus` bitset (also used for chat status). Bits 0–4 are the mutually exclusive activity bits. */
export const SessionStatus = {
  Idle: 1,
  Error: 2,
  InProgress: 8,
  /** 8 | 16: a turn is active and blocked on a human. */
  InputNeeded: 24,
  IsRead: 32,
  IsArchived: 64,
} as const;

/** Mask of the activity bits (0–4). */
export const STATUS_ACTIVITY_MASK = 0b11111;
/** The bit that distinguishes InputNeeded from InProgress. */
export const STATUS_INPUT_BIT = 16;

/** Error codes of the Agent Host protocol (JSON-RPC plus upstream's application codes). */
export const AgentHostErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  SessionNotFound: -32001,
  ProviderNotFound: -32002,
  SessionAlreadyExists: -32003,
  TurnInProgress: -32004,
  UnsupportedProtocolVersion: -32005,
  ContentNotFound: -32006,
  AuthRequired: -32007,
  NotFound: -32008,
  PermissionDenied: -32009,
  AlreadyExists: -32010,
  Conflict: -32011,
} as const;
export type AgentHostErrorCode = (typeof AgentHostErrorCode)[keyof typeof AgentHostErrorCode];

/** The root channel's URI; also the `channel` of connection-level commands (`initialize`, `ping`, `listSessions`). */
export const ROOT_URI = "ahp-root://";
/** URI scheme of session channels. */
export const SESSION_SCHEME = "ahp-session:";
/** URI scheme of chat channels. */
export const CHAT_SCHEME = "ahp-chat:";
/** The telemetry logs channel; subscribe with `?level=<name>` for a severity floor. */
export const TELEMETRY_LOGS_URI = "ahp-otlp://harness/logs";
/** The logs channel as an RFC 6570 template, as advertised in the `initialize` result. */
export const TELEMETRY_LOGS_TEMPLATE = "ahp-otlp://harness/logs{?level}";

/** The provider id of every session this host serves. */
export const HARNESS_PROVIDER = "ahp-harness";

/** Versions this host speaks, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ["1.1.0", "1.0.0"] as const;

/** Namespaced `_meta` keys owned by this host. */
export const META = {
  agent: "ahpHarness/agent",
  /** Session lifecycle: `{ state: "active" | "ended", hadTurns, agentSessionId, run? }` (ADR 0161). */
  lifecycle: "ahpHarness/lifecycle",
  run: "ahpHarness/run",
  taskList: "ahpHarness/taskList",
  verification: "ahpHarness/verification",
  sessionRules: "ahpHarness/sessionRules",
  decision: "ahpHarness/decision",
  approvals: "ahpHarness/approvals",
} as const;

/** Client → host methods of the 1.x wire. */
export const CLIENT_METHODS = {
  initialize: "initialize",
  ping: "ping",
  reconnect: "reconnect",
  subscribe: "subscribe",
  unsubscribe: "unsubscribe",
  dispatchAction: "dispatchAction",
  listSessions: "listSessions",
  fetchTurns: "fetchTurns",
} as const;

/** Host → client notifications. */
export const HOST_NOTIFICATIONS = {
  action: "action",
  sessionAdded: "root/sessionAdded",
  sessionRemoved: "root/sessionRemoved",
  sessionSummaryChanged: "root/sessionSummaryChanged",
  exportLogs: "otlp/exportLogs",
} as const;

/** Activity bits of a status value. */
export const activityOf = (status: number): number => status & STATUS_ACTIVITY_MASK;
/** True when the status carries the InputNeeded activity. */
export const needsInput = (status: number): boolean => (status & STATUS_ACTIVITY_MASK) === SessionStatus.InputNeeded;

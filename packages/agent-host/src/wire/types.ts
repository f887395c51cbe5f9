/**
 * Agent Host Protocol 1.x wire shapes for the subset this package serves (root, session, chat
 * channels; actions; commands; notifications). Field names are exactly the wire names. Optional
 * fields are `?:`; on the wire an absent field is omitted, never `null`.
 *
 * Browser-safe: no Node imports anywhere in `src/wire`.
 */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/**
 * Extension data under the MCP `_meta` convention: namespaced keys (this host uses `ahpHarness/…`),
 * replaced wholesale when an action brings a new one.
 */
export type Meta = Record<string, unknown>;
/** A channel or resource URI (`ahp-root://`, `ahp-session:/…`, `ahp-chat:/…`). Opaque to clients: compare, never parse. */
export type URI = string;

// ---------------------------------------------------------------- shared pieces

/** Display text: a plain string, or `{ markdown }` to be rendered as Markdown. */
export type StringOrMarkdown = string | { markdown: string };

/** Who a message comes from (`kind`: user, agent, tool, automation or a system notification). */
export interface MessageOrigin {
  kind: "user" | "agent" | "tool" | "automation" | "systemNotification" | (string & {});
  [key: string]: unknown;
}

/** A message that starts a turn or is queued for one: its text and where it came from. */
export interface Message {
  text: string;
  origin: MessageOrigin;
  _meta?: Meta;
  [key: string]: unknown;
}

/** Token counts a turn reported (all optional), and the model that produced them. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  model?: string;
  cacheReadTokens?: number;
  [key: string]: unknown;
}

/** Why a turn or a session failed: a machine-readable `errorType` and a message for people. */
export interface ErrorInfo {
  errorType: string;
  message: string;
  stack?: string;
  [key: string]: unknown;
}

// ---------------------------------------------------------------- tool calls

/**
 * The lifecycle state of a tool call: `pending-confirmation` waits for a person, `running` was
 * cleared to run, `completed` and `cancelled` are final.
 */
export type ToolCallStatus =
  | "streaming"
  | "pending-confirmation"
  | "running"
  | "pending-result-confirmation"
  | "completed"
  | "cancelled"
  | "auth-required";

/**
 * One answer a person can pick for a pending tool call (e.g. "Allow", "Allow for this session",
 * "Deny"); `kind` says whether picking it approves or denies.
 */
export interface ConfirmationOption {
  id: string;
  label: string;
  kind: "approve" | "deny";
  group?: number;
  [key: string]: unknown;
}

/** One block of tool output; this host sends `{ type: "text", text }` only. */
export interface ContentBlock {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/** The outcome of a finished tool call: success, a past-tense summary for display, its output and, on failure, the error. */
export interface ToolCallResult {
  success: boolean;
  pastTenseMessage: string;
  content?: ContentBlock[];
  structuredContent?: unknown;
  error?: { message: string; code?: string };
  [key: string]: unknown;
}

/** Fields every tool-call state has. */
export interface ToolCallBase {
  toolCallId: string;
  toolName: string;
  displayName: string;
  intention?: string;
  contributor?: { kind: string; [key: string]: unknown };
  _meta?: Meta;
}

/** One tool call in any state; `status` is the discriminant. Fields are those of every state, all optional but the base. */
export interface ToolCallState extends ToolCallBase {
  status: ToolCallStatus;
  partialInput?: string;
  invocationMessage?: StringOrMarkdown;
  toolInput?: unknown;
  confirmationTitle?: StringOrMarkdown;
  editable?: boolean;
  options?: ConfirmationOption[];
  edits?: unknown;
  riskAssessment?: unknown;
  confirmed?: "not-needed" | "setting" | "user-action" | (string & {});
  selectedOption?: ConfirmationOption;
  content?: ContentBlock[];
  success?: boolean;
  pastTenseMessage?: string;
  structuredContent?: unknown;
  error?: { message: string; code?: string };
  reason?: "denied" | "skipped" | "result-denied" | (string & {});
  reasonMessage?: StringOrMarkdown;
  userSuggestion?: unknown;
  auth?: unknown;
  [key: string]: unknown;
}

// ---------------------------------------------------------------- input requests

/**
 * One question of an input request; `kind` (`text`, `number`, `boolean`, `single-select`,
 * `multi-select`) decides the answer's shape, `options` lists the choices of a select.
 */
export interface ChatInputQuestion {
  kind: string;
  id: string;
  message?: string;
  required?: boolean;
  options?: Array<{ id: string; label: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** An answer to one question: `{ state: "draft" | "submitted", value: { kind, value } }` or `{ state: "skipped" }`. */
export interface ChatInputAnswer {
  [key: string]: unknown;
}

/**
 * A request for input from a person (this host: a harness `confirmation` event): a message, its
 * questions, and the answers given so far by question id.
 */
export interface ChatInputRequest {
  id: string;
  message?: string;
  questions?: ChatInputQuestion[];
  answers?: Record<string, ChatInputAnswer>;
  [key: string]: unknown;
}

/** How an input request was completed: `accept` (with answers), `decline` or `cancel`. */
export type ChatInputResponse = "accept" | "decline" | "cancel";

// ---------------------------------------------------------------- response parts and turns

/**
 * One item of a turn's response, discriminated by `kind`: Markdown text, reasoning, a tool call, a
 * system notification or an input request.
 */
export type ResponsePart =
  | { kind: "markdown"; id: string; content: string; [key: string]: unknown }
  | { kind: "reasoning"; id: string; content: string; [key: string]: unknown }
  | { kind: "toolCall"; toolCall: ToolCallState; [key: string]: unknown }
  | { kind: "systemNotification"; content: StringOrMarkdown; _meta?: Meta; [key: string]: unknown }
  | { kind: "inputRequest"; request: ChatInputRequest; response?: ChatInputResponse; [key: string]: unknown }
  | { kind: string; [key: string]: unknown };

/** The turn in progress on a chat: its prompt message and the response parts so far. */
export interface ActiveTurn {
  id: string;
  startedAt: string;
  message: Message;
  responseParts: ResponsePart[];
  usage?: Usage;
  [key: string]: unknown;
}

/** A finished turn, kept in `ChatState.turns`: how it ended (`state`), how long it took and, for `error`, why. */
export interface Turn extends ActiveTurn {
  duration: number;
  state: "complete" | "cancelled" | "error";
  error?: ErrorInfo;
}

// ---------------------------------------------------------------- channel states

/** An agent provider the host offers, as listed in the root state. */
export interface AgentInfo {
  provider: string;
  displayName: string;
  description?: string;
  models: unknown[];
  [key: string]: unknown;
}

/** State of the root channel (`ahp-root://`): the agent providers and how many sessions are live. */
export interface RootState {
  agents: AgentInfo[];
  activeSessions?: number;
  [key: string]: unknown;
}

/** Where a chat comes from when it is not a session's main chat, e.g. the tool call that spawned a sub-agent. */
export interface ChatOrigin {
  kind: string;
  chat?: URI;
  toolCallId?: string;
  [key: string]: unknown;
}

/** The catalogue copy of a chat kept in its session's state: title, status bitset, activity and last change. */
export interface ChatSummary {
  resource: URI;
  title: string;
  status: number;
  activity?: string;
  modifiedAt: string;
  origin?: ChatOrigin;
  interactivity?: "full" | "read-only" | (string & {});
  [key: string]: unknown;
}

/** A message waiting to be sent into a chat (a steering or queued message). */
export interface PendingMessage {
  id: string;
  message: Message;
  [key: string]: unknown;
}

/** State of a chat channel: its summary fields plus the finished turns, the active turn and pending messages. */
export interface ChatState extends ChatSummary {
  turns: Turn[];
  activeTurn?: ActiveTurn;
  turnsNextCursor?: string;
  steeringMessage?: PendingMessage;
  queuedMessages?: PendingMessage[];
  draft?: unknown;
  workingDirectories?: string[];
  _meta?: Meta;
}

/**
 * One open request for a person in a session's `inputNeeded` roll-up, naming the chat to answer on:
 * a tool confirmation or a chat input request.
 */
export type SessionInputRequest =
  | { kind: "toolConfirmation"; id: string; chat: URI; turnId: string; toolCall: ToolCallState; [key: string]: unknown }
  | { kind: "chatInput"; id: string; chat: URI; request: ChatInputRequest; [key: string]: unknown }
  | { kind: string; id: string; chat: URI; [key: string]: unknown };

/** A client that announced itself as active on a session. */
export interface ActiveClient {
  clientId: string;
  [key: string]: unknown;
}

/**
 * State of a session channel: title, status bitset, lifecycle, its chats and default chat, what
 * waits for a person (`inputNeeded`), and harness data in `_meta`.
 */
export interface SessionState {
  provider: string;
  title: string;
  status: number;
  activity?: string;
  lifecycle: "creating" | "ready" | "creationFailed" | (string & {});
  creationError?: ErrorInfo;
  activeClients?: ActiveClient[];
  chats?: ChatSummary[];
  defaultChat?: URI;
  inputNeeded?: SessionInputRequest[];
  _meta?: Meta;
  [key: string]: unknown;
}

/** A session as listed by `listSessions` and the `root/session*` notifications. */
export interface SessionSummary {
  resource: URI;
  provider: string;
  title: string;
  status: number;
  activity?: string;
  createdAt: string;
  modifiedAt: string;
  _meta?: Meta;
  [key: string]: unknown;
}

/** The state of any channel this package reduces: root, session or chat. */
export type ChannelState = RootState | SessionState | ChatState;

// ---------------------------------------------------------------- actions and envelopes

/** A state action. `type` is the discriminant; the remaining fields depend on it (see the reducers). */
export interface StateAction {
  type: string;
  [key: string]: unknown;
}

/** Which client dispatched an action, and that client's own sequence number for it; absent on host-originated actions. */
export interface ActionOrigin {
  clientId: string;
  clientSeq: number;
}

/**
 * An action as the host sequences it on a channel (`action` notification, replay): `serverSeq`
 * orders it, `origin` names the dispatching client, `rejectionReason` marks an echo that must not
 * be reduced.
 */
export interface ActionEnvelope {
  channel: URI;
  action: StateAction;
  serverSeq: number;
  origin?: ActionOrigin;
  rejectionReason?: string;
}

/** A channel's full state as of `fromSeq`: every later envelope on that channel has a greater `serverSeq`. */
export interface Snapshot {
  resource: URI;
  state: ChannelState;
  fromSeq: number;
}

// ---------------------------------------------------------------- commands

/** Name and version of a client or server, for display and logs. */
export interface Implementation {
  name: string;
  version?: string;
  title?: string;
  [key: string]: unknown;
}

/** Parameters of `initialize`: the protocol versions the client speaks, its client id and the channels to subscribe at once. */
export interface InitializeParams {
  channel: URI;
  protocolVersions: string[];
  clientId: string;
  clientInfo?: Implementation;
  initialSubscriptions?: URI[];
  locale?: string;
  capabilities?: Record<string, unknown>;
  _meta?: Meta;
}

/** Result of `initialize`: the negotiated version, the current `serverSeq`, the host's identity and a snapshot per initial subscription. */
export interface InitializeResult {
  protocolVersion: string;
  serverSeq: number;
  serverInfo: Implementation;
  snapshots: Snapshot[];
  telemetry?: { logs?: string; [key: string]: unknown };
  _meta?: Meta;
  [key: string]: unknown;
}

/** Parameters of `reconnect`: the client id, the last `serverSeq` it saw and the channels it was subscribed to. */
export interface ReconnectParams {
  channel: URI;
  clientId: string;
  lastSeenServerSeq: number;
  subscriptions: URI[];
  [key: string]: unknown;
}

/**
 * Result of `reconnect`: either the missed envelopes (`replay`, plus channels that are gone) or
 * fresh snapshots when the host cannot replay.
 */
export type ReconnectResult = { type: "replay"; actions: ActionEnvelope[]; missing: URI[] } | { type: "snapshot"; snapshots: Snapshot[] };

/** Parameters of a client's `dispatchAction`: the channel, the client's sequence number and the action. */
export interface DispatchActionParams {
  channel: URI;
  clientSeq: number;
  action: StateAction;
}

// ---------------------------------------------------------------- JSON-RPC

/** A JSON-RPC request id. */
export type JsonRpcId = string | number;

/** A JSON-RPC 2.0 request: it gets exactly one response with the same id. */
export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: unknown;
}

/** A JSON-RPC 2.0 notification: no id, no response. */
export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: unknown;
}

/** A JSON-RPC 2.0 response carrying a result. */
export interface JsonRpcSuccess {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result: unknown;
}

/** The error of a failed JSON-RPC request: code, message and optional data. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC 2.0 response carrying an error (`id` is null when the request could not be read). */
export interface JsonRpcFailure {
  jsonrpc: "2.0";
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

/** Any JSON-RPC 2.0 message in one frame. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcSuccess | JsonRpcFailure;

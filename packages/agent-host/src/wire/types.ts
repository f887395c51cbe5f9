/**
 * Agent Host Protocol 1.x wire shapes for the subset this package serves (root, session, chat
 * channels; actions; commands; notifications). Field names are exactly the wire names. Optional
 * fields are `?:`; on the wire an absent field is omitted, never `null`.
 *
 * Browser-safe: no Node imports anywhere in `src/wire`.
 */

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Meta = Record<string, unknown>;
export type URI = string;

// ---------------------------------------------------------------- shared pieces

export type StringOrMarkdown = string | { markdown: string };

export interface MessageOrigin {
  kind: "user" | "agent" | "tool" | "automation" | "systemNotification" | (string & {});
  [key: string]: unknown;
}

export interface Message {
  text: string;
  origin: MessageOrigin;
  _meta?: Meta;
  [key: string]: unknown;
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  model?: string;
  cacheReadTokens?: number;
  [key: string]: unknown;
}

export interface ErrorInfo {
  errorType: string;
  message: string;
  stack?: string;
  [key: string]: unknown;
}

// ---------------------------------------------------------------- tool calls

export type ToolCallStatus =
  | "streaming"
  | "pending-confirmation"
  | "running"
  | "pending-result-confirmation"
  | "completed"
  | "cancelled"
  | "auth-required";

export interface ConfirmationOption {
  id: string;
  label: string;
  kind: "approve" | "deny";
  group?: number;
  [key: string]: unknown;
}

export interface ContentBlock {
  type: string;
  text?: string;
  [key: string]: unknown;
}

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

export interface ChatInputQuestion {
  kind: string;
  id: string;
  message?: string;
  required?: boolean;
  options?: Array<{ id: string; label: string; [key: string]: unknown }>;
  [key: string]: unknown;
}

export interface ChatInputAnswer {
  [key: string]: unknown;
}

export interface ChatInputRequest {
  id: string;
  message?: string;
  questions?: ChatInputQuestion[];
  answers?: Record<string, ChatInputAnswer>;
  [key: string]: unknown;
}

export type ChatInputResponse = "accept" | "decline" | "cancel";

// ---------------------------------------------------------------- response parts and turns

export type ResponsePart =
  | { kind: "markdown"; id: string; content: string; [key: string]: unknown }
  | { kind: "reasoning"; id: string; content: string; [key: string]: unknown }
  | { kind: "toolCall"; toolCall: ToolCallState; [key: string]: unknown }
  | { kind: "systemNotification"; content: StringOrMarkdown; _meta?: Meta; [key: string]: unknown }
  | { kind: "inputRequest"; request: ChatInputRequest; response?: ChatInputResponse; [key: string]: unknown }
  | { kind: string; [key: string]: unknown };

export interface ActiveTurn {
  id: string;
  startedAt: string;
  message: Message;
  responseParts: ResponsePart[];
  usage?: Usage;
  [key: string]: unknown;
}

export interface Turn extends ActiveTurn {
  duration: number;
  state: "complete" | "cancelled" | "error";
  error?: ErrorInfo;
}

// ---------------------------------------------------------------- channel states

export interface AgentInfo {
  provider: string;
  displayName: string;
  description?: string;
  models: unknown[];
  [key: string]: unknown;
}

export interface RootState {
  agents: AgentInfo[];
  activeSessions?: number;
  [key: string]: unknown;
}

export interface ChatOrigin {
  kind: string;
  chat?: URI;
  toolCallId?: string;
  [key: string]: unknown;
}

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

export interface PendingMessage {
  id: string;
  message: Message;
  [key: string]: unknown;
}

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

export type SessionInputRequest =
  | { kind: "toolConfirmation"; id: string; chat: URI; turnId: string; toolCall: ToolCallState; [key: string]: unknown }
  | { kind: "chatInput"; id: string; chat: URI; request: ChatInputRequest; [key: string]: unknown }
  | { kind: string; id: string; chat: URI; [key: string]: unknown };

export interface ActiveClient {
  clientId: string;
  [key: string]: unknown;
}

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

export type ChannelState = RootState | SessionState | ChatState;

// ---------------------------------------------------------------- actions and envelopes

/** A state action. `type` is the discriminant; the remaining fields depend on it (see the reducers). */
export interface StateAction {
  type: string;
  [key: string]: unknown;
}

export interface ActionOrigin {
  clientId: string;
  clientSeq: number;
}

export interface ActionEnvelope {
  channel: URI;
  action: StateAction;
  serverSeq: number;
  origin?: ActionOrigin;
  rejectionReason?: string;
}

export interface Snapshot {
  resource: URI;
  state: ChannelState;
  fromSeq: number;
}

// ---------------------------------------------------------------- commands

export interface Implementation {
  name: string;
  version?: string;
  title?: string;
  [key: string]: unknown;
}

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

export interface InitializeResult {
  protocolVersion: string;
  serverSeq: number;
  serverInfo: Implementation;
  snapshots: Snapshot[];
  telemetry?: { logs?: string; [key: string]: unknown };
  _meta?: Meta;
  [key: string]: unknown;
}

export interface ReconnectParams {
  channel: URI;
  clientId: string;
  lastSeenServerSeq: number;
  subscriptions: URI[];
  [key: string]: unknown;
}

export type ReconnectResult = { type: "replay"; actions: ActionEnvelope[]; missing: URI[] } | { type: "snapshot"; snapshots: Snapshot[] };

export interface DispatchActionParams {
  channel: URI;
  clientSeq: number;
  action: StateAction;
}

// ---------------------------------------------------------------- JSON-RPC

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: unknown;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: unknown;
}

export interface JsonRpcSuccess {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result: unknown;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcFailure {
  jsonrpc: "2.0";
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcSuccess | JsonRpcFailure;

export { buildWebSocketUrl, formEncode } from "./url.js";
export {
  WebSocketClientTransport,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_PING_INTERVAL_MS,
  DEFAULT_PONG_TIMEOUT_MS,
  type WebSocketClientTransportOptions,
  type WebSocketReconnectOptions,
  type WebSocketTlsOptions,
} from "./client.js";
export { credentialsFromUpgrade } from "./credentials.js";
export type { Corkable } from "./sender.js";
export {
  attachWebSocketServer,
  createVerifyClient,
  WebSocketServerTransport,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_SERVER_MAX_BUFFERED_BYTES,
  DEFAULT_SERVER_PING_INTERVAL_MS,
  DEFAULT_SERVER_PONG_TIMEOUT_MS,
  DEFAULT_WS_PATH,
  DEFAULT_MAX_WS_CONNECTIONS,
  type AttachedWebSocketServer,
  type AttachWebSocketOptions,
  type WebSocketConnectionOptions,
} from "./server.js";
export { listenWebSocket, type ListenWebSocketOptions, type WebSocketListener } from "./listen.js";
export { DEFAULT_MAX_IN_FLIGHT, limitInFlight, type ReadGate } from "@ahp/core";
export {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  httpServerOptions,
  reportClientErrors,
  type HttpServerLimits,
} from "@ahp/core";

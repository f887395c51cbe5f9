export {
  UnixSocketClientTransport,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_SOCKET_CLOSE_GRACE_MS,
  type UnixSocketClientTransportOptions,
} from "./client.js";
export {
  UnixSocketServer,
  listenUnix,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_SOCKET_MODE,
  type UnixSocketServerOptions,
} from "./server.js";
export {
  UnixSocketServerTransport,
  DEFAULT_DRAIN_TIMEOUT_MS,
  type UnixSocketServerTransportOptions,
} from "./server-transport.js";
export { MAX_SOCKET_PATH_BYTES } from "./socket.js";
export { DEFAULT_MAX_IN_FLIGHT, limitInFlight, type ReadGate } from "@ahp/core";

export {
  HttpClientTransport,
  DEFAULT_HTTP_MAX_CONNECTIONS,
  DEFAULT_HTTP_TIMEOUT_MS,
  type HttpClientTlsOptions,
  type HttpClientTransportOptions,
} from "./client.js";
export {
  createHttpHandler,
  listenHttp,
  DEFAULT_HEALTH_PATH,
  DEFAULT_HTTP_PATH,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_SERVER_MAX_CONNECTIONS,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  type HttpHandler,
  type HttpHandlerOptions,
  type HttpListener,
  type ListenHttpOptions,
} from "./server.js";
export {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  httpServerOptions,
  reportClientErrors,
  type HttpServerLimits,
} from "@ahp/core";

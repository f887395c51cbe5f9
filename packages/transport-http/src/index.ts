export { authHeaders, type ClientAuth } from "./client-auth.js";
export {
  HttpClientTransport,
  DEFAULT_HTTP_MAX_CONNECTIONS,
  DEFAULT_HTTP_TIMEOUT_MS,
  type HttpClientTlsOptions,
  type HttpClientTransportOptions,
} from "./client.js";
export {
  CredentialVerifier,
  credentialsFromHeaders,
  type AuthorizeRequest,
  type CredentialOptions,
  type PresentedCredentials,
  type ServerAuthOption,
} from "./credentials.js";
export {
  createHttpHandler,
  listenHttp,
  DEFAULT_HEALTH_PATH,
  DEFAULT_HTTP_PATH,
  DEFAULT_MAX_BODY_BYTES,
  type HttpHandler,
  type HttpHandlerOptions,
  type HttpListener,
  type ListenHttpOptions,
} from "./server.js";

export {
  StdioClientTransport,
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_STDERR_TAIL_BYTES,
  type StdioClientTransportOptions,
  type StdioExitDetails,
  type StdioStderr,
} from "./client.js";
export {
  StdioServerTransport,
  serveStdio,
  DEFAULT_DRAIN_TIMEOUT_MS,
  type ServeStdioOptions,
  type StdioServerTransportOptions,
} from "./server.js";
export { DEFAULT_MAX_IN_FLIGHT, limitInFlight, type ReadGate } from "@ahp/core";

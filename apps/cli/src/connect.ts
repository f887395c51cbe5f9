/**
 * `--connect` specs → client transports:
 *   stdio:'CMD ARGS'        spawn the harness and speak over its stdin/stdout
 *   unix:PATH               a Unix domain socket
 *   http://… | https://…    POST per message
 *   ws://…   | wss://…      WebSocket
 */
import type { AuthConfigInput, Transport } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";
import { StdioClientTransport } from "@ahp/transport-stdio";
import { UnixSocketClientTransport } from "@ahp/transport-unix";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { UsageError } from "./io.js";
import { splitWords } from "./words.js";

export interface ConnectOptions {
  auth?: AuthConfigInput;
  timeoutMs?: number;
  /** Where a spawned harness's stderr goes. */
  stderr?: "inherit" | "ignore";
}

export const CONNECT_HELP = `  --connect SPEC   stdio:'CMD ARGS' | unix:PATH | http(s)://HOST:PORT/ahp | ws(s)://HOST:PORT/ahp`;

export function createClientTransport(spec: string, options: ConnectOptions = {}): Transport {
  if (spec.startsWith("stdio:")) {
    const words = splitWords(spec.slice("stdio:".length));
    const [command, ...args] = words;
    if (command === undefined) throw new UsageError("--connect stdio: needs a command, e.g. stdio:'ahp serve --stdio'");
    return new StdioClientTransport({ command, args, stderr: options.stderr ?? "inherit" });
  }
  if (spec.startsWith("unix:")) {
    const path = spec.slice("unix:".length);
    if (path === "") throw new UsageError("--connect unix: needs a socket path");
    return new UnixSocketClientTransport({ path });
  }
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new UsageError(`--connect: not a valid spec: ${JSON.stringify(spec)}`);
  }
  const auth = options.auth;
  switch (url.protocol) {
    case "http:":
    case "https:":
      return new HttpClientTransport(url, {
        ...(auth === undefined ? {} : { auth }),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      });
    case "ws:":
    case "wss:":
      return new WebSocketClientTransport(url, { ...(auth === undefined ? {} : { auth }) });
    default:
      throw new UsageError(`--connect: unsupported scheme ${url.protocol} (use stdio:, unix:, http(s)://, ws(s)://)`);
  }
}

/** `--api-key` / `--bearer` (or `AHP_API_KEY` / `AHP_BEARER_TOKEN`) → an auth config. */
export function authFrom(values: { "api-key"?: string; bearer?: string }, env: NodeJS.ProcessEnv): AuthConfigInput | undefined {
  const key = values["api-key"] ?? env.AHP_API_KEY;
  const token = values.bearer ?? env.AHP_BEARER_TOKEN;
  if (key !== undefined && token !== undefined) throw new UsageError("use either --api-key or --bearer, not both");
  if (key !== undefined) return { type: "api_key", key };
  if (token !== undefined) return { type: "bearer", token };
  return undefined;
}

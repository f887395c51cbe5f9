/** `ahp serve`: run a harness on one or several transports. */
import { AhpServer, type AhpServerHandlers, type HarnessConfig } from "@ahp/core";
import { listenHttp } from "@ahp/transport-http";
import { serveStdio } from "@ahp/transport-stdio";
import { listenUnix } from "@ahp/transport-unix";
import { listenWebSocket } from "@ahp/transport-ws";
import { hostPort, parse, toInt } from "../args.js";
import { createCliLog } from "../log.js";
import { EXIT_OK, UsageError, type CliIo } from "../io.js";

export const usage = `Usage: ahp serve [--stdio] [--http HOST:PORT] [--ws HOST:PORT] [--unix PATH] [options]

Runs an AHP 2.4 harness. Several transports may be served at once. Network listeners bind
loopback unless a host is given. Logs are JSON lines on stderr; under --stdio, stdout carries
only protocol messages.

  --stdio               serve on this process's stdin/stdout (ends when stdin ends)
  --http HOST:PORT      serve POST /ahp (and GET /healthz)
  --ws HOST:PORT        serve WebSocket agents on /ahp
  --unix PATH           serve on a Unix domain socket (mode 0600)
  --api-key KEY         require this X-API-Key / ?api_key= (HTTP, WebSocket); repeatable; or env AHP_API_KEY
  --bearer TOKEN        require this bearer token / ?token=; repeatable; or env AHP_BEARER_TOKEN
  --max-depth N         reject events deeper than N (default 10)
  --batch-size N        reject batches larger than N (default 100)
  --timeout-ms N        advertised timeout and handler time limit (default 10000)
  --block-tool NAME     block pre_action events for this tool; repeatable (policy: allow the rest)
  --name NAME           harness name in the handshake (default ahp-harness)
  -h, --help            this text
`;

const options = {
  stdio: { type: "boolean" },
  http: { type: "string", multiple: true },
  ws: { type: "string", multiple: true },
  unix: { type: "string", multiple: true },
  "api-key": { type: "string", multiple: true },
  bearer: { type: "string", multiple: true },
  "max-depth": { type: "string" },
  "batch-size": { type: "string" },
  "timeout-ms": { type: "string" },
  "block-tool": { type: "string", multiple: true },
  name: { type: "string" },
} as const;

const toolNameOf = (payload: unknown): string | undefined => {
  if (payload === null || typeof payload !== "object") return undefined;
  const p = payload as Record<string, unknown>;
  const name = p.tool_name ?? p.tool ?? p.name;
  return typeof name === "string" ? name : undefined;
};

/** Allow-all with optional blocked tool names. */
export function simpleHandlers(blockTools: readonly string[]): AhpServerHandlers {
  const blocked = new Set(blockTools);
  return {
    onEvent: (event) => {
      const tool = event.event_type === "pre_action" ? toolNameOf(event.payload) : undefined;
      if (tool !== undefined && blocked.has(tool)) return { decision: "block", reason: `tool ${tool} is blocked by this harness` };
      return { decision: "allow" };
    },
  };
}

export async function run(argv: string[], io: CliIo, signal?: AbortSignal): Promise<number> {
  const { values } = parse(argv, options);
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  const listeners = { stdio: values.stdio === true, http: values.http ?? [], ws: values.ws ?? [], unix: values.unix ?? [] };
  if (!listeners.stdio && listeners.http.length + listeners.ws.length + listeners.unix.length === 0) {
    throw new UsageError("choose at least one transport: --stdio, --http, --ws or --unix");
  }
  const config: HarnessConfig = {
    timeout_ms: toInt("timeout-ms", values["timeout-ms"], { min: 1 }) ?? 10_000,
    batch_size: toInt("batch-size", values["batch-size"]) ?? 100,
    max_depth: toInt("max-depth", values["max-depth"]) ?? 10,
  };
  const apiKeys = values["api-key"] ?? (io.env.AHP_API_KEY ? [io.env.AHP_API_KEY] : []);
  const bearerTokens = values.bearer ?? (io.env.AHP_BEARER_TOKEN ? [io.env.AHP_BEARER_TOKEN] : []);
  const auth = apiKeys.length + bearerTokens.length > 0 ? { apiKeys, bearerTokens } : undefined;
  if (auth !== undefined && listeners.http.length + listeners.ws.length === 0) {
    throw new UsageError("--api-key/--bearer apply to --http and --ws only");
  }
  const log = createCliLog(io.stderr);

  const server = new AhpServer({
    harnessInfo: { name: values.name ?? "ahp-harness", version: "0.1.0" },
    config,
    handlerFailure: "decision",
    handlers: simpleHandlers(values["block-tool"] ?? []),
    onerror: (error) => log.warn("server", { error: error.message }),
  });

  const closers: Array<() => Promise<void>> = [];
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  signal?.addEventListener("abort", onSignal, { once: true });
  try {
    for (const spec of listeners.http) {
      const { host, port } = hostPort("http", spec);
      const l = await listenHttp(server, { host, port, ...(auth === undefined ? {} : { auth }), onerror: (e) => log.warn("http", { error: e.message }) });
      closers.push(() => l.close());
      log.info("listening", { transport: "http", url: l.url });
    }
    for (const spec of listeners.ws) {
      const { host, port } = hostPort("ws", spec);
      const l = await listenWebSocket(server, { host, port, ...(auth === undefined ? {} : { auth }), onerror: (e) => log.warn("ws", { error: e.message }) });
      closers.push(() => l.close());
      log.info("listening", { transport: "ws", url: l.url });
    }
    for (const path of listeners.unix) {
      const l = await listenUnix(server, { path });
      closers.push(() => l.close());
      log.info("listening", { transport: "unix", path });
    }
    if (listeners.stdio) {
      log.info("listening", { transport: "stdio" });
      // stdio ends the harness when the agent ends stdin (or on a signal).
      const cause = await serveStdio(server, { signal: stop.signal });
      if (cause !== undefined) log.warn("stdio closed", { error: cause.message });
    } else {
      await new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve(), { once: true }));
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await Promise.allSettled(closers.map((close) => close()));
    await server.close();
    log.info("stopped");
  }
  return EXIT_OK;
}

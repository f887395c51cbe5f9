/** `ahp serve`: run the harness on one or several transports. */
import { AUDIT_KEY_ENV, AUDIT_SYNC_MODES, loadAuditKey, type AuditSyncMode } from "@ahp/audit";
import { readFile, stat } from "node:fs/promises";
import type { AgentHost, ApprovalWebhook, TokenEntry } from "@ahp/agent-host";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HarnessConfig } from "@ahp/core";
import { createLogger, listenMetrics, metricsHandler, type LogLevel } from "@ahp/observability";
import { DEFAULT_POLICY, type PolicyFileInput } from "@ahp/policy";
import { checkHostPorts, hostPort, parse, toInt } from "../args.js";
import { loadServeConfig, type ServeConfig } from "../config.js";
import { HarnessStartError, createHarness, type HarnessAuditOptions } from "../harness.js";
import { openReplication, type OpenedReplication } from "../replication.js";
import { ConfigError, EXIT_FAILURE, EXIT_NOINPUT, EXIT_OK, ExitError, UsageError, describeErrno, errnoCode, type CliIo } from "../io.js";
import { StartupLog, auditOpenFailure, listenAs, requireAuditFile, requireInput } from "../startup.js";

export const usage = `Usage: ahp serve [--stdio] [--http HOST:PORT] [--ws HOST:PORT] [--unix PATH] [options]

Runs an AHP 2.4 harness with a policy (the built-in default policy unless --policy is given),
an optional tamper-evident audit log and Prometheus metrics. Several transports may be served
at once. Network listeners bind loopback unless a host is given. Logs are JSON lines on
stderr; under --stdio, stdout carries only protocol messages.

Transports:
  --stdio               serve on this process's stdin/stdout (ends when stdin ends)
  --http HOST:PORT      serve POST /ahp (and GET /healthz, GET /readyz, GET /metrics); repeatable
  --ws HOST:PORT        serve WebSocket agents on /ahp (and GET /healthz, GET /readyz, GET /metrics); repeatable
  --unix PATH           serve on a Unix domain socket (mode 0600); repeatable
  --api-key KEY         require this X-API-Key / ?api_key= (HTTP, WebSocket); repeatable; or env AHP_API_KEY
  --bearer TOKEN        require this bearer token / ?token=; repeatable; or env AHP_BEARER_TOKEN
Policy and limits:
  --policy FILE         policy file (YAML or JSON), reloaded when it changes (default: built-in policy)
  --shadow-policy FILE  a candidate policy evaluated beside --policy and never enforced: each
                        disagreement goes to the audit record (shadow) and to
                        ahp_shadow_disagreements_total{from,to,rule}; reloaded when it changes
  --block-tool NAME     with the built-in policy: also block pre_action events for this tool; repeatable
  --max-depth N         reject events deeper than N (default 10)
  --batch-size N        reject batches larger than N (default 100)
  --timeout-ms N        advertised timeout and handler time limit (default 10000)
  --state URL           keep rate limits and quotas on Redis, shared by replicas: redis://HOST:PORT[/DB]
                        or rediss://… (default: this process's memory)
  --state-password-file F  the Redis password; or env AHP_STATE_PASSWORD (never in the URL of a shared command line)
  --state-prefix P      key prefix on Redis (default ahp:policy:)
Connection limits (per listener / per connection):
  --max-connections N   connections served at once on each --http, --ws and --unix listener; at the
                        cap the longest-idle connection with nothing in flight makes room
                        (default derived from ulimit -n, at most 1024)
  --idle-timeout-ms N   close Unix and WebSocket connections silent this long with nothing in flight
                        (default 600000; 0 never); the Unix and WebSocket clients reconnect by themselves
  --upgrade-timeout-ms N  WebSocket connections must upgrade within N ms (default 10000)
  --keep-alive-timeout-ms N  idle HTTP keep-alive connections are closed after N ms (default 5000)
  --max-in-flight N     requests handled at once per connection; at the limit the connection is not
                        read (stdio, Unix, WebSocket) or gets 503 (HTTP) until answers go out (default 256)
  --header-timeout-ms N HTTP/WebSocket clients must send their request headers within N ms (default 10000)
  --request-timeout-ms N  ... and their whole HTTP request within N ms (default 30000)
  --stall-timeout-ms N  drop a Unix, WebSocket or HTTP peer that takes none of the bytes written to it
                        for N ms, with its requests in flight (default 30000)
  --limit-log-interval-ms N  limit reports are logged once per limit per N ms, with a count (default 10000)
Audit, metrics, logs:
  --audit FILE          append every event and decision to this HMAC-chained log
  --audit-key-file F    the audit key (hex, base64 or raw, >= 32 bytes); or env ${AUDIT_KEY_ENV}
  --audit-payloads      also record (redacted) payloads, not only their digests
  --audit-sync MODE     when a decision is released: none (at once), write (after its record was
                        written: survives a crash, default), fsync (after it was flushed to disk too)
  --audit-failure MODE  when a record cannot be written: closed (fail-closed decision, default) | open
  --audit-checkpoint-ms N  signed checkpoint of the chain head next to the log every N ms (default 1000; 0 off)
  --audit-replica-id ID recorded in every record and checkpoint (one log per harness process)
  --audit-anchor FILE|URL  also publish each signed checkpoint to FILE (replaced atomically) or POST it
                        to URL, somewhere the log's host cannot rewrite; checked by
                        ahp audit verify --anchor
  --metrics HOST:PORT   serve Prometheus metrics on their own port (also on --http at /metrics)
  --log-level LEVEL     debug | info | warn | error | silent (default info)
Agent Host (inspectors and human approvals over the Agent Host Protocol):
  --agent-host HOST:PORT        serve Agent Host clients (WebSocket) on this address; escalations
                                then wait for a human approver instead of going back to the agent
  --agent-host-token-file FILE  "token principal role" per line (viewer|approver|operator), # comments;
                                must not be readable by group or others (chmod 600)
  --approval-webhook URL        POST each held approval and its outcome to URL (JSON with a Slack-style
                                "text", the inspector link, never a token; signed X-AHP-Signature);
                                retried, never on the decision path; repeatable
  --approval-webhook-secret-file F  HMAC secret of the webhooks; or env AHP_APPROVAL_WEBHOOK_SECRET
  --approval-timeout-ms N       how long an escalation waits for a human, then block (default 300000);
                                the advertised timeout is raised to at least N + 2000 so that agents
                                wait that long, while the policy itself stays bound by --timeout-ms
  --agent-host-static DIR       serve DIR at /inspector/ instead of the built-in inspector (same tokens)
                                With --state redis://… as well, replicas share their Agent Host sessions
                                through a Redis Stream: an approver on any replica answers requests held
                                on any other (config agent_host.replicate: false keeps them apart)
  --config FILE         read all of the above from a YAML file (ahp.config.yaml); flags win
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
  policy: { type: "string" },
  "block-tool": { type: "string", multiple: true },
  "max-depth": { type: "string" },
  "batch-size": { type: "string" },
  "timeout-ms": { type: "string" },
  state: { type: "string" },
  "state-password-file": { type: "string" },
  "state-prefix": { type: "string" },
  "max-connections": { type: "string" },
  "max-in-flight": { type: "string" },
  "header-timeout-ms": { type: "string" },
  "request-timeout-ms": { type: "string" },
  "stall-timeout-ms": { type: "string" },
  "idle-timeout-ms": { type: "string" },
  "upgrade-timeout-ms": { type: "string" },
  "keep-alive-timeout-ms": { type: "string" },
  "limit-log-interval-ms": { type: "string" },
  audit: { type: "string" },
  "audit-key-file": { type: "string" },
  "audit-payloads": { type: "boolean" },
  "audit-sync": { type: "string" },
  "audit-failure": { type: "string" },
  "audit-checkpoint-ms": { type: "string" },
  "audit-replica-id": { type: "string" },
  metrics: { type: "string" },
  "log-level": { type: "string" },
  config: { type: "string" },
  name: { type: "string" },
  "agent-host": { type: "string" },
  "agent-host-token-file": { type: "string" },
  "approval-timeout-ms": { type: "string" },
  "approval-webhook": { type: "string", multiple: true },
  "approval-webhook-secret-file": { type: "string" },
  "shadow-policy": { type: "string" },
  "audit-anchor": { type: "string" },
  "agent-host-static": { type: "string" },
} as const;

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
const envList = (env: NodeJS.ProcessEnv, names: string | string[] | undefined): string[] =>
  (names === undefined ? [] : Array.isArray(names) ? names : [names])
    .map((n) => env[n])
    .filter((v): v is string => v !== undefined && v !== "");

/** The built-in policy with one block rule per `--block-tool` in front. */
export function blockToolPolicy(tools: readonly string[]): PolicyFileInput {
  if (tools.length === 0) return DEFAULT_POLICY;
  const rules = tools.map((tool, i) => ({
    id: `cli-block-tool-${i + 1}`,
    description: `--block-tool ${tool}`,
    events: "pre_action" as const,
    match: { tool },
    action: { decision: "block" as const, reason: `tool ${tool} is blocked by this harness` },
  }));
  return { ...DEFAULT_POLICY, rules: [...rules, ...DEFAULT_POLICY.rules] };
}

/** `--audit-sync`, `--audit-failure`, `--audit-checkpoint-ms`, `--audit-replica-id` (flags win over the file). */
function auditSettings(
  values: { "audit-sync"?: string; "audit-failure"?: string; "audit-checkpoint-ms"?: string; "audit-replica-id"?: string },
  file: ServeConfig,
): Pick<HarnessAuditOptions, "sync" | "failure" | "checkpointMs" | "replicaId"> {
  const sync = values["audit-sync"] ?? file.audit?.sync;
  if (sync !== undefined && !(AUDIT_SYNC_MODES as readonly string[]).includes(sync)) {
    throw new UsageError(`--audit-sync must be one of ${AUDIT_SYNC_MODES.join(", ")}`);
  }
  const failure = values["audit-failure"] ?? file.audit?.failure;
  if (failure !== undefined && failure !== "closed" && failure !== "open") throw new UsageError("--audit-failure must be closed or open");
  const checkpointMs = toInt("audit-checkpoint-ms", values["audit-checkpoint-ms"], { min: 0 }) ?? file.audit?.checkpoint_ms;
  const replicaId = values["audit-replica-id"] ?? file.audit?.replica_id;
  if (replicaId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(replicaId)) {
    throw new UsageError("--audit-replica-id must be 1 to 64 letters, digits or ._:- (starting with a letter or digit)");
  }
  return {
    ...(sync === undefined ? {} : { sync: sync as AuditSyncMode }),
    ...(failure === undefined ? {} : { failure }),
    ...(checkpointMs === undefined ? {} : { checkpointMs }),
    ...(replicaId === undefined ? {} : { replicaId }),
  };
}

/**
 * `--approval-webhook URL...` (or config agent_host.approval_webhooks) with the HMAC secret from
 * `--approval-webhook-secret-file` (mode 0600, like the token file) or AHP_APPROVAL_WEBHOOK_SECRET.
 */
async function approvalWebhooks(
  values: { "approval-webhook"?: string[]; "approval-webhook-secret-file"?: string },
  file: ServeConfig,
  env: NodeJS.ProcessEnv,
): Promise<ApprovalWebhook[]> {
  const urls = values["approval-webhook"] ?? file.agent_host?.approval_webhooks ?? [];
  for (const url of urls) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      throw new UsageError("--approval-webhook must be an http(s) URL");
    }
  }
  const secretFile = values["approval-webhook-secret-file"] ?? file.agent_host?.approval_webhook_secret_file;
  let secret: string | undefined;
  if (secretFile !== undefined) {
    if (urls.length === 0) throw new UsageError("--approval-webhook-secret-file needs --approval-webhook");
    await requireInput("--approval-webhook-secret-file", secretFile);
    const info = await stat(secretFile);
    if ((info.mode & 0o077) !== 0) {
      throw new ConfigError(
        `--approval-webhook-secret-file ${secretFile} is readable by group or others`,
        `restrict it: chmod 600 ${secretFile}`,
      );
    }
    secret = (await readFile(secretFile, "utf8")).trim();
    if (secret.length === 0) throw new ConfigError(`--approval-webhook-secret-file ${secretFile} is empty`);
  } else if (urls.length > 0) {
    const fromEnv = env.AHP_APPROVAL_WEBHOOK_SECRET?.trim();
    if (fromEnv !== undefined && fromEnv.length > 0) secret = fromEnv;
  }
  return urls.map((url) => (secret === undefined ? { url } : { url, secret }));
}

/** `--state` and its password (from a file or the environment, never logged), or undefined for in-memory state. */
async function stateOptions(
  values: { state?: string; "state-password-file"?: string; "state-prefix"?: string },
  file: ServeConfig,
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; password?: string; keyPrefix?: string } | undefined> {
  const url = values.state ?? file.state?.url;
  if (url === undefined || url === "memory") {
    if (values["state-password-file"] !== undefined || values["state-prefix"] !== undefined) {
      throw new UsageError("--state-password-file and --state-prefix need --state redis://…");
    }
    return undefined;
  }
  if (!/^rediss?:\/\/[^/]/.test(url)) throw new UsageError("--state must be redis://HOST:PORT[/DB], rediss://… or memory");
  const passwordFile = values["state-password-file"] ?? file.state?.password_file;
  let password: string | undefined;
  if (passwordFile !== undefined) {
    await requireInput("--state-password-file", passwordFile);
    try {
      password = (await readFile(passwordFile, "utf8")).trim();
    } catch (error) {
      const code = errnoCode(error);
      throw new ExitError(`--state-password-file ${passwordFile}: ${describeErrno(code, (error as Error).message)}`, EXIT_NOINPUT);
    }
  } else {
    const name = file.state?.password_env ?? "AHP_STATE_PASSWORD";
    if (env[name] !== undefined && env[name] !== "") password = env[name];
  }
  const keyPrefix = values["state-prefix"] ?? file.state?.key_prefix;
  return { url, ...(password === undefined ? {} : { password }), ...(keyPrefix === undefined ? {} : { keyPrefix }) };
}

export async function run(argv: string[], io: CliIo, signal?: AbortSignal): Promise<number> {
  // A start that fails prints one line (the error), not the log lines written before it.
  const startup = new StartupLog(io);
  try {
    return await serve(argv, io, startup, signal);
  } catch (error) {
    startup.discard();
    throw error;
  }
}

async function serve(argv: string[], io: CliIo, startup: StartupLog, signal?: AbortSignal): Promise<number> {
  const { values } = parse(argv, options);
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  if (values.config !== undefined) await requireInput("--config", values.config);
  const file: ServeConfig = values.config === undefined ? {} : await loadServeConfig(values.config);
  const listeners = {
    stdio: values.stdio ?? file.listen?.stdio ?? false,
    http: values.http ?? file.listen?.http ?? [],
    ws: values.ws ?? file.listen?.ws ?? [],
    unix: values.unix ?? file.listen?.unix ?? [],
  };
  if (!listeners.stdio && listeners.http.length + listeners.ws.length + listeners.unix.length === 0) {
    throw new UsageError("choose at least one transport: --stdio, --http, --ws or --unix");
  }
  checkHostPorts({ http: listeners.http, ws: listeners.ws, metrics: values.metrics ?? file.metrics });
  const config: HarnessConfig = {
    timeout_ms: toInt("timeout-ms", values["timeout-ms"], { min: 1 }) ?? file.limits?.timeout_ms ?? 10_000,
    batch_size: toInt("batch-size", values["batch-size"]) ?? file.limits?.batch_size ?? 100,
    max_depth: toInt("max-depth", values["max-depth"]) ?? file.limits?.max_depth ?? 10,
  };
  const limits = serverLimits(values, file);
  const apiKeys = values["api-key"] ?? [...envList(io.env, file.auth?.api_keys_env), ...(io.env.AHP_API_KEY ? [io.env.AHP_API_KEY] : [])];
  const bearerTokens = values.bearer ?? [
    ...envList(io.env, file.auth?.bearer_tokens_env),
    ...(io.env.AHP_BEARER_TOKEN ? [io.env.AHP_BEARER_TOKEN] : []),
  ];
  const auth = apiKeys.length + bearerTokens.length > 0 ? { apiKeys, bearerTokens } : undefined;
  if (auth !== undefined && listeners.http.length + listeners.ws.length === 0 && (values["api-key"] ?? values.bearer) !== undefined) {
    throw new UsageError("--api-key/--bearer apply to --http and --ws only");
  }
  const policyFile = values.policy ?? file.policy;
  const blockTools = values["block-tool"] ?? [];
  if (policyFile !== undefined && blockTools.length > 0) {
    throw new UsageError("--block-tool works with the built-in policy; put the rule into your --policy file instead");
  }
  const level = values["log-level"] ?? file.log_level ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
  const log = createLogger({ stream: startup, level: level as LogLevel | "silent", bindings: { component: "ahp-serve" } });
  startup.keepOnFailure = level === "debug";
  if (policyFile !== undefined) await requireInput("--policy", policyFile);

  const auditFile = values.audit ?? file.audit?.file;
  const auditFlag = (["audit-sync", "audit-failure", "audit-checkpoint-ms", "audit-replica-id", "audit-anchor"] as const).find(
    (f) => values[f] !== undefined,
  );
  if (auditFile === undefined && auditFlag !== undefined) throw new UsageError(`--${auditFlag} needs --audit FILE`);
  let audit: HarnessAuditOptions | undefined;
  if (auditFile !== undefined) {
    const keyFile = values["audit-key-file"] ?? file.audit?.key_file;
    const auditTuning = auditSettings(values, file);
    const anchor = values["audit-anchor"] ?? file.audit?.anchor;
    if (anchor !== undefined && auditTuning.checkpointMs === 0)
      throw new UsageError("--audit-anchor needs checkpoints (not --audit-checkpoint-ms 0)");
    if (anchor !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(anchor) && !/^https?:\/\//i.test(anchor)) {
      throw new UsageError("--audit-anchor must be a file or an http(s) URL");
    }
    if (keyFile !== undefined) await requireInput("--audit-key-file", keyFile);
    await requireAuditFile(auditFile);
    try {
      const key = await loadAuditKey({ ...(keyFile === undefined ? {} : { keyFile }), env: io.env });
      audit = {
        file: auditFile,
        key,
        ...((values["audit-payloads"] ?? file.audit?.include_payloads) ? { includePayloads: true } : {}),
        ...auditTuning,
        ...(anchor === undefined ? {} : { anchor }),
      };
    } catch (error) {
      throw new ConfigError(
        `audit key: ${(error as Error).message}`,
        `create one with: openssl rand -hex 32 > audit.key (then --audit-key-file audit.key, or set ${AUDIT_KEY_ENV})`,
      );
    }
  }

  const state = await stateOptions(values, file, io.env);
  // Agent Host adapter: escalations wait for a human. The hold must outlive neither the agent's wait
  // nor the server's handler limit, so the advertised timeout (and with it the handler limit) is
  // raised to cover the approval timeout; the policy keeps its own bound (the --timeout-ms value).
  const agentHostSpec = values["agent-host"] ?? file.agent_host?.listen;
  let agentHost: { host: AgentHost; tokens: TokenEntry[]; address: { host: string; port: number }; staticDir?: string } | undefined;
  let replication: OpenedReplication | undefined;
  if (agentHostSpec !== undefined) {
    const tokenFile = values["agent-host-token-file"] ?? file.agent_host?.token_file;
    if (tokenFile === undefined) throw new UsageError("--agent-host needs --agent-host-token-file");
    await requireInput("--agent-host-token-file", tokenFile);
    const address = hostPort("agent-host", agentHostSpec);
    const approvalTimeoutMs =
      toInt("approval-timeout-ms", values["approval-timeout-ms"], { min: 1 }) ?? file.agent_host?.approval_timeout_ms ?? 300_000;
    // Loaded only when used: every module a start-up loads costs every harness process its time.
    const { AgentHost, loadTokenFile } = await import("@ahp/agent-host");
    let tokens: TokenEntry[];
    try {
      tokens = await loadTokenFile(tokenFile);
    } catch (error) {
      throw new ExitError(`--agent-host-token-file ${tokenFile}: ${(error as Error).message}`, EXIT_FAILURE);
    }
    const webhooks = await approvalWebhooks(values, file, io.env);
    const policyTimeoutMs = config.timeout_ms ?? 10_000;
    const advertised = Math.max(policyTimeoutMs, approvalTimeoutMs + 2000);
    if (advertised !== policyTimeoutMs)
      log.info("advertised timeout raised for human approvals", { timeout_ms: advertised, approval_timeout_ms: approvalTimeoutMs });
    config.timeout_ms = advertised;
    const staticDir = values["agent-host-static"] ?? file.agent_host?.static_dir;
    if (staticDir !== undefined) await requireInput("--agent-host-static", staticDir, "directory");
    if (state !== undefined && file.agent_host?.replicate !== false)
      replication = await openReplication(state, log, values["audit-replica-id"] ?? file.audit?.replica_id);
    agentHost = {
      host: new AgentHost({
        ...(replication === undefined ? {} : { replication: replication.options }),
        approvalTimeoutMs,
        harnessTimeoutMs: advertised,
        innerTimeoutMs: policyTimeoutMs,
        ...(file.agent_host?.editable ? { editable: true } : {}),
        ...(webhooks.length === 0 ? {} : { approvalWebhooks: webhooks }),
        onlog: (level, message, fields) => log[level](message, fields),
        onerror: (e) => log.debug("agent-host", { error: e.message }),
        onclose: (c) => log.info("agent-host client closed", { principal: c.principal, code: c.code, reason: c.reason }),
      }),
      tokens,
      address,
      ...(staticDir === undefined ? {} : { staticDir }),
    };
  } else if (
    values["agent-host-token-file"] !== undefined ||
    values["approval-timeout-ms"] !== undefined ||
    values["agent-host-static"] !== undefined ||
    values["approval-webhook"] !== undefined ||
    values["approval-webhook-secret-file"] !== undefined
  ) {
    throw new UsageError(
      "--agent-host-token-file, --approval-timeout-ms, --approval-webhook(-secret-file) and --agent-host-static need --agent-host",
    );
  }
  const shadowPolicyFile = values["shadow-policy"] ?? file.shadow_policy;
  if (shadowPolicyFile !== undefined) await requireInput("--shadow-policy", shadowPolicyFile);

  let harness;
  try {
    harness = await createHarness({
      ...(state === undefined ? {} : { state }),
      ...(agentHost === undefined ? {} : { agentHost: agentHost.host }),
      log,
      config,
      name: values.name ?? file.name ?? "ahp-harness",
      ...(policyFile === undefined ? { policy: blockToolPolicy(blockTools) } : { policyFile }),
      ...(shadowPolicyFile === undefined ? {} : { shadowPolicyFile }),
      ...(limits.limitLogIntervalMs === undefined ? {} : { limitLogIntervalMs: limits.limitLogIntervalMs }),
      ...(audit === undefined ? {} : { audit }),
    });
  } catch (error) {
    await replication?.close();
    throw startFailure(error, policyFile);
  }
  const { server, metrics } = harness;
  if (replication !== undefined && agentHost !== undefined) replication.attach(metrics, agentHost.host);

  const closers: Array<() => Promise<void>> = [];
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  signal?.addEventListener("abort", onSignal, { once: true });
  // Limit reports become one `limit` line and a count of ahp_limit_rejections_total; the rest is logged as before.
  const onerror = (transport: string) => (e: Error) => {
    if (!harness.reportLimit(e)) log.warn("transport", { transport, error: e.message });
  };
  // GET /readyz on the HTTP and WebSocket listeners: 200 when the harness can decide, else 503.
  const readiness = () => harness.readiness();
  // GET /metrics next to the protocol on the HTTP and WebSocket listeners.
  const serveMetrics = metricsHandler(metrics);
  const metricsRoute = (req: IncomingMessage, res: ServerResponse) => {
    if ((req.url ?? "").split("?")[0] === "/metrics") serveMetrics(req, res);
    else res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
  };
  try {
    for (const spec of listeners.http) {
      const { host, port } = hostPort("http", spec);
      const { listenHttp } = await import("@ahp/transport-http");
      const l = await listenAs("--http", `${host}:${port}`, () =>
        listenHttp(server, {
          host,
          port,
          fallback: metricsRoute,
          ...(auth === undefined ? {} : { auth }),
          ...(limits.maxConnections === undefined ? {} : { maxConnections: limits.maxConnections }),
          ...(limits.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeoutMs: limits.keepAliveTimeoutMs }),
          stallTimeoutMs: limits.stallTimeoutMs,
          maxInFlight: limits.maxInFlight,
          headersTimeoutMs: limits.headersTimeoutMs,
          requestTimeoutMs: limits.requestTimeoutMs,
          readiness,
          onerror: onerror("http"),
        }),
      );
      closers.push(() => l.close());
      log.info("listening", { transport: "http", url: l.url });
    }
    for (const spec of listeners.ws) {
      const { host, port } = hostPort("ws", spec);
      const { listenWebSocket } = await import("@ahp/transport-ws");
      const l = await listenAs("--ws", `${host}:${port}`, () =>
        listenWebSocket(server, {
          host,
          port,
          fallback: metricsRoute,
          ...(auth === undefined ? {} : { auth }),
          ...(limits.maxConnections === undefined ? {} : { maxConnections: limits.maxConnections }),
          ...(limits.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: limits.idleTimeoutMs }),
          ...(limits.upgradeTimeoutMs === undefined ? {} : { upgradeTimeoutMs: limits.upgradeTimeoutMs }),
          maxInFlight: limits.maxInFlight,
          headersTimeoutMs: limits.headersTimeoutMs,
          requestTimeoutMs: limits.requestTimeoutMs,
          drainTimeoutMs: limits.stallTimeoutMs,
          readiness,
          onerror: onerror("ws"),
        }),
      );
      closers.push(() => l.close());
      log.info("listening", { transport: "ws", url: l.url });
    }
    for (const path of listeners.unix) {
      const { listenUnix } = await import("@ahp/transport-unix");
      const l = await listenAs("--unix", path, () =>
        listenUnix(server, {
          path,
          ...(limits.maxConnections === undefined ? {} : { maxConnections: limits.maxConnections }),
          ...(limits.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: limits.idleTimeoutMs }),
          stallTimeoutMs: limits.stallTimeoutMs,
          maxInFlight: limits.maxInFlight,
          onerror: onerror("unix"),
        }),
      );
      closers.push(() => l.close());
      log.info("listening", { transport: "unix", path });
    }
    if (agentHost !== undefined) {
      const [{ listenAgentHost }, { inspectorAssetsDir, whoamiRoute }] = await Promise.all([
        import("@ahp/agent-host"),
        import("@ahp/inspector/server"),
      ]);
      const ah = agentHost;
      const l = await listenAs("--agent-host", `${ah.address.host}:${ah.address.port}`, () =>
        listenAgentHost(ah.host, {
          tokens: ah.tokens,
          host: ah.address.host,
          port: ah.address.port,
          // The built inspector at /inspector/ unless --agent-host-static names another directory.
          staticDir: { dir: ah.staticDir ?? inspectorAssetsDir },
          routes: [whoamiRoute(ah.tokens)],
        }),
      );
      closers.push(() => l.close());
      log.info("listening", { transport: "agent-host", url: l.url, inspector: `${l.httpUrl}inspector/` });
    }
    const metricsSpec = values.metrics ?? file.metrics;
    if (metricsSpec !== undefined) {
      const { host, port } = hostPort("metrics", metricsSpec);
      const l = await listenAs("--metrics", `${host}:${port}`, () => listenMetrics({ metrics, host, port }));
      closers.push(() => l.close());
      log.info("listening", { transport: "metrics", url: l.url });
    }
    // Everything listens: the lines held since the start go out, and later ones pass through.
    startup.release();
    if (listeners.stdio) {
      log.info("listening", { transport: "stdio" });
      // stdio ends the harness when the agent ends stdin (or on a signal).
      const { serveStdio } = await import("@ahp/transport-stdio");
      const cause = await serveStdio(server, { signal: stop.signal, maxInFlight: limits.maxInFlight, onlimit: onerror("stdio") });
      if (cause !== undefined) log.warn("stdio closed", { error: cause.message });
    } else {
      await new Promise<void>((resolve) => stop.signal.addEventListener("abort", () => resolve(), { once: true }));
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await Promise.allSettled(closers.map((close) => close()));
    await harness.close();
    await replication?.close();
    log.info("stopped");
  }
  return EXIT_OK;
}

/** The connection limits of the listeners (flags win over the config file's `server_limits`). */
function serverLimits(
  values: {
    [K in
      | "max-connections"
      | "max-in-flight"
      | "header-timeout-ms"
      | "request-timeout-ms"
      | "stall-timeout-ms"
      | "idle-timeout-ms"
      | "upgrade-timeout-ms"
      | "keep-alive-timeout-ms"
      | "limit-log-interval-ms"]?: string;
  },
  file: ServeConfig,
) {
  const f = file.server_limits ?? {};
  const maxConnections = toInt("max-connections", values["max-connections"], { min: 1 }) ?? f.max_connections;
  const idleTimeoutMs = toInt("idle-timeout-ms", values["idle-timeout-ms"], { min: 0 }) ?? f.idle_timeout_ms;
  const upgradeTimeoutMs = toInt("upgrade-timeout-ms", values["upgrade-timeout-ms"], { min: 1 }) ?? f.upgrade_timeout_ms;
  const keepAliveTimeoutMs = toInt("keep-alive-timeout-ms", values["keep-alive-timeout-ms"], { min: 1 }) ?? f.keep_alive_timeout_ms;
  const limitLogIntervalMs = toInt("limit-log-interval-ms", values["limit-log-interval-ms"], { min: 1 }) ?? f.limit_log_interval_ms;
  return {
    // Absent: each listener derives its cap from the file-descriptor limit (ADR 0153).
    ...(maxConnections === undefined ? {} : { maxConnections }),
    ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
    ...(upgradeTimeoutMs === undefined ? {} : { upgradeTimeoutMs }),
    ...(keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeoutMs }),
    ...(limitLogIntervalMs === undefined ? {} : { limitLogIntervalMs }),
    maxInFlight: toInt("max-in-flight", values["max-in-flight"], { min: 1 }) ?? f.max_in_flight ?? 256,
    headersTimeoutMs: toInt("header-timeout-ms", values["header-timeout-ms"], { min: 1 }) ?? f.header_timeout_ms ?? 10_000,
    requestTimeoutMs: toInt("request-timeout-ms", values["request-timeout-ms"], { min: 1 }) ?? f.request_timeout_ms ?? 30_000,
    stallTimeoutMs: toInt("stall-timeout-ms", values["stall-timeout-ms"], { min: 1 }) ?? f.stall_timeout_ms ?? 30_000,
  };
}

/** What {@link createHarness} threw, as one line with its exit code: a policy file that cannot be read 66, an audit log that cannot be written 74. */
function startFailure(error: unknown, policyFile: string | undefined): Error {
  if (error instanceof HarnessStartError) {
    if (error.part === "audit") return auditOpenFailure(error.file, error.cause);
    if (error.part === "policy" && policyFile !== undefined) {
      const code = errnoCode(error.cause);
      const reason = describeErrno(code, (error.cause as Error).message);
      return new ExitError(`--policy ${policyFile}: ${reason}`, code === undefined ? EXIT_FAILURE : EXIT_NOINPUT, { cause: error.cause });
    }
    return new ExitError(error.message, EXIT_FAILURE, { cause: error.cause });
  }
  return new ExitError((error as Error).message, EXIT_FAILURE, { cause: error });
}

/**
 * `ahp.config.yaml`: everything `ahp serve` takes as flags, in one file. Flags win over the
 * file. Relative paths in the file are relative to the file.
 *
 * ```yaml
 * listen:
 *   stdio: false
 *   http: ["127.0.0.1:8080"]
 *   ws: ["127.0.0.1:8081"]
 *   unix: ["/run/ahp/harness.sock"]
 * auth:
 *   api_keys_env: AHP_API_KEY        # never put secrets in the file itself
 * limits: { max_depth: 10, batch_size: 100, timeout_ms: 10000 }
 * server_limits: { max_connections: 1024, max_in_flight: 256, header_timeout_ms: 10000, request_timeout_ms: 30000, stall_timeout_ms: 30000,
 *                  idle_timeout_ms: 600000, upgrade_timeout_ms: 10000, keep_alive_timeout_ms: 5000, limit_log_interval_ms: 10000 }
 * policy: ./policy.yaml
 * shadow_policy: ./candidate.yaml   # evaluated beside the policy, never enforced
 * audit: { file: ./audit.log, key_file: ./audit.key, sync: write, failure: closed, checkpoint_ms: 1000, anchor: /mnt/other/audit.anchor }
 * metrics: 127.0.0.1:9464
 * log_level: info
 * state: { url: "redis://127.0.0.1:6379/0", password_env: AHP_STATE_PASSWORD, key_prefix: "ahp:policy:" }
 * agent_host:                        # Agent Host Protocol server for inspectors and approvers
 *   listen: 127.0.0.1:8090
 *   token_file: ./agent-host.tokens  # "token principal role" per line, mode 0600
 *   approval_timeout_ms: 300000
 *   approval_webhooks: ["https://hooks.example/approvals"]
 *   approval_webhook_secret_file: ./webhook.secret   # mode 0600
 * ```
 */
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { UsageError } from "./io.js";

const strings = z.array(z.string().min(1));

export const ServeConfigSchema = z.strictObject({
  name: z.string().min(1).optional(),
  listen: z
    .strictObject({ stdio: z.boolean().optional(), http: strings.optional(), ws: strings.optional(), unix: strings.optional() })
    .optional(),
  auth: z
    .strictObject({
      /** Names of environment variables holding API keys / bearer tokens (secrets stay out of the file). */
      api_keys_env: z.union([z.string(), strings]).optional(),
      bearer_tokens_env: z.union([z.string(), strings]).optional(),
    })
    .optional(),
  limits: z
    .strictObject({ max_depth: z.int().min(0).optional(), batch_size: z.int().min(0).optional(), timeout_ms: z.int().min(1).optional() })
    .optional(),
  /** Connection limits of the listeners (`--max-connections`, `--max-in-flight`, `--header-timeout-ms`, …). */
  server_limits: z
    .strictObject({
      max_connections: z.int().min(1).optional(),
      max_in_flight: z.int().min(1).optional(),
      header_timeout_ms: z.int().min(1).optional(),
      request_timeout_ms: z.int().min(1).optional(),
      stall_timeout_ms: z.int().min(1).optional(),
      idle_timeout_ms: z.int().min(0).optional(),
      upgrade_timeout_ms: z.int().min(1).optional(),
      keep_alive_timeout_ms: z.int().min(1).optional(),
      limit_log_interval_ms: z.int().min(1).optional(),
    })
    .optional(),
  policy: z.string().min(1).optional(),
  /** A candidate policy evaluated beside `policy` and never enforced (`--shadow-policy`). */
  shadow_policy: z.string().min(1).optional(),
  audit: z
    .strictObject({
      file: z.string().min(1),
      key_file: z.string().min(1).optional(),
      include_payloads: z.boolean().optional(),
      /** When a decision is released relative to its record: none | write (default) | fsync. */
      sync: z.enum(["none", "write", "fsync"]).optional(),
      /** What a call gets when its record cannot be written: closed (default) | open. */
      failure: z.enum(["closed", "open"]).optional(),
      /** Interval of signed checkpoints (ms); 0 turns them off. */
      checkpoint_ms: z.int().min(0).optional(),
      /** Also publish each signed checkpoint to this file or http(s) URL (`--audit-anchor`). */
      anchor: z.string().min(1).optional(),
      replica_id: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, "letters, digits and ._:- (at most 64)")
        .optional(),
    })
    .optional(),
  metrics: z.string().min(1).optional(),
  log_level: z.enum(["debug", "info", "warn", "error", "silent"]).optional(),
  /** Policy state shared by several replicas (rate limits, quotas); default: this process's memory. */
  state: z
    .strictObject({
      url: z.string().min(1),
      /** A file holding the password (never put the password itself in this file). */
      password_file: z.string().min(1).optional(),
      /** Name of an environment variable holding the password. */
      password_env: z.string().min(1).optional(),
      key_prefix: z.string().min(1).optional(),
    })
    .optional(),
  agent_host: z
    .strictObject({
      listen: z.string().min(1),
      token_file: z.string().min(1),
      approval_timeout_ms: z.int().min(1).optional(),
      /** POST each held approval and its outcome to these URLs (`--approval-webhook`). */
      approval_webhooks: strings.optional(),
      /** A file holding the webhooks' HMAC secret, mode 0600 (`--approval-webhook-secret-file`). */
      approval_webhook_secret_file: z.string().min(1).optional(),
      static_dir: z.string().min(1).optional(),
      editable: z.boolean().optional(),
      /** With `state:` on Redis, share sessions and approvals with the other replicas (default true). */
      replicate: z.boolean().optional(),
    })
    .optional(),
});
export type ServeConfig = z.infer<typeof ServeConfigSchema>;

export async function loadServeConfig(file: string): Promise<ServeConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read config file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new UsageError(`${file}: ${(error as Error).message}`);
  }
  const parsed = ServeConfigSchema.safeParse(data ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`${file}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  const base = dirname(resolve(file));
  const rel = (p: string | undefined) => (p === undefined || p.startsWith("/") ? p : resolve(base, p));
  const config = parsed.data;
  return {
    ...config,
    ...(config.policy === undefined ? {} : { policy: rel(config.policy)! }),
    ...(config.shadow_policy === undefined ? {} : { shadow_policy: rel(config.shadow_policy)! }),
    ...(config.audit === undefined
      ? {}
      : {
          audit: {
            ...config.audit,
            file: rel(config.audit.file)!,
            ...(config.audit.key_file === undefined ? {} : { key_file: rel(config.audit.key_file)! }),
            ...(config.audit.anchor === undefined || /^https?:\/\//i.test(config.audit.anchor)
              ? {}
              : { anchor: rel(config.audit.anchor)! }),
          },
        }),
    ...(config.state?.password_file === undefined ? {} : { state: { ...config.state, password_file: rel(config.state.password_file)! } }),
    ...(config.listen?.unix === undefined ? {} : { listen: { ...config.listen, unix: config.listen.unix.map((p) => rel(p)!) } }),
    ...(config.agent_host === undefined
      ? {}
      : {
          agent_host: {
            ...config.agent_host,
            token_file: rel(config.agent_host.token_file)!,
            ...(config.agent_host.static_dir === undefined ? {} : { static_dir: rel(config.agent_host.static_dir)! }),
            ...(config.agent_host.approval_webhook_secret_file === undefined
              ? {}
              : { approval_webhook_secret_file: rel(config.agent_host.approval_webhook_secret_file)! }),
          },
        }),
  };
}

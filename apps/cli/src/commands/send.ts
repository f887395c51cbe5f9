/** `ahp send`: be an agent for one or many events. */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import {
  AhpClient,
  AhpError,
  AhpLocalError,
  EVENT_TABLE,
  isEventType,
  rfc3339Now,
  type AhpEventInput,
  type JsonRpcMessage,
  type Transport,
} from "@ahp/core";
import { closest, parse, toInt } from "../args.js";
import { authFrom, CONNECT_HELP, createClientTransport } from "../connect.js";
import { EXIT_DECISION, EXIT_FAILURE, EXIT_OK, UsageError, type CliIo } from "../io.js";

export const usage = `Usage: ahp send --connect SPEC [--event-type TYPE --payload JSON | --file FILE] [options]

Acts as an agent: performs the handshake, sends events, prints one JSON line per event on
stdout (the decision of a blocking event, {"notification":"sent"} for a non-blocking one).
Exit code 0; 1 when --fail-on names a decision that was returned; 2 on a protocol or
transport failure (details on stderr); 64 on a usage error.

${CONNECT_HELP}
  --api-key KEY         send X-API-Key (HTTP) / ?api_key= (WebSocket); or env AHP_API_KEY
  --bearer TOKEN        send Authorization: Bearer / ?token=; or env AHP_BEARER_TOKEN
  --event-type TYPE     one event of this type (e.g. pre_action)
  --payload JSON        its payload (default {})
  --depth N             its depth (default 0)
  --file FILE           one item per line ('-' = stdin), streamed: a full AhpEvent, or
                        {"event_type","payload",...} (ids and timestamp filled in), or a JSON-RPC
                        message for ahp/event, ahp/query or ahp/batch
  --raw                 send each line of --file as given (no handshake, no validation) and
                        print every message received, for debugging foreign peers
  --session-id ID       session id (default: random UUID v4)
  --agent-id ID         agent id (default: random UUID v4)
  --capabilities LIST   comma-separated capabilities for the handshake
  --timeout-ms N        per-request timeout (default 10000); a decision waits at least as long as
                        the harness says it may hold one for a person (its handshake timeout_ms)
  --fail-on LIST        exit 1 when a decision is one of these comma-separated tags, e.g.
                        --fail-on block,escalate (a gate for shell scripts; all are still printed)
  -h, --help            this text
`;

const options = {
  connect: { type: "string" },
  "api-key": { type: "string" },
  bearer: { type: "string" },
  "event-type": { type: "string" },
  payload: { type: "string" },
  depth: { type: "string" },
  file: { type: "string" },
  raw: { type: "boolean" },
  "session-id": { type: "string" },
  "agent-id": { type: "string" },
  capabilities: { type: "string" },
  "timeout-ms": { type: "string" },
  "fail-on": { type: "string" },
} as const;

/** Every decision tag of AHP 2.4 (generic and typed decisions). */
const DECISION_TAGS = ["allow", "block", "modify", "defer", "escalate", "approve", "reject", "refine", "retry", "queue", "skip"];

/** The decision tags an answer carries (one, or one per element of a batch). */
function decisionTags(result: unknown): string[] {
  if (result === null || typeof result !== "object") return [];
  const r = result as { decision?: unknown; decisions?: unknown };
  if (typeof r.decision === "string") return [r.decision];
  return Array.isArray(r.decisions) ? r.decisions.flatMap(decisionTags) : [];
}

function parseJson(what: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
}

async function* lines(file: string, io: CliIo): AsyncGenerator<string> {
  const input = file === "-" ? io.stdin : createReadStream(file, { encoding: "utf8" });
  const rl = createInterface({ input, crlfDelay: Infinity });
  for await (const line of rl) if (line.trim() !== "") yield line;
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, options);
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  const spec = values.connect ?? io.env.AHP_CONNECT;
  if (spec === undefined) throw new UsageError("--connect is required");
  if ((values["event-type"] === undefined) === (values.file === undefined)) {
    throw new UsageError("give exactly one of --event-type or --file");
  }
  if (values.raw && values.file === undefined) throw new UsageError("--raw needs --file");
  const failOn = new Set(
    (values["fail-on"] ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean),
  );
  if (values["fail-on"] !== undefined && failOn.size === 0) throw new UsageError("--fail-on needs decision tags, e.g. --fail-on block");
  for (const tag of failOn) {
    if (!DECISION_TAGS.includes(tag)) {
      const near = closest(tag, DECISION_TAGS);
      throw new UsageError(`--fail-on: unknown decision ${JSON.stringify(tag)}${near === undefined ? "" : ` (did you mean ${near}?)`}`);
    }
  }
  if (values.raw && failOn.size > 0) throw new UsageError("--fail-on does not apply to --raw");
  const timeoutMs = toInt("timeout-ms", values["timeout-ms"], { min: 1 }) ?? 10_000;
  const depth = toInt("depth", values.depth) ?? 0;
  // A bad --payload is a usage problem, found before anything is sent.
  const payload = values.file === undefined ? parseJson("--payload", values.payload ?? "{}") : undefined;
  const auth = authFrom(values, io.env);
  // With the client, each call has its own limit (raised for decisions a person may take);
  // the HTTP exchange must not end them sooner. --raw keeps the transport's limit.
  const transport = createClientTransport(spec, { ...(auth === undefined ? {} : { auth }), timeoutMs: values.raw ? timeoutMs : 0 });
  const write = (value: unknown) => io.stdout.write(`${JSON.stringify(value)}\n`);
  const fail = (error: unknown) => io.stderr.write(`ahp send: ${describe(error)}\n`);

  if (values.raw) return runRaw(transport, lines(values.file!, io), { timeoutMs, write, fail });

  const client = new AhpClient({
    ...(values["session-id"] === undefined ? {} : { sessionId: values["session-id"] }),
    ...(values["agent-id"] === undefined ? {} : { agentId: values["agent-id"] }),
    agentInfo: { framework: "ahp-cli", version: "0.1.0" },
    timeoutMs,
  });
  let status = EXIT_OK;
  let gated = false;
  try {
    await client.connect(transport, {
      capabilities:
        values.capabilities
          ?.split(",")
          .map((c) => c.trim())
          .filter(Boolean) ?? [],
    });
    const items: AsyncIterable<string> | string[] =
      values.file !== undefined ? lines(values.file, io) : [JSON.stringify({ event_type: values["event-type"], payload, depth })];
    let lineNo = 0;
    for await (const line of items) {
      lineNo++;
      try {
        const result = await waitingNotice(client, timeoutMs, io, () => sendItem(client, parseJson(`line ${lineNo}`, line)));
        write(result);
        if (decisionTags(result).some((tag) => failOn.has(tag))) gated = true;
      } catch (error) {
        status = EXIT_FAILURE;
        fail(values.file !== undefined ? `line ${lineNo}: ${describe(error)}` : error);
        if (AhpLocalError.isInstance(error) && (error.code === "CONNECTION_CLOSED" || error.code === "NOT_CONNECTED")) break;
      }
    }
  } catch (error) {
    fail(error);
    status = EXIT_FAILURE;
  } finally {
    await client.close().catch(() => undefined);
  }
  return status === EXIT_OK && gated ? EXIT_DECISION : status;
}

/**
 * Runs one call; when the harness may hold decisions for a person longer than `--timeout-ms`
 * and this one takes longer, says once on stderr that it is waiting for an approver (ADR 0145).
 */
async function waitingNotice<T>(client: AhpClient, ownMs: number, io: CliIo, call: () => Promise<T>): Promise<T> {
  const holdMs = client.decisionTimeoutMs;
  if (!(holdMs > ownMs)) return call();
  const timer = setTimeout(
    () => {
      io.stderr.write(`ahp send: waiting for an approver (the harness may hold this decision up to ${Math.round(holdMs / 1000)} s)…\n`);
    },
    Math.min(ownMs, 2000),
  );
  try {
    return await call();
  } finally {
    clearTimeout(timer);
  }
}

async function sendItem(client: AhpClient, item: unknown): Promise<unknown> {
  if (item === null || typeof item !== "object" || Array.isArray(item)) throw new UsageError("each item must be a JSON object");
  const obj = item as Record<string, unknown>;
  if (typeof obj.jsonrpc === "string") {
    const params = obj.params as Record<string, unknown> | undefined;
    switch (obj.method) {
      case "ahp/event":
        return sendEvent(client, params);
      case "ahp/query":
        return client.query(typeof params?.query_type === "string" ? params.query_type : "", params?.payload ?? null);
      case "ahp/batch":
        return { decisions: await client.batch((params?.events ?? []) as AhpEventInput[]) };
      default:
        throw new UsageError(`unsupported method ${JSON.stringify(obj.method)} (use --raw to send anything)`);
    }
  }
  return sendEvent(client, obj);
}

async function sendEvent(client: AhpClient, raw: Record<string, unknown> | undefined): Promise<unknown> {
  const type = raw?.event_type;
  if (!isEventType(type)) throw new UsageError(`unknown event_type ${JSON.stringify(type)}`);
  const event = {
    session_id: client.sessionId,
    agent_id: client.agentId,
    timestamp: rfc3339Now(),
    depth: 0,
    payload: {},
    ...raw,
  } as AhpEventInput;
  if (!EVENT_TABLE[type].blocking) {
    await client.notify(event);
    return { event_type: type, notification: "sent" };
  }
  return client.request(event);
}

async function runRaw(
  transport: Transport,
  input: AsyncIterable<string>,
  out: { timeoutMs: number; write: (v: unknown) => void; fail: (e: unknown) => void },
): Promise<number> {
  const waiting = new Map<string | number, () => void>();
  let status = EXIT_OK;
  let closed: Error | undefined;
  transport.onmessage = (message) => {
    out.write(message);
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof id === "string" || typeof id === "number") waiting.get(id)?.();
  };
  transport.onparseerror = (error) => out.fail(error);
  transport.onerror = (error) => out.fail(error);
  transport.onclose = (error) => {
    closed = error ?? new Error("connection closed");
    for (const done of waiting.values()) done();
  };
  try {
    await transport.start();
    let lineNo = 0;
    for await (const line of input) {
      lineNo++;
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch (error) {
        out.fail(`line ${lineNo}: not JSON (a message-level transport can only send JSON): ${(error as Error).message}`);
        status = EXIT_FAILURE;
        continue;
      }
      if (closed !== undefined) throw closed;
      const id = (message as { id?: unknown } | null)?.id;
      const answered =
        typeof id === "string" || typeof id === "number"
          ? new Promise<boolean>((resolve) => {
              const timer = setTimeout(() => resolve(false), out.timeoutMs);
              waiting.set(id, () => {
                clearTimeout(timer);
                resolve(true);
              });
            })
          : undefined;
      await transport.send(message as JsonRpcMessage);
      if (answered !== undefined) {
        const ok = await answered;
        waiting.delete(id as string | number);
        if (!ok) {
          out.fail(`line ${lineNo}: no response within ${out.timeoutMs}ms`);
          status = EXIT_FAILURE;
        }
      }
    }
    if (closed !== undefined) throw closed;
  } catch (error) {
    out.fail(error);
    status = EXIT_FAILURE;
  } finally {
    await transport.close().catch(() => undefined);
  }
  return status;
}

function describe(error: unknown): string {
  if (AhpError.isInstance(error)) return `${error.message} (code ${error.code})`;
  if (AhpLocalError.isInstance(error)) {
    const details = error.details as { exitCode?: unknown; stderrTail?: unknown; status?: unknown } | undefined;
    const tail = typeof details?.stderrTail === "string" ? details.stderrTail : "";
    const extra = tail ? `\n--- harness stderr (tail) ---\n${tail.trimEnd()}` : "";
    return `${error.message} [${error.code}]${extra}`;
  }
  return error instanceof Error ? error.message : String(error);
}

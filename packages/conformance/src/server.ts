/**
 * The scripted conformance harness: an {@link AhpServer} whose handlers do what the message
 * they handle asks for (see `script.ts`) and record every call (see `log.ts`). Its whole
 * configuration is JSON, so a transport can run it in a child process, behind HTTP, ...
 */
import {
  AhpError,
  AhpLocalError,
  AhpServer,
  HarnessConfigSchema,
  SPECIALIZED_EVENT_TYPES,
  decode,
  type AhpEvent,
  type AhpHandlerContext,
  type AhpServerHandlers,
  type AhpServerOptions,
  type DecisionInputFor,
  type QueryRequest,
  type QueryResponseInput,
  type SpecializedEventType,
  type TypedEventHandler,
} from "@ahp/core";
import { z } from "zod";
import { ConformanceLog, type ConformanceRecord } from "./log.js";
import { DEFAULT_MAX_SCRIPT_DELAY_MS, readScript, runScript, withoutScript } from "./script.js";
import type { ConformanceServerConfig } from "./types.js";

/** Reserved `query_type`s; every other query gets a scripted answer. */
export const CONFORMANCE_QUERY = {
  /** Payload `{session_id?, handler?, min_count?, settle?, timeout_ms?}`; answer `{records, dropped}`. */
  log: "conformance/log",
  /** Payload `{since?}`; answer `{errors, last}`: problems the server reported through `onerror`. */
  errors: "conformance/errors",
  /** Payload `{session_id?, handler?}`; answer `{cleared}`. */
  reset: "conformance/reset",
} as const;
export const CONFORMANCE_QUERY_PREFIX = "conformance/";

/** What the scripted typed handlers answer when the event's `metadata.script` names no decision. */
export const CONFORMANCE_TYPED_DEFAULTS: { readonly [T in SpecializedEventType]: DecisionInputFor<T> } = Object.freeze({
  idle: { decision: "defer", reason: "conformance harness" },
  context_perception: {
    decision: "allow",
    injected_context: { facts: [{ content: "conformance harness", source: "conformance", confidence: 0.9 }] },
  },
  memory_recall: { decision: "allow", injected_facts: [{ content: "conformance harness", source: "conformance", confidence: 0.9 }] },
  planning: { decision: "allow", selected_strategy: "step_by_step" },
  reasoning: { decision: "allow", hints: ["conformance harness"] },
  rate_limit: { decision: "queue" },
  confirmation: { decision: "approve" },
  intent_detection: { decision: "allow", detected_intent: "conformance", confidence: 0.9 },
});

/** The JSON form of {@link ConformanceServerConfig}; unknown members are refused (they are typos). */
export const ConformanceServerConfigSchema = z.strictObject({
  harnessConfig: HarnessConfigSchema.optional(),
  typedHandlers: z.boolean().optional(),
  queryHandler: z.boolean().optional(),
  requireHandshake: z.boolean().optional(),
  handlerTimeoutMs: z.int().min(0).optional(),
  handlerFailure: z.enum(["error", "decision"]).optional(),
  compatV1: z.boolean().optional(),
  logLimit: z.int().min(1).optional(),
  maxScriptDelayMs: z.int().min(0).optional(),
});

/**
 * Validates a configuration that arrived as JSON (argv, environment, a file). Throws an
 * `AhpLocalError("INVALID_ARGUMENT")` naming the first problem.
 */
export function parseConformanceServerConfig(value: unknown): ConformanceServerConfig {
  const decoded = decode(ConformanceServerConfigSchema, value ?? {});
  if (!decoded.ok) throw new AhpLocalError("INVALID_ARGUMENT", `invalid conformance harness config: ${decoded.detail}`);
  const out: ConformanceServerConfig = {};
  for (const [key, member] of Object.entries(decoded.value)) {
    if (member !== undefined) (out as Record<string, unknown>)[key] = member;
  }
  return out;
}

export interface ConformanceServerOptions {
  /** Also receives every problem the server reports (they are kept in the log either way). */
  onerror?: (error: Error) => void;
}

/** The scripted harness. `log` holds what its handlers saw. */
export class ConformanceServer extends AhpServer {
  readonly log: ConformanceLog;
  readonly conformanceConfig: Readonly<ConformanceServerConfig>;

  constructor(config: ConformanceServerConfig = {}, options: ConformanceServerOptions = {}) {
    const parsed = parseConformanceServerConfig(config);
    const log = new ConformanceLog(parsed.logLimit);
    const serverOptions: AhpServerOptions = {
      onerror: (error) => {
        const code = AhpError.isInstance(error) || AhpLocalError.isInstance(error) ? error.code : undefined;
        log.error(error.message, code);
        options.onerror?.(error);
      },
    };
    if (parsed.harnessConfig !== undefined) serverOptions.config = parsed.harnessConfig;
    if (parsed.handlerTimeoutMs !== undefined) serverOptions.handlerTimeoutMs = parsed.handlerTimeoutMs;
    if (parsed.handlerFailure !== undefined) serverOptions.handlerFailure = parsed.handlerFailure;
    if (parsed.requireHandshake !== undefined) serverOptions.requireHandshake = parsed.requireHandshake;
    if (parsed.compatV1 !== undefined) serverOptions.compat = { v1: parsed.compatV1 };
    super(serverOptions);
    this.log = log;
    this.conformanceConfig = Object.freeze(parsed);
    this.setHandlers(conformanceHandlers(log, parsed));
  }
}

/** Builds the scripted harness for `config` (see the package README for the script protocol). */
export function createConformanceServer(config: ConformanceServerConfig = {}, options: ConformanceServerOptions = {}): ConformanceServer {
  return new ConformanceServer(config, options);
}

type RecordBase = Pick<ConformanceRecord, "connection" | "transport" | "request_id" | "batch_index" | "batch_size">;

function contextFields(ctx: AhpHandlerContext): RecordBase {
  const base: RecordBase = { connection: ctx.connection.id, transport: ctx.connection.info.transport };
  if (ctx.requestId !== undefined) base.request_id = ctx.requestId;
  if (ctx.batch !== undefined) {
    base.batch_index = ctx.batch.index;
    base.batch_size = ctx.batch.size;
  }
  return base;
}

function eventFields(event: AhpEvent) {
  return { session_id: event.session_id, agent_id: event.agent_id, event_type: event.event_type, event };
}

async function tracked<T>(finish: (outcome: "ok" | "error") => void, run: () => Promise<T>): Promise<T> {
  try {
    const value = await run();
    finish("ok");
    return value;
  } catch (error) {
    finish("error");
    throw error;
  }
}

const LogQuerySchema = z.looseObject({
  session_id: z.string().optional(),
  handler: z.enum(["handshake", "event", "typed", "notification", "query"]).optional(),
  min_count: z.int().min(0).optional(),
  settle: z.boolean().optional(),
  timeout_ms: z.int().min(0).optional(),
});
const ErrorsQuerySchema = z.looseObject({ since: z.int().min(0).optional() });
const ResetQuerySchema = z.looseObject({
  session_id: z.string().optional(),
  handler: z.enum(["handshake", "event", "typed", "notification", "query"]).optional(),
});

function payloadOf<S extends z.ZodType>(schema: S, query: QueryRequest): z.output<S> {
  const decoded = decode(schema, query.payload ?? {});
  if (!decoded.ok) throw new Error(`invalid ${query.query_type} payload: ${decoded.detail}`);
  return decoded.value;
}

async function reservedQuery(log: ConformanceLog, query: QueryRequest, signal: AbortSignal): Promise<QueryResponseInput> {
  switch (query.query_type) {
    case CONFORMANCE_QUERY.log: {
      const wait = payloadOf(LogQuerySchema, query);
      const filter = {
        ...(wait.session_id === undefined ? {} : { session_id: wait.session_id }),
        ...(wait.handler === undefined ? {} : { handler: wait.handler }),
      };
      await log.waitFor({ ...wait, ...filter }, signal);
      return { answer: { records: log.records(filter), dropped: log.dropped } };
    }
    case CONFORMANCE_QUERY.errors: {
      const { since } = payloadOf(ErrorsQuerySchema, query);
      // Let frames that arrived with this query be processed first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      return { answer: log.errors(since) };
    }
    case CONFORMANCE_QUERY.reset: {
      const filter = payloadOf(ResetQuerySchema, query);
      return { answer: { cleared: log.clear(filter) } };
    }
    default:
      throw new Error(`unknown conformance query ${query.query_type}`);
  }
}

function conformanceHandlers(log: ConformanceLog, config: ConformanceServerConfig): AhpServerHandlers {
  const maxDelayMs = config.maxScriptDelayMs ?? DEFAULT_MAX_SCRIPT_DELAY_MS;
  const handlers: AhpServerHandlers = {
    onHandshake: (request, ctx) => {
      log.begin({
        handler: "handshake",
        via: "request",
        session_id: request.session_id,
        agent_id: request.agent_id,
        handshake: request,
        ...contextFields(ctx),
      })("ok");
    },
    onEvent: (event, ctx) => {
      const finish = log.begin({
        handler: "event",
        via: ctx.batch === undefined ? "request" : "batch",
        ...eventFields(event),
        ...contextFields(ctx),
      });
      return tracked(finish, () =>
        runScript(readScript(event.payload, maxDelayMs), () => ctx.signal, {
          pick: "decision",
          fallback: () => ({ decision: "allow" }),
          echoOf: () => withoutScript(event.payload),
        }),
      ) as Promise<never>;
    },
    onNotification: async (event, ctx) => {
      const finish = log.begin({ handler: "notification", via: "notification", ...eventFields(event), ...contextFields(ctx) });
      await tracked(finish, () =>
        runScript(readScript(event.payload, maxDelayMs), () => ctx.signal, { pick: "decision", fallback: () => undefined }),
      );
    },
  };
  if (config.queryHandler !== false) {
    handlers.onQuery = (query, ctx) => {
      if (query.query_type.startsWith(CONFORMANCE_QUERY_PREFIX)) return reservedQuery(log, query, ctx.signal);
      const finish = log.begin({
        handler: "query",
        via: "request",
        session_id: query.session_id,
        agent_id: query.agent_id,
        query,
        ...contextFields(ctx),
      });
      return tracked(finish, () =>
        runScript(readScript(query.payload, maxDelayMs), () => ctx.signal, {
          pick: "response",
          fallback: () => ({ answer: { query_type: query.query_type, payload: query.payload } }),
        }),
      ) as Promise<never>;
    };
  }
  if (config.typedHandlers === true) {
    const typed: Record<string, TypedEventHandler<SpecializedEventType>> = {};
    for (const type of SPECIALIZED_EVENT_TYPES as readonly SpecializedEventType[]) {
      typed[type] = (_payload, event, ctx) => {
        const finish = log.begin({ handler: "typed", via: "request", ...eventFields(event), ...contextFields(ctx) });
        return tracked(finish, () =>
          runScript(readScript(event.metadata, maxDelayMs), () => ctx.signal, {
            pick: "decision",
            fallback: () => structuredClone(CONFORMANCE_TYPED_DEFAULTS[type]),
          }),
        ) as Promise<never>;
      };
    }
    handlers.typed = typed;
  }
  return handlers;
}

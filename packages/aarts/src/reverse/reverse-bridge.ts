/**
 * The AHP reverse bridge (adapter spec §5.7, §5.9): an `AhpServer` handler set that lets AHP
 * agents be supervised by an AARTS security engine. Toward the engine it is the AARTS host
 * (version check, timeouts, verdict validation, failure policy); toward agents it is an AHP
 * harness advertising exactly the event types it can map.
 */
import {
  AhpError,
  AhpErrorCode,
  AhpServer,
  type AhpEvent,
  type AhpHandlerContext,
  type AhpServerConnection,
  type AhpServerHandlers,
  type AhpServerOptions,
  type DecisionInput,
  type JsonRpcMessage,
  type Transport,
  type TransportSendOptions,
} from "@ahp/core";
import { AARTS_CAPABILITY, AARTS_PACKAGE_VERSION, HOOK_CATALOG, HOST_VERSION_CHECK_MAJOR, type HookPoint } from "../catalog.js";
import { EngineFailure } from "../errors.js";
import { toAhpDecision } from "../bridge/mapping.js";
import type { AartsEngine } from "../host/engine.js";
import { salvageDeny, type FailurePolicy } from "../host/policy.js";
import type { AartsEvent, Verdict } from "../types.js";
import { validateVerdict, validateVersionCheckResponse } from "../validate/index.js";
import { fromAhpEvent } from "./from-ahp.js";

/** Exactly what the reverse bridge advertises (§5.7). */
export const REVERSE_BRIDGE_CAPABILITIES = Object.freeze([
  "pre_action",
  "pre_prompt",
  "post_action",
  "post_response",
  "session_start",
  "session_end",
  "error",
  "heartbeat",
  "success",
  "run_lifecycle",
  "task_list",
  "verification",
  "batch",
  AARTS_CAPABILITY,
]);

/** Event types that are not advertised: requests for them are answered -32601 (§5.7). */
const NOT_ADVERTISED = new Set([
  "idle",
  "intent_detection",
  "context_perception",
  "memory_recall",
  "planning",
  "reasoning",
  "rate_limit",
  "confirmation",
  "query",
  "handshake",
]);

/** A log record of {@link AartsReverseBridge}, delivered through `onlog`. */
export interface ReverseBridgeLogEntry {
  /** `error` for engine failures and a failed version check, `info` for non-`allow` verdicts, `debug` for `allow`. */
  readonly level: "debug" | "info" | "warn" | "error";
  /** Human-readable text. */
  readonly message: string;
  /** The AARTS hook the AHP event was mapped to. */
  readonly hookPoint?: HookPoint;
  /** The engine's verdict, when the record reports one. */
  readonly verdict?: Verdict;
}

/** Options of {@link AartsReverseBridge}. Only `engine` is required. */
export interface ReverseBridgeOptions {
  /** The AARTS engine that decides (version-checked once, on the first event). */
  readonly engine: AartsEngine;
  /** AARTS failure policy for single requests. Default `fail-open`; inside `ahp/batch` failures always block (§5.9). */
  readonly failurePolicy?: FailurePolicy;
  /** Per-hook verdict timeouts; default the catalog's. */
  readonly timeouts?: Partial<Record<HookPoint, number>>;
  /** Events deeper than this are answered with `block` (§5.7). Default 10. */
  readonly maxDepth?: number;
  /** `harness_info` the agents see in the handshake; default name `aarts-reverse-bridge`, this package's version. */
  readonly harnessInfo?: { readonly name?: string; readonly version?: string };
  /** An invalid verdict that still says `deny` is answered as `block`, not as a failure (spec §2.2). Default `true`. */
  readonly salvageMalformedDeny?: boolean;
  /** AARTS major sent in the version check (Q1). Default "0". */
  readonly versionCheckMajor?: string;
  /** Extra AhpServer options (transport limits, `onerror`). */
  readonly server?: Omit<AhpServerOptions, "handlers" | "harnessInfo" | "requireHandshake">;
  /** Receives log records; default: dropped. */
  readonly onlog?: (entry: ReverseBridgeLogEntry) => void;
  /** Clock used as the receipt time of events; default `new Date()`. */
  readonly now?: () => Date;
}

type Outcome = { ok: true; verdict: Verdict } | { ok: false; failure: EngineFailure };

/**
 * The AHP reverse bridge (spec §5.7, §5.9): an AHP harness whose decisions come from an AARTS
 * engine. Agents connect with {@link AartsReverseBridge.connect}; each `pre_action`/`pre_prompt`
 * becomes an AARTS event for the engine and the verdict goes back as an AHP decision (§5.6).
 * Engine failures are answered by the failure policy (`allow` or `block`, with
 * `metadata.aarts.failure`); inside `ahp/batch` they always block. Requests for event types it
 * does not advertise get JSON-RPC -32601.
 */
export class AartsReverseBridge {
  /** The underlying `@ahp/core` server (handshake required; advertises {@link REVERSE_BRIDGE_CAPABILITIES}). */
  readonly server: AhpServer;
  readonly #options: ReverseBridgeOptions;
  #activation?: Promise<EngineFailure | undefined>;
  #engineId = "aarts-engine";

  /** Creates the bridge; the engine is contacted on the first event. */
  constructor(options: ReverseBridgeOptions) {
    this.#options = options;
    this.server = new AhpServer({
      ...(options.server ?? {}),
      harnessInfo: {
        name: options.harnessInfo?.name ?? "aarts-reverse-bridge",
        version: options.harnessInfo?.version ?? AARTS_PACKAGE_VERSION,
        capabilities: [...REVERSE_BRIDGE_CAPABILITIES],
      },
      // max_depth is enforced by the handlers with a `block` decision (§5.7), so it is not given to the core server.
      config: { ...(options.server?.config ?? { timeout_ms: 10_000, batch_size: 100 }), max_depth: null },
      requireHandshake: true,
      handlers: this.handlers(),
    });
  }

  /** The handler set (usable with any AhpServer). */
  handlers(): AhpServerHandlers {
    return {
      onEvent: (event, ctx) => this.#onEvent(event, ctx),
      onNotification: (event, ctx) => this.#onNotification(event, ctx),
    };
  }

  /** Serves one agent connection; requests for event types it does not advertise get -32601. */
  connect(transport: Transport): Promise<AhpServerConnection> {
    return this.server.connect(new AdvertisedTypesGate(transport));
  }

  /** Closes the server and every connection, then the engine. */
  async close(): Promise<void> {
    await this.server.close();
    await this.#options.engine.close?.();
  }

  #log(entry: ReverseBridgeLogEntry): void {
    this.#options.onlog?.(entry);
  }

  #activate(): Promise<EngineFailure | undefined> {
    this.#activation ??= (async () => {
      try {
        const raw = await this.#options.engine.versionCheck({ aarts_version: this.#options.versionCheckMajor ?? HOST_VERSION_CHECK_MAJOR });
        const checked = validateVersionCheckResponse(raw);
        if (!checked.ok) return new EngineFailure("invalid_response", checked.message);
        this.#engineId = checked.value.engine_id;
        if (!checked.value.compatible) {
          this.#log({ level: "error", message: `AARTS engine ${checked.value.engine_id} is not compatible` });
          return new EngineFailure("incompatible", `AARTS engine ${checked.value.engine_id} is not compatible`, {
            engineId: checked.value.engine_id,
          });
        }
        return undefined;
      } catch (error) {
        const failure = EngineFailure.from(error);
        this.#log({ level: "error", message: `AARTS version check failed: ${failure.message}` });
        return new EngineFailure("incompatible", `version check failed: ${failure.message}`, { cause: failure });
      }
    })();
    return this.#activation;
  }

  #toAarts(event: AhpEvent, ctx: AhpHandlerContext): AartsEvent | undefined {
    const agentInfo = ctx.connection.handshake?.agent_info;
    return fromAhpEvent(event, {
      ...(agentInfo === undefined ? {} : { agentInfo }),
      receivedAt: this.#options.now?.() ?? new Date(),
    });
  }

  async #evaluate(aarts: AartsEvent): Promise<Outcome> {
    const inactive = await this.#activate();
    if (inactive !== undefined) return { ok: false, failure: inactive };
    const timeoutMs = this.#options.timeouts?.[aarts.hook_point] ?? HOOK_CATALOG[aarts.hook_point].defaultTimeoutMs ?? 5_000;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let raw: unknown;
    try {
      raw = await Promise.race([
        this.#options.engine.evaluate(aarts, { timeoutMs, signal: controller.signal }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const failure = new EngineFailure("timeout", `no verdict within ${timeoutMs} ms`, { engineId: this.#engineId });
            controller.abort(failure);
            reject(failure);
          }, timeoutMs);
        }),
      ]);
    } catch (error) {
      return { ok: false, failure: EngineFailure.from(error, this.#engineId) };
    } finally {
      clearTimeout(timer);
    }
    const checked = validateVerdict(raw);
    if (checked.ok) return { ok: true, verdict: checked.value };
    if (this.#options.salvageMalformedDeny !== false) {
      const salvaged = salvageDeny(raw, this.#engineId);
      if (salvaged !== undefined) return { ok: true, verdict: salvaged };
    }
    return { ok: false, failure: new EngineFailure("invalid_response", checked.message, { engineId: this.#engineId }) };
  }

  async #onEvent(event: AhpEvent, ctx: AhpHandlerContext): Promise<DecisionInput> {
    const maxDepth = this.#options.maxDepth ?? 10;
    if (event.depth > maxDepth) {
      return { decision: "block", reason: `Event depth ${event.depth} exceeds the maximum depth ${maxDepth}` };
    }
    if (event.event_type !== "pre_action" && event.event_type !== "pre_prompt") {
      // Inside ahp/batch the generic handler also sees non-blocking types: process them as notifications.
      await this.#onNotification(event, ctx);
      return { decision: "allow" };
    }
    const aarts = this.#toAarts(event, ctx);
    if (aarts === undefined) return { decision: "allow" };
    const outcome = await this.#evaluate(aarts);
    if (outcome.ok) {
      this.#log({
        level: outcome.verdict.decision === "allow" ? "debug" : "info",
        message: `${aarts.hook_point}: ${outcome.verdict.decision}`,
        hookPoint: aarts.hook_point,
        verdict: outcome.verdict,
      });
      return toAhpDecision(outcome.verdict) as DecisionInput;
    }
    const failure = outcome.failure;
    this.#log({ level: "error", message: `AARTS engine failure on ${aarts.hook_point}: ${failure.message}`, hookPoint: aarts.hook_point });
    const description = `${failure.failureCause}: ${failure.message}`;
    // The stricter of the AARTS policy and AHP's (fail-closed inside batches), §5.9.
    if (ctx.batch !== undefined) {
      // AHP fails closed inside batches; the marker lets an AARTS-aware agent apply its own policy (Q3).
      return {
        decision: "block",
        reason: `AARTS engine failure (${description})`,
        metadata: { handler_error: true, aarts: { failure: description } },
      };
    }
    if ((this.#options.failurePolicy ?? "fail-open") === "fail-closed") {
      return { decision: "block", reason: `AARTS engine failure (${description})`, metadata: { aarts: { failure: description } } };
    }
    return { decision: "allow", metadata: { aarts: { failure: description } } };
  }

  async #onNotification(event: AhpEvent, ctx: AhpHandlerContext): Promise<void> {
    const maxDepth = this.#options.maxDepth ?? 10;
    if (event.depth > maxDepth) {
      this.#log({ level: "warn", message: `${event.event_type} dropped: depth ${event.depth} exceeds ${maxDepth}` });
      return;
    }
    const aarts = this.#toAarts(event, ctx);
    if (aarts === undefined) {
      this.#log({ level: "debug", message: `${event.event_type} has no AARTS equivalent; dropped` });
      return;
    }
    if (HOOK_CATALOG[aarts.hook_point].blocking === "notification") {
      const inactive = await this.#activate();
      if (inactive !== undefined) {
        this.#log({ level: "warn", message: `${aarts.hook_point} dropped: ${inactive.message}`, hookPoint: aarts.hook_point });
        return;
      }
      try {
        const engine = this.#options.engine;
        await (engine.notify !== undefined ? engine.notify(aarts) : engine.evaluate(aarts));
      } catch (error) {
        this.#log({
          level: "error",
          message: `${aarts.hook_point} notification failed: ${EngineFailure.from(error).message}`,
          hookPoint: aarts.hook_point,
        });
      }
      return;
    }
    // A blocking AARTS hook reached through an AHP notification: the verdict cannot be enforced (§5.11).
    const outcome = await this.#evaluate(aarts);
    if (outcome.ok) {
      this.#log({
        level: outcome.verdict.decision === "allow" ? "debug" : "warn",
        message: `${aarts.hook_point} (from AHP ${event.event_type} notification): ${outcome.verdict.decision}, not enforceable`,
        hookPoint: aarts.hook_point,
        verdict: outcome.verdict,
      });
    } else {
      this.#log({
        level: "error",
        message: `AARTS engine failure on ${aarts.hook_point}: ${outcome.failure.message}`,
        hookPoint: aarts.hook_point,
      });
    }
  }
}

/**
 * A transport wrapper that answers requests for event types the reverse bridge does not
 * advertise (and `ahp/query`) with -32601 before they reach the core server, which would
 * otherwise dispatch them to its typed defaults.
 */
class AdvertisedTypesGate implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly #inner: Transport;

  constructor(inner: Transport) {
    this.#inner = inner;
  }

  get info() {
    return this.#inner.info;
  }

  get sessionId() {
    return this.#inner.sessionId;
  }

  start(): Promise<void> {
    this.#inner.onmessage = (message) => {
      const refusal = refuse(message);
      if (refusal !== undefined) {
        this.#inner.send(refusal).catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
        return;
      }
      this.onmessage?.(message);
    };
    this.#inner.onparseerror = (error) => this.onparseerror?.(error);
    this.#inner.onerror = (error) => this.onerror?.(error);
    this.#inner.onclose = (error) => this.onclose?.(error);
    return this.#inner.start();
  }

  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

function refuse(message: unknown): JsonRpcMessage | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  const id = m.id;
  if (typeof id !== "string" && !(typeof id === "number" && Number.isInteger(id))) return undefined;
  const error = (text: string) => ({ jsonrpc: "2.0" as const, id, error: new AhpError(AhpErrorCode.MethodNotFound, text).toJSON() });
  if (m.method === "ahp/query") return error("Method not found: ahp/query is not supported by the AARTS reverse bridge");
  if (m.method !== "ahp/event") return undefined;
  const params = m.params;
  const type = typeof params === "object" && params !== null ? (params as Record<string, unknown>).event_type : undefined;
  if (typeof type === "string" && NOT_ADVERTISED.has(type)) {
    return error(`Method not found: event type ${type} is not supported by the AARTS reverse bridge`);
  }
  return undefined;
}

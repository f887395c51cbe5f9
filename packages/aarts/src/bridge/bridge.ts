/**
 * The AHP bridge engine (adapter spec §5): the AARTS *engine* toward a host and the AHP
 * *agent* toward a harness. It answers the version check with an AHP handshake, maps each
 * hook onto a core AHP event, and maps the harness's decision back to a verdict. It never turns
 * a harness failure into a verdict: failures reject with {@link EngineFailure} so the host's
 * failure policy decides (spec §2.2).
 */
import { HOLD_GRACE_MS, type Transport } from "@ahp/core";
import {
  AARTS_CAPABILITY,
  AARTS_PACKAGE_VERSION,
  BRIDGE_ENGINE_ID,
  DEFAULT_SUPPORTED_MAJORS,
  HOOK_CATALOG,
  type ConformanceLevel,
  type HookPoint,
} from "../catalog.js";
import { EngineFailure } from "../errors.js";
import type { AartsEngine, EngineWait, EvaluateOptions } from "../host/engine.js";
import type { AartsEvent, Verdict, VersionCheckRequest, VersionCheckResponse } from "../types.js";
import { validateEvent } from "../validate/index.js";
import { fromAhpDecision, OBSERVE_ONLY, toAhpEvent, type ModifyUnsupported } from "./mapping.js";
import { newRequestId, RpcChannel } from "./rpc.js";

/** Every core AHP event type (assumed when the harness advertises no capabilities, §5.2 step 5). */
const CORE_EVENT_TYPES = [
  "pre_action",
  "post_action",
  "pre_prompt",
  "post_response",
  "session_start",
  "session_end",
  "error",
  "query",
  "heartbeat",
  "idle",
  "context_perception",
  "success",
  "memory_recall",
  "planning",
  "reasoning",
  "rate_limit",
  "confirmation",
  "intent_detection",
  "run_lifecycle",
  "task_list",
  "verification",
];

/** A log record of {@link AhpBridge}, delivered through `onlog` (library code does not log itself). */
export interface BridgeLogEntry {
  /** Severity: `error` for a refused or failed handshake, `warn` for local denies, dropped notifications and mapping warnings. */
  readonly level: "debug" | "info" | "warn" | "error";
  /** Human-readable text naming hooks, ids and causes. */
  readonly message: string;
  /** The hook the record is about, when there is one. */
  readonly hookPoint?: HookPoint;
}

/** Options of {@link AhpBridge}. Only `transport` is required; every other option has the default named on it. */
export interface AhpBridgeOptions {
  /** The AHP client transport, or a function that opens one (called at the version check). */
  readonly transport: Transport | (() => Transport | Promise<Transport>);
  /** The harness is reached over the network (HTTP/WebSocket), not stdio/Unix socket (§2.7). */
  readonly remote?: boolean;
  /** Required for a remote harness (§2.7); without it the version check answers incompatible. */
  readonly remoteTransmissionConsent?: boolean;
  /** AARTS majors accepted (Q1). Default `["0","1"]`. */
  readonly supportedMajors?: readonly string[];
  /** Hooks whose AHP modification the host can apply (§5.5). Default none. */
  readonly hostModifiable?: readonly HookPoint[];
  /** What to do with a `modify` the host cannot apply (spec §5.5). Default `deny`. */
  readonly modifyUnsupported?: ModifyUnsupported;
  /** Treat an invalid result that still says `block` as a `deny` instead of a failure (spec §2.2 deny salvage). Default `true`. */
  readonly salvageMalformedDeny?: boolean;
  /** Companion notifications (§5.4.2). Default false. */
  readonly lifecycleNotifications?: boolean;
  /**
   * Lifecycle hooks (SessionStart, PreCompact, and PreOutputDeliver events marked observe-only,
   * e.g. Claude Code's `Stop`) are sent as AHP lifecycle notifications (`session_start`,
   * `heartbeat` with `current_state: "compacting"`, `post_response`) and proceed; with `true` they
   * are `pre_action` gates (`start_session`, `compact_context`, `deliver_output`) a policy can refuse.
   * Default false (ADR 0139).
   */
  readonly lifecycleGates?: boolean;
  /**
   * Announce in each blocking request's `metadata.ahp_wait` how long this client waits (the
   * request's timeout) and what the harness should answer when a hold outlasts it (ADR 0140).
   * A client that announces its wait has a hard outer limit (a hook the host kills): it keeps its
   * own timeout (capped by the advertised one) instead of following the harness's longer hold
   * (ADR 0163). Default: not announced.
   */
  readonly announceWait?: "ask" | "block";
  /** Handshake timeout; default 10 000 ms (§5.2 step 8). */
  readonly handshakeTimeoutMs?: number;
  /** Resend after `defer` this many times (§5.5). Default 0. */
  readonly deferRetries?: number;
  /** `session_id` of the handshake; default a fresh UUID per bridge connection. */
  readonly connectionId?: string;
  /** JSON-RPC request id generator; default a random UUID v4. */
  readonly generateId?: () => string;
  /** Receives the bridge's log records; default: dropped. */
  readonly onlog?: (entry: BridgeLogEntry) => void;
  /** Clock in epoch ms for deadlines and the ask memory; default `Date.now` (inject one in tests). */
  readonly now?: () => number;
}

/** What the bridge learned from the harness's `ahp/handshake` result (spec §5.2); read it from {@link AhpBridge.handshake}. */
export interface BridgeHandshake {
  /** `harness_info.name`; verdicts default to source `ahp:<harnessName>`. */
  readonly harnessName: string;
  /** `harness_info.version`, reported as the version check's `engine_version`. */
  readonly harnessVersion?: string;
  /** `protocol_version` the harness answered (a 2.x version). */
  readonly protocolVersion: string;
  /** Event types the harness advertised; every core AHP event type when it advertised none (spec §5.2 step 5). */
  readonly capabilities: ReadonlySet<string>;
  /**
   * `config.timeout_ms`: caps every hook's timeout when positive (spec §5.2); one above
   * {@link HOLD_ADVERTISED_ABOVE_MS} says the harness may hold a decision for a person that long,
   * and the bridge waits it plus `HOLD_GRACE_MS` (ADR 0145, 0163).
   */
  readonly timeoutMs?: number;
  /** `config.max_depth`: events from deeper sub-agents get a local `deny` (category `depth_limit`). */
  readonly maxDepth?: number;
  /** `config.batch_size` as advertised (informative; the bridge sends one event per request). */
  readonly batchSize?: number;
  /** The harness echoed `aarts/0.1` (D5). */
  readonly aartsAware: boolean;
}

const ASK_MEMORY_MS = 60 * 60 * 1000;
/**
 * An advertised `timeout_ms` above this (AHP's default, which every harness advertises) says the
 * harness may hold decisions for a person (`ahp serve --agent-host` advertises its approval
 * timeout + 2 s); up to it, it is the spec's cap on each hook's timeout (ADR 0163).
 */
export const HOLD_ADVERTISED_ABOVE_MS = 10_000;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const optNumber = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);

/** Achievable level from harness capabilities (§5.2 step 7). */
export function bridgeLevel(capabilities: ReadonlySet<string>): ConformanceLevel | "none" {
  if (!capabilities.has("pre_action")) return "none";
  if (!capabilities.has("pre_prompt") || !capabilities.has("post_action")) return "basic";
  return capabilities.has("session_end") ? "comprehensive" : "standard";
}

/**
 * The AHP bridge engine (spec §5): plug it into an {@link AartsHost} as its engine to have an AHP
 * harness decide AARTS hooks. {@link AhpBridge.versionCheck} performs the AHP handshake;
 * {@link AhpBridge.evaluate} sends each blocking hook as an `ahp/event` request and maps the
 * decision to a verdict; {@link AhpBridge.notify} sends Notification hooks. Harness failures are
 * never turned into verdicts: they reject with {@link EngineFailure} so the host's failure policy decides.
 */
export class AhpBridge implements AartsEngine {
  readonly #options: AhpBridgeOptions;
  #rpc?: RpcChannel;
  #handshake?: BridgeHandshake;
  readonly #depths = new Map<string, number>();
  readonly #asks = new Map<string, { requestId: string | number; expires: number }>();

  /** Creates the bridge; nothing connects until {@link AhpBridge.versionCheck}. */
  constructor(options: AhpBridgeOptions) {
    this.#options = options;
  }

  /** The harness as seen in the handshake, once it succeeded. */
  get handshake(): BridgeHandshake | undefined {
    return this.#handshake;
  }

  /** Achievable conformance level (§5.2 step 7); `none` before a successful handshake. */
  get level(): ConformanceLevel | "none" {
    return this.#handshake === undefined ? "none" : bridgeLevel(this.#handshake.capabilities);
  }

  get #engineId(): string {
    return this.#handshake === undefined ? BRIDGE_ENGINE_ID : `ahp:${this.#handshake.harnessName}`;
  }

  #log(entry: BridgeLogEntry): void {
    this.#options.onlog?.(entry);
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  #incompatible(): VersionCheckResponse {
    return { compatible: false, engine_id: BRIDGE_ENGINE_ID, engine_version: AARTS_PACKAGE_VERSION };
  }

  /** AARTS version check ↔ AHP handshake (§5.2). Never throws. */
  async versionCheck(request: VersionCheckRequest): Promise<VersionCheckResponse> {
    const version = typeof request?.aarts_version === "string" ? request.aarts_version : "";
    const major = version.split(".")[0] ?? "";
    if (!(this.#options.supportedMajors ?? DEFAULT_SUPPORTED_MAJORS).includes(major)) {
      this.#log({ level: "warn", message: `AARTS version ${JSON.stringify(version)} is not supported` });
      return this.#incompatible();
    }
    if (this.#options.remote === true && this.#options.remoteTransmissionConsent !== true) {
      this.#log({ level: "error", message: "remote harness refused: remoteTransmissionConsent is not set (AARTS §10 privacy rule)" });
      return this.#incompatible();
    }
    // A repeated version check starts over on a fresh connection.
    const previous = this.#rpc;
    this.#rpc = undefined;
    this.#handshake = undefined;
    await previous?.close();
    try {
      const transport = typeof this.#options.transport === "function" ? await this.#options.transport() : this.#options.transport;
      const rpc = new RpcChannel(transport, {
        engineId: BRIDGE_ENGINE_ID,
        ...(this.#options.generateId === undefined ? {} : { generateId: this.#options.generateId }),
        onerror: (error) => this.#log({ level: "debug", message: `transport: ${error.message}` }),
      });
      this.#rpc = rpc;
      const capabilities = ["pre_action", "pre_prompt", "post_action", "session_end", AARTS_CAPABILITY];
      if (this.#options.lifecycleNotifications) capabilities.push("session_start", "post_response");
      const { result } = await rpc.request(
        "ahp/handshake",
        {
          protocol_version: "2.4",
          agent_info: { framework: BRIDGE_ENGINE_ID, version: AARTS_PACKAGE_VERSION, capabilities },
          session_id: this.#options.connectionId ?? newRequestId(),
          agent_id: BRIDGE_ENGINE_ID,
        },
        { timeoutMs: this.#options.handshakeTimeoutMs ?? 10_000 },
      );
      const handshake = parseHandshake(result);
      if (typeof handshake === "string") throw new EngineFailure("protocol", `malformed handshake response: ${handshake}`);
      if (!handshake.capabilities.has("pre_action")) {
        this.#log({ level: "error", message: `harness ${handshake.harnessName} does not support pre_action` });
        return this.#incompatible();
      }
      this.#handshake = handshake;
      return {
        compatible: true,
        engine_id: `ahp:${handshake.harnessName}`,
        ...(handshake.harnessVersion === undefined ? {} : { engine_version: handshake.harnessVersion }),
      };
    } catch (error) {
      const failure = EngineFailure.from(error, BRIDGE_ENGINE_ID);
      this.#log({ level: "error", message: `AHP handshake failed: ${failure.message}` });
      // An unreachable harness is not an incompatible one: the caller reports why it failed.
      if (failure.failureCause === "transport") throw failure;
      return this.#incompatible();
    }
  }

  /** Nesting depth of an event (§5.4.1). */
  depthOf(event: AartsEvent): number {
    const recorded = this.#depths.get(event.session_id);
    if (recorded !== undefined) return recorded;
    const e = event as { parent_session_id?: unknown; is_sub_agent?: unknown };
    if (typeof e.parent_session_id === "string") {
      const parent = this.#depths.get(e.parent_session_id);
      if (parent !== undefined) return parent + 1;
    }
    return e.is_sub_agent === true ? 1 : 0;
  }

  #ready(): { rpc: RpcChannel; handshake: BridgeHandshake } {
    if (this.#rpc === undefined || this.#handshake === undefined) {
      throw new EngineFailure("incompatible", "no usable harness: the version check did not succeed", { engineId: BRIDGE_ENGINE_ID });
    }
    return { rpc: this.#rpc, handshake: this.#handshake };
  }

  /**
   * How long to wait for the harness's decision on a blocking hook given `ownTimeoutMs` (the
   * host's per-hook limit, or the catalog default), ADR 0145 and 0163: a harness advertising a
   * `timeout_ms` up to {@link HOLD_ADVERTISED_ABOVE_MS} caps the wait (spec §5.2); one advertising
   * more may hold the decision for a person, and the wait is that plus `HOLD_GRACE_MS` (for the
   * answer's way back) when longer than the own limit, `held` so that an expiry is never read as
   * a broken harness (never the failure policy's allow). With `announceWait` (a hard outer limit)
   * the own limit stays, capped by the advertised value. Before a handshake: the own limit.
   */
  waitFor(_hookPoint: HookPoint, ownTimeoutMs: number): EngineWait {
    const advertised = this.#handshake?.timeoutMs;
    const unlimited = !(ownTimeoutMs > 0) || !Number.isFinite(ownTimeoutMs);
    if (advertised === undefined || advertised <= 0) return { timeoutMs: ownTimeoutMs, held: false };
    if (advertised <= HOLD_ADVERTISED_ABOVE_MS || this.#options.announceWait !== undefined) {
      return { timeoutMs: unlimited ? advertised : Math.min(ownTimeoutMs, advertised), held: false };
    }
    return { timeoutMs: unlimited ? ownTimeoutMs : Math.max(ownTimeoutMs, advertised + HOLD_GRACE_MS), held: true };
  }

  /**
   * Evaluates a blocking hook (Required / Recommended) and resolves with the mapped verdict
   * (spec §5.3–§5.5). Resolves with a local `deny` (category `depth_limit`) when the event's
   * depth exceeds the harness's `max_depth`. Rejects with {@link EngineFailure}: `invalid_event`
   * (the event does not validate, or is a Notification hook), `incompatible` (no successful
   * version check), `uncovered_hook` (the harness lacks the capability the hook needs), or
   * `timeout`, `transport`, `protocol`, `engine_error`, `invalid_response` from the exchange.
   * The wait is {@link AhpBridge.waitFor} of `options.timeoutMs` (default: the catalog's timeout
   * of the hook); a `timeout` of a decision the harness may hold for a person says so.
   */
  async evaluate(raw: AartsEvent, options: EvaluateOptions = {}): Promise<Verdict> {
    const checked = validateEvent(raw);
    if (!checked.ok) throw new EngineFailure("invalid_event", checked.message, { engineId: this.#engineId });
    const event = checked.value;
    const info = HOOK_CATALOG[event.hook_point];
    if (info.blocking === "notification") {
      throw new EngineFailure("invalid_event", `${event.hook_point} is a Notification hook; use notify()`, { engineId: this.#engineId });
    }
    const { rpc, handshake } = this.#ready();
    const engineId = this.#engineId;
    const depth = this.depthOf(event);
    if (handshake.maxDepth !== undefined && depth > handshake.maxDepth) {
      this.#log({
        level: "warn",
        message: `depth ${depth} exceeds the harness max_depth ${handshake.maxDepth}: local deny`,
        hookPoint: event.hook_point,
      });
      return {
        decision: "deny",
        category: "depth_limit",
        severity: "warning",
        source: BRIDGE_ENGINE_ID,
        reasons: [`Agent nesting depth ${depth} exceeds the harness limit of ${handshake.maxDepth}`],
      };
    }
    if (!handshake.capabilities.has(info.ahp.capability)) {
      throw new EngineFailure(
        "uncovered_hook",
        `harness ${handshake.harnessName} lacks ${info.ahp.capability}, needed by ${event.hook_point}`,
        { engineId },
      );
    }
    const lifecycle = this.#options.lifecycleGates === true ? undefined : lifecycleNotification(event);
    if (lifecycle !== undefined) {
      const params = toAhpEvent(event, { depth }).params;
      await rpc.notify("ahp/event", {
        ...params,
        event_type: lifecycle.eventType,
        payload: { ...params.payload, ...lifecycle.payload },
        metadata: { ...params.metadata, aarts: { ...params.metadata.aarts, blocking: "notification" } },
      });
      return {
        decision: "allow",
        category: "none",
        severity: "info",
        source: this.#engineId,
        reasons: [`${event.hook_point} sent as ${lifecycle.eventType} (lifecycle notification)`],
      };
    }
    const message = toAhpEvent(event, { depth });
    // Companions (§5.4.2) are an explicit opt-in; they are sent whether or not the harness advertised the type.
    if (this.#options.lifecycleNotifications && event.hook_point === "SessionStart") {
      await this.#companion(rpc, { ...message.params, event_type: "session_start" }, event.hook_point);
    }
    const wait = this.waitFor(event.hook_point, options.timeoutMs ?? info.defaultTimeoutMs ?? 5_000);
    const timeoutMs = wait.timeoutMs > 0 ? wait.timeoutMs : Number.POSITIVE_INFINITY;
    if (this.#options.announceWait !== undefined && Number.isFinite(timeoutMs)) {
      message.params.metadata.ahp_wait = { max_ms: Math.max(1, Math.floor(timeoutMs)), on_timeout: this.#options.announceWait };
    }
    const deadline = this.#now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const remaining = Number.isFinite(deadline) ? Math.max(1, deadline - this.#now()) : 0;
      const { id, result } = await rpc
        .request("ahp/event", message.params, {
          timeoutMs: remaining,
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        })
        .catch((error: unknown) => {
          if (!wait.held || !EngineFailure.isInstance(error) || error.failureCause !== "timeout") throw error;
          throw new EngineFailure("timeout", `nobody answered within ${timeoutMs} ms (the harness holds this decision for a person)`, {
            engineId,
            cause: error,
          });
        });
      const mapped = fromAhpDecision(result, {
        hookPoint: event.hook_point,
        requestId: id,
        eventType: message.params.event_type,
        harnessName: handshake.harnessName,
        ...(this.#options.hostModifiable === undefined ? {} : { hostModifiable: this.#options.hostModifiable }),
        ...(this.#options.modifyUnsupported === undefined ? {} : { modifyUnsupported: this.#options.modifyUnsupported }),
        ...(this.#options.salvageMalformedDeny === undefined ? {} : { salvageMalformedDeny: this.#options.salvageMalformedDeny }),
      });
      for (const warning of mapped.warnings) this.#log({ level: "warn", message: warning, hookPoint: event.hook_point });
      if (mapped.kind === "defer" && attempt < (this.#options.deferRetries ?? 0)) {
        const wait = mapped.retryAfterMs ?? 0;
        if (this.#now() + wait < deadline) {
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
      }
      await this.#after(event, mapped.verdict, mapped.kind, id, depth, rpc, message.params);
      return mapped.verdict;
    }
  }

  async #after(
    event: AartsEvent,
    verdict: Verdict,
    kind: string,
    requestId: string | number,
    depth: number,
    rpc: RpcChannel,
    params: ReturnType<typeof toAhpEvent>["params"],
  ): Promise<void> {
    if (event.hook_point === "PreSubAgentSpawn" && verdict.decision === "allow") {
      this.#depths.set(event.sub_agent_id, depth + 1);
    }
    if (kind === "escalate" || verdict.decision === "ask") {
      const turn = (event as { turn_id?: string }).turn_id ?? "";
      this.#asks.set(askKey(event.session_id, turn, event.hook_point), { requestId, expires: this.#now() + ASK_MEMORY_MS });
    }
    if (!this.#options.lifecycleNotifications) return;
    if (event.hook_point === "PostToolUse") {
      const result: Record<string, unknown> = {
        status: event.exit_code === undefined || event.exit_code === 0 ? "success" : "failure",
        output: event.tool_result,
      };
      if (event.exit_code !== undefined) result.exit_code = event.exit_code;
      if (event.execution_duration_ms !== undefined) result.duration_ms = event.execution_duration_ms;
      await this.#companion(
        rpc,
        {
          ...params,
          event_type: "post_action",
          payload: { action_type: "tool_call", tool_name: event.tool_name, arguments: event.tool_input, result },
        },
        event.hook_point,
      );
    }
    if (event.hook_point === "PostLLMResponse") {
      await this.#companion(rpc, { ...params, event_type: "post_response", payload: { response: event.response_text } }, event.hook_point);
    }
  }

  async #companion(rpc: RpcChannel, params: unknown, hookPoint: HookPoint): Promise<void> {
    try {
      await rpc.notify("ahp/event", params);
    } catch (error) {
      this.#log({ level: "warn", message: `companion notification failed: ${EngineFailure.from(error).message}`, hookPoint });
    }
  }

  /**
   * Sends a Notification hook (SessionEnd, PostAskResolution). Rejects with an EngineFailure
   * when it cannot be sent (the host logs it); drops it (logged) when the harness lacks the
   * capability or the depth is over the limit.
   */
  async notify(raw: AartsEvent): Promise<void> {
    const checked = validateEvent(raw);
    if (!checked.ok) throw new EngineFailure("invalid_event", checked.message, { engineId: this.#engineId });
    const event = checked.value;
    const info = HOOK_CATALOG[event.hook_point];
    if (info.blocking !== "notification") {
      throw new EngineFailure("invalid_event", `${event.hook_point} is a blocking hook; use evaluate()`, { engineId: this.#engineId });
    }
    const { rpc, handshake } = this.#ready();
    if (!handshake.capabilities.has(info.ahp.capability)) {
      this.#log({
        level: "info",
        message: `${event.hook_point} dropped: harness lacks ${info.ahp.capability}`,
        hookPoint: event.hook_point,
      });
      return;
    }
    const depth = this.depthOf(event);
    if (handshake.maxDepth !== undefined && depth > handshake.maxDepth) {
      this.#log({
        level: "warn",
        message: `${event.hook_point} dropped: depth ${depth} exceeds max_depth ${handshake.maxDepth}`,
        hookPoint: event.hook_point,
      });
      return;
    }
    let extraPayload: Record<string, unknown> | undefined;
    if (event.hook_point === "PostAskResolution") {
      const remembered = this.#takeAsk(event.session_id, event.turn_id, event.original_hook_point);
      const fromVerdict = event.original_verdict.directives?.["x-ahp"]?.request_id;
      const askId = remembered ?? fromVerdict;
      if (askId !== undefined) extraPayload = { ask_request_id: askId };
    }
    const message = toAhpEvent(event, { depth, ...(extraPayload === undefined ? {} : { extraPayload }) });
    await rpc.notify("ahp/event", message.params);
  }

  #takeAsk(sessionId: string, turnId: string, hookPoint: HookPoint): string | number | undefined {
    const now = this.#now();
    for (const [key, entry] of this.#asks) if (entry.expires <= now) this.#asks.delete(key);
    const key = askKey(sessionId, turnId, hookPoint);
    const entry = this.#asks.get(key);
    if (entry === undefined) return undefined;
    this.#asks.delete(key);
    return entry.requestId;
  }

  /** Closes the connection to the harness; pending requests fail with `transport`. */
  async close(): Promise<void> {
    await this.#rpc?.close();
  }
}

/** The AHP lifecycle notification a lifecycle hook becomes (option `lifecycleGates` off), if it is one. */
export function lifecycleNotification(event: AartsEvent): { eventType: string; payload: Record<string, unknown> } | undefined {
  const source = event as Record<string, unknown>;
  switch (event.hook_point) {
    case "SessionStart":
      return { eventType: "session_start", payload: { session_id: event.session_id } };
    case "PreCompact":
      return { eventType: "heartbeat", payload: { current_state: "compacting" } };
    case "PreOutputDeliver":
      return source[OBSERVE_ONLY] === true ? { eventType: "post_response", payload: { response: source.output_text } } : undefined;
    default:
      return undefined;
  }
}

const askKey = (sessionId: string, turnId: string, hookPoint: string) => `${sessionId}\u0000${turnId}\u0000${hookPoint}`;

/** Checks a handshake result (§5.2 step 5); returns the problem as a string when malformed. */
export function parseHandshake(result: unknown): BridgeHandshake | string {
  if (!isRecord(result)) return "result is not an object";
  const version = result.protocol_version;
  if (typeof version !== "string") return "protocol_version missing";
  if (version.split(".")[0] !== "2") return `protocol_version ${JSON.stringify(version)} is not 2.x`;
  const info = result.harness_info;
  if (!isRecord(info) || typeof info.name !== "string") return "harness_info.name missing";
  const advertised = Array.isArray(info.capabilities) ? info.capabilities.filter((c): c is string => typeof c === "string") : [];
  const capabilities = new Set(advertised.length === 0 ? CORE_EVENT_TYPES : advertised);
  const config = isRecord(result.config) ? result.config : {};
  const timeoutMs = optNumber(config.timeout_ms);
  const maxDepth = optNumber(config.max_depth);
  const batchSize = optNumber(config.batch_size);
  return {
    harnessName: info.name,
    ...(typeof info.version === "string" ? { harnessVersion: info.version } : {}),
    protocolVersion: version,
    capabilities,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(maxDepth === undefined ? {} : { maxDepth }),
    ...(batchSize === undefined ? {} : { batchSize }),
    aartsAware: advertised.includes(AARTS_CAPABILITY),
  };
}

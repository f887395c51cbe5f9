/**
 * The downstream face: the bridge is an ACP client to a real agent. Connects through the SDK's
 * client app (in memory or any `Stream`), initializes once, remembers what the agent
 * advertised, chooses the suspend carriage (§6.2: first-class, tunnel, emulation, cancel, each
 * `-32601` remembered), re-attaches sessions after the agent was restarted (§6.5), and hands
 * everything the agent sends to the bridge.
 */
import {
  client,
  PROTOCOL_VERSION,
  type AgentApp,
  type ClientConnection,
  type ClientContext,
  type InitializeRequest,
  type InitializeResponse,
  type Stream,
} from "@agentclientprotocol/sdk";
import { META, METHODS } from "./constants.js";
import { isMethodNotFound } from "./errors.js";
import { keyCount } from "./internal.js";
import { DIRECT_WRITER, RAW_READER, type DirectStream, type RawReadableStream } from "./node-stream.js";
import { routeSdkSends } from "./sdk-sends.js";

/** The real agent the bridge talks to: an ACP byte stream (a child process, a socket) or an SDK agent app in the same process. */
export type DownstreamTarget = Stream | AgentApp;
/** Opens a connection to the agent; called again to restart it after it died. */
export type DownstreamConnector = () => DownstreamTarget | Promise<DownstreamTarget>;

/**
 * What the bridge does with the traffic of its agent connection: updates, requests, other
 * notifications, the end of the connection.
 */
export interface DownstreamHooks {
  /** A raw `session/update` (unparsed: non-standard updates such as Harn's `worker_update` arrive too). */
  onUpdate(params: unknown, line?: string): void;
  /** Any request the agent sends (permission, fs, terminal, await_resumption, extensions). */
  onRequest(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  onNotification(method: string, params: unknown): void;
  /** The connection to the agent ended (its process died, the stream closed). */
  onClose(error: unknown): void;
}

/** What the agent advertised, as the bridge uses it. */
export interface DownstreamCaps {
  loadSession: boolean;
  resume: boolean;
  close: boolean;
  delete: boolean;
  /** `agentCapabilities._meta["ahpHarness/suspend"]` (or the response root's), when present. */
  suspend?: Record<string, unknown>;
  /** Root RFC flags or `firstClass` in the descriptor. */
  firstClass: boolean;
}

/**
 * How {@link DownstreamAgent.suspendCarriage} suspended the agent's session: the agent's
 * first-class or tunnel method with its result, or emulation (cancel at a boundary), or cancel
 * only.
 */
export type CarriageResult = { kind: "first_class" | "tunnel"; result: Record<string, unknown> } | { kind: "emulate" } | { kind: "cancel" };

const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * Reads what an agent advertised in its `initialize` result, as the bridge uses it (load, resume,
 * close, delete, the suspend descriptor).
 */
export function readAgentCaps(response: InitializeResponse): DownstreamCaps {
  const caps = obj(response.agentCapabilities) ?? {};
  const sessionCaps = obj(caps.sessionCapabilities) ?? {};
  const descriptor = obj(obj(caps._meta)?.[META.suspend]) ?? obj(obj(response._meta)?.[META.suspend]);
  const has = (v: unknown) => v !== undefined && v !== null;
  return {
    loadSession: caps.loadSession === true,
    resume: has(sessionCaps.resume),
    close: has(sessionCaps.close),
    delete: has(sessionCaps.delete),
    ...(descriptor === undefined ? {} : { suspend: descriptor }),
    firstClass: caps.supportsSuspend === true || descriptor?.firstClass === true,
  };
}

/** Options of the agent connection. */
export interface DownstreamOptions {
  /** Try `session/suspend` and the tunnel even when the agent did not advertise them (each `-32601` is remembered). */
  probeUnadvertised?: boolean;
}

/**
 * The bridge as an ACP client of the real agent: opens and initializes the connection (again after
 * the agent died), remembers the agent's capabilities and the methods it lacks, and picks the
 * suspend carriage.
 */
export class DownstreamAgent {
  readonly #connect: DownstreamConnector;
  readonly #hooks: DownstreamHooks;
  readonly #options: DownstreamOptions;
  #connection: ClientConnection | undefined;
  #initParams: InitializeRequest | undefined;
  #init: InitializeResponse | undefined;
  #caps: DownstreamCaps | undefined;
  #starting: Promise<InitializeResponse> | undefined;
  /** Methods the agent answered with `-32601` on this connection. */
  readonly #missing = new Set<string>();
  #generation = 0;
  #rawUpdates = false;

  constructor(connect: DownstreamConnector, hooks: DownstreamHooks, options: DownstreamOptions = {}) {
    this.#connect = connect;
    this.#hooks = hooks;
    this.#options = options;
  }

  get alive(): boolean {
    return this.#connection !== undefined && !this.#connection.signal.aborted;
  }

  /**
   * True when the agent's updates reach the bridge at read time (a stream of ours): an update
   * read before a response has then been handled before that response resolves.
   */
  get rawUpdates(): boolean {
    return this.#rawUpdates;
  }

  /** Increments each time a new connection to the agent is opened. */
  get generation(): number {
    return this.#generation;
  }

  get caps(): DownstreamCaps {
    return this.#caps ?? { loadSession: false, resume: false, close: false, delete: false, firstClass: false };
  }

  get initializeResponse(): InitializeResponse | undefined {
    return this.#init;
  }

  get ctx(): ClientContext {
    if (this.#connection === undefined || this.#connection.signal.aborted) throw new Error("the agent is not connected");
    return this.#connection.agent;
  }

  /** Connects and initializes once; later calls return the same answer while the agent lives. */
  start(params: InitializeRequest): Promise<InitializeResponse> {
    this.#initParams ??= params;
    if (this.alive && this.#init !== undefined) return Promise.resolve(this.#init);
    this.#starting ??= this.#open().finally(() => (this.#starting = undefined));
    return this.#starting;
  }

  /** Starts a new agent connection (after the old one died) with the first initialize params. */
  restart(): Promise<InitializeResponse> {
    if (this.#initParams === undefined) return Promise.reject(new Error("the agent was never initialized"));
    return this.start(this.#initParams);
  }

  async #open(): Promise<InitializeResponse> {
    const hooks = this.#hooks;
    const app = client({ name: "ahp-acp-bridge" })
      .onNotification("*", ({ method, params }) => {
        if (method === "session/update") hooks.onUpdate(params);
        else hooks.onNotification(method, params);
      })
      .onRequest("*", ({ method, params, signal }) => hooks.onRequest(method, params, signal));
    const target = await this.#connect();
    // Over a stream of ours, `session/update` skips the SDK: handed over raw at read time, in
    // wire order, without the SDK client's schema parse of every update (ADR 0090).
    const rawReader = (target as Partial<RawReadableStream>)[RAW_READER];
    if (typeof rawReader === "function") {
      rawReader((message, line) => {
        if (message.method !== "session/update" || "id" in message) return false;
        try {
          // The line may be passed on as it came only when it holds nothing but the notification.
          const bare = message.jsonrpc === "2.0" && keyCount(message) === 3;
          hooks.onUpdate(message.params, bare ? line : undefined);
        } catch {
          // the bridge reports its own failures; the stream must go on
        }
        return true;
      });
    }
    this.#rawUpdates = typeof rawReader === "function";
    const connection = app.connect(target as Stream);
    // Over a stream of ours, the requests and notifications to the agent skip the SDK's write
    // chain whenever nothing is queued in it (ADR 0111).
    const direct = (target as Partial<DirectStream>)[DIRECT_WRITER];
    if (direct !== undefined) routeSdkSends(connection, direct);
    this.#connection = connection;
    this.#missing.clear();
    this.#generation++;
    void connection.closed.then(
      () => this.#closed(connection, undefined),
      (error: unknown) => this.#closed(connection, error),
    );
    const init = await connection.agent.request("initialize", this.#initParams ?? { protocolVersion: PROTOCOL_VERSION });
    this.#init = init;
    this.#caps = readAgentCaps(init);
    return init;
  }

  #closed(connection: ClientConnection, error: unknown): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    this.#hooks.onClose(error ?? connection.signal.reason);
  }

  request<R = unknown>(method: string, params: unknown, signal?: AbortSignal): Promise<R> {
    return this.ctx.request<R>(method, params, signal === undefined ? undefined : { cancellationSignal: signal });
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.ctx.notify(method, params);
  }

  /** §6.2: asks the agent to suspend through the best carriage it has, or says to emulate. */
  async suspendCarriage(params: Record<string, unknown>): Promise<CarriageResult> {
    const caps = this.caps;
    const probe = this.#options.probeUnadvertised === true;
    const steps: Array<["first_class" | "tunnel", string, boolean]> = [
      ["first_class", METHODS.suspend, caps.firstClass],
      ["tunnel", METHODS.tunnelSuspend, caps.suspend?.supportsSuspend === true],
    ];
    for (const [kind, method, advertised] of steps) {
      if (!(advertised || probe) || this.#missing.has(method)) continue;
      try {
        return { kind, result: await this.request<Record<string, unknown>>(method, params) };
      } catch (error) {
        if (!isMethodNotFound(error)) throw error;
        this.#missing.add(method);
      }
    }
    return caps.resume || caps.loadSession || this.alive ? { kind: "emulate" } : { kind: "cancel" };
  }

  /** True when the agent answered `method` with `-32601` on this connection. */
  lacks(method: string): boolean {
    return this.#missing.has(method);
  }

  /**
   * Makes the agent hold `sessionId` again after it lost it: `session/resume` (no replay) or
   * `session/load` (the replay is discarded by the caller). `cwd` is always sent (§6.4).
   */
  async reattach(
    sessionId: string,
    cwd: string,
    mcpServers: unknown[],
    additionalDirectories: string[] | undefined,
    meta?: Record<string, unknown>,
  ): Promise<"resume" | "load"> {
    const base: Record<string, unknown> = { sessionId, cwd, mcpServers };
    if (additionalDirectories !== undefined) base.additionalDirectories = additionalDirectories;
    if (meta !== undefined) base._meta = meta;
    if (this.caps.resume) {
      await this.request("session/resume", base);
      return "resume";
    }
    if (this.caps.loadSession) {
      await this.request("session/load", base);
      return "load";
    }
    throw new Error("the agent supports neither session/resume nor session/load; the session cannot be re-attached");
  }

  close(): void {
    this.#connection?.close();
    this.#connection = undefined;
  }
}

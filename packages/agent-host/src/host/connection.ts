/**
 * One Agent Host client connection (spec §3–§5): text frames only, limits, JSON-RPC routing by
 * `(method, params.channel)`, initialize/reconnect with `clientId` bound to the principal,
 * subscriptions, `dispatchAction`, and a bounded outbound buffer.
 */
import type { Writable } from "node:stream";
import type { WebSocket, RawData } from "ws";
import { channelKind } from "../reducers/index.js";
import { AgentHostErrorCode as E, META, ROOT_URI, SUPPORTED_PROTOCOL_VERSIONS, TELEMETRY_LOGS_TEMPLATE } from "../wire/constants.js";
import { classify, decodeFrame, encodeFrame, failure, LimitError, success, WireError } from "../wire/codec.js";
import type { JsonRpcId, Snapshot, URI } from "../wire/types.js";
import { negotiateProtocolVersion, unsupportedVersionData } from "../wire/version.js";
import type { Dispatcher, Role } from "./approvals.js";
import type { Principal } from "./auth.js";
import type { HostContext } from "./context.js";
import { FLUSH_BYTES, joinFrames, textFrame, type Flusher, type Outbox, type OutFrame, type SharedBatch } from "./fanout.js";
import type { FrameSink } from "./store.js";
import { telemetryFloor } from "./telemetry.js";

const err = (code: number, message: string, data?: unknown) => new WireError(code, message, data);
const CONNECTION_METHODS = new Set(["initialize", "ping", "reconnect", "listSessions"]);
const EMPTY_ITEMS = new Set(["completions", "sessionConfigCompletions"]);
const NOT_SERVED = new Set([
  "createSession",
  "createChat",
  "disposeChat",
  "createTerminal",
  "disposeTerminal",
  "invokeChangesetOperation",
  "createResourceWatch",
  "authenticate",
]);

export class ClientConnection implements FrameSink, Outbox {
  readonly subscriptions = new Set<URI>();
  clientId?: string;
  protocolVersion?: string;
  #initialized = false;
  #closed = false;
  #parseErrors = 0;
  #windowStart = 0;
  #windowCount = 0;
  #queue: Buffer[] = [];
  #queuedBytes = 0;
  /** `ws.bufferedAmount` when the current queue was started. */
  #written = 0;

  constructor(
    readonly id: number,
    readonly ws: WebSocket,
    readonly who: Principal,
    readonly host: HostContext,
    /** The socket under `ws`: queued frames are written to it directly, already WebSocket-framed. */
    readonly raw?: Writable,
    /** Writes the queued frames of every connection at the end of a turn; without it, frames go through `ws.send`. */
    readonly flusher?: Flusher,
  ) {
    ws.on("message", (data: RawData, isBinary: boolean) => this.#onFrame(data, isBinary));
    ws.on("error", (error) => host.report(error));
  }

  get initialized(): boolean {
    return this.#initialized;
  }

  get role(): Role {
    return this.who.role;
  }

  /**
   * Queues one encoded message (always a text frame). The frames queued in one event-loop turn
   * leave in one socket write at the end of that turn (see fanout.ts). A peer whose unsent data
   * (written but not taken, plus queued) passes the limit is closed with 1008.
   */
  send(frame: OutFrame | string): void {
    if (this.#closed || this.ws.readyState !== 1) return;
    // The limit is on data the peer has not taken yet; one frame is always accepted onto an empty-enough buffer.
    // Nothing is written to the socket while frames are queued, so the socket's backlog is read once per queue.
    if (this.#queue.length === 0) this.#written = this.ws.bufferedAmount;
    if (this.#written + this.#queuedBytes > this.host.limits.maxOutboundBytes) {
      this.close(1008, "outbound buffer limit exceeded", true);
      return;
    }
    const raw = this.raw;
    if (raw === undefined || this.flusher === undefined) {
      this.ws.send(typeof frame === "string" ? frame : frame.text, { binary: false });
      return;
    }
    const wire = typeof frame === "string" ? textFrame(frame) : frame.wire;
    this.#queue.push(wire);
    this.#queuedBytes += wire.length;
    if (this.#queue.length === 1) this.flusher.enqueue(this);
    if (this.#queuedBytes >= FLUSH_BYTES) this.flusher.soon();
  }

  /** Writes the queued frames to the socket in one write. @internal */
  flush(shared: SharedBatch = {}): void {
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    this.#queuedBytes = 0;
    const raw = this.raw!;
    if (this.ws.readyState !== 1 || raw.destroyed || !raw.writable) return;
    raw.write(joinFrames(queue, shared));
  }

  /** Frames queued and not yet written. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Closes the socket; `hard` also cuts it after a short grace when the peer does not read. */
  close(code: number, reason: string, hard = false): void {
    if (this.#closed) return;
    // Frames queued before the close leave before the close frame; a peer cut for not reading gets none.
    if (hard) {
      this.#queue = [];
      this.#queuedBytes = 0;
    } else this.flush();
    this.#closed = true;
    this.host.closing(this, code, reason);
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    if (hard) {
      const timer = setTimeout(() => this.ws.terminate(), 1000);
      timer.unref?.();
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  #reply(id: JsonRpcId, result: unknown): void {
    this.send(encodeFrame(success(id, result)));
  }

  #fail(id: JsonRpcId | null, error: WireError): void {
    this.send(encodeFrame(failure(id, error.toJSON())));
  }

  #onFrame(data: RawData, isBinary: boolean): void {
    if (this.#closed) return;
    if (isBinary) {
      this.close(1003, "binary frames are not supported");
      return;
    }
    const buffer = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    let value: unknown;
    try {
      value = decodeFrame(
        buffer.toString("utf8"),
        { maxBytes: this.host.limits.maxFrameBytes, maxDepth: this.host.limits.maxJsonDepth },
        buffer.length,
      );
    } catch (error) {
      if (error instanceof LimitError) {
        this.close(error.limit === "bytes" ? 1009 : 1008, error.message);
        return;
      }
      this.#fail(null, error as WireError);
      if (++this.#parseErrors >= this.host.limits.maxParseErrors) this.close(1008, "too many unparseable frames");
      return;
    }
    this.#parseErrors = 0;
    const message = classify(value);
    try {
      if (message.kind === "request") this.#request(message.id, message.method, message.params);
      else if (message.kind === "notification") this.#notification(message.method, message.params);
      else if (message.kind === "invalid") this.#fail(message.id ?? null, err(E.InvalidRequest, "Invalid JSON-RPC message"));
      // Responses: this host never sends requests, so there is nothing to match.
    } catch (error) {
      this.host.report(error instanceof Error ? error : new Error(String(error)));
      if (message.kind === "request") this.#fail(message.id, err(E.InternalError, "Internal error"));
    }
  }

  #request(id: JsonRpcId, method: string, params: unknown): void {
    const p = (params !== null && typeof params === "object" && !Array.isArray(params) ? params : {}) as Record<string, unknown>;
    const channel = p.channel;
    if (method === "ping") {
      this.#reply(id, null);
      return;
    }
    if (method !== "initialize" && method !== "reconnect" && !this.#initialized) {
      this.#fail(id, err(E.InvalidRequest, "initialize first"));
      return;
    }
    if (typeof channel !== "string") {
      this.#fail(id, err(E.InvalidParams, "params.channel must be a URI"));
      return;
    }
    if (CONNECTION_METHODS.has(method) && channel !== ROOT_URI) {
      this.#fail(id, err(E.InvalidParams, `${method} takes the channel ${ROOT_URI}`));
      return;
    }
    try {
      this.#reply(id, this.#route(method, channel, p));
    } catch (error) {
      if (error instanceof WireError) {
        this.#fail(id, error);
        if (error.code === E.UnsupportedProtocolVersion) this.close(1002, "unsupported protocol version");
      } else throw error;
    }
  }

  #route(method: string, channel: string, p: Record<string, unknown>): unknown {
    switch (method) {
      case "initialize":
        return this.#initialize(p);
      case "reconnect":
        return this.#reconnect(p);
      case "subscribe":
        return this.#subscribe(channel);
      case "listSessions":
        return { items: this.host.listSessions() };
      case "fetchTurns":
        if (channelKind(channel) !== "chat" && channelKind(channel) !== "session")
          throw err(E.InvalidParams, "fetchTurns takes a chat channel");
        if (!this.host.store.has(channel)) throw err(E.SessionNotFound, "no such chat");
        return {};
      case "resolveSessionConfig":
        return { schema: { type: "object", properties: {} }, values: {} };
      case "disposeSession":
        return this.#disposeSession(channel);
      default:
        if (EMPTY_ITEMS.has(method)) return { items: [] };
        if (NOT_SERVED.has(method) || method.startsWith("resource")) throw err(E.MethodNotFound, `${method} is not served by this host`);
        throw err(E.MethodNotFound, `Method not found: ${method}`);
    }
  }

  #notification(method: string, params: unknown): void {
    if (!this.#initialized) return;
    const p = (params !== null && typeof params === "object" ? params : {}) as Record<string, unknown>;
    if (method === "unsubscribe") {
      if (typeof p.channel === "string" && this.subscriptions.delete(p.channel)) this.host.store.unsubscribe(p.channel, this);
    } else if (method === "dispatchAction") {
      const now = this.host.store.clock();
      if (now - this.#windowStart >= 1000) {
        this.#windowStart = now;
        this.#windowCount = 0;
      }
      if (++this.#windowCount > this.host.limits.maxDispatchPerSecond) {
        this.close(1008, "dispatchAction rate limit exceeded");
        return;
      }
      const who: Dispatcher = { clientId: this.clientId!, principal: this.who.principal, role: this.who.role };
      const outcome = this.host.actions.dispatch(params, who);
      if (outcome === "dropped")
        this.host.report(new Error(`dispatchAction dropped (malformed or unknown channel) from ${this.who.principal}`));
    }
    // Unknown notifications are ignored.
  }

  #bindClient(p: Record<string, unknown>): string {
    const clientId = p.clientId;
    if (typeof clientId !== "string" || clientId === "") throw err(E.InvalidParams, "clientId must be a non-empty string");
    if (this.#initialized) throw err(E.InvalidRequest, "already initialized");
    const owner = this.host.clientOwner(clientId);
    if (owner !== undefined && owner !== this.who.principal) throw err(E.InvalidRequest, "clientId belongs to another principal");
    return clientId;
  }

  #initialize(p: Record<string, unknown>): unknown {
    const clientId = this.#bindClient(p);
    const version = negotiateProtocolVersion(p.protocolVersions);
    if (version === undefined) throw err(E.UnsupportedProtocolVersion, "No supported protocol version offered", unsupportedVersionData());
    const initial = Array.isArray(p.initialSubscriptions) ? p.initialSubscriptions.filter((u): u is string => typeof u === "string") : [];
    this.#goLive(clientId, version);
    const snapshots: Snapshot[] = [];
    for (const uri of initial) {
      if (this.subscriptions.size >= this.host.limits.maxSubscriptions) break;
      const snap = this.#trySubscribe(uri);
      if (snap !== undefined) snapshots.push(snap);
    }
    const result: Record<string, unknown> = {
      protocolVersion: version,
      serverSeq: this.host.store.serverSeq,
      serverInfo: this.host.serverInfo,
      snapshots,
      _meta: { [META.approvals]: { toolConfirmation: true, chatInput: true, cancel: true } },
    };
    if (this.host.telemetryEnabled) result.telemetry = { logs: TELEMETRY_LOGS_TEMPLATE };
    return result;
  }

  #goLive(clientId: string, version: string): void {
    this.clientId = clientId;
    this.protocolVersion = version;
    this.#initialized = true;
    this.host.bindClient(this, clientId);
  }

  #reconnect(p: Record<string, unknown>): unknown {
    const clientId = this.#bindClient(p);
    const known = this.host.clientOwner(clientId) !== undefined;
    const lastSeen = p.lastSeenServerSeq;
    if (typeof lastSeen !== "number" || !Number.isSafeInteger(lastSeen) || lastSeen < 0)
      throw err(E.InvalidParams, "lastSeenServerSeq must be a non-negative integer");
    const requested = Array.isArray(p.subscriptions) ? p.subscriptions.filter((u): u is string => typeof u === "string") : [];
    const surviving: string[] = [];
    const missing: string[] = [];
    for (const uri of requested.slice(0, this.host.limits.maxSubscriptions)) {
      if (this.host.store.has(uri) || telemetryFloor(uri) !== undefined) surviving.push(uri);
      else missing.push(uri);
    }
    const stateful = new Set(surviving.filter((u) => this.host.store.has(u)));
    const replay = known ? this.host.store.replay(lastSeen, stateful) : undefined;
    this.#goLive(clientId, SUPPORTED_PROTOCOL_VERSIONS[0]);
    if (replay !== undefined) {
      for (const uri of surviving) this.#register(uri);
      return { type: "replay", actions: replay, missing };
    }
    const snapshots: Snapshot[] = [];
    for (const uri of surviving) {
      const snap = this.#trySubscribe(uri);
      if (snap !== undefined) snapshots.push(snap);
    }
    return { type: "snapshot", snapshots };
  }

  #register(uri: string): void {
    this.subscriptions.add(uri);
    this.host.store.addSubscriber(uri, this);
    if (telemetryFloor(uri) !== undefined) this.host.telemetryOpened(uri);
  }

  /** Subscribes when the URI exists; returns its snapshot (undefined for telemetry and unknown URIs). */
  #trySubscribe(uri: string): Snapshot | undefined {
    if (telemetryFloor(uri) !== undefined && this.host.telemetryEnabled) {
      this.#register(uri);
      return undefined;
    }
    const snap = this.host.store.subscribe(uri, this);
    if (snap !== undefined) this.subscriptions.add(uri);
    return snap;
  }

  #subscribe(uri: string): unknown {
    const kind = channelKind(uri);
    if (kind === "unknown") throw err(E.InvalidParams, `unknown channel scheme: ${uri}`);
    if (!this.subscriptions.has(uri) && this.subscriptions.size >= this.host.limits.maxSubscriptions) {
      throw err(E.InvalidParams, `subscription limit of ${this.host.limits.maxSubscriptions} reached`);
    }
    if (kind === "telemetry") {
      if (!this.host.telemetryEnabled || telemetryFloor(uri) === undefined) throw err(E.NotFound, `no such telemetry channel: ${uri}`);
      this.#register(uri);
      return {};
    }
    const snapshot = this.host.store.subscribe(uri, this);
    if (snapshot === undefined) throw err(kind === "root" ? E.NotFound : E.SessionNotFound, `no such ${kind}: ${uri}`);
    this.subscriptions.add(uri);
    return { snapshot };
  }

  #disposeSession(uri: string): unknown {
    if (channelKind(uri) !== "session") throw err(E.InvalidParams, "disposeSession takes a session channel");
    const outcome = this.host.disposeSession(uri, this.who.role);
    if (outcome === "unknown") throw err(E.SessionNotFound, `no such session: ${uri}`);
    if (outcome === "live") throw err(E.TurnInProgress, "the session is still live");
    if (outcome === "forbidden") throw err(E.InvalidRequest, "disposing sessions needs the operator role");
    return {};
  }
}

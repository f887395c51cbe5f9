/**
 * Channel store, sequencer and replay log (spec §5.3–§5.4, §7.2). Every accepted action is
 * reduced into its channel's state, given the next global `serverSeq`, appended to the replay
 * log and broadcast to the channel's subscribers — synchronously, so nothing interleaves. A
 * rejected client action is sequenced, logged and broadcast, but never reduced. Snapshot and
 * subscription happen in one call, so a subscriber sees every action with `serverSeq > fromSeq`
 * exactly once.
 */
import { reduceChannel, type Clock } from "../reducers/index.js";
import { encodeFrame, envelope as makeEnvelope, notification } from "../wire/codec.js";
import type { ActionEnvelope, ActionOrigin, ChannelState, Snapshot, StateAction } from "../wire/types.js";
import { OutFrame } from "./fanout.js";

/**
 * Where frames for one connection go. `send` gets one encoded JSON-RPC message; the same
 * {@link OutFrame} (encoded and WebSocket-framed once) goes to every subscriber.
 */
export interface FrameSink {
  send(frame: OutFrame): void;
}

/**
 * Bounds of the log that `reconnect` replays from (spec §4.4, §7.2): the oldest envelopes go once either
 * bound is passed. A client whose last seen `serverSeq` is no longer in the log gets fresh snapshots
 * instead of a replay.
 */
export interface ReplayLogLimits {
  /** Envelopes kept for `reconnect` replay. Default 10 000. */
  maxEnvelopes?: number;
  /** Encoded bytes kept (approximately, UTF-16 length of the frames). Default 32 MiB. */
  maxBytes?: number;
}

export class ChannelStore {
  readonly #states = new Map<string, ChannelState>();
  readonly #subscribers = new Map<string, Set<FrameSink>>();
  readonly #clock: Clock;
  readonly #maxEnvelopes: number;
  readonly #maxBytes: number;
  /** The replay log: envelopes and, at the same index, their encoded sizes (two arrays, no object per entry). */
  #log: ActionEnvelope[] = [];
  #sizes: number[] = [];
  #logStart = 0;
  #logBytes = 0;
  #seq = 0;
  /** Observers of every committed envelope (after broadcast). */
  readonly #observers = new Set<(envelope: ActionEnvelope, state: ChannelState | undefined) => void>();
  /** Observers of channel creation or replacement (state) and removal (undefined): replication. */
  readonly #channelObservers = new Set<(uri: string, state: ChannelState | undefined) => void>();

  constructor(clock: Clock, limits: ReplayLogLimits = {}) {
    this.#clock = clock;
    this.#maxEnvelopes = limits.maxEnvelopes ?? 10_000;
    this.#maxBytes = limits.maxBytes ?? 32 * 1024 * 1024;
  }

  get serverSeq(): number {
    return this.#seq;
  }

  get clock(): Clock {
    return this.#clock;
  }

  has(uri: string): boolean {
    return this.#states.has(uri);
  }

  get<T extends ChannelState>(uri: string): T | undefined {
    return this.#states.get(uri) as T | undefined;
  }

  /** Channel URIs currently held. */
  uris(): IterableIterator<string> {
    return this.#states.keys();
  }

  /** Adds a channel with its initial state (no action is sequenced for creation). */
  create(uri: string, state: ChannelState): void {
    this.#states.set(uri, state);
    for (const observer of this.#channelObservers) observer(uri, state);
  }

  /** Drops a channel and its subscribers' registrations. */
  remove(uri: string): void {
    this.#states.delete(uri);
    this.#prefixes.delete(uri);
    this.#subscribers.delete(uri);
    for (const observer of this.#channelObservers) observer(uri, undefined);
  }

  snapshot(uri: string): Snapshot | undefined {
    const state = this.#states.get(uri);
    return state === undefined ? undefined : { resource: uri, state, fromSeq: this.#seq };
  }

  /** Registers `sink` for `uri` and returns a snapshot taken at the same instant. Idempotent. */
  subscribe(uri: string, sink: FrameSink): Snapshot | undefined {
    const snapshot = this.snapshot(uri);
    if (snapshot === undefined) return undefined;
    this.addSubscriber(uri, sink);
    return snapshot;
  }

  /** Registers a subscriber without a snapshot (stateless channels, replayed reconnects). */
  addSubscriber(uri: string, sink: FrameSink): void {
    let set = this.#subscribers.get(uri);
    if (set === undefined) this.#subscribers.set(uri, (set = new Set()));
    set.add(sink);
  }

  unsubscribe(uri: string, sink: FrameSink): void {
    this.#subscribers.get(uri)?.delete(sink);
  }

  unsubscribeAll(sink: FrameSink): void {
    for (const set of this.#subscribers.values()) set.delete(sink);
  }

  subscriberCount(uri: string): number {
    return this.#subscribers.get(uri)?.size ?? 0;
  }

  /** Sends a notification (not sequenced, not logged) to the subscribers of `uri`. */
  notify(uri: string, method: string, params: unknown): void {
    const set = this.#subscribers.get(uri);
    if (set === undefined || set.size === 0) return;
    const frame = new OutFrame(encodeFrame(notification(method, params)));
    for (const sink of set) sink.send(frame);
  }

  onCommit(observer: (envelope: ActionEnvelope, state: ChannelState | undefined) => void): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Observes channels being created, replaced (`store.create`) and removed (state undefined). */
  onChannel(observer: (uri: string, state: ChannelState | undefined) => void): () => void {
    this.#channelObservers.add(observer);
    return () => this.#channelObservers.delete(observer);
  }

  /** Reduces, sequences, logs and broadcasts one action. Returns the envelope; undefined when the channel does not exist. */
  commit(channel: string, action: StateAction, origin?: ActionOrigin): ActionEnvelope | undefined {
    const state = this.#states.get(channel);
    if (state === undefined) return undefined;
    const next = reduceChannel(channel, state, action, this.#clock);
    this.#states.set(channel, next);
    return this.#publish(makeEnvelope(channel, this.#nextSeq(), action, origin), next);
  }

  /** Sequences, logs and broadcasts a rejected client action without reducing it. */
  reject(channel: string, action: StateAction, origin: ActionOrigin, reason: string): ActionEnvelope | undefined {
    if (!this.#states.has(channel)) return undefined;
    return this.#publish(makeEnvelope(channel, this.#nextSeq(), action, origin, reason), this.#states.get(channel));
  }

  #nextSeq(): number {
    if (this.#seq >= Number.MAX_SAFE_INTEGER) throw new RangeError("serverSeq exhausted");
    return ++this.#seq;
  }

  #publish(env: ActionEnvelope, state: ChannelState | undefined): ActionEnvelope {
    const text = this.#encodeAction(env);
    this.#append(env, text.length);
    const set = this.#subscribers.get(env.channel);
    if (set !== undefined && set.size > 0) {
      const frame = new OutFrame(text);
      for (const sink of set) sink.send(frame);
    }
    for (const observer of this.#observers) observer(env, state);
    return env;
  }

  /** Channel URI -> the constant start of its `action` notifications, up to `"serverSeq":`. */
  readonly #prefixes = new Map<string, string>();

  /**
   * The `action` notification of `env` as JSON text, equal to `encodeFrame(notification("action", env))`:
   * a host envelope (no origin, no rejection) is written from a cached per-channel prefix, the
   * sequence number and the action's own JSON, so only the action is serialized.
   */
  #encodeAction(env: ActionEnvelope): string {
    if (env.origin !== undefined || env.rejectionReason !== undefined) return encodeFrame(notification("action", env));
    let prefix = this.#prefixes.get(env.channel);
    if (prefix === undefined) {
      prefix = `{"jsonrpc":"2.0","method":"action","params":{"channel":${JSON.stringify(env.channel)},"serverSeq":`;
      this.#prefixes.set(env.channel, prefix);
    }
    return `${prefix}${env.serverSeq},"action":${JSON.stringify(env.action)}}}`;
  }

  #append(env: ActionEnvelope, size: number): void {
    this.#log.push(env);
    this.#sizes.push(size);
    this.#logBytes += size;
    while (
      this.#log.length - this.#logStart > this.#maxEnvelopes ||
      (this.#logBytes > this.#maxBytes && this.#log.length - this.#logStart > 1)
    ) {
      this.#logBytes -= this.#sizes[this.#logStart]!;
      this.#logStart++;
    }
    // Compact the array now and then instead of shifting on every append.
    if (this.#logStart > 1024 && this.#logStart * 2 > this.#log.length) {
      this.#log = this.#log.slice(this.#logStart);
      this.#sizes = this.#sizes.slice(this.#logStart);
      this.#logStart = 0;
    }
  }

  /** Lowest sequence number still in the replay log (serverSeq + 1 when empty). */
  get oldestLogged(): number {
    return this.#log[this.#logStart]?.serverSeq ?? this.#seq + 1;
  }

  get loggedEnvelopes(): number {
    return this.#log.length - this.#logStart;
  }

  /**
   * Envelopes with `serverSeq > lastSeen` on `channels`, ascending; undefined when the log no
   * longer reaches back to `lastSeen + 1` (the caller then sends snapshots).
   */
  replay(lastSeen: number, channels: ReadonlySet<string>): ActionEnvelope[] | undefined {
    if (!Number.isSafeInteger(lastSeen) || lastSeen < 0 || lastSeen > this.#seq) return undefined;
    if (lastSeen === this.#seq) return [];
    if (lastSeen + 1 < this.oldestLogged) return undefined;
    const out: ActionEnvelope[] = [];
    for (let i = this.#logStart; i < this.#log.length; i++) {
      const env = this.#log[i]!;
      if (env.serverSeq > lastSeen && channels.has(env.channel)) out.push(env);
    }
    return out;
  }
}

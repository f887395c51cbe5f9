/**
 * Client-side state with write-ahead reconciliation (upstream "reconciliation" guide): the
 * confirmed state of each channel comes from snapshots and the host's envelopes, applied in
 * `serverSeq` order; the client's own dispatched actions are kept as pending and applied on top
 * for the optimistic view, until the host's echo (committed or rejected) arrives. A rejected
 * echo is never reduced. Browser-safe.
 */
import { reduceChannel, systemClock, type Clock } from "../reducers/index.js";
import type { ActionEnvelope, ChannelState, Snapshot, StateAction } from "../wire/types.js";

/**
 * An action this client dispatched and the host has not echoed yet: applied on top of the confirmed
 * state in the optimistic view until the envelope with the same `channel` and `origin.clientSeq`
 * arrives (committed or rejected).
 */
export interface PendingAction {
  channel: string;
  clientSeq: number;
  action: StateAction;
}

/**
 * Per-channel state of a client with write-ahead reconciliation: confirmed state from snapshots and
 * envelopes, plus this client's pending actions on top (`view`).
 */
export class ClientState {
  readonly #confirmed = new Map<string, { state: ChannelState; fromSeq: number }>();
  #pending: PendingAction[] = [];
  #lastSeen = 0;
  readonly clock: Clock;

  constructor(
    readonly clientId: string,
    clock: Clock = systemClock,
  ) {
    this.clock = clock;
  }

  /** Highest `serverSeq` this client has seen (for `reconnect`). */
  get lastSeenServerSeq(): number {
    return this.#lastSeen;
  }

  set lastSeenServerSeq(value: number) {
    this.#lastSeen = Math.max(this.#lastSeen, value);
  }

  get pending(): readonly PendingAction[] {
    return this.#pending;
  }

  channels(): string[] {
    return [...this.#confirmed.keys()];
  }

  /** Installs a snapshot (replacing what was held for that channel). */
  applySnapshot(snapshot: Snapshot): void {
    this.#confirmed.set(snapshot.resource, { state: snapshot.state, fromSeq: snapshot.fromSeq });
    this.lastSeenServerSeq = snapshot.fromSeq;
  }

  forget(channel: string): void {
    this.#confirmed.delete(channel);
    this.#pending = this.#pending.filter((p) => p.channel !== channel);
  }

  /** Applies one envelope from the host. Envelopes at or below the snapshot's `fromSeq` are ignored. */
  applyEnvelope(env: ActionEnvelope): void {
    this.lastSeenServerSeq = env.serverSeq;
    if (env.origin?.clientId === this.clientId) {
      this.#pending = this.#pending.filter((p) => !(p.channel === env.channel && p.clientSeq === env.origin!.clientSeq));
    }
    const entry = this.#confirmed.get(env.channel);
    if (entry === undefined || env.serverSeq <= entry.fromSeq) return;
    entry.fromSeq = env.serverSeq;
    if (env.rejectionReason !== undefined) return;
    entry.state = reduceChannel(env.channel, entry.state, env.action, this.clock);
  }

  /** Records an optimistic action this client is about to dispatch. */
  addPending(pending: PendingAction): void {
    this.#pending.push(pending);
  }

  /** The state the host has confirmed. */
  confirmed<T extends ChannelState>(channel: string): T | undefined {
    return this.#confirmed.get(channel)?.state as T | undefined;
  }

  /** The confirmed state with this client's pending actions applied on top. */
  view<T extends ChannelState>(channel: string): T | undefined {
    let state = this.#confirmed.get(channel)?.state;
    if (state === undefined) return undefined;
    for (const p of this.#pending) if (p.channel === channel) state = reduceChannel(channel, state, p.action, this.clock);
    return state as T;
  }
}

/**
 * Agent Host replication (ADR 0085) between hosts in one process, on an in-memory shared log: the
 * order of mirrored actions, answers forwarded to the owner (its rejection shown to the answering
 * client), first answer wins across hosts, the outbox that keeps entries while the log is down, the
 * goodbye of a stopping replica, answer and replica timeouts, and a replica that joins late.
 * Real adapters on loopback and real WebSocket clients; no Redis. Waits poll state, never sleep.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ActionRelay, ActionRelayListener } from "../src/host/relay.js";
import type { ChatState } from "../src/wire/types.js";
import type { TestClient } from "./helpers/client.js";
import { startHost, type Running } from "./helpers/harness.js";
import { until } from "./helpers/host-per-test.js";
import { S1_CHAT, S1_URI, toolCalls, withoutModifiedAt } from "./helpers/scenario.js";

/** One shared log: every relay appends to it and tails it in its single order. */
class MemoryLog {
  readonly entries: string[] = [];
  #down = false;
  readonly relays = new Set<MemoryRelay>();

  get down(): boolean {
    return this.#down;
  }

  set down(value: boolean) {
    this.#down = value;
    for (const r of this.relays) r.kick(!value);
  }

  relay(): MemoryRelay {
    const relay = new MemoryRelay(this);
    this.relays.add(relay);
    return relay;
  }
}

class MemoryRelay implements ActionRelay {
  #listener: ActionRelayListener | undefined;
  #read = 0;
  #announce = true;
  #scheduled = false;
  published = 0;
  failures = 0;

  constructor(readonly log: MemoryLog) {}

  get connected(): boolean {
    return !this.log.down;
  }

  /** While set, this replica reads nothing (it is alive but does not answer). */
  deaf = false;
  /** While set, appends wait for it (an append in flight). */
  gate: Promise<void> | undefined;
  /** Appends in flight. */
  waiting = 0;
  /** The owner closed the log's connection: appends asked for from now on fail. */
  closed = false;
  #chain: Promise<void> = Promise.resolve();

  publish(entries: readonly string[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the relay is closed"));
    const gate = this.gate;
    this.waiting++;
    // Appends land in the order they were asked for, as on one connection.
    const turn = this.#chain.then(async () => {
      try {
        await gate;
        await Promise.resolve();
      } finally {
        this.waiting--;
      }
      if (this.log.down) {
        this.failures += entries.length;
        throw new Error("the shared log is down");
      }
      this.log.entries.push(...entries);
      this.published += entries.length;
      for (const r of this.log.relays) r.kick(false);
    });
    this.#chain = turn.catch(() => undefined);
    return turn;
  }

  subscribe(listener: ActionRelayListener): () => void {
    this.#listener = listener;
    this.#read = this.log.entries.length;
    this.kick(false);
    return () => {
      this.#listener = undefined;
      this.log.relays.delete(this);
    };
  }

  /** Delivers what this tail has not read yet (later, as a real tail would); `resumed` after an outage. */
  kick(resumed: boolean): void {
    if (resumed) this.#announce = true;
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      if (this.#listener === undefined || this.log.down || this.deaf) return;
      if (this.#announce) {
        this.#announce = false;
        this.#listener.connected();
      }
      // Uneven batches: the order must not depend on how the log hands entries over.
      while (this.#read < this.log.entries.length && this.#listener !== undefined) {
        const size = 1 + ((this.#read * 7) % 5);
        const batch = this.log.entries.slice(this.#read, this.#read + size);
        this.#read += batch.length;
        this.#listener.entries(batch);
      }
    });
  }
}

const hosts: Running[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop();
});

async function replicas(
  n: number,
  log = new MemoryLog(),
  options: { replicaTimeoutMs?: number; answerTimeoutMs?: number } = {},
): Promise<{ log: MemoryLog; hosts: Running[]; relays: MemoryRelay[] }> {
  const relays: MemoryRelay[] = [];
  const out: Running[] = [];
  for (let i = 0; i < n; i++) {
    const relay = log.relay();
    relays.push(relay);
    const host = await startHost({ replication: { relay, replicaId: `r${i}`, ...options } });
    hosts.push(host);
    out.push(host);
  }
  // Every tail has started (its hello is in the log) before the first session appears.
  await until(() => log.entries.filter((e) => (JSON.parse(e) as { k: string }).k === "hello").length >= n, "every replica tailing");
  return { log, hosts: out, relays };
}

/** The client's pending tool confirmation on the chat (after it appeared). */
async function pendingTool(client: TestClient): Promise<{ turnId: string; toolCallId: string }> {
  return until(() => {
    const state = client.api.state.confirmed<ChatState>(S1_CHAT);
    const call = toolCalls(state).find((t) => t.status === "pending-confirmation");
    return call === undefined ? undefined : { turnId: state!.activeTurn!.id, toolCallId: call.toolCallId };
  }, "a pending tool confirmation");
}

/** The echo (or rejection) of the client's own action number `clientSeq`. */
const echoOf = (client: TestClient, clientId: string, clientSeq: number) =>
  client.next((f) => f.method === "action" && f.params.origin?.clientId === clientId && f.params.origin?.clientSeq === clientSeq);

const approve = (pending: { turnId: string; toolCallId: string }, approved = true) => ({
  type: "chat/toolCallConfirmed" as const,
  turnId: pending.turnId,
  toolCallId: pending.toolCallId,
  approved,
  ...(approved ? { confirmed: "user-action" } : { reason: "denied" }),
});

/** Waits until `mirror` has subscribed the session; then both clients have the chat too. */
async function watch(client: TestClient): Promise<void> {
  await until(() => client.api.state.confirmed(S1_URI) !== undefined || undefined, "session listed");
}

describe("Agent Host replication on an in-memory log", () => {
  it("every replica reduces a remote session's actions in the owner's order and ends with the owner's state", async () => {
    const { hosts: h } = await replicas(2);
    const [a, b] = h as [Running, Running];
    const agent = await a.agent("s1");
    const onB = await b.client("viewer-token", "V");
    await until(() => b.host.store.has(S1_CHAT) || undefined, "chat mirrored on B");
    await onB.api.initialize([S1_URI, S1_CHAT]);
    const onA = await a.client("viewer-token", "W");
    await onA.api.initialize([S1_URI, S1_CHAT]);
    const mark = [onA.mark, onB.mark];
    // Many actions in a row on one chat: tool calls started, allowed, finished.
    for (let i = 0; i < 15; i++) {
      const d = await agent.send("pre_action", { tool_name: "bash", arguments: { command: `echo ${i}` } });
      expect(d).toMatchObject({ decision: "allow" });
    }
    const ownState = () => JSON.stringify(withoutModifiedAt(a.host.store.get(S1_CHAT)));
    await until(() => JSON.stringify(withoutModifiedAt(b.host.store.get(S1_CHAT))) === ownState() || undefined, "B's chat equal to A's");
    const types = (c: TestClient, from: number) =>
      c.frames
        .slice(from)
        .filter((f) => f.method === "action" && f.params.channel === S1_CHAT)
        .map((f) => JSON.stringify(withoutModifiedAt(f.params.action)));
    // Both clients' reduced views reach the owner's state (their frames lag the stores).
    for (const c of [onA, onB])
      await until(() => JSON.stringify(withoutModifiedAt(c.api.state.confirmed(S1_CHAT))) === ownState() || undefined, "client caught up");
    expect(types(onB, mark[1]!)).toEqual(types(onA, mark[0]!));
    expect(types(onA, mark[0]!).length).toBeGreaterThanOrEqual(15);
    expect(withoutModifiedAt(onB.api.state.confirmed(S1_CHAT))).toEqual(withoutModifiedAt(onA.api.state.confirmed(S1_CHAT)));
    expect(b.host.replicationStats()).toMatchObject({ remoteSessions: 1, forwardFailures: 0 });
  });

  it("an answer on B goes to the owner A: A's agent gets the decision; A's rejection reaches B's client as a rejection", async () => {
    const { hosts: h } = await replicas(2);
    const [a, b] = h as [Running, Running];
    const agent = await a.agent("s1");
    const bob = await b.client("approver2-token", "B");
    await until(() => b.host.store.has(S1_CHAT) || undefined, "chat mirrored on B");
    await bob.api.initialize([S1_URI, S1_CHAT]);
    await watch(bob);

    const first = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "deploy prod" } });
    const pending = await pendingTool(bob);
    // The owner refuses an answer B cannot check (a tool call that is not in the active turn).
    bob.api.dispatch(S1_CHAT, { ...approve(pending), toolCallId: "no-such-call" });
    const refused = await echoOf(bob, "B", 1);
    expect(refused.params.rejectionReason).toBe("no such tool call in the active turn");
    expect(b.host.replicationStats()?.forwarded).toBe(1);
    // A real answer is decided on A, with B's approver named.
    bob.api.dispatch(S1_CHAT, approve(pending));
    const echo = await echoOf(bob, "B", 2);
    expect(echo.params.rejectionReason).toBeUndefined();
    expect(await first).toMatchObject({ decision: "allow", metadata: { approved_by: "bob" } });
    await until(
      () => toolCalls(bob.api.state.confirmed<ChatState>(S1_CHAT)).every((t) => t.status !== "pending-confirmation") || undefined,
      "confirmed on B",
    );
  });

  it("two replicas answer one request held on a third at once: exactly one wins, the other is told 'already resolved'", async () => {
    const { hosts: h } = await replicas(3);
    const [a, b, c] = h as [Running, Running, Running];
    const agent = await a.agent("s1");
    const bob = await b.client("approver2-token", "B");
    const alice = await c.client("approver-token", "C");
    await until(() => (b.host.store.has(S1_CHAT) && c.host.store.has(S1_CHAT)) || undefined, "chat mirrored on B and C");
    for (const cl of [bob, alice]) await cl.api.initialize([S1_URI, S1_CHAT]);

    const decision = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "deploy prod" } });
    const [pb, pc] = await Promise.all([pendingTool(bob), pendingTool(alice)]);
    bob.api.dispatch(S1_CHAT, approve(pb, false));
    alice.api.dispatch(S1_CHAT, approve(pc, true));
    const [eb, ec] = await Promise.all([echoOf(bob, "B", 1), echoOf(alice, "C", 1)]);
    const reasons = [eb.params.rejectionReason, ec.params.rejectionReason];
    expect(reasons.filter((r) => r === undefined)).toHaveLength(1);
    expect(reasons.filter((r) => r === "already resolved")).toHaveLength(1);
    const result = await decision;
    if (reasons[0] === undefined) expect(result).toMatchObject({ decision: "block", reason: "Denied by bob" });
    else expect(result).toMatchObject({ decision: "allow", metadata: { approved_by: "alice" } });
    // Every replica shows the winner's answer, and only it.
    const winner = reasons[0] === undefined ? "B" : "C";
    for (const host of [a, b, c]) {
      await until(() => {
        const call = toolCalls(host.host.store.get<ChatState>(S1_CHAT)).find((t) => t.toolCallId === pb.toolCallId);
        return call?.status !== "pending-confirmation" || undefined;
      }, "the answer everywhere");
    }
    const committed = (cl: TestClient) =>
      cl
        .envelopes()
        .filter((e) => e.action.type === "chat/toolCallConfirmed" && e.rejectionReason === undefined)
        .map((e) => e.origin?.clientId);
    await until(() => (committed(bob).length === 1 && committed(alice).length === 1) || undefined, "one committed answer on each");
    expect(committed(bob)).toEqual([winner]);
    expect(committed(alice)).toEqual([winner]);
  });

  it("entries appended while the log is down wait in the outbox and reach the others in order when it is back", async () => {
    const { log, hosts: h, relays } = await replicas(2);
    const [a, b] = h as [Running, Running];
    const agent = await a.agent("s1");
    const onB = await b.client("viewer-token", "V");
    await until(() => b.host.store.has(S1_CHAT) || undefined, "chat mirrored on B");
    await onB.api.initialize([S1_URI, S1_CHAT]);
    await agent.send("pre_action", { tool_name: "bash", arguments: { command: "echo before" } });
    await until(() => toolCalls(onB.api.state.confirmed<ChatState>(S1_CHAT)).length === 1 || undefined, "first call on B");

    log.down = true;
    const mark = onB.mark;
    for (let i = 0; i < 5; i++) await agent.send("pre_action", { tool_name: "bash", arguments: { command: `echo during ${i}` } });
    await until(() => relays[0]!.failures > 0 || undefined, "appends failing");
    expect(a.host.replicationStats()?.publishFailures).toBeGreaterThan(0);
    // Nothing reached B meanwhile.
    expect(toolCalls(b.host.store.get<ChatState>(S1_CHAT))).toHaveLength(1);

    log.down = false;
    const own = () => JSON.stringify(withoutModifiedAt(a.host.store.get(S1_CHAT)));
    await until(() => JSON.stringify(withoutModifiedAt(b.host.store.get(S1_CHAT))) === own() || undefined, "B caught up");
    // B's client, subscribed through the outage, got the kept actions themselves (a re-announced state alone would not reach it).
    await until(() => toolCalls(onB.api.state.confirmed<ChatState>(S1_CHAT)).length === 6 || undefined, "B's client caught up");
    const commands = toolCalls(onB.api.state.confirmed<ChatState>(S1_CHAT)).map((t) => t.toolInput ?? t.invocationMessage);
    expect(JSON.stringify(commands)).toMatch(/before.*during 0.*during 1.*during 2.*during 3.*during 4/);
    expect(onB.frames.slice(mark).some((f) => f.method === "action" && f.params.channel === S1_CHAT)).toBe(true);
  });

  it("a replica stopped while an append is in flight still says goodbye: the others end its session at once", async () => {
    const { hosts: h, relays } = await replicas(2);
    const [a, b] = h as [Running, Running];
    const agent = await a.agent("s1");
    await until(() => b.host.store.has(S1_CHAT) || undefined, "chat mirrored on B");
    expect(b.host.sessions.activeSessions).toBe(1);
    let release!: () => void;
    relays[0]!.gate = new Promise<void>((resolve) => (release = resolve));
    await agent.send("pre_action", { tool_name: "bash", arguments: { command: "echo last" } });
    await until(() => relays[0]!.waiting > 0 || undefined, "an append in flight");
    // The host stops, then its owner closes the log's connection (as `ahp serve` does), then the append in flight lands.
    a.host.dispose();
    relays[0]!.closed = true;
    release();
    await until(() => b.host.sessions.activeSessions === 0 || undefined, "A's session ended on B");
    expect(b.host.sessions.byUri.get(S1_URI)?.ended).toBe(true);
    expect(toolCalls(b.host.store.get<ChatState>(S1_CHAT))).toHaveLength(1);
  });

  it("an answer the owner never replies to is rejected after the answer timeout; a silent owner is then judged gone", async () => {
    const { hosts: h, relays } = await replicas(2, new MemoryLog(), { replicaTimeoutMs: 1, answerTimeoutMs: 500 });
    const [a, b] = h as [Running, Running];
    const agent = await a.agent("s1");
    const bob = await b.client("approver2-token", "B");
    await until(() => b.host.store.has(S1_CHAT) || undefined, "chat mirrored on B");
    await bob.api.initialize([S1_URI, S1_CHAT]);
    let settled = false;
    void agent.send("pre_action", { tool_name: "deploy", arguments: { command: "deploy prod" } }).then(
      () => (settled = true),
      () => (settled = true),
    );
    const pending = await pendingTool(bob);
    // A stops reading the log (alive, but it never sees the answer).
    relays[0]!.deaf = true;
    bob.api.dispatch(S1_CHAT, approve(pending));
    await until(() => (b.host.replicationStats()?.forwarded === 1 && relays[1]!.published > 0) || undefined, "answer forwarded");
    const mark = bob.mark;
    // Before B's first heartbeat (2 s): only the answer's timer is due.
    b.time.advance(500);
    const refused = await echoOf(bob, "B", 1);
    expect(refused.params.rejectionReason).toBe("no reply from replica r0, which holds this request, within 500 ms");
    expect(b.host.replicationStats()?.forwardFailures).toBe(1);
    expect(settled).toBe(false);
    // A is silent too (its heartbeats are not due on its clock): B's next heartbeat judges it gone.
    await until(() => {
      b.time.advance(2000);
      return b.host.sessions.activeSessions === 0 || undefined;
    }, "A judged gone on B");
    const skipped = (
      await bob.next(
        (f) =>
          f.method === "action" &&
          f.params.channel === S1_CHAT &&
          f.params.action.type === "chat/toolCallConfirmed" &&
          f.params.origin === undefined,
        mark,
      )
    ).params as { action: Record<string, unknown> };
    expect(skipped.action).toMatchObject({ approved: false, reason: "skipped" });
    expect((skipped.action as { reasonMessage?: string }).reasonMessage).toBe("replica r0 stopped (no heartbeat)");
    await bob.action("chat/turnCancelled", S1_CHAT, mark);
    // An answer to a request of a gone replica is refused on B at once.
    bob.api.dispatch(S1_CHAT, approve(pending));
    expect((await echoOf(bob, "B", 2)).params.rejectionReason).toBe("the replica holding this request (r0) is gone");
    expect(b.host.replicationStats()?.forwarded).toBe(1);
  });

  it("a replica that starts after a session exists gets it re-announced and can answer its held request", async () => {
    const { log, hosts: h } = await replicas(1);
    const [a] = h as [Running];
    const agent = await a.agent("s1");
    const decision = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "deploy prod" } });
    await until(
      () => toolCalls(a.host.store.get<ChatState>(S1_CHAT)).some((t) => t.status === "pending-confirmation") || undefined,
      "held on A",
    );
    // B joins now: its hello makes A announce the current state of its sessions.
    const b = await startHost({ replication: { relay: log.relay(), replicaId: "late" } });
    hosts.push(b);
    await until(() => b.host.replicationStats()?.remoteSessions === 1 || undefined, "A's session mirrored on B");
    const bob = await b.client("approver2-token", "B");
    await bob.api.initialize([S1_URI, S1_CHAT]);
    expect(withoutModifiedAt(bob.api.state.confirmed(S1_CHAT))).toEqual(withoutModifiedAt(a.host.store.get(S1_CHAT)));
    expect(b.host.sessions.activeSessions).toBe(1);
    const pending = await pendingTool(bob);
    bob.api.dispatch(S1_CHAT, approve(pending));
    expect((await echoOf(bob, "B", 1)).params.rejectionReason).toBeUndefined();
    expect(await decision).toMatchObject({ decision: "allow", metadata: { approved_by: "bob" } });
  });
});

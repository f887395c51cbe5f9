/**
 * Sessions are keyed per agent connection (ADR 0161): a later run of another agent that reuses a
 * session id gets a session of its own; a reconnect of the same agent, or the many short hook
 * connections of one live session, stay in one.
 */
import { AhpClient, AhpServer, createEvent, createLinkedPair, type DecisionInput, type EventType } from "@ahp/core";
import { afterEach, describe, expect, it } from "vitest";
import { AgentHost, type AgentHostOptions } from "../src/host/agent-host.js";
import { META } from "../src/wire/constants.js";
import type { ChatState, SessionState } from "../src/wire/types.js";
import { ManualTime } from "./helpers/scheduler.js";

interface Agent {
  client: AhpClient;
  send(type: EventType, sessionId: string, payload: unknown, agentId?: string): Promise<unknown>;
}

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

function start(options: AgentHostOptions = {}) {
  const time = new ManualTime();
  const host = new AgentHost({ clock: time.clock, scheduler: time, ...options });
  const handlers = host.wrap({ onEvent: (): DecisionInput => ({ decision: "allow" }) });
  const server = new AhpServer({ handlers, handlerFailure: "decision", handlerTimeoutMs: 0 });
  const agents: AhpClient[] = [];
  /** An agent process: its own connection and handshake (a random handshake session id, as `AhpClient` and the AARTS bridge use). */
  const agent = async (framework: string, capabilities: string[] = ["pre_action"], handshakeId?: string): Promise<Agent> => {
    const [agentSide, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    const client = new AhpClient({
      agentInfo: { framework, version: "1.0.0" },
      timeoutMs: 0,
      ...(handshakeId === undefined ? {} : { sessionId: handshakeId, agentId: "agent" }),
    });
    await client.connect(agentSide, { capabilities });
    agents.push(client);
    return {
      client,
      send: (type, sessionId, payload, agentId = "main") => client.event(createEvent(type, payload as never, { sessionId, agentId })),
    };
  };
  stop = async () => {
    for (const a of agents) await a.close().catch(() => undefined);
    host.dispose();
    await server.close({ graceMs: 0 });
  };
  /** Sessions of agent session id `id` (the handshake's own sessions left out). */
  const sessionsOf = (id: string) => [...host.sessions.byId.values()].filter((s) => s.agentSessionId === id).sort((a, b) => a.run - b.run);
  /** Waits (bounded) until the host saw a closed agent connection detach from its sessions. */
  const detached = async (id: string) => {
    const deadline = Date.now() + 30_000;
    while (sessionsOf(id).some((s) => s.connections.size > 0)) {
      if (Date.now() > deadline) throw new Error("the agent connection never detached");
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return { host, time, agent, sessionsOf, detached };
}

const prompt = (text: string) => ({ prompt: text });
const tool = (name: string) => ({ tool_name: name, arguments: {} });

describe("sessions keyed per agent connection (ADR 0161)", () => {
  it("two sequential proxy runs whose agents both used session id s1 give two sessions with distinct URIs", async () => {
    const run = start();
    const first = await run.agent("ahp-acp-proxy");
    await first.send("session_start", "s1", {});
    await first.send("pre_prompt", "s1", prompt("first run"));
    await first.send("pre_action", "s1", tool("read_file"));
    await first.client.close();
    await run.detached("s1");
    // Within the grace period: the old session is orphaned, not ended.
    expect(run.sessionsOf("s1")[0]!.ended).toBe(false);

    const second = await run.agent("ahp-acp-proxy");
    await second.send("session_start", "s1", {});
    await second.send("pre_prompt", "s1", prompt("second run"));
    const sessions = run.sessionsOf("s1");
    expect(sessions).toHaveLength(2);
    expect(sessions[0]!.uri).not.toBe(sessions[1]!.uri);
    expect(sessions.map((s) => s.sessionId)).toEqual(["s1", "s1#2"]);
    // Each session holds only its own run's prompt.
    const prompts = sessions.map((s) => {
      const chat = [...s.chats.values()][0]!;
      const state = run.host.state<ChatState>(chat.uri)!;
      return [...state.turns, ...(state.activeTurn === undefined ? [] : [state.activeTurn])].map((t) => t.message.text);
    });
    expect(prompts).toEqual([["first run"], ["second run"]]);
    // The second session says which run it is, and is told apart in its title.
    const state = run.host.state<SessionState>(sessions[1]!.uri)!;
    expect(state._meta?.[META.lifecycle]).toMatchObject({ state: "active", agentSessionId: "s1", run: 2 });
    expect(state.title).toContain("(run 2)");
    // The first one ends after the grace period; the second is untouched.
    run.time.advance(30_000);
    expect(sessions.map((s) => s.ended)).toEqual([true, false]);
    expect(run.host.state<SessionState>(sessions[0]!.uri)!._meta?.[META.lifecycle]).toMatchObject({ state: "ended", hadTurns: true });
  });

  it("a proxy's own handshake session, nothing but the handshake, is folded into the agent's session it goes on to carry (ADR 0174)", async () => {
    const run = start();
    const proxy = await run.agent("ahp-acp-proxy");
    const handshake = run.sessionsOf(proxy.client.sessionId);
    expect(handshake.map((s) => s.ended)).toEqual([false]);
    const handshakeUri = handshake[0]!.uri;
    expect(run.host.listSessions().map((s) => s.resource)).toContain(handshakeUri);

    await proxy.send("session_start", "acp-1", {});
    await proxy.send("pre_prompt", "acp-1", prompt("the agent's turn"));
    // One session listed, the agent's, described by the proxy's handshake.
    expect(run.sessionsOf(proxy.client.sessionId)).toEqual([]);
    expect(run.host.listSessions().map((s) => s.resource)).toEqual([run.sessionsOf("acp-1")[0]!.uri]);
    const state = run.host.state<SessionState>(run.sessionsOf("acp-1")[0]!.uri)!;
    expect(state._meta?.[META.agent]).toMatchObject({ framework: "ahp-acp-proxy" });
    expect(state.title).toBe("ahp-acp-proxy session acp-1");
    expect(run.host.state(handshakeUri)).toBeUndefined();
  });

  it("a handshake session with a turn of its own, or one another connection carries too, is not folded", async () => {
    const run = start();
    const own = await run.agent("scripted", ["pre_action"], "own-work");
    await own.send("pre_prompt", "own-work", prompt("its own turn"));
    await own.send("pre_prompt", "other", prompt("another session"));
    expect(run.sessionsOf("own-work").map((s) => s.ended)).toEqual([false]);
    const first = await run.agent("scripted", ["pre_action"], "shared");
    const second = await run.agent("scripted", ["pre_action"], "shared");
    await first.send("pre_prompt", "elsewhere", prompt("elsewhere"));
    expect(run.sessionsOf("shared").map((s) => s.ended)).toEqual([false]);
    expect(second.client.sessionId).toBe("shared");
  });

  it("a third run after the earlier ones ended gets a third session", async () => {
    const run = start();
    for (const n of [1, 2, 3]) {
      const a = await run.agent("ahp-acp-proxy");
      await a.send("pre_prompt", "s1", prompt(`run ${n}`));
      await a.send("session_end", "s1", {});
      await a.client.close();
      await run.detached("s1");
    }
    expect(run.sessionsOf("s1").map((s) => [s.sessionId, s.ended])).toEqual([
      ["s1", true],
      ["s1#2", true],
      ["s1#3", true],
    ]);
  });

  it("a reconnect of the same agent (same handshake) within the grace period keeps its session", async () => {
    const run = start();
    const before = await run.agent("ahp-acp-proxy", ["pre_action"], "proxy-7");
    await before.send("pre_prompt", "s1", prompt("before"));
    await before.client.close();
    await run.detached("s1");
    const after = await run.agent("ahp-acp-proxy", ["pre_action"], "proxy-7");
    await after.send("pre_prompt", "s1", prompt("after"));
    expect(run.sessionsOf("s1")).toHaveLength(1);
    expect(run.sessionsOf("s1")[0]!.connections.size).toBe(1);
  });

  it("interleaved hook-style connections (one per call) of one live session give one session", async () => {
    const run = start();
    const hook = () => run.agent("aarts-ahp-bridge", ["pre_action", "post_action", "session_end", "aarts/0.1"]);
    // Two calls at once (parallel tool calls), then more calls with gaps longer than the grace period.
    const a = await hook();
    const b = await hook();
    await a.send("pre_action", "claude-1", tool("Bash"));
    await b.send("pre_action", "claude-1", tool("Read"));
    await a.client.close();
    await b.send("post_action", "claude-1", { tool_name: "Read", result: "ok" });
    await b.client.close();
    await run.detached("claude-1");
    run.time.advance(5 * 60_000);
    const c = await hook();
    await c.send("pre_action", "claude-1", tool("Edit"));
    await c.client.close();
    await run.detached("claude-1");
    run.time.advance(10 * 60_000);
    const d = await hook();
    await d.send("pre_action", "claude-1", tool("Write"));
    expect(run.sessionsOf("claude-1")).toHaveLength(1);
    expect(run.sessionsOf("claude-1")[0]!.ended).toBe(false);
    // Its session_end ends it; a hook call after that starts a new session.
    await d.send("session_end", "claude-1", {});
    await d.client.close();
    const e = await hook();
    await e.send("pre_action", "claude-1", tool("Bash"));
    expect(run.sessionsOf("claude-1").map((s) => [s.sessionId, s.ended])).toEqual([
      ["claude-1", true],
      ["claude-1#2", false],
    ]);
  });

  it("a hook session nobody calls for the per-call grace period ends; the next call opens a new session", async () => {
    const run = start({ perCallGraceMs: 60_000 });
    const a = await run.agent("aarts-ahp-bridge", ["pre_action", "aarts/0.1"]);
    await a.send("pre_action", "claude-2", tool("Bash"));
    await a.client.close();
    await run.detached("claude-2");
    // The hook process's own handshake session (a random id, nothing but the handshake) ends after the usual 30 s.
    const handshakeOnly = [...run.host.sessions.byId.values()].filter((s) => s.perCall && !s.hadTurns);
    expect(handshakeOnly).toHaveLength(1);
    run.time.advance(30_000);
    expect(handshakeOnly[0]!.ended).toBe(true);
    run.time.advance(59_999 - 30_000);
    expect(run.sessionsOf("claude-2")[0]!.ended).toBe(false);
    run.time.advance(1);
    expect(run.sessionsOf("claude-2")[0]!.ended).toBe(true);
    const b = await run.agent("aarts-ahp-bridge", ["pre_action", "aarts/0.1"]);
    await b.send("pre_action", "claude-2", tool("Bash"));
    expect(run.sessionsOf("claude-2")).toHaveLength(2);
  });

  it("a sub-agent on its own connection joins the live session of its parent", async () => {
    const run = start();
    const main = await run.agent("framework-x", ["pre_action"], "s9");
    const sub = await run.agent("framework-x", ["pre_action"], "s9-sub");
    await main.send("pre_prompt", "s9", prompt("main"));
    await sub.send("pre_action", "s9", tool("grep"), "sub");
    const sessions = run.sessionsOf("s9");
    expect(sessions).toHaveLength(1);
    expect([...sessions[0]!.chats.keys()]).toEqual(["agent", "main", "sub"]);
  });
});

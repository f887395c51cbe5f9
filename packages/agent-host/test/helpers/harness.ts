/**
 * A running adapter on loopback for the scenarios: an `AgentHost` tapped into a real `AhpServer`
 * (scripted policy decisions as the inner handlers), its WebSocket server on port 0, virtual
 * time, and fake agents that are real `AhpClient`s over an in-memory linked pair.
 */
import { AhpClient, AhpServer, createLinkedPair, type AhpEvent, type DecisionInput } from "@ahp/core";
import { AgentHost, type AgentHostOptions } from "../../src/host/agent-host.js";
import { listenAgentHost, type AgentHostListener } from "../../src/host/server.js";
import type { TokenEntry } from "../../src/host/auth.js";
import { ManualTime } from "./scheduler.js";
import { TestClient } from "./client.js";

export const TOKENS: TokenEntry[] = [
  { token: "viewer-token", principal: "vera", role: "viewer" },
  { token: "approver-token", principal: "alice", role: "approver" },
  { token: "approver2-token", principal: "bob", role: "approver" },
  { token: "operator-token", principal: "olga", role: "operator" },
];

/** The scripted policy: block `rm`, escalate `npm_install`/`git_push`/`deploy`, allow the rest. */
export function scriptedPolicy(event: AhpEvent): DecisionInput {
  const tool = (event.payload as { tool_name?: string } | null)?.tool_name;
  if (event.event_type === "pre_action") {
    if (tool === "rm") return { decision: "block", reason: "no rm", metadata: { rule: "no-rm" } };
    if (tool === "npm_install" || tool === "git_push" || tool === "deploy")
      return { decision: "escalate", reason: `${tool} needs a human` };
    if (tool === "fetch") return { decision: "defer", retry_after_ms: 500, reason: "rate" };
  }
  return { decision: "allow" };
}

export interface Running {
  host: AgentHost;
  server: AhpServer;
  listener: AgentHostListener;
  time: ManualTime;
  url: string;
  errors: Error[];
  closes: Array<{ principal: string; clientId?: string; code: number; reason: string }>;
  /** Resolves once the host closed a client connection with `code`. */
  hostClosed(code: number): Promise<{ principal: string; clientId?: string; code: number; reason: string }>;
  agent(sessionId: string, agentId?: string): Promise<AhpClient>;
  client(token: string, clientId: string, query?: boolean): Promise<TestClient>;
  stop(): Promise<void>;
}

export async function startHost(
  options: AgentHostOptions & {
    policy?: (event: AhpEvent) => DecisionInput;
    confirmation?: "escalate" | "fail";
    /** Sees every final decision as a recorder outside the adapter does (the audit log): the object the handlers returned. */
    decided?: (event: AhpEvent, decision: unknown) => void;
  } = {},
): Promise<Running> {
  const time = new ManualTime();
  const errors: Error[] = [];
  const closes: Running["closes"] = [];
  const closeWaiters: Array<{ code: number; resolve: (c: Running["closes"][number]) => void }> = [];
  const onclose = (c: Running["closes"][number]) => {
    closes.push(c);
    for (const w of [...closeWaiters]) {
      if (w.code !== c.code) continue;
      closeWaiters.splice(closeWaiters.indexOf(w), 1);
      w.resolve(c);
    }
  };
  const { policy = scriptedPolicy, confirmation = "fail", decided, ...hostOptions } = options;
  const host = new AgentHost({ clock: time.clock, scheduler: time, onerror: (e) => errors.push(e), onclose, ...hostOptions });
  const handlers = host.wrap({
    onEvent: (event) => policy(event),
    // As the policy engine does without a matching rule: a typed point it cannot answer fails.
    typed: {
      confirmation: () => {
        if (confirmation === "escalate") return { decision: "escalate" as const };
        throw new Error("Capability not supported: Confirmation not supported");
      },
    },
  });
  const note = (event: AhpEvent, result: unknown): unknown => {
    if (decided === undefined) return result;
    if (result instanceof Promise) return result.then((d: unknown) => (decided(event, d), d));
    decided(event, result);
    return result;
  };
  const outer: typeof handlers =
    decided === undefined
      ? handlers
      : {
          ...handlers,
          onEvent: (event, ctx) => note(event, handlers.onEvent!(event, ctx)) as ReturnType<NonNullable<typeof handlers.onEvent>>,
          typed: {
            ...handlers.typed,
            confirmation: (payload, event, ctx) =>
              note(event, handlers.typed!.confirmation!(payload, event, ctx)) as ReturnType<
                NonNullable<NonNullable<typeof handlers.typed>["confirmation"]>
              >,
          },
        };
  const server = new AhpServer({ handlers: outer, handlerFailure: "decision", handlerTimeoutMs: 0 });
  const listener = await listenAgentHost(host, { tokens: TOKENS });
  const agents: AhpClient[] = [];
  const clients: TestClient[] = [];
  return {
    host,
    server,
    listener,
    time,
    url: listener.url,
    errors,
    closes,
    hostClosed(code) {
      const found = closes.find((c) => c.code === code);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => closeWaiters.push({ code, resolve }));
    },
    async agent(sessionId, agentId = "main") {
      const [agentSide, harnessSide] = createLinkedPair();
      await server.connect(harnessSide);
      const client = new AhpClient({ sessionId, agentId, timeoutMs: 0 });
      await client.connect(agentSide, { capabilities: ["pre_action"] });
      agents.push(client);
      return client;
    },
    async client(token, clientId, query = false) {
      const c = await TestClient.open(listener.url, { token, clientId, query });
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.close();
      for (const a of agents) await a.close().catch(() => undefined);
      host.dispose();
      await server.close({ graceMs: 0 });
      await listener.close();
    },
  };
}

/** A stock SDK agent and client for stream tests: one prompt turn of five text chunks. */
import { agent, client, type AgentApp, type Stream } from "@agentclientprotocol/sdk";

/** A stock agent app: `initialize`, `session/new` (session `s1`), and a prompt turn that sends chunks `c0`…`c4`, then `end_turn`. */
export function fiveChunkAgent(): AgentApp {
  return agent({ name: "a" })
    .onRequest("initialize", () => ({ protocolVersion: 1, agentCapabilities: {} }))
    .onRequest("session/new", () => ({ sessionId: "s1" }))
    .onRequest("session/prompt", async ({ params, client: c }) => {
      for (let i = 0; i < 5; i++)
        await c.notify("session/update", {
          sessionId: params.sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `c${i}` } },
        });
      return { stopReason: "end_turn" as const };
    });
}

/** A stock client on `stream`: initialize, a new session, one prompt; the turn's stop reason and the chunk texts seen, in order. */
export async function chunkTurn(stream: Stream): Promise<{ stopReason: string; seen: string[]; close(): void }> {
  const seen: string[] = [];
  const conn = client({ name: "c" })
    .onNotification("session/update", ({ params }) => {
      const u = params.update;
      if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") seen.push(u.content.text);
    })
    .connect(stream);
  await conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await conn.agent.request("session/new", { cwd: "/p", mcpServers: [] });
  const r = await conn.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
  return { stopReason: r.stopReason, seen, close: () => conn.close() };
}

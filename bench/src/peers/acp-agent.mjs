// A stock ACP agent (@agentclientprotocol/sdk, default import) for the acp suite: every prompt
// streams ACP_UPDATES agent_message_chunk updates (default 20), then ends the turn. stdio only.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const updates = Number(process.env.ACP_UPDATES ?? "20");
let n = 0;
acp
  .agent({ name: "bench-agent" })
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false, sessionCapabilities: { resume: {} } },
  }))
  .onRequest("session/new", () => ({ sessionId: `b${++n}` }))
  .onRequest("session/resume", () => ({}))
  .onNotification("session/cancel", () => undefined)
  .onRequest("session/prompt", async ({ params, client }) => {
    for (let i = 0; i < updates; i++) {
      await client.notify("session/update", {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `chunk ${i} of the answer` } },
      });
    }
    return { stopReason: "end_turn" };
  })
  .connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));

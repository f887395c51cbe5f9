/**
 * Mounts one harness in Express, Fastify and Hono and on a plain `http.Server` over WebSocket,
 * then sends the same two events to each as an agent would, and stops.
 *
 *   pnpm start        # tsx src/main.ts
 */
import { fileURLToPath } from "node:url";
import { AhpClient, type Transport } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { mountExpress } from "./express.js";
import { mountFastify } from "./fastify.js";
import { API_KEY, createHarness, type Mounted } from "./harness.js";
import { mountHono } from "./hono.js";
import { mountWebSocket } from "./websocket.js";

export const RECIPES = { express: mountExpress, fastify: mountFastify, hono: mountHono, websocket: mountWebSocket } as const;

/** An agent connected to a mounted harness (HTTP or WebSocket by the URL's scheme). */
export async function connectAgent(url: string, key = API_KEY): Promise<AhpClient> {
  const auth = { type: "api_key" as const, key };
  const transport: Transport = url.startsWith("ws") ? new WebSocketClientTransport(url, { auth }) : new HttpClientTransport(url, { auth });
  const client = new AhpClient({ agentInfo: { framework: "example-agent", version: "1.0.0" } });
  await client.connect(transport, { capabilities: ["pre_action"] });
  return client;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const server = createHarness();
  for (const [name, mount] of Object.entries(RECIPES)) {
    const mounted: Mounted = await mount(server);
    const client = await connectAgent(mounted.url);
    for (const command of ["npm test", "rm -rf build/"]) {
      const d = await client.send("pre_action", { tool_name: "bash", arguments: { command } });
      console.log(`${name.padEnd(9)} ${mounted.url.padEnd(30)} ${command.padEnd(14)} ${d.decision}`);
    }
    await client.close();
    await mounted.close();
  }
}

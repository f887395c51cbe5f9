// Subscribed Agent Host clients in their own process, so that decoding their frames is not charged
// to the harness being measured. Started with `fork()`: `node agent-host-clients.mjs <url> <n>
// <channel>...`. Opens <n> WebSocket clients, each initializes with the channels as initial
// subscriptions and parses every frame it receives (as a real client would). Sends
// `{ type: "ready" }` over IPC once all are initialized; answers `{ type: "count" }` with
// `{ type: "count", counts, closed }` (frames per client, sockets closed by the host).
import { WebSocket } from "ws";

const [url, nArg, ...channels] = process.argv.slice(2);
const n = Number(nArg);
const counts = new Array(n).fill(0);
const sockets = [];
let closed = 0;

function open(i) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once("error", reject);
    ws.once("open", () => {
      ws.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { channel: "ahp-root://", protocolVersions: ["1.1.0"], clientId: `bench-peer-${i}`, initialSubscriptions: channels },
        }),
      );
    });
    let initialized = false;
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString());
      if (!initialized) {
        initialized = true;
        if (message.error !== undefined) reject(new Error(`initialize failed: ${JSON.stringify(message.error)}`));
        else resolve(ws);
        return;
      }
      counts[i]++;
    });
    ws.on("close", () => closed++);
  });
}

for (let i = 0; i < n; i++) sockets.push(await open(i));
process.send({ type: "ready" });
process.on("message", (message) => {
  if (message?.type === "count") process.send({ type: "count", counts, closed });
  if (message?.type === "stop") {
    for (const ws of sockets) ws.terminate();
    process.disconnect();
  }
});

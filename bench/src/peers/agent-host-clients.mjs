// Subscribed Agent Host clients in their own process, so that decoding their frames is not charged
// to the harness being measured. Started with `fork()`: `node agent-host-clients.mjs <url> <n>
// <channel>...`. Opens <n> WebSocket clients, each initializes with the channels as initial
// subscriptions and parses every frame it receives (as a real client would). Sends
// `{ type: "ready" }` over IPC once all are initialized; answers `{ type: "count" }` with
// `{ type: "count", counts, closed }` (frames per client, sockets closed by the host) and
// `{ type: "await", seq }` with the same message once every client has received the action
// envelope with serverSeq `seq` (or a client was closed). `gaps` counts action envelopes whose
// serverSeq was not the previous one plus 1 (the clients subscribe to every channel of the run).
import { WebSocket } from "ws";

const [url, nArg, ...channels] = process.argv.slice(2);
const n = Number(nArg);
const counts = new Array(n).fill(0);
const lastSeq = new Array(n).fill(-1);
const sockets = [];
let closed = 0;
let gaps = 0;
let awaited;

function report() {
  process.send({ type: "count", counts, closed, gaps, lastSeq });
}

function check() {
  if (awaited === undefined) return;
  if (closed === 0 && lastSeq.some((s) => s < awaited)) return;
  awaited = undefined;
  report();
}

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
        else {
          lastSeq[i] = message.result.serverSeq;
          resolve(ws);
        }
        return;
      }
      counts[i]++;
      if (message.method === "action") {
        const seq = message.params.serverSeq;
        if (seq !== lastSeq[i] + 1) gaps++;
        lastSeq[i] = seq;
        if (awaited !== undefined && seq >= awaited) check();
      }
    });
    ws.on("close", () => {
      closed++;
      check();
    });
  });
}

for (let i = 0; i < n; i++) sockets.push(await open(i));
process.send({ type: "ready" });
process.on("message", (message) => {
  if (message?.type === "count") report();
  if (message?.type === "await") {
    awaited = message.seq;
    check();
  }
  if (message?.type === "stop") {
    for (const ws of sockets) ws.terminate();
    process.disconnect();
  }
});

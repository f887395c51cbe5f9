/**
 * AHP over HTTP on 127.0.0.1, client and server in this process (one thread: CPU figures cover
 * both sides).
 *
 * Floor: a bare `node:http` server that parses the JSON body, decides and answers, driven by a
 * bare keep-alive undici Pool through its dispatch handler (the cheapest way to use the HTTP stack
 * `HttpClientTransport` uses by default, and the way it uses it), so the ratio isolates what
 * AhpClient/HttpClientTransport and createHttpHandler/AhpServer add. Client-choice rows compare
 * bare clients against the same bare server: undici's `request()` (a response stream per
 * exchange), `node:http` with a keep-alive Agent, and the built-in fetch (reference only).
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { AhpClient, AhpServer } from "@ahp/core";
import { HttpClientTransport, listenHttp } from "@ahp/transport-http";
import { Pool } from "undici";
import {
  interleaved,
  splitTransportRows,
  measurePairedSequential,
  measurePipelined,
  measureSequential,
  medianMeasurement,
  pairedRatioNote,
  throughputRatio,
  type Row,
  type Suite,
} from "../harness.js";

const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };

/** What the bare server answers a handshake with (so that AhpClient can talk to it). */
const HANDSHAKE_RESULT = { protocol_version: "2.4", harness_info: { name: "bare", version: "0", capabilities: [] }, config: {} };

function requestBody(id: number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: String(id),
    method: "ahp/event",
    params: { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: new Date().toISOString(), depth: 0, payload },
  });
}

function notificationBody(): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method: "ahp/event",
    params: { event_type: "post_action", session_id: "s", agent_id: "a", timestamp: new Date().toISOString(), depth: 0, payload: {} },
  });
}

/** The floor harness: parse, decide, answer; 204 for notifications. */
async function bareServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const m = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        id?: string;
        method: string;
        params: { payload?: { arguments?: { command?: string } } };
      };
      if (m.id === undefined) {
        res.writeHead(204).end();
        return;
      }
      const result =
        m.method === "ahp/handshake"
          ? HANDSHAKE_RESULT
          : String(m.params.payload?.arguments?.command).includes("rm -rf")
            ? { decision: "block", reason: "no" }
            : { decision: "allow" };
      const text = JSON.stringify({ jsonrpc: "2.0", id: m.id, result });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ahp`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

type Post = (body: string) => Promise<string>;

const JSON_HEADERS = { "content-type": "application/json" };

/** undici through its dispatch handler: status and body chunks as callbacks, no response stream. */
function undiciPost(url: string): { post: Post; close(): Promise<void> } {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 128 });
  const { origin, pathname: path } = u;
  return {
    post: (body) =>
      new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        pool.dispatch(
          { origin, path, method: "POST", headers: JSON_HEADERS, body },
          {
            // undici takes a handler with onRequestStart for one of its current interface.
            onRequestStart: () => undefined,
            onResponseData: (_controller, chunk) => void chunks.push(chunk),
            onResponseEnd: () => resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")),
            onResponseError: (_controller, error) => reject(error),
          },
        );
      }),
    close: () => pool.close(),
  };
}

/** undici's `request()`: a response object with a body stream per exchange. */
function undiciRequestPost(url: string): { post: Post; close(): Promise<void> } {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 128 });
  return {
    post: async (body) => {
      const res = await pool.request({ path: u.pathname, method: "POST", headers: { "content-type": "application/json" }, body });
      return res.body.text();
    },
    close: () => pool.close(),
  };
}

function nodePost(url: string): { post: Post; close(): Promise<void> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  return {
    post: (body) =>
      new Promise<string>((resolve, reject) => {
        const req = http.request(
          url,
          { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(body);
      }),
    close: async () => agent.destroy(),
  };
}

function fetchPost(url: string): { post: Post; close(): Promise<void> } {
  return {
    post: async (body) => (await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body })).text(),
    close: async () => undefined,
  };
}

/** A full request: send, parse the answer, check it. */
function rawCall(post: Post): () => Promise<unknown> {
  let id = 0;
  return async () => {
    const n = ++id;
    const answer = JSON.parse(await post(requestBody(n))) as { id: string; result: { decision: string } };
    if (answer.id !== String(n)) throw new Error("id mismatch");
    return answer.result;
  };
}

export const suite: Suite = {
  name: "http",
  async run({ quick }) {
    const rounds = quick ? 1 : 7;
    const paired = { blocks: quick ? 4 : 40, blockSize: quick ? 50 : 500, warmup: quick ? 50 : 200 };
    const pip = { total: quick ? 500 : 6000, concurrency: 64, runs: 1, warmup: quick ? 100 : 500 };

    const bare = await bareServer();
    const clients = {
      undici: undiciPost(bare.url),
      request: undiciRequestPost(bare.url),
      node: nodePost(bare.url),
      fetch: fetchPost(bare.url),
    };
    const server = new AhpServer({
      handlers: {
        onEvent: (event) =>
          String((event.payload as typeof payload).arguments.command).includes("rm -rf")
            ? { decision: "block", reason: "no" }
            : { decision: "allow" },
        onNotification: () => undefined,
      },
    });
    const listener = await listenHttp(server);
    const ours = new AhpClient();
    await ours.connect(new HttpClientTransport(listener.url));
    // The split: our client against the bare server, the bare client against our server.
    const clientOnly = new AhpClient();
    await clientOnly.connect(new HttpClientTransport(bare.url));
    const serverOnlyClient = undiciPost(listener.url);
    const serverOnlyCall = rawCall(serverOnlyClient.post);
    const clientOnlyCall = () => clientOnly.send("pre_action", payload);
    const oursNode = new AhpClient();
    await oursNode.connect(new HttpClientTransport(listener.url, { client: "node" }));
    const floorCall = rawCall(clients.undici.post);
    const requestCall = rawCall(clients.request.post);
    const nodeCall = rawCall(clients.node.post);
    const fetchCall = rawCall(clients.fetch.post);
    const oursCall = () => ours.send("pre_action", payload);
    const oursNodeCall = () => oursNode.send("pre_action", payload);

    // Warm every path once (JIT, sockets) before the timed rounds.
    for (const op of [floorCall, requestCall, nodeCall, fetchCall, oursCall, oursNodeCall, serverOnlyCall, clientOnlyCall])
      for (let i = 0; i < (quick ? 50 : 1000); i++) await op();

    // Sequential: the floor, ours, the two split pairs and the other clients in the same paired
    // blocks. fetch is about ten times slower than the rest and only a reference: measured apart.
    const sequential = await measurePairedSequential(
      {
        floor: floorCall,
        ours: oursCall,
        serverOnly: serverOnlyCall,
        clientOnly: clientOnlyCall,
        oursNode: oursNodeCall,
        request: requestCall,
        node: nodeCall,
      },
      paired,
    );
    const fetchSequential = await measureSequential(fetchCall, { iterations: quick ? 50 : 500, runs: rounds, warmup: quick ? 50 : 200 });
    const pipelined = await interleaved(
      {
        floor: () => measurePipelined(floorCall, pip),
        ours: () => measurePipelined(oursCall, pip),
        oursNode: () => measurePipelined(oursNodeCall, pip),
        request: () => measurePipelined(requestCall, pip),
        node: () => measurePipelined(nodeCall, pip),
        fetch: () => measurePipelined(fetchCall, { ...pip, total: Math.ceil(pip.total / 4) }),
        floorNote: () => measurePipelined(() => clients.undici.post(notificationBody()), pip),
        oursNote: () => measurePipelined(() => ours.send("post_action", {}), pip),
      },
      rounds,
      medianMeasurement,
    );

    await ours.close();
    await oursNode.close();
    await clientOnly.close();
    await serverOnlyClient.close();
    await listener.close();
    await server.close();
    for (const c of Object.values(clients)) await c.close();
    await bare.close();

    const name = "http";
    const s = sequential.measurements;
    const p = pipelined;
    const rows: Row[] = [
      ...splitTransportRows(
        name,
        {
          floor: "bare node:http server + bare undici Pool (dispatch handler)",
          floorNotifications: "notifications (204), pipelined 64",
          ours: "AhpClient+HttpClientTransport -> listenHttp+AhpServer",
          harnessSide: "bare undici -> listenHttp+AhpServer",
          agentSide: "AhpClient+HttpClientTransport -> bare server",
          notifications: "notifications (post_action), pipelined 64",
          notificationsNote: "each waits for its 204",
        },
        sequential,
        p,
      ),
      {
        suite: name,
        case: 'same with client: "node" (http.Agent), sequential',
        measurement: s.oursNode,
        floor: s.floor,
        ratio: sequential.ratios.oursNode.median,
        note: pairedRatioNote(sequential.ratios.oursNode),
      },
      {
        suite: name,
        case: 'same with client: "node", pipelined 64',
        measurement: p.oursNode,
        floor: p.floor,
        ratio: throughputRatio(p.oursNode, p.floor),
      },
      {
        suite: name,
        case: "client choice: bare undici Pool request() (a body stream per answer), sequential",
        measurement: s.request,
        floor: s.floor,
        ratio: throughputRatio(s.request, s.floor),
        note: "ratio = req/s vs bare undici dispatch",
      },
      {
        suite: name,
        case: "client choice: bare undici Pool request(), pipelined 64",
        measurement: p.request,
        floor: p.floor,
        ratio: throughputRatio(p.request, p.floor),
        note: "ratio = req/s vs bare undici dispatch",
      },
      {
        suite: name,
        case: "client choice: bare node:http keep-alive Agent, sequential",
        measurement: s.node,
        floor: s.floor,
        ratio: throughputRatio(s.node, s.floor),
        note: "ratio = req/s vs bare undici dispatch",
      },
      {
        suite: name,
        case: "client choice: bare node:http Agent, pipelined 64",
        measurement: p.node,
        floor: p.floor,
        ratio: throughputRatio(p.node, p.floor),
        note: "ratio = req/s vs bare undici dispatch",
      },
      {
        suite: name,
        case: "client choice: built-in fetch, sequential (reference)",
        measurement: fetchSequential,
        floor: s.floor,
        ratio: throughputRatio(fetchSequential, s.floor),
        note: "ratio = req/s vs bare undici dispatch (measured after the paired blocks)",
      },
      {
        suite: name,
        case: "client choice: built-in fetch, pipelined 64 (reference)",
        measurement: p.fetch,
        floor: p.floor,
        ratio: throughputRatio(p.fetch, p.floor),
        note: "ratio = req/s vs bare undici dispatch",
      },
    ];
    return rows;
  },
};

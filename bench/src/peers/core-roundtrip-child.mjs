// In-process `pre_action` round trips, for the instruction-count suite (run under callgrind) and
// for profiling (`node --cpu-prof`).
//
//   node core-roundtrip-child.mjs <ours|floor> <N>
//       N sequential round trips, then one line of JSON ({ mode, counts, decisions }).
//   node core-roundtrip-child.mjs <ours|floor> <N1,N2,...> --warmup W --phases
//       W round trips, then "ready" on stdout; after each line read from stdin, the next phase
//       (N1, then N2, ...) and "done <Ni>" on stdout; after the last line read, the JSON line.
//       The reader switches counting on at "ready" and takes a count at each "done": every
//       phase pays the same fixed cost (one line read, one written), so the difference of two
//       phases is the round trips alone.
//
// `ours` is AhpClient -> in-memory pair (JSON encoded, as on a wire) -> AhpServer with full
// validation on both sides, as in the `core` suite. `floor` is that suite's floor: the same
// request and response stringified and parsed both ways, with the same microtask hops, and ids
// as long as AhpClient's UUIDs so that the texts are as long as ours.
//
// `ours-streams` and `floor-streams` add the NDJSON framing of the stdio and Unix socket
// transports: both sides talk over two in-memory Node streams (PassThrough), so everything but
// the system calls is counted. `ours-streams` is AhpClient on core's NDJSON client transport and
// AhpServer on its NDJSON server transport; `floor-streams` is the stdio floor's client and peer
// (bench/src/peers/raw-ndjson-peer.mjs itself, and a copy of RawNdjsonClient of
// bench/src/ndjson-bench.ts): each line cut by index and parsed with JSON.parse, one write per
// message, a fixed reply.
import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";
import { serve } from "./raw-ndjson-peer.mjs";

const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };

const SESSION_ID = "6c1f0a52-3d4e-4b7a-9f21-0e8d5c3b2a19";
const AGENT_ID = "0b9e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b";

/** The floors' `pre_action` event, as AhpClient builds it. */
const rawEvent = () => ({
  event_type: "pre_action",
  session_id: SESSION_ID,
  agent_id: AGENT_ID,
  timestamp: new Date().toISOString(),
  depth: 0,
  payload,
});

const decide = (command) => (command.includes("rm -rf") ? { decision: "block", reason: "no" } : { decision: "allow" });

/** `run(n)` of an AhpClient: n sequential `pre_action` round trips, resolving with how many were allowed. */
const clientRun = (client) => async (n) => {
  let allowed = 0;
  for (let i = 0; i < n; i++) {
    const decision = await client.send("pre_action", payload);
    if (decision.decision === "allow") allowed++;
  }
  return allowed;
};

/** Returns `run(n)`, which makes n round trips and resolves with how many were allowed, and `close()`. */
async function ours() {
  // Loaded here so that the floor's process does not pay for it.
  const { AhpClient, AhpServer, createLinkedPair } = await import("@ahp/core");
  const server = new AhpServer({ handlers: { onEvent: (event) => decide(String(event.payload.arguments.command)) } });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient();
  await client.connect(agentSide);
  return {
    run: clientRun(client),
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/** ours over NDJSON byte streams: the framing, write grouping and stream plumbing of the stdio transports. */
async function oursStreams() {
  const { AhpClient, AhpServer, NdjsonClientTransport, NdjsonServerTransport } = await import("@ahp/core");
  const toHarness = new PassThrough();
  const toAgent = new PassThrough();
  class MemoryClientTransport extends NdjsonClientTransport {
    constructor() {
      super("memory", { kind: "memory" });
    }
    openStreams() {
      return { readable: toAgent, writable: toHarness, info: { kind: "memory" }, release: () => undefined };
    }
  }
  const server = new AhpServer({ handlers: { onEvent: (event) => decide(String(event.payload.arguments.command)) } });
  await server.connect(new NdjsonServerTransport({ readable: toHarness, writable: toAgent, info: { kind: "memory" } }));
  const client = new AhpClient();
  await client.connect(new MemoryClientTransport());
  return {
    run: clientRun(client),
    async close() {
      await client.close();
      await server.close({ graceMs: 0 });
    },
  };
}

/** The stdio floor's peer and client over the same in-memory streams. */
async function floorStreams() {
  const toHarness = new PassThrough();
  const toAgent = new PassThrough();
  // The peer: bench/src/peers/raw-ndjson-peer.mjs itself (a fixed `allow` for every request).
  serve(toHarness, toAgent);
  // The client: as RawNdjsonClient in bench/src/ndjson-bench.ts.
  const pending = new Map();
  let rest = "";
  let id = 0;
  toAgent.setEncoding("utf8");
  toAgent.on("data", (chunk) => {
    const text = rest.length === 0 ? chunk : rest + chunk;
    let start = 0;
    let nl;
    while ((nl = text.indexOf("\n", start)) !== -1) {
      const message = JSON.parse(text.slice(start, nl));
      start = nl + 1;
      const resolve = pending.get(message.id);
      if (resolve !== undefined) {
        pending.delete(message.id);
        resolve(message.result);
      }
    }
    rest = start === text.length ? "" : text.slice(start);
  });
  const request = (params) => {
    const rid = String(++id).padStart(36, "0");
    const answered = new Promise((resolve) => pending.set(rid, resolve));
    toHarness.write(`${JSON.stringify({ jsonrpc: "2.0", id: rid, method: "ahp/event", params })}\n`);
    return answered;
  };
  return {
    async run(n) {
      let allowed = 0;
      for (let i = 0; i < n; i++) {
        const result = await request(rawEvent());
        if (result.decision === "allow") allowed++;
      }
      return allowed;
    },
    async close() {},
  };
}

async function floor() {
  let id = 0;
  return {
    async run(n) {
      let allowed = 0;
      for (let i = 0; i < n; i++) {
        const request = JSON.stringify({
          jsonrpc: "2.0",
          id: String(++id).padStart(36, "0"),
          method: "ahp/event",
          params: rawEvent(),
        });
        // The other side: parse, decide, answer. Same microtask hops as the linked pair.
        await Promise.resolve();
        const incoming = JSON.parse(request);
        const response = JSON.stringify({ jsonrpc: "2.0", id: incoming.id, result: decide(incoming.params.payload.arguments.command) });
        await Promise.resolve();
        const answer = JSON.parse(response);
        if (answer.result.decision === "allow") allowed++;
      }
      return allowed;
    },
    async close() {},
  };
}

const args = process.argv.slice(2);
const [mode, list] = args;
const counts = String(list).split(",").map(Number);
const warmupAt = args.indexOf("--warmup");
const warmup = warmupAt === -1 ? 0 : Number(args[warmupAt + 1]);
const phased = args.includes("--phases");
const MODES = { ours, floor, "ours-streams": oursStreams, "floor-streams": floorStreams };
if (!Object.hasOwn(MODES, mode ?? "") || !counts.every((n) => Number.isInteger(n) && n >= 0) || !(warmup >= 0)) {
  process.stderr.write("usage: core-roundtrip-child.mjs <ours|floor|ours-streams|floor-streams> <N[,N...]> [--warmup W] [--phases]\n");
  process.exit(2);
}

const impl = await MODES[mode]();
const lines = phased ? createInterface({ input: process.stdin })[Symbol.asyncIterator]() : undefined;
/** Phased: says `label` and waits for the reader's go-ahead (one line). */
const step = async (label) => {
  if (lines === undefined) return;
  // A full collection at the end of every phase (counted in it): each phase then starts from the
  // same heap, and no phase pays for garbage the one before left. Under --expose-gc only.
  globalThis.gc?.();
  process.stdout.write(`${label}\n`);
  await lines.next();
};

await impl.run(warmup);
await step("ready");
let decisions = 0;
for (const n of counts) {
  decisions += await impl.run(n);
  await step(`done ${n}`);
}
await impl.close();
process.stdout.write(`${JSON.stringify({ mode, counts, decisions })}\n`);
process.exit(0);

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
import { createInterface } from "node:readline";

const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };

const SESSION_ID = "6c1f0a52-3d4e-4b7a-9f21-0e8d5c3b2a19";
const AGENT_ID = "0b9e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b";

const decide = (command) => (command.includes("rm -rf") ? { decision: "block", reason: "no" } : { decision: "allow" });

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
    async run(n) {
      let allowed = 0;
      for (let i = 0; i < n; i++) {
        const decision = await client.send("pre_action", payload);
        if (decision.decision === "allow") allowed++;
      }
      return allowed;
    },
    async close() {
      await client.close();
      await server.close();
    },
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
          params: {
            event_type: "pre_action",
            session_id: SESSION_ID,
            agent_id: AGENT_ID,
            timestamp: new Date().toISOString(),
            depth: 0,
            payload,
          },
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
if ((mode !== "ours" && mode !== "floor") || !counts.every((n) => Number.isInteger(n) && n >= 0) || !(warmup >= 0)) {
  process.stderr.write("usage: core-roundtrip-child.mjs <ours|floor> <N[,N...]> [--warmup W] [--phases]\n");
  process.exit(2);
}

const impl = await (mode === "ours" ? ours() : floor());
const lines = phased ? createInterface({ input: process.stdin })[Symbol.asyncIterator]() : undefined;
/** Phased: says `label` and waits for the reader's go-ahead (one line). */
const step = async (label) => {
  if (lines === undefined) return;
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

/**
 * In-process round trip of a `pre_action` decision: AhpClient -> in-memory transport (JSON
 * encoded, as on a wire) -> AhpServer -> back, with full schema validation on both sides.
 * Floor: the same JSON request stringified, parsed, answered, parsed, with no library; its ids are
 * as long as AhpClient's UUIDs, so that its texts are as long as ours.
 */
import { AhpClient, AhpServer, createLinkedPair } from "@ahp/core";
import { measureSequential, throughputRatio, type Row, type Suite } from "../harness.js";

const SESSION_ID = "6c1f0a52-3d4e-4b7a-9f21-0e8d5c3b2a19";
const AGENT_ID = "0b9e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b";

const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };

async function floor(iterations: number) {
  let id = 0;
  return measureSequential(
    async () => {
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
      const incoming = JSON.parse(request) as { id: string; params: { payload: { arguments: { command: string } } } };
      const decision = incoming.params.payload.arguments.command.includes("rm -rf")
        ? { decision: "block", reason: "no" }
        : { decision: "allow" };
      const response = JSON.stringify({ jsonrpc: "2.0", id: incoming.id, result: decision });
      await Promise.resolve();
      const answer = JSON.parse(response) as { result: unknown };
      return answer.result;
    },
    { iterations, warmup: 2000 },
  );
}

export const suite: Suite = {
  name: "core",
  async run({ quick }) {
    const iterations = quick ? 500 : 20000;
    const server = new AhpServer({
      handlers: {
        onEvent: (event) =>
          String((event.payload as typeof payload).arguments.command).includes("rm -rf")
            ? { decision: "block", reason: "no" }
            : { decision: "allow" },
      },
    });
    const [agentSide, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    const client = new AhpClient();
    await client.connect(agentSide);

    const rawFloor = await floor(iterations);
    const lib = await measureSequential(() => client.send("pre_action", payload), { iterations, warmup: 2000 });
    const noValidation = await (async () => {
      const s2 = new AhpServer({ validateResults: false, handlers: { onEvent: () => ({ decision: "allow" }) } });
      const [a, b] = createLinkedPair();
      await s2.connect(b);
      const c2 = new AhpClient({ validateEvents: false });
      await c2.connect(a);
      const m = await measureSequential(() => c2.send("pre_action", payload), { iterations, warmup: 2000 });
      await c2.close();
      return m;
    })();
    const asyncHandler = await (async () => {
      // A handler that awaits (a lookup, an approval): the engine's async path, with its timeout.
      const s3 = new AhpServer({
        handlers: {
          onEvent: async () => {
            await Promise.resolve();
            return { decision: "allow" };
          },
        },
      });
      const [a, b] = createLinkedPair();
      await s3.connect(b);
      const c3 = new AhpClient();
      await c3.connect(a);
      const m = await measureSequential(() => c3.send("pre_action", payload), { iterations, warmup: 2000 });
      await c3.close();
      await s3.close();
      return m;
    })();
    await client.close();
    await server.close();
    const rows: Row[] = [
      { suite: "core", case: "raw floor (stringify/parse both ways)", measurement: rawFloor },
      {
        suite: "core",
        case: "AhpClient->memory->AhpServer pre_action",
        measurement: lib,
        floor: rawFloor,
        ratio: 1 / throughputRatio(lib, rawFloor),
        target: "<= 3x floor time",
        note: "full validation both sides",
      },
      {
        suite: "core",
        case: "same, outgoing-event/result validation off",
        measurement: noValidation,
        floor: rawFloor,
        ratio: 1 / throughputRatio(noValidation, rawFloor),
        note: "incoming validation still on",
      },
      {
        suite: "core",
        case: "same, async handler (awaits once)",
        measurement: asyncHandler,
        floor: rawFloor,
        ratio: 1 / throughputRatio(asyncHandler, rawFloor),
        note: "handler timeout armed per call",
      },
    ];
    return rows;
  },
};

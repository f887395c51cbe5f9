// The harness peers of the `stdio-layers` suite: one stdio harness per layer of ours, each the
// floor with one of our layers put in, up to the harness as shipped. Every variant answers each
// `ahp/event` request with `allow` and an `ahp/handshake` with a fixed answer.
//
//   node layer-harness.mjs <variant>
//
//   floor            bench/src/peers/raw-ndjson-peer.mjs: setEncoding, lines cut by index,
//                    JSON.parse, a template answer in one write
//   validate         floor + the event's and the decision's schema checks of AhpServer (zod)
//   encode           floor + the answer built as an object and JSON.stringify'd
//   validate-encode  both of the above
//   decoder          core's NdjsonDecoder on the raw chunks (size and nesting limits) + template
//   transport        core's NdjsonServerTransport, the answer object posted (no AhpServer)
//   server           AhpServer on NdjsonServerTransport (serveStdio without its in-flight limit)
//   shipped          serveStdio(AhpServer), as bench/src/peers/ahp-harness.mjs
import { AhpEventSchema, AhpServer, DecisionSchema, EVENT_TABLE, NdjsonDecoder, NdjsonServerTransport, decode } from "@ahp/core";
import { serveStdio } from "@ahp/transport-stdio";
import { serve } from "./raw-ndjson-peer.mjs";

const HANDSHAKE = '{"protocol_version":"2.4","harness_info":{"name":"floor","version":"0","capabilities":[]},"config":{}}';
const allow = () => ({ decision: "allow" });

/** The floor's answer line to one request. */
const template = (message) =>
  message.method === "ahp/handshake"
    ? `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${HANDSHAKE}}\n`
    : `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"decision":"allow"}}\n`;

/** What AhpServer checks of an `ahp/event` request and of its handler's decision. */
function validate(message) {
  if (message.method !== "ahp/event") return;
  const event = decode(AhpEventSchema, message.params);
  if (!event.ok) throw new Error(event.detail);
  const info = EVENT_TABLE[event.value.event_type];
  if (info.payloadCheck === "shape" && info.payloadSchema !== undefined && !decode(info.payloadSchema, event.value.payload).ok) {
    throw new Error("payload");
  }
  if (!decode(DecisionSchema, allow()).ok) throw new Error("decision");
}

/** The answer as an object, encoded as ours does. */
const encode = (message) =>
  `${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: message.method === "ahp/handshake" ? JSON.parse(HANDSHAKE) : allow() })}\n`;

/** The floor's peer (raw-ndjson-peer.mjs) with `answer(message)` making the line. */
function floorLoop(answer) {
  serve(process.stdin, process.stdout, answer);
  process.stdin.on("end", () => process.exit(0));
}

const server = () => new AhpServer({ handlers: { onEvent: allow } });

const VARIANTS = {
  floor: () => floorLoop(template),
  validate: () =>
    floorLoop((message) => {
      validate(message);
      return template(message);
    }),
  encode: () => floorLoop(encode),
  "validate-encode": () =>
    floorLoop((message) => {
      validate(message);
      return encode(message);
    }),
  decoder: () => {
    const decoder = new NdjsonDecoder();
    process.stdin.on("data", (chunk) => {
      for (const frame of decoder.push(chunk)) if (frame.ok && frame.value.id !== undefined) process.stdout.write(template(frame.value));
    });
    process.stdin.on("end", () => process.exit(0));
  },
  transport: async () => {
    const transport = new NdjsonServerTransport({ readable: process.stdin, writable: process.stdout, info: { transport: "stdio" } });
    const failed = () => undefined;
    transport.onmessage = (message) =>
      transport.post(
        { jsonrpc: "2.0", id: message.id, result: message.method === "ahp/handshake" ? JSON.parse(HANDSHAKE) : allow() },
        failed,
        undefined,
      );
    await transport.start();
    void transport.closed.then(() => process.exit(0));
  },
  server: async () => {
    const transport = new NdjsonServerTransport({ readable: process.stdin, writable: process.stdout, info: { transport: "stdio" } });
    await server().connect(transport);
    void transport.closed.then(() => process.exit(0));
  },
  shipped: () => serveStdio(server()),
};

const variant = process.argv[2];
if (variant === undefined || !Object.hasOwn(VARIANTS, variant)) {
  process.stderr.write(`usage: layer-harness.mjs <${Object.keys(VARIANTS).join("|")}>\n`);
  process.exit(2);
}
await VARIANTS[variant]();

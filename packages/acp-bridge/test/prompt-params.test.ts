/**
 * A plain `session/prompt` past the SDK's parse (ADR 0112): `plainPromptParams` only takes params
 * the SDK's own schema accepts, and gives what that schema gives (checked against the SDK's schema
 * on generated params); a bridge served on Node streams answers every prompt (plain, not plain,
 * invalid, before `initialize`) with what the same bridge answers in memory, where the SDK parses
 * everything, and sends the agent the same `session/prompt` line.
 */
import { createRequire } from "node:module";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { client, type ClientConnection } from "@agentclientprotocol/sdk";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  createAcpBridge,
  createUpstreamApp,
  ManualClock,
  MemorySuspensionStore,
  METHODS,
  nodeStream,
  type AcpBridge,
} from "../src/index.js";
import { ndJsonNodeStream, RAW_READER, type RawReader } from "../src/node-stream.js";
import { plainPromptParams } from "../src/prompt-params.js";
import { agentDouble, type AgentDoubleOptions } from "./helpers/agent.js";
import { until } from "./helpers/setup.js";

// The SDK's own schema of the params, from its module file (the package does not export it).
const sdkMain = createRequire(import.meta.url).resolve("@agentclientprotocol/sdk");
const { zPromptRequest } = (await import(new URL("../schema/zod.gen.js", pathToFileURL(sdkMain)).href)) as {
  zPromptRequest: { safeParse(v: unknown): { success: boolean; data?: unknown } };
};

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const text = fc.string({ maxLength: 12 });
const block = fc.oneof(
  fc.record({ type: fc.constant("text"), text }),
  fc.record({ text, type: fc.constant("text") }),
  fc.record({ type: fc.constantFrom("text", "image", "bogus"), text: fc.oneof(text, fc.integer()) }),
  fc.record({ type: fc.constant("text"), text, _meta: fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }) }),
  fc.record({ type: fc.constant("text"), text, annotations: fc.constantFrom(null, { priority: 1 }) }),
  fc.record({ type: fc.constant("text") }),
  fc.anything({ maxDepth: 1 }),
);
const params = fc.oneof(
  fc.record({ sessionId: text, prompt: fc.array(block, { maxLength: 4 }) }),
  fc.record({ prompt: fc.array(block, { maxLength: 4 }), sessionId: text }),
  fc.record({ sessionId: fc.oneof(text, fc.integer(), fc.constant(null)), prompt: fc.oneof(fc.array(block, { maxLength: 2 }), text) }),
  fc.record({ sessionId: text, prompt: fc.array(block, { maxLength: 2 }), _meta: fc.constantFrom(null, { a: 1 }) }),
  fc.record({ sessionId: text, prompt: fc.array(block, { maxLength: 2 }), extra: fc.integer() }),
  fc.anything({ maxDepth: 2 }),
);

describe("plainPromptParams", () => {
  it("takes only params the SDK's schema accepts, and gives exactly what it gives (same keys, same order)", () => {
    let taken = 0;
    fc.assert(
      fc.property(params, (p) => {
        // Through JSON, as the params arrive on the wire.
        const wire = JSON.parse(JSON.stringify(p ?? null)) as unknown;
        const ours = plainPromptParams(wire);
        if (ours === undefined) return;
        taken++;
        const sdk = zPromptRequest.safeParse(wire);
        expect(sdk.success).toBe(true);
        expect(JSON.stringify(ours)).toBe(JSON.stringify(sdk.data));
      }),
      { numRuns: 3000 },
    );
    expect(taken).toBeGreaterThan(100);
  });

  it("takes the prompt of a stock client, with its blocks in either key order", () => {
    expect(plainPromptParams({ sessionId: "s", prompt: [{ type: "text", text: "hi" }] })).toEqual({
      sessionId: "s",
      prompt: [{ text: "hi", type: "text" }],
    });
    expect(
      plainPromptParams({
        prompt: [
          { text: "a", type: "text" },
          { type: "text", text: "" },
        ],
        sessionId: "",
      }),
    ).toEqual({
      sessionId: "",
      prompt: [
        { text: "a", type: "text" },
        { text: "", type: "text" },
      ],
    });
    expect(plainPromptParams({ sessionId: "s", prompt: [] })).toEqual({ sessionId: "s", prompt: [] });
  });

  it("leaves to the SDK: _meta, extra fields, other block types, block fields beyond type and text, an own __proto__ key", () => {
    const t = { type: "text", text: "x" };
    for (const p of [
      { sessionId: "s", prompt: [t], _meta: { a: 1 } },
      { sessionId: "s", prompt: [t], messageId: "m" },
      { sessionId: "s", prompt: [{ type: "image", data: "", mimeType: "image/png" }] },
      { sessionId: "s", prompt: [{ ...t, annotations: null }] },
      { sessionId: "s", prompt: [{ type: "text" }] },
      { sessionId: 1, prompt: [t] },
      { sessionId: "s", prompt: "x" },
      JSON.parse('{"sessionId":"s","prompt":[{"type":"text","text":"x","__proto__":{}}]}') as unknown,
      [t],
      null,
      "x",
    ])
      expect(plainPromptParams(p)).toBeUndefined();
  });
});

/** A bridge whose agent (a double) is reached over Node streams, with every line sent to the agent recorded. */
async function bridgeWithTappedAgent(
  options: AgentDoubleOptions = {},
): Promise<{ bridge: AcpBridge; toAgent: Array<Record<string, any>> }> {
  const double = agentDouble(options);
  const toAgent: Array<Record<string, any>> = [];
  const down = new PassThrough();
  const up = new PassThrough();
  let carry = "";
  down.on("data", (chunk: Buffer) => {
    const parts = (carry + chunk.toString("utf8")).split("\n");
    carry = parts.pop() ?? "";
    for (const line of parts) if (line !== "") toAgent.push(JSON.parse(line) as Record<string, any>);
  });
  double.app.connect(ndJsonNodeStream(down, up));
  const bridge = await createAcpBridge({
    agent: () => ndJsonNodeStream(up, down),
    clock: new ManualClock(),
    store: new MemorySuspensionStore(),
  });
  cleanup.push(() => bridge.close());
  return { bridge, toAgent };
}

interface Face {
  conn: ClientConnection;
  toAgent: Array<Record<string, any>>;
  /** The raw reader the bridge installed on the client-facing stream (Node streams only). */
  reader?: RawReader;
}

async function face(kind: "node" | "memory", agent: AgentDoubleOptions = {}): Promise<Face> {
  const { bridge, toAgent } = await bridgeWithTappedAgent(agent);
  const app = client({ name: "c" }).onNotification("session/update", () => undefined);
  let conn: ClientConnection;
  let reader: RawReader | undefined;
  if (kind === "node") {
    const a = new PassThrough();
    const b = new PassThrough();
    const served = ndJsonNodeStream(a, b);
    const install = served[RAW_READER];
    served[RAW_READER] = (r) => {
      reader = r;
      install(r);
    };
    bridge.connect(served);
    conn = app.connect(nodeStream(b, a));
  } else {
    conn = app.connect(createUpstreamApp(bridge));
  }
  cleanup.push(() => conn.close());
  return { conn, toAgent, ...(reader === undefined ? {} : { reader }) };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    (result) => ({ result }),
    (e: { code?: unknown; message?: unknown; data?: unknown }) => ({ error: { code: e.code, message: e.message, data: e.data } }),
  );

describe("session/prompt on Node streams against in memory", () => {
  it("a prompt before initialize gets the SDK's own refusal, naming session/prompt", async () => {
    const results = [];
    for (const kind of ["node", "memory"] as const) {
      const f = await face(kind);
      results.push(await outcome(f.conn.agent.request("session/prompt", { sessionId: "s1", prompt: [{ type: "text", text: "hi" }] })));
    }
    expect(results[0]).toEqual(results[1]);
    expect(JSON.stringify(results[0])).toContain("session/prompt");
  });

  it("every prompt, plain or not, valid or not, gets the same answer, and the agent gets the same prompt line", async () => {
    const cases: unknown[] = [
      { prompt: [{ type: "text", text: "plain" }] },
      { prompt: [{ text: "plain, other key order", type: "text" }] },
      { prompt: [{ type: "text", text: "with _meta" }], _meta: { a: 1 } },
      { prompt: [{ type: "text", text: "extra field", extra: true }], more: 1 },
      {
        prompt: [
          { type: "text", text: "a" },
          { type: "resource_link", uri: "file:///a", name: "a" },
        ],
      },
      { prompt: "not an array" },
      { prompt: [{ type: "text" }] },
      { prompt: [{ type: "bogus", text: "x" }] },
      { sessionId: 7, prompt: [] },
      { sessionId: "unknown", prompt: [{ type: "text", text: "x" }] },
    ];
    const runs: Array<{ answers: unknown[]; lines: unknown[] }> = [];
    for (const kind of ["node", "memory"] as const) {
      const f = await face(kind);
      await f.conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await f.conn.agent.request("session/new", { cwd: "/p", mcpServers: [] });
      const answers: unknown[] = [];
      for (const c of cases) answers.push(await outcome(f.conn.agent.request("session/prompt", { sessionId, ...(c as object) } as never)));
      const lines = f.toAgent.filter((m) => m.method === "session/prompt").map((m) => JSON.stringify(m.params));
      runs.push({ answers, lines });
      if (kind === "node") {
        // The plain prompts of an initialized connection were the ones taken at read time.
        const message: Record<string, unknown> = {
          jsonrpc: "2.0",
          id: 99,
          method: "session/prompt",
          params: { sessionId, prompt: [{ type: "text", text: "x" }] },
        };
        expect(f.reader!(message, JSON.stringify(message))).toBe(false);
        expect(message.method).toMatch(/^_ahpHarness\/acp-bridge\/prompt\//);
        const other: Record<string, unknown> = {
          jsonrpc: "2.0",
          id: 100,
          method: "session/prompt",
          params: { sessionId, prompt: [], _meta: {} },
        };
        f.reader!(other, JSON.stringify(other));
        expect(other.method).toBe("session/prompt");
      }
    }
    expect(runs[0]!.answers).toEqual(runs[1]!.answers);
    expect(runs[0]!.lines).toEqual(runs[1]!.lines);
    // The five valid prompts, plus the one for a session the bridge does not hold: the agent answers that one.
    expect(runs[0]!.lines).toHaveLength(6);
    expect(runs[0]!.lines.at(-1)).toContain('"sessionId":"unknown"');
    expect((runs[0]!.answers as Array<{ error?: { code: number } }>).filter((a) => a.error?.code === -32602)).toHaveLength(4);
  });

  it("a plain prompt the client cancels ($/cancel_request) is cancelled at the agent and answered as in memory", async () => {
    const results = [];
    for (const kind of ["node", "memory"] as const) {
      const f = await face(kind, {
        turn: async (t) => {
          await t.text("working");
          await new Promise<void>((resolve) => (t.signal.aborted ? resolve() : t.signal.addEventListener("abort", () => resolve())));
          return "end_turn";
        },
      });
      await f.conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await f.conn.agent.request("session/new", { cwd: "/p", mcpServers: [] });
      // Requests the bridge answers itself: the client's request ids run ahead of the bridge's own to the agent.
      for (let i = 0; i < 5; i++) await f.conn.agent.request(METHODS.tunnelSuspension as never, { sessionId } as never);
      const controller = new AbortController();
      const answer = outcome(
        f.conn.agent.request(
          "session/prompt",
          { sessionId, prompt: [{ type: "text", text: "long" }] },
          { cancellationSignal: controller.signal },
        ),
      );
      await until(() => f.toAgent.some((m) => m.method === "session/prompt"), "prompt at the agent");
      controller.abort();
      results.push(await answer);
      // The bridge cancels its own request to the agent (not only the client's forwarded notification).
      const down = f.toAgent.find((m) => m.method === "session/prompt")!;
      await until(() => f.toAgent.some((m) => m.method === "$/cancel_request" && m.params?.requestId === down.id), "cancel at the agent");
    }
    expect(results[0]).toEqual(results[1]);
  });
});

/**
 * `Transport.post`: a send without a promise per message, whose failure reaches a callback
 * (NDJSON streams, the linked pair), and the engines that use it (a client's request whose
 * write fails, a harness answer that cannot be written, answers written before a stream
 * connection closes at end of input).
 */
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { AhpClient, AhpServer, createLinkedPair, NdjsonServerTransport, NdjsonStreamTransport, type JsonRpcMessage } from "../src/index.js";
import { observe, until } from "./wait.js";

const note = (n: number): JsonRpcMessage => ({ jsonrpc: "2.0", method: "ahp/event", params: { n } });

/** Collects failure callbacks with their context. */
function failures() {
  const calls: Array<{ error: Error; context: string }> = [];
  return { calls, onFailure: (error: Error, context: string) => calls.push({ error, context }) };
}

/** A writable whose writes complete only when released; `fail` makes the next completion an error. */
class HeldWritable extends Writable {
  readonly chunks: string[] = [];
  readonly #held: Array<(error?: Error) => void> = [];
  constructor() {
    super({ decodeStrings: false });
    this.on("error", () => undefined);
  }
  override _write(chunk: string | Buffer, _enc: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk.toString());
    this.#held.push((error) => callback(error ?? null));
  }
  release(error?: Error): void {
    for (const done of this.#held.splice(0)) done(error);
  }
}

describe("NdjsonStreamTransport.post", () => {
  it("writes the message as a line and calls nothing on success", async () => {
    const writable = new PassThrough();
    const transport = new NdjsonStreamTransport({ readable: new PassThrough(), writable });
    await transport.start();
    const { calls, onFailure } = failures();
    transport.post(note(1), onFailure, "one");
    transport.post(note(2), onFailure, "two");
    await transport.settled();
    expect(String(writable.read())).toBe(`${JSON.stringify(note(1))}\n${JSON.stringify(note(2))}\n`);
    expect(calls).toEqual([]);
    await transport.close();
  });

  it("reports a message that cannot be encoded after the call returned, with its context, and writes nothing", async () => {
    const writable = new PassThrough();
    const transport = new NdjsonStreamTransport({ readable: new PassThrough(), writable, maxMessageBytes: 64 });
    await transport.start();
    const { calls, onFailure } = failures();
    transport.post({ jsonrpc: "2.0", method: "m", params: { text: "x".repeat(100) } }, onFailure, "big");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    transport.post({ jsonrpc: "2.0", method: "m", params: cyclic }, onFailure, "cyclic");
    expect(calls).toEqual([]); // never from inside post()
    await until(() => calls.length >= 2, "both failures reported");
    expect(calls.map((c) => [c.context, (c.error as { code?: number }).code])).toEqual([
      ["big", -32002],
      ["cyclic", -32603],
    ]);
    expect(writable.read()).toBeNull();
    await transport.close();
  });

  it("reports a failed write once per message as SEND_FAILED, and settled() resolves", async () => {
    const writable = new HeldWritable();
    const transport = new NdjsonStreamTransport({ readable: new PassThrough(), writable, flushLines: 2 });
    transport.onerror = () => undefined;
    await transport.start();
    const { calls, onFailure } = failures();
    for (let i = 0; i < 4; i++) transport.post(note(i), onFailure, `m${i}`);
    let settled = false;
    void transport.settled().then(() => (settled = true));
    await until(() => writable.chunks.length > 0, "a write in flight");
    await observe(); // the write is held: settled() must not resolve within this window
    expect(settled).toBe(false);
    writable.release(new Error("broken pipe"));
    await until(() => settled, "settled() resolved");
    expect(settled).toBe(true);
    expect(calls.map((c) => c.context).sort()).toEqual(["m0", "m1", "m2", "m3"]);
    for (const { error } of calls) expect(["SEND_FAILED", "CONNECTION_CLOSED"]).toContain((error as { code?: string }).code);
    expect(calls.find((c) => c.context === "m0")?.error.message).toContain("broken pipe");
  });

  it("reports a post after close as CONNECTION_CLOSED", async () => {
    const transport = new NdjsonStreamTransport({ readable: new PassThrough(), writable: new PassThrough() });
    await transport.start();
    await transport.close();
    const { calls, onFailure } = failures();
    transport.post(note(1), onFailure, "late");
    await until(() => calls.length >= 1, "the failure reported");
    expect(calls.map((c) => [c.context, (c.error as { code?: string }).code])).toEqual([["late", "CONNECTION_CLOSED"]]);
  });

  it("settled() waits for writes in flight and resolves at once when nothing is queued", async () => {
    const writable = new HeldWritable();
    const transport = new NdjsonStreamTransport({ readable: new PassThrough(), writable });
    await transport.start();
    await transport.settled();
    const { onFailure } = failures();
    transport.post(note(1), onFailure, "one");
    let settled = false;
    void transport.settled().then(() => (settled = true));
    await until(() => writable.chunks.length > 0, "the write in flight");
    await observe(); // the write is held: settled() must not resolve within this window
    expect(writable.chunks).toHaveLength(1);
    expect(settled).toBe(false);
    writable.release();
    await until(() => settled, "settled() resolved");
    expect(settled).toBe(true);
    await transport.close();
  });
});

describe("the engines on post()", () => {
  it("a client request whose write fails rejects with the write's cause, and none stays pending", async () => {
    const toHarness = new PassThrough();
    const toAgent = new PassThrough();
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    await server.connect(new NdjsonServerTransport({ readable: toHarness, writable: toAgent, info: { transport: "memory" } }));
    // The handshake goes through; the next write fails.
    let writes = 0;
    const writable = new Writable({
      write(chunk: Buffer, _enc, callback) {
        if (writes++ === 0) {
          toHarness.write(chunk);
          callback();
        } else callback(new Error("broken pipe"));
      },
    });
    writable.on("error", () => undefined);
    const agentSide = new NdjsonStreamTransport({ readable: toAgent, writable });
    const client = new AhpClient();
    await client.connect(agentSide);
    const error = await client.send("pre_action", { tool_name: "bash" }).then(
      () => "resolved",
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: expect.stringMatching(/SEND_FAILED|CONNECTION_CLOSED/) });
    expect(String((error as Error).message) + String(((error as Error).cause as Error | undefined)?.message)).toContain("broken pipe");
    await client.close();
    await server.close({ graceMs: 0 });
  });

  it("a harness answer that cannot be encoded is replaced by a -32603 error with the request's id", async () => {
    const server = new AhpServer({
      handlers: {
        onQuery: () => {
          const cyclic: Record<string, unknown> = {};
          cyclic.self = cyclic;
          return { answer: cyclic };
        },
      },
    });
    const [agentSide, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    const client = new AhpClient();
    await client.connect(agentSide);
    const error = await client.query("q", null).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: -32603 });
    await client.close();
    await server.close({ graceMs: 0 });
  });

  it("a stream connection ended by the agent closes only after the answers were written", async () => {
    const input = new PassThrough();
    const writable = new HeldWritable();
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const transport = new NdjsonServerTransport({ readable: input, writable, info: { transport: "memory" } });
    let closed = false;
    void transport.closed.then(() => (closed = true));
    await server.connect(transport);
    const event = {
      event_type: "pre_action",
      session_id: "s",
      agent_id: "a",
      timestamp: "2026-11-26T00:00:00Z",
      depth: 0,
      payload: { tool_name: "bash" },
    };
    input.end(`${JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ahp/event", params: event })}\n`);
    await until(() => writable.chunks.join("").includes('"id":7'), "the answer written");
    await observe(); // the answer's write is not confirmed yet: no close within this window
    expect(closed).toBe(false);
    writable.release();
    await until(() => closed, "the connection closed");
    expect(closed).toBe(true);
    await server.close({ graceMs: 0 });
  });
});

describe("end of input with a peer that does not read", () => {
  it("closes after drainTimeoutMs even when the answers' writes are never confirmed", async () => {
    const input = new PassThrough();
    const writable = new HeldWritable(); // never released
    const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
    const transport = new NdjsonServerTransport({ readable: input, writable, info: { transport: "memory" }, drainTimeoutMs: 50 });
    let closed = false;
    void transport.closed.then(() => (closed = true));
    await server.connect(transport);
    const event = { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: "2026-11-26T00:00:00Z", depth: 0, payload: {} };
    const ended = performance.now();
    input.end(`${JSON.stringify({ jsonrpc: "2.0", id: 8, method: "ahp/event", params: event })}\n`);
    await until(() => writable.chunks.join("").includes('"id":8'), "the answer written");
    await until(() => closed, "the connection closed");
    // Not before drainTimeoutMs: the answer's write had that long to be confirmed.
    expect(performance.now() - ended).toBeGreaterThanOrEqual(50);
    await server.close({ graceMs: 0 });
  });
});

describe("createLinkedPair post", () => {
  it("delivers in order and reports a post on a closed side after the call returned", async () => {
    const [a, b] = createLinkedPair();
    const received: unknown[] = [];
    b.onmessage = (m) => received.push(m);
    await a.start();
    await b.start();
    const { calls, onFailure } = failures();
    a.post(note(1), onFailure, "one");
    a.post(note(2), onFailure, "two");
    await until(() => received.length >= 2, "both messages delivered");
    expect(received).toEqual([note(1), note(2)]);
    await a.close();
    a.post(note(3), onFailure, "closed");
    expect(calls).toEqual([]);
    await until(() => calls.length >= 1, "the failure reported");
    expect(calls.map((c) => [c.context, (c.error as { code?: string }).code])).toEqual([["closed", "CONNECTION_CLOSED"]]);
  });
});

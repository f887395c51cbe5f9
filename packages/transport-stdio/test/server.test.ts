/**
 * StdioServerTransport: in-process over stream pairs (exact bytes in and out), and as the
 * stdio of real child processes.
 */
import { PassThrough, Writable } from "node:stream";
import { AhpServer, type AhpServerOptions } from "@ahp/core";
import { StdioServerTransport, serveStdio, type StdioServerTransportOptions } from "@ahp/transport-stdio";
import { afterEach, describe, expect, it } from "vitest";
import { deferred, fixture, runNode, since, until } from "./helpers.js";

/** A process that leaks a handle never exits; one that does not may take long to start on a busy machine. */
const EXIT_DEADLINE_MS = 60_000;
const EXIT_TEST_TIMEOUT_MS = 90_000;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Reads newline-terminated output lines as they come. */
class LineReader {
  readonly chunks: string[] = [];
  #text = "";
  #lines: string[] = [];
  #waiters: Array<() => void> = [];
  constructor(stream: NodeJS.ReadableStream) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      this.chunks.push(chunk);
      this.#text += chunk;
      let nl: number;
      while ((nl = this.#text.indexOf("\n")) !== -1) {
        this.#lines.push(this.#text.slice(0, nl));
        this.#text = this.#text.slice(nl + 1);
      }
      for (const waiter of this.#waiters.splice(0)) waiter();
    });
  }
  /** Everything written so far. */
  get text(): string {
    return this.chunks.join("");
  }
  async line(): Promise<string> {
    while (this.#lines.length === 0) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.#lines.shift()!;
  }
  async json(): Promise<Record<string, unknown>> {
    return JSON.parse(await this.line()) as Record<string, unknown>;
  }
}

async function serve(options: AhpServerOptions = {}, transportOptions: StdioServerTransportOptions = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const out = new LineReader(stdout);
  const errors: Error[] = [];
  const server = new AhpServer({ onerror: (e) => errors.push(e), ...options });
  const transport = new StdioServerTransport({ stdin, stdout, ...transportOptions });
  await server.connect(transport);
  cleanups.push(() => transport.close());
  return { stdin, stdout, out, server, transport, errors };
}

const allow = { handlers: { onEvent: () => ({ decision: "allow" as const }) } };

/** A request exactly as the reference client (serde_json, compact, member order) writes it. */
const REFERENCE_HANDSHAKE =
  '{"jsonrpc":"2.0","id":"5f0c6a3e-9b1d-4f7a-8c2e-1d3b5a7c9e0f","method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"a3s-code","version":"0.9.0","capabilities":["pre_action","post_action"]},"session_id":"3b9f1c2d-6e4a-4b8c-9d0e-2f1a3c5b7d9e","agent_id":"8c7d6e5f-4a3b-4c2d-8e1f-0a9b8c7d6e5f"}}\n';

const event = (id: string, n: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "ahp/event",
    params: { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: "2026-06-01T10:15:00Z", depth: 0, payload: { n } },
  });

describe("StdioServerTransport: bytes in, bytes out", () => {
  it("answers the exact bytes of a reference client with exactly one line", async () => {
    const { stdin, out } = await serve();
    stdin.write(REFERENCE_HANDSHAKE);
    const response = await out.json();
    expect(response).toMatchObject({
      jsonrpc: "2.0",
      id: "5f0c6a3e-9b1d-4f7a-8c2e-1d3b5a7c9e0f",
      result: { protocol_version: "2.4", harness_info: { name: "ahp-server" } },
    });
    expect(out.text.endsWith("\n")).toBe(true);
    expect(out.text.split("\n")).toHaveLength(2); // one line, then the empty rest
    expect(out.text.startsWith('{"jsonrpc":"2.0","id":"5f0c6a3e-9b1d-4f7a-8c2e-1d3b5a7c9e0f","result":')).toBe(true);
  });

  it("tolerates \\r\\n endings, blank lines and surrounding whitespace (item 9)", async () => {
    const { stdin, out } = await serve(allow);
    stdin.write(`\r\n\n   ${event("r1", 1)}\r\n\t \n  \r\n${event("r2", 2)}   \r\n\n`);
    const ids = [(await out.json()).id, (await out.json()).id].sort();
    expect(ids).toEqual(["r1", "r2"]);
  });

  it("reassembles lines split anywhere, including inside a UTF-8 character, and splits only on \\n", async () => {
    const { stdin, out } = await serve({
      handlers: { onEvent: (e) => ({ decision: "block", reason: String((e.payload as { s: string }).s) }) },
    });
    const text = "é😀\u2028\u2029end";
    const line = Buffer.from(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: "u1",
        method: "ahp/event",
        params: {
          event_type: "pre_action",
          session_id: "s",
          agent_id: "a",
          timestamp: "2026-06-01T10:15:00Z",
          depth: 0,
          payload: { s: text },
        },
      })}\n`,
    );
    for (let i = 0; i < line.length; i++) stdin.write(line.subarray(i, i + 1));
    expect(await out.json()).toEqual({ jsonrpc: "2.0", id: "u1", result: { decision: "block", reason: text } });
  });

  it("answers an unparseable line with -32700 (id null) and the next line normally (item 8)", async () => {
    const { stdin, out } = await serve(allow);
    stdin.write(`{"jsonrpc":"2.0","id":"x",garbage\n${event("after", 1)}\n`);
    expect(await out.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect(await out.json()).toMatchObject({ id: "after", result: { decision: "allow" } });
  });

  it("refuses an oversized line with -32002 by its id (or null), and answers the next line", async () => {
    const { stdin, out } = await serve(allow, { maxMessageBytes: 1024 });
    const big = JSON.stringify({ jsonrpc: "2.0", id: "big", method: "ahp/event", params: { pad: "p".repeat(5000) } });
    stdin.write(`${big.slice(0, 700)}`); // arrives in pieces
    stdin.write(`${big.slice(700)}\n`);
    expect(await out.json()).toMatchObject({ id: "big", error: { code: -32002, message: expect.stringMatching(/too large/i) } });
    const anonymous = JSON.stringify({ params: { pad: "p".repeat(5000) }, jsonrpc: "2.0", id: "hidden", method: "ahp/event" });
    stdin.write(`${anonymous}\n${event("next", 1)}\n`);
    expect(await out.json()).toMatchObject({ id: null, error: { code: -32002 } });
    expect(await out.json()).toMatchObject({ id: "next", result: { decision: "allow" } });
  });

  it("writes nothing but JSON-RPC response lines to stdout (item 83)", async () => {
    const { stdin, out, transport } = await serve(allow);
    stdin.write(REFERENCE_HANDSHAKE);
    stdin.write(`${event("e1", 1)}\n`);
    stdin.write(
      '{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","session_id":"s","agent_id":"a","timestamp":"2026-06-01T10:15:00Z","depth":0,"payload":{}}}\n',
    );
    stdin.write('{"jsonrpc":"2.0","method":"ahp/handshake","params":{}}\n'); // notification: no output
    stdin.write("plain text\n");
    stdin.write(`${event("e2", 2)}\n`);
    stdin.end();
    await transport.closed;
    const lines = out.text.split("\n");
    expect(lines.pop()).toBe(""); // ends with \n
    expect(lines).toHaveLength(4); // handshake, e1, parse error, e2
    for (const line of lines) {
      const message = JSON.parse(line) as Record<string, unknown>;
      expect(message.jsonrpc).toBe("2.0");
      expect("result" in message !== "error" in message).toBe(true);
      expect("method" in message).toBe(false);
    }
  });
});

describe("StdioServerTransport: end of input", () => {
  it("still writes the answers to requests received before stdin ended, then closes", async () => {
    const release = deferred();
    let received = 0;
    const { stdin, out, transport } = await serve({
      handlers: {
        onEvent: async () => {
          received++;
          await release.promise;
          return { decision: "allow" };
        },
      },
    });
    const closes: Array<Error | undefined> = [];
    const previous = transport.onclose;
    transport.onclose = (e) => {
      closes.push(e);
      previous?.(e);
    };
    stdin.end(`${event("slow", 1)}\n${event("slow2", 2)}`); // the last line has no newline
    // Both requests reached their handlers, which cannot answer before release: the end of input was seen.
    await until(() => received === 2);
    expect(closes).toEqual([]); // waiting for the answers
    release.resolve();
    await transport.closed;
    expect(closes).toEqual([undefined]);
    const ids = [(await out.json()).id, (await out.json()).id].sort();
    expect(ids).toEqual(["slow", "slow2"]);
  });

  it("serves input that ended before it started, answering every line", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const out = new LineReader(stdout);
    stdin.end(`${event("early1", 1)}\n${event("early2", 2)}`);
    const server = new AhpServer(allow);
    const transport = new StdioServerTransport({ stdin, stdout });
    // Connected from a macrotask: the stream's buffered data and its 'end' are emitted (process.nextTick)
    // before the promise continuation inside start() runs.
    setImmediate(() => void server.connect(transport));
    expect(await transport.closed).toBeUndefined();
    expect(
      out.text
        .split("\n")
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: string }).id)
        .sort(),
    ).toEqual(["early1", "early2"]);
  });

  it("closes after drainTimeoutMs when a handler never answers", async () => {
    const { stdin, transport } = await serve(
      { handlerTimeoutMs: 0, handlers: { onEvent: () => new Promise(() => {}) } },
      { drainTimeoutMs: 100 },
    );
    stdin.write(`${event("never", 1)}\n`);
    const start = performance.now();
    stdin.end();
    await transport.closed;
    expect(since(start)).toBeGreaterThanOrEqual(90);
  });

  it("serveStdio resolves once stdin ended and the answers were written", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const out = new LineReader(stdout);
    const server = new AhpServer({
      handlers: { onEvent: async () => (await new Promise((r) => setTimeout(r, 20)), { decision: "allow" as const }) },
    });
    const served = serveStdio(server, { stdin, stdout });
    stdin.end(`${event("last", 1)}\n`);
    expect(await served).toBeUndefined();
    expect(out.text).toContain('"id":"last"');
  });

  it("serveStdio stops when its signal aborts", async () => {
    const stdin = new PassThrough();
    const controller = new AbortController();
    const server = new AhpServer();
    const served = serveStdio(server, { stdin, stdout: new PassThrough(), signal: controller.signal });
    await until(() => server.connectionCount === 1);
    controller.abort();
    expect(await served).toBeUndefined();
    expect(server.connectionCount).toBe(0);
    stdin.destroy();
  });

  it("closes with the cause when stdout breaks", async () => {
    const stdin = new PassThrough();
    const stdout = new Writable({
      write(_chunk, _encoding, callback) {
        callback(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      },
    });
    const server = new AhpServer(allow);
    const transport = new StdioServerTransport({ stdin, stdout });
    transport.onerror = () => {};
    await server.connect(transport);
    stdin.write(`${event("e", 1)}\n`);
    const cause = await transport.closed;
    expect(cause?.message).toMatch(/EPIPE/);
    stdin.destroy();
  });
});

describe("StdioServerTransport: backpressure", () => {
  it("waits for a slow stdout to drain instead of buffering every answer", async () => {
    const stdin = new PassThrough();
    const reason = "r".repeat(8 * 1024);
    const expected = 200 * (reason.length + 60); // 200 answers of a bit more than 8 KiB
    const allWritten = deferred();
    let paused = true;
    const held: Array<() => void> = [];
    let bytes = 0;
    const stdout = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        if (bytes >= expected) allWritten.resolve();
        // A reader that pauses: nothing is consumed until it resumes.
        if (paused) held.push(callback);
        else callback();
      },
    });
    let handled = 0;
    const server = new AhpServer({
      handlers: {
        onEvent: () => {
          handled++;
          return { decision: "block", reason };
        },
      },
    });
    const transport = new StdioServerTransport({ stdin, stdout });
    await server.connect(transport);
    cleanups.push(() => transport.close());
    for (let i = 0; i < 200; i++) stdin.write(`${event(`b${i}`, i)}\n`);
    // Let all 200 handlers answer; their writes queue up behind the held one.
    let maxBuffered = 0;
    await until(() => {
      maxBuffered = Math.max(maxBuffered, stdout.writableLength);
      return handled === 200;
    });
    maxBuffered = Math.max(maxBuffered, stdout.writableLength);
    expect(held.length).toBe(1);
    // 1.6 MiB of answers are ready; the stream holds at most one of them.
    expect(maxBuffered).toBeLessThan(2 * (reason.length + 200));
    paused = false;
    held.splice(0)[0]!();
    await allWritten.promise;
    expect(bytes).toBeGreaterThanOrEqual(expected);
  });
});

describe("StdioServerTransport in a real process", () => {
  it("answers a request piped in and exits when stdin ends (printf '<request>' | harness)", async () => {
    const result = await runNode(fixture("harness.mjs"), [], { input: REFERENCE_HANDSHAKE, deadlineMs: EXIT_DEADLINE_MS });
    expect(result.exitedInTime).toBe(true);
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: "5f0c6a3e-9b1d-4f7a-8c2e-1d3b5a7c9e0f", result: { protocol_version: "2.4" } });
    expect(result.stderr).toContain("harness ready"); // logs went to stderr
  });

  it(
    "lets the process exit after close() although stdin stays open (no leaked handles)",
    async () => {
      const result = await runNode(fixture("serve-and-close.mjs"), ["serve"], { deadlineMs: EXIT_DEADLINE_MS, endInput: false });
      expect(result.exitedInTime).toBe(true);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("");
    },
    EXIT_TEST_TIMEOUT_MS,
  );

  it(
    "lets the process exit after answering and closing, stdin still open",
    async () => {
      const result = await runNode(fixture("serve-and-close.mjs"), ["answer-one"], {
        deadlineMs: EXIT_DEADLINE_MS,
        input: `${event("one", 1)}\n`,
        endInput: false,
      });
      expect(result.exitedInTime).toBe(true);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ id: "one", result: { decision: "allow" } });
    },
    EXIT_TEST_TIMEOUT_MS,
  );

  it(
    "lets an agent process exit after its StdioClientTransport closed (child reaped, no leaked handles)",
    async () => {
      const result = await runNode(fixture("client-open-close.mjs"), [fixture("harness.mjs")], { deadlineMs: EXIT_DEADLINE_MS });
      expect(result.exitedInTime).toBe(true);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("closed\n");
    },
    EXIT_TEST_TIMEOUT_MS,
  );
});

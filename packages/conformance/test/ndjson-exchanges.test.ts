/**
 * The spec's example exchanges (§4.1–§4.4, §8.5) and the error catalogue (§11.6) as exact bytes:
 * lines are written into an AhpServer through core's NdjsonStreamTransport over a PassThrough
 * pair, and the response lines are read back raw, parsed and compared (member order is irrelevant).
 */
import { PassThrough } from "node:stream";
import { AhpServer, NdjsonStreamTransport, type AhpEvent, type AhpServerOptions } from "@ahp/core";
import { createConformanceServer } from "@ahp/conformance";
import { afterEach, describe, expect, it } from "vitest";

interface LineHarness {
  write(bytes: string | Buffer): void;
  /** Next output line (without its "\n"), or undefined when none arrives in time. */
  nextLine(timeoutMs?: number): Promise<string | undefined>;
  /** Resolves once everything written so far has been processed: sends a probe request and waits for its line. */
  drain(): Promise<string[]>;
  output(): string;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of open.splice(0)) await close();
});

async function lineHarness(server: AhpServer, limits: { maxMessageBytes?: number } = {}): Promise<LineHarness> {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new NdjsonStreamTransport({ readable: input, writable: output, info: { transport: "ndjson" }, ...limits });
  await server.connect(transport);
  let all = "";
  let buffered = "";
  let wake: (() => void) | undefined;
  output.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    all += text;
    buffered += text;
    wake?.();
  });
  open.push(async () => {
    await transport.close();
    await server.close();
  });
  let probes = 0;
  const harness: LineHarness = {
    write: (bytes) => void input.write(bytes),
    output: () => all,
    async nextLine(timeoutMs = 2000) {
      const deadline = Date.now() + timeoutMs;
      while (!buffered.includes("\n")) {
        const left = deadline - Date.now();
        if (left <= 0) return undefined;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
      const nl = buffered.indexOf("\n");
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      return line;
    },
    async drain() {
      const id = `probe-${++probes}`;
      harness.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "ahp/nope", params: {} })}\n`);
      const lines: string[] = [];
      for (;;) {
        const line = await harness.nextLine();
        if (line === undefined) throw new Error(`no answer to ${id}`);
        if ((JSON.parse(line) as { id?: unknown }).id === id) return lines;
        lines.push(line);
      }
    },
  };
  return harness;
}

function parseLine(line: string | undefined): Record<string, unknown> {
  expect(line, "a response line").toBeDefined();
  expect(line).not.toMatch(/[\r\n]/);
  return JSON.parse(line!) as Record<string, unknown>;
}

/** The handlers behind the spec's examples. */
function exampleServer(seen: AhpEvent[] = [], options: AhpServerOptions = {}): AhpServer {
  return new AhpServer({
    ...options,
    handlers: {
      onEvent: (event) => {
        const command = (event.payload as { arguments?: { command?: string } } | null)?.arguments?.command;
        if (command === "rm -rf /") return { decision: "block", reason: "refusing recursive delete of /" };
        return { decision: "allow" };
      },
      onNotification: (event) => {
        seen.push(event);
      },
      onQuery: (query) =>
        (query.payload as { path?: string }).path === "build/"
          ? { answer: "no", reason: "cache is shared with another run", alternatives: ["clean only stale entries"] }
          : { answer: null },
    },
  });
}

describe("spec example exchanges over NDJSON bytes", () => {
  it("§4.1 handshake", async () => {
    const h = await lineHarness(exampleServer());
    h.write(
      '{"jsonrpc":"2.0","id":"h-1","method":"ahp/handshake","params":{"protocol_version":"2.4","agent_info":{"framework":"my-agent","version":"0.3.0","capabilities":["pre_action","post_action"]},"session_id":"sess-1","agent_id":"agent-1"}}\n',
    );
    expect(parseLine(await h.nextLine())).toStrictEqual(
      JSON.parse(
        '{"jsonrpc":"2.0","id":"h-1","result":{"config":{"batch_size":100,"max_depth":10,"timeout_ms":10000},"harness_info":{"capabilities":["pre_action","post_action","pre_prompt","query","batch","run_lifecycle","task_list","verification"],"name":"ahp-server","version":"2.4.0"},"protocol_version":"2.4"}}',
      ),
    );
  });

  it("§4.2 blocking event and notification", async () => {
    const seen: AhpEvent[] = [];
    const h = await lineHarness(exampleServer(seen));
    h.write(
      '{"jsonrpc":"2.0","id":"e-7","method":"ahp/event","params":{"event_type":"pre_action","session_id":"sess-1","agent_id":"agent-1","timestamp":"2026-06-01T10:15:00Z","depth":1,"payload":{"tool_name":"shell","arguments":{"command":"npm test"}}}}\n',
    );
    expect(parseLine(await h.nextLine())).toStrictEqual({ jsonrpc: "2.0", id: "e-7", result: { decision: "allow" } });
    h.write(
      '{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"post_action","session_id":"sess-1","agent_id":"agent-1","timestamp":"2026-06-01T10:15:04Z","depth":1,"payload":{"tool_name":"shell","exit_code":0}}}\n',
    );
    expect(await h.drain(), "no answer to the notification").toEqual([]);
    expect(seen.map((e) => [e.event_type, e.payload])).toEqual([["post_action", { tool_name: "shell", exit_code: 0 }]]);
  });

  it("§4.3 query", async () => {
    const h = await lineHarness(exampleServer());
    h.write(
      '{"jsonrpc":"2.0","id":"q-1","method":"ahp/query","params":{"session_id":"sess-1","agent_id":"agent-1","query_type":"approval_check","payload":{"question":"May I wipe the build cache?","path":"build/"}}}\n',
    );
    expect(parseLine(await h.nextLine())).toStrictEqual(
      JSON.parse(
        '{"jsonrpc":"2.0","id":"q-1","result":{"alternatives":["clean only stale entries"],"answer":"no","reason":"cache is shared with another run"}}',
      ),
    );
  });

  it("§4.4 batch", async () => {
    const h = await lineHarness(exampleServer());
    // The spec prints the request over three lines for reading; on the wire it is one line.
    h.write(
      '{"jsonrpc":"2.0","id":"b-1","method":"ahp/batch","params":{"events":[' +
        '{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"2026-06-01T10:16:00Z","depth":0,"payload":{"arguments":{"command":"ls"}}},' +
        '{"event_type":"pre_action","session_id":"s","agent_id":"a","timestamp":"2026-06-01T10:16:00Z","depth":0,"payload":{"arguments":{"command":"rm -rf /"}}}]}}\n',
    );
    expect(parseLine(await h.nextLine())).toStrictEqual(
      JSON.parse(
        '{"jsonrpc":"2.0","id":"b-1","result":{"decisions":[{"decision":"allow"},{"decision":"block","reason":"refusing recursive delete of /"}]}}',
      ),
    );
  });

  it("§8.5 task_list notification: accepted silently and handed over unchanged", async () => {
    const seen: AhpEvent[] = [];
    const h = await lineHarness(exampleServer(seen));
    const line =
      '{"jsonrpc":"2.0","method":"ahp/event","params":{"event_type":"task_list","session_id":"sess-1","agent_id":"agent-1","timestamp":"2026-06-01T10:20:00Z","depth":0,"payload":{"run_id":"run-1","session_id":"sess-1","updated_at":"2026-06-01T10:20:00Z","tasks":[{"id":"t1","title":"Reproduce the crash","status":"completed","evidence":[{"kind":"transcript","summary":"crash seen with empty input"}]},{"id":"t2","title":"Patch the parser","status":"in_progress","depends_on":["t1"]}]}}}';
    h.write(`${line}\n`);
    expect(await h.drain()).toEqual([]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.payload).toStrictEqual((JSON.parse(line) as { params: { payload: unknown } }).params.payload);
  });
});

describe("§11.6 error catalogue over NDJSON bytes (code + AHP prefix)", () => {
  const ev = (type: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      event_type: type,
      session_id: "s",
      agent_id: "a",
      timestamp: "2026-06-01T10:15:00Z",
      depth: 0,
      payload: {},
      ...extra,
    });
  const cases: Array<[string, string, number, string, boolean]> = [
    ["unknown method", '{"jsonrpc":"2.0","id":"c1","method":"ahp/control","params":{}}', -32601, "Method not found", true],
    [
      "handshake params",
      '{"jsonrpc":"2.0","id":"c2","method":"ahp/handshake","params":{"protocol_version":"2.4"}}',
      -32602,
      "Invalid params: ",
      false,
    ],
    [
      "version",
      '{"jsonrpc":"2.0","id":"c3","method":"ahp/handshake","params":{"protocol_version":"3.0","agent_info":{"framework":"f","version":"1","capabilities":[]},"session_id":"s","agent_id":"a"}}',
      -32000,
      "Unsupported protocol version: 3.0",
      true,
    ],
    ["event params", `{"jsonrpc":"2.0","id":"c4","method":"ahp/event","params":${ev("pre_tool_use")}}`, -32602, "Invalid params: ", false],
    [
      "depth",
      `{"jsonrpc":"2.0","id":"c5","method":"ahp/event","params":${ev("pre_action", { depth: 11 })}}`,
      -32602,
      "Invalid event: Protocol error: Event depth 11 exceeds configured max depth 10",
      true,
    ],
    [
      "contract shape",
      `{"jsonrpc":"2.0","id":"c6","method":"ahp/event","params":${ev("verification")}}`,
      -32602,
      "Invalid event: Serialization error: ",
      false,
    ],
    [
      "fire-and-forget",
      `{"jsonrpc":"2.0","id":"c7","method":"ahp/event","params":${ev("session_end")}}`,
      -32602,
      "Fire-and-forget event session_end must be sent as a notification",
      true,
    ],
    [
      "batch size",
      `{"jsonrpc":"2.0","id":"c8","method":"ahp/batch","params":{"events":[${Array.from({ length: 101 }, () => ev("pre_action")).join(",")}]}}`,
      -32602,
      "Batch size 101 exceeds configured limit 100",
      true,
    ],
    [
      "not batchable",
      `{"jsonrpc":"2.0","id":"c9","method":"ahp/batch","params":{"events":[${ev("planning")}]}}`,
      -32602,
      "Event type planning cannot be batched because it does not return a generic Decision",
      true,
    ],
    [
      "typed payload",
      `{"jsonrpc":"2.0","id":"c10","method":"ahp/event","params":${ev("reasoning")}}`,
      -32603,
      "Handler error: Serialization error: ",
      false,
    ],
    [
      "typed default",
      `{"jsonrpc":"2.0","id":"c11","method":"ahp/event","params":${ev("rate_limit", { payload: { session_id: "s", limit_type: { custom: "gpu" }, retry_after_ms: 5, current_usage: "1" } })}}`,
      -32603,
      "Handler error: Capability not supported: Rate limit decisions not supported",
      true,
    ],
    [
      "query params",
      '{"jsonrpc":"2.0","id":"c12","method":"ahp/query","params":{"session_id":"s","agent_id":"a"}}',
      -32602,
      "Invalid params: ",
      false,
    ],
    ["batch params", '{"jsonrpc":"2.0","id":"c13","method":"ahp/batch","params":{"events":{}}}', -32602, "Invalid params: ", false],
  ];

  for (const [name, line, code, message, exact] of cases) {
    it(`${name}: ${code} ${message}`, async () => {
      const h = await lineHarness(exampleServer());
      h.write(`${line}\n`);
      const response = parseLine(await h.nextLine());
      const id = (JSON.parse(line) as { id: string }).id;
      expect(response.id).toBe(id);
      expect(response.jsonrpc).toBe("2.0");
      expect(response).not.toHaveProperty("result");
      const error = response.error as { code: number; message: string };
      expect(error.code).toBe(code);
      if (exact) expect(error.message).toBe(message);
      else expect(error.message.startsWith(message), error.message).toBe(true);
    });
  }
});

describe("NDJSON framing as bytes", () => {
  const request = (id: string) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "ahp/event",
      params: { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: "t", depth: 0, payload: { note: "a\u2028b" } },
    });

  it("malformed lines get -32700 with id null; blank lines, whitespace and \\r\\n are tolerated; each answer is one line", async () => {
    const h = await lineHarness(exampleServer());
    h.write(`\n\r\n   \t \n{"jsonrpc":"2.0","id":"x",\n  ${request("r1")}  \r\n\r\n${request("r2")}\r\n`);
    const lines = [await h.nextLine(), await h.nextLine(), await h.nextLine()].map(parseLine);
    expect(lines[0]).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    expect((lines[0]!.error as { message: string }).message.startsWith("Parse error")).toBe(true);
    expect(
      lines
        .slice(1)
        .map((l) => l.id)
        .sort(),
    ).toEqual(["r1", "r2"]);
    expect(await h.drain()).toEqual([]);
    expect(h.output().endsWith("\n")).toBe(true);
    expect(
      h
        .output()
        .split("\n")
        .filter((l) => l.length > 0),
    ).toHaveLength(4);
  });

  it("a line with raw U+2028/U+2029 inside a string is one message", async () => {
    const h = await lineHarness(exampleServer());
    const line = request("u1").replace("a\\u2028b", "a\u2028b\u2029");
    expect(Buffer.from(line, "utf8").includes(Buffer.from([0xe2, 0x80, 0xa8]))).toBe(true);
    h.write(`${line}\n`);
    expect(parseLine(await h.nextLine())).toStrictEqual({ jsonrpc: "2.0", id: "u1", result: { decision: "allow" } });
  });

  it("a request written one byte at a time (split inside multi-byte characters) is answered once", async () => {
    const h = await lineHarness(exampleServer());
    const bytes = Buffer.from(`${request("bytes").replace("a\\u2028b", "é中😀")}\n`, "utf8");
    for (const byte of bytes) h.write(Buffer.from([byte]));
    expect(parseLine(await h.nextLine())).toMatchObject({ id: "bytes", result: { decision: "allow" } });
    expect(await h.drain()).toEqual([]);
  });

  it("the message size limit is enforced and configurable: an oversized line gets -32002 (by its id when readable), the next line is answered", async () => {
    const h = await lineHarness(exampleServer(), { maxMessageBytes: 1024 });
    const padding = "x".repeat(2048);
    const big = JSON.stringify({ jsonrpc: "2.0", id: "big", method: "ahp/event", params: { padding } });
    const anonymous = JSON.stringify({ params: { padding }, jsonrpc: "2.0", id: "late-id", method: "ahp/event" });
    h.write(`${big}\n${anonymous}\n${request("small")}\n`);
    const byId = parseLine(await h.nextLine());
    expect(byId).toMatchObject({ jsonrpc: "2.0", id: "big", error: { code: -32002 } });
    expect((byId.error as { message: string }).message).toMatch(/^Message too large/);
    // The id comes after a large member: it cannot be read without parsing, so the answer has id null.
    expect(parseLine(await h.nextLine())).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32002 } });
    expect(parseLine(await h.nextLine())).toMatchObject({ id: "small", result: { decision: "allow" } });
  });

  it("the scripted conformance harness over bytes: scripts, the log query and numeric ids", async () => {
    const h = await lineHarness(createConformanceServer({}));
    h.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ahp/event", params: { event_type: "pre_action", session_id: "bytes", agent_id: "a", timestamp: "t", depth: 0, payload: { script: { decision: { decision: "block", reason: "scripted" } } } } })}\n`,
    );
    expect(parseLine(await h.nextLine())).toStrictEqual({ jsonrpc: "2.0", id: 1, result: { decision: "block", reason: "scripted" } });
    h.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: "log", method: "ahp/query", params: { session_id: "bytes", agent_id: "a", query_type: "conformance/log", payload: { session_id: "bytes" } } })}\n`,
    );
    const log = parseLine(await h.nextLine()) as { result: { answer: { records: Array<Record<string, unknown>> } } };
    expect(log.result.answer.records).toHaveLength(1);
    expect(log.result.answer.records[0]).toMatchObject({
      handler: "event",
      via: "request",
      request_id: 1,
      transport: "ndjson",
      outcome: "ok",
    });
  });
});

/**
 * The JSON-RPC envelope as the server reads it: only `"jsonrpc":"2.0"`, and ids echoed as the
 * JSON text they arrived as, also integers a double cannot hold.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { AhpServer, LargeIntegerId, NdjsonStreamTransport, parseJsonText, sniffJsonRpcId, stringifyMessage } from "../src/index.js";
import { topLevelIdText } from "../src/large-id.js";

const event = { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: "2026-06-01T10:15:00Z", depth: 0, payload: {} };

/** A server on an NDJSON stream: `exchange(line)` writes one line and resolves with the next line written back. */
async function lineServer() {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const server = new AhpServer({ handlers: { onEvent: () => ({ decision: "allow" }) } });
  await server.connect(new NdjsonStreamTransport({ readable: toServer, writable: fromServer }));
  let buffered = "";
  const lines: string[] = [];
  const waiters: Array<(line: string) => void> = [];
  fromServer.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    for (let at = buffered.indexOf("\n"); at !== -1; at = buffered.indexOf("\n")) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      const waiter = waiters.shift();
      if (waiter === undefined) lines.push(line);
      else waiter(line);
    }
  });
  const next = () => {
    const line = lines.shift();
    return line !== undefined ? Promise.resolve(line) : new Promise<string>((resolve) => waiters.push(resolve));
  };
  return {
    async exchange(line: string): Promise<string> {
      toServer.write(`${line}\n`);
      return next();
    },
    close: () => server.close({ graceMs: 0 }),
  };
}

describe("integer ids past 2^53", () => {
  it("are kept as their JSON text by the decoder and written back unchanged by the encoder", () => {
    const parsed = parseJsonText('{"jsonrpc":"2.0","id":1180591620717411303424,"method":"m","params":{"id":1}}') as { id: unknown };
    expect(parsed.id).toBeInstanceOf(LargeIntegerId);
    expect((parsed.id as LargeIntegerId).text).toBe("1180591620717411303424");
    expect(stringifyMessage({ jsonrpc: "2.0", id: parsed.id, result: { decision: "allow" } })).toBe(
      '{"jsonrpc":"2.0","id":1180591620717411303424,"result":{"decision":"allow"}}',
    );
    // Safe integers stay numbers; a non-integer id is left as JSON.parse made it.
    expect((parseJsonText('{"id":9007199254740991}') as { id: unknown }).id).toBe(9007199254740991);
    expect((parseJsonText('{"id":1.5}') as { id: unknown }).id).toBe(1.5);
    // Elsewhere the id serializes as its text (never a throw, never a rounded number).
    expect(JSON.stringify({ request_id: parsed.id })).toBe('{"request_id":"1180591620717411303424"}');
  });

  it("finds the top-level id member only (the last one, as JSON.parse keeps), past strings and nested ids", () => {
    expect(topLevelIdText('{"params":{"id":1},"s":"\\"id\\":2","id" : -18446744073709551617 }')).toBe("-18446744073709551617");
    expect(topLevelIdText('{"id":1e400,"id":123456789012345678901}')).toBe("123456789012345678901");
    expect(topLevelIdText('{"\\u0069d":99999999999999999999}')).toBe("99999999999999999999");
    expect(topLevelIdText('{"params":[{"id":5}]}')).toBeUndefined();
  });

  it("are sniffed from the head of a message too large to parse", () => {
    const id = sniffJsonRpcId('{"jsonrpc":"2.0","id":1180591620717411303424,"method":"ahp/event","params":{"x":"…');
    expect(id).toBeInstanceOf(LargeIntegerId);
    expect(stringifyMessage({ jsonrpc: "2.0", id, error: { code: -32002, message: "m" } })).toBe(
      '{"jsonrpc":"2.0","id":1180591620717411303424,"error":{"code":-32002,"message":"m"}}',
    );
  });

  it("are echoed exactly by the server in results, errors and ahp/batch answers", async () => {
    const server = await lineServer();
    try {
      const params = JSON.stringify(event);
      expect(await server.exchange(`{"jsonrpc":"2.0","id":1180591620717411303424,"method":"ahp/event","params":${params}}`)).toBe(
        '{"jsonrpc":"2.0","id":1180591620717411303424,"result":{"decision":"allow"}}',
      );
      expect(await server.exchange('{"jsonrpc":"2.0","id":-9007199254740993,"method":"ahp/nope","params":{}}')).toBe(
        '{"jsonrpc":"2.0","id":-9007199254740993,"error":{"code":-32601,"message":"Method not found"}}',
      );
      expect(
        await server.exchange(`{"jsonrpc":"2.0","id":18446744073709551617,"method":"ahp/batch","params":{"events":[${params}]}}`),
      ).toBe('{"jsonrpc":"2.0","id":18446744073709551617,"result":{"decisions":[{"decision":"allow"}]}}');
    } finally {
      await server.close();
    }
  });
});

describe('only "jsonrpc":"2.0"', () => {
  it("refuses any other value, or none, with -32600 and the id, without calling the handler", async () => {
    const server = await lineServer();
    try {
      const params = JSON.stringify(event);
      for (const version of ['"1.0"', '"2"', '"2.00"', '""', "2", "null"]) {
        expect(await server.exchange(`{"jsonrpc":${version},"id":"v","method":"ahp/event","params":${params}}`), version).toBe(
          '{"jsonrpc":"2.0","id":"v","error":{"code":-32600,"message":"Invalid JSON-RPC message"}}',
        );
      }
      expect(await server.exchange(`{"id":7,"method":"ahp/event","params":${params}}`)).toBe(
        '{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid JSON-RPC message"}}',
      );
      expect(await server.exchange(`{"jsonrpc":"1.0","id":1180591620717411303424,"method":"ahp/event","params":${params}}`)).toBe(
        '{"jsonrpc":"2.0","id":1180591620717411303424,"error":{"code":-32600,"message":"Invalid JSON-RPC message"}}',
      );
      // Still served afterwards.
      expect(await server.exchange(`{"jsonrpc":"2.0","id":"ok","method":"ahp/event","params":${params}}`)).toBe(
        '{"jsonrpc":"2.0","id":"ok","result":{"decision":"allow"}}',
      );
    } finally {
      await server.close();
    }
  });
});

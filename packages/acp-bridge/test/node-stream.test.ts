/**
 * The NDJSON stream over Node streams: line splitting as the SDK's `ndJsonStream` does it, the
 * protocol errors it answers, the raw reader, writes coalesced per event-loop turn, the direct writer, back-pressure, and a
 * stock SDK client and agent talking through it.
 */
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { DIRECT_WRITER, LineTooLongError, ndJsonNodeStream, RAW_READER } from "../src/node-stream.js";
import { chunkTurn, fiveChunkAgent } from "./helpers/chunks.js";
import { observe, until } from "./helpers/setup.js";

/** An output that records every write it gets (one entry per write call). */
function recorder(options: { highWaterMark?: number; hold?: boolean } = {}) {
  const writes: string[] = [];
  const held: Array<() => void> = [];
  let hold = options.hold === true;
  const out = new Writable({
    highWaterMark: options.highWaterMark ?? 16_384,
    write(chunk: Buffer, _enc, done) {
      writes.push(chunk.toString("utf8"));
      if (hold) held.push(() => done());
      else done();
    },
  });
  const release = () => {
    hold = false;
    for (const f of held.splice(0)) f();
  };
  return { out, writes, release };
}

const lines = (writes: string[]) =>
  writes
    .join("")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function readAll(readable: ReadableStream<unknown>, count: number): Promise<unknown[]> {
  const reader = readable.getReader();
  const got: unknown[] = [];
  while (got.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    got.push(value);
  }
  reader.releaseLock();
  return got;
}

describe("ndJsonNodeStream", () => {
  it("splits LF and CRLF lines, joins a line cut across chunks, skips blank lines", async () => {
    const input = new PassThrough();
    const { out } = recorder();
    const s = ndJsonNodeStream(input, out);
    input.write('{"jsonrpc":"2.0","method":"a"}\r\n\n   \n{"jsonrpc":"2.0",');
    input.write('"method":"b","params":{"text":"h\u00e9"}}\n{"jsonrpc":"2.0","method":"c"}');
    input.end();
    const got = await readAll(s.readable, 3);
    expect(got).toEqual([
      { jsonrpc: "2.0", method: "a" },
      { jsonrpc: "2.0", method: "b", params: { text: "h\u00e9" } },
      { jsonrpc: "2.0", method: "c" },
    ]);
  });

  it("answers a line that is not JSON with -32700, a batch and a non-object with -32600, and goes on", async () => {
    const input = new PassThrough();
    const { out, writes } = recorder();
    const s = ndJsonNodeStream(input, out);
    input.write('not json\n[{"jsonrpc":"2.0","method":"x"}]\n42\n{"jsonrpc":"2.0","method":"ok"}\n');
    expect(await readAll(s.readable, 1)).toEqual([{ jsonrpc: "2.0", method: "ok" }]);
    await until(() => lines(writes).length >= 3, "the three error answers");
    expect(lines(writes).map((m) => [m.id, (m.error as { code: number }).code])).toEqual([
      [null, -32700],
      [null, -32600],
      [null, -32600],
    ]);
  });

  it("errors the readable side on a line longer than the limit", async () => {
    const input = new PassThrough();
    const s = ndJsonNodeStream(input, recorder().out, { maxMessageBytes: 64 });
    input.write(`{"jsonrpc":"2.0","method":"${"x".repeat(40)}`);
    input.write(`${"y".repeat(40)}"}\n`);
    await expect(s.readable.getReader().read()).rejects.toBeInstanceOf(LineTooLongError);
  });

  it("hands messages to a raw reader first; the ones it takes never reach the readable side", async () => {
    const input = new PassThrough();
    const s = ndJsonNodeStream(input, recorder().out);
    const taken: unknown[] = [];
    const takenLines: string[] = [];
    s[RAW_READER]((m, line) => {
      if (m.method !== "session/update") return false;
      taken.push(m.params);
      takenLines.push(line);
      return true;
    });
    input.write('{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}\r\n{"jsonrpc":"2.0","id":1,"result":{}}\n');
    input.write('{"jsonrpc":"2.0","method":"session/update","params":{"n":2}}\n');
    input.end();
    expect(await readAll(s.readable, 5)).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
    expect(taken).toEqual([{ n: 1 }, { n: 2 }]);
    expect(takenLines).toEqual([
      '{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}',
      '{"jsonrpc":"2.0","method":"session/update","params":{"n":2}}',
    ]);
  });

  it("coalesces the messages written in one event-loop turn into one write, in order; a later turn writes again", async () => {
    const { out, writes } = recorder();
    const s = ndJsonNodeStream(new PassThrough(), out);
    const writer = s.writable.getWriter();
    await Promise.all([1, 2, 3].map((n) => writer.write({ jsonrpc: "2.0", method: "m", params: { n } } as never)));
    await until(() => writes.length > 0, "the first write");
    await observe(); // any further write of those three messages would follow within this window
    expect(writes).toHaveLength(1);
    await writer.write({ jsonrpc: "2.0", method: "m", params: { n: 4 } } as never);
    await until(() => writes.length > 1, "the second write");
    expect(writes).toHaveLength(2);
    expect(lines(writes).map((m) => (m.params as { n: number }).n)).toEqual([1, 2, 3, 4]);
  });

  it("a direct write goes out in line with the SDK's writes, and is refused while an SDK message is on its way", async () => {
    const { out, writes } = recorder();
    const s = ndJsonNodeStream(new PassThrough(), out);
    const direct = s[DIRECT_WRITER];
    const writer = s.writable.getWriter();
    expect(direct.write({ jsonrpc: "2.0", method: "m", params: { n: 1 } })).toBe(true);
    let handOver!: () => void;
    const onItsWay = new Promise<void>((resolve) => (handOver = resolve));
    direct.sdkSend(onItsWay);
    expect(direct.write({ jsonrpc: "2.0", method: "m", params: { n: 99 } })).toBe(false);
    await writer.write({ jsonrpc: "2.0", method: "m", params: { n: 2 } } as never);
    handOver();
    await onItsWay;
    await Promise.resolve();
    expect(direct.write({ jsonrpc: "2.0", method: "m", params: { n: 3 } })).toBe(true);
    expect(direct.writeLine('{"jsonrpc":"2.0","method":"m","params":{"n":4}}')).toBe(true);
    await until(() => lines(writes).length >= 4, "four lines written");
    expect(lines(writes).map((m) => (m.params as { n: number }).n)).toEqual([1, 2, 3, 4]);
    out.destroy();
    expect(direct.write({ jsonrpc: "2.0", method: "m", params: { n: 5 } })).toBe(false);
    expect(direct.writeLine("{}")).toBe(false);
  });

  it("holds the next write while the output's buffer is full, until it drains", async () => {
    const r = recorder({ highWaterMark: 8, hold: true });
    const s = ndJsonNodeStream(new PassThrough(), r.out);
    const writer = s.writable.getWriter();
    await writer.write({ jsonrpc: "2.0", method: "first" } as never);
    await until(() => r.out.writableNeedDrain, "the output's buffer full");
    let second = false;
    const p = writer.write({ jsonrpc: "2.0", method: "second" } as never).then(() => (second = true));
    await observe(); // the buffer is full (seen above): the second write must stay held through this window
    expect(r.out.writableNeedDrain).toBe(true);
    expect(second).toBe(false);
    r.release();
    await p;
    expect(second).toBe(true);
  });

  it("rejects writes once the output failed", async () => {
    const out = new Writable({ write: (_c, _e, done) => done(new Error("EPIPE")) });
    const s = ndJsonNodeStream(new PassThrough(), out);
    const writer = s.writable.getWriter();
    await writer.write({ jsonrpc: "2.0", method: "a" } as never);
    await until(() => out.errored !== null, "the output failed");
    await expect(writer.write({ jsonrpc: "2.0", method: "b" } as never)).rejects.toThrow("EPIPE");
  });

  it("carries a stock SDK client and agent: requests, notifications in order, responses", async () => {
    const up = new PassThrough();
    const down = new PassThrough();
    fiveChunkAgent().connect(ndJsonNodeStream(up, down));
    const turn = await chunkTurn(ndJsonNodeStream(down, up));
    expect(turn.stopReason).toBe("end_turn");
    expect(turn.seen).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    turn.close();
  });
});

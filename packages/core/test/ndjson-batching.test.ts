/** NdjsonStreamTransport: lines sent together go out together, in groups of flushLines, within the high-water mark. */
import { PassThrough, Writable } from "node:stream";
import { NdjsonStreamTransport, type JsonRpcMessage } from "@ahp/core";
import { describe, expect, it } from "vitest";
import { until } from "./wait.js";

/** Records every write and holds its callback until released. */
class RecordingWritable extends Writable {
  /** What reached _write (one at a time: the stream buffers the rest until the callback). */
  readonly writes: string[] = [];
  /** Every write() call, as the transport made it. */
  readonly calls: string[] = [];
  readonly #held: Array<() => void> = [];
  constructor(highWaterMark: number) {
    super({ highWaterMark, decodeStrings: false });
    const write = this.write.bind(this) as (chunk: unknown, callback?: (error?: Error | null) => void) => boolean;
    this.write = ((chunk: unknown, callback?: (error?: Error | null) => void) => {
      this.calls.push(String(chunk));
      return write(chunk, callback);
    }) as Writable["write"];
  }
  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writes.push(chunk.toString());
    if (this.#auto) callback();
    else this.#held.push(() => callback());
  }
  #auto = false;
  /** Confirms everything held and everything written from now on. */
  releaseAll(): void {
    this.#auto = true;
    this.release();
  }
  release(): void {
    for (const done of this.#held.splice(0)) done();
  }
}

/** Lines handed to the writable so far. */
const linesIn = (writes: string[]): number => writes.join("").split("\n").length - 1;

const note = (n: number, pad = ""): JsonRpcMessage => ({ jsonrpc: "2.0", method: "ahp/event", params: { n, pad } });

async function transportOver(writable: Writable, options: { flushLines?: number } = {}) {
  const transport = new NdjsonStreamTransport({ readable: new PassThrough(), writable, ...options });
  await transport.start();
  return transport;
}

describe("NdjsonStreamTransport write batching", () => {
  it("writes the lines sent in one go in one write, without waiting for an earlier write's callback", async () => {
    const writable = new RecordingWritable(64 * 1024);
    const transport = await transportOver(writable, { flushLines: 1000 });
    let firstDone = false;
    const first = Promise.all(Array.from({ length: 50 }, (_, i) => transport.send(note(i)))).then(() => (firstDone = true));
    await until(() => linesIn(writable.calls) === 50);
    expect(writable.calls).toHaveLength(1); // all 50, together
    const second = Array.from({ length: 30 }, (_, i) => transport.send(note(50 + i)));
    await until(() => linesIn(writable.calls) === 80);
    expect(writable.calls).toHaveLength(2); // the 30, together, while the first write is unconfirmed
    expect(firstDone).toBe(false); // a send resolves once the writable confirmed its bytes
    writable.releaseAll();
    await first;
    await Promise.all(second);
    const lines = writable.calls.join("").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.map((l) => (JSON.parse(l) as { params: { n: number } }).params.n)).toEqual(Array.from({ length: 80 }, (_, i) => i));
    await transport.close();
  });

  it("writes every flushLines lines at once, so the peer can start before the burst ends", async () => {
    const writable = new RecordingWritable(64 * 1024);
    const transport = await transportOver(writable, { flushLines: 8 });
    const sends = Array.from({ length: 20 }, (_, i) => transport.send(note(i)));
    // Before the tick ends, the two full groups of 8 are written; the 4 left wait for the tick.
    expect(writable.calls.map((w) => w.split("\n").length - 1)).toEqual([8, 8]);
    await until(() => linesIn(writable.calls) === 20);
    expect(writable.calls.map((w) => w.split("\n").length - 1)).toEqual([8, 8, 4]);
    writable.releaseAll();
    await Promise.all(sends);
    await transport.close();
  });

  it("flushLines: Infinity writes a whole burst in one write; below 1 is refused", async () => {
    const writable = new RecordingWritable(64 * 1024);
    const transport = await transportOver(writable, { flushLines: Number.POSITIVE_INFINITY });
    const sends = Array.from({ length: 40 }, (_, i) => transport.send(note(i)));
    await until(() => linesIn(writable.calls) === 40);
    expect(writable.calls.map((w) => w.split("\n").length - 1)).toEqual([40]);
    writable.releaseAll();
    await Promise.all(sends);
    await transport.close();
    for (const flushLines of [0, -1, Number.NaN]) {
      expect(() => new NdjsonStreamTransport({ readable: new PassThrough(), writable: new PassThrough(), flushLines })).toThrow(
        /flushLines/,
      );
    }
  });

  it("stops writing while the writable asks for a drain", async () => {
    const writable = new RecordingWritable(1024);
    const transport = await transportOver(writable, { flushLines: 1 });
    const pad = "p".repeat(400);
    let settled = 0;
    const sends = Array.from({ length: 10 }, (_, i) => transport.send(note(i, pad)).finally(() => settled++));
    // ~440 bytes a line: the third write passes the 1024-byte mark and write() returns false.
    await until(() => writable.calls.length >= 3);
    expect(writable.writableNeedDrain).toBe(true);
    // Nothing is confirmed while the writable holds its callbacks, so no drain can have come:
    // the other seven lines wait for it.
    expect(writable.calls).toHaveLength(3);
    expect(settled).toBe(0);
    await until(() => {
      writable.release();
      return linesIn(writable.calls) >= 10;
    });
    writable.releaseAll();
    await Promise.all(sends);
    expect(writable.calls.join("").split("\n")).toHaveLength(11);
    await transport.close();
  });

  it("keeps each write within the writable's high-water mark, one line at least", async () => {
    const writable = new RecordingWritable(1024);
    const transport = await transportOver(writable);
    const pad = "p".repeat(300);
    const sends = [transport.send(note(0)), ...Array.from({ length: 20 }, (_, i) => transport.send(note(i + 1, pad)))];
    let settled = 0;
    for (const send of sends) void send.finally(() => settled++);
    await until(() => {
      writable.release();
      return settled === sends.length;
    });
    await Promise.all(sends);
    for (const write of writable.writes) {
      const lines = write.split("\n").filter((l) => l.length > 0);
      expect(lines.length === 1 || write.length <= 1024).toBe(true);
    }
    expect(writable.writes.length).toBeLessThan(21); // batched (about 3 lines a write), yet bounded
    expect(writable.writes.length).toBeGreaterThan(3);
    await transport.close();
  });

  it("writes the answers given while a received chunk is delivered when that chunk is done, in one write", async () => {
    const readable = new PassThrough();
    const writable = new RecordingWritable(64 * 1024);
    const transport = new NdjsonStreamTransport({ readable, writable });
    const answered: number[] = [];
    // A synchronous answer to every request, as a server with a synchronous handler gives.
    transport.onmessage = (message) => {
      const { id } = message as { id: number };
      answered.push(id);
      transport.post({ jsonrpc: "2.0", id, result: { decision: "allow" } }, () => undefined, undefined);
    };
    await transport.start();
    const request = (id: number) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "ahp/event", params: {} })}\n`;
    readable.emit("data", Buffer.from(request(1) + request(2) + request(3)));
    // Written before the 'data' event returned: no tick later, and all three together.
    expect(answered).toEqual([1, 2, 3]);
    expect(writable.calls.map((w) => w.split("\n").length - 1)).toEqual([3]);
    readable.emit("data", Buffer.from(request(4)));
    expect(writable.calls.map((w) => w.split("\n").length - 1)).toEqual([3, 1]);
    // A line sent outside a delivery still waits for the end of the tick.
    transport.post({ jsonrpc: "2.0", method: "ahp/event", params: {} }, () => undefined, undefined);
    expect(writable.calls).toHaveLength(2);
    await until(() => writable.calls.length === 3);
    writable.releaseAll();
    await transport.close();
  });

  it("hands lines sent just before close() to the writable", async () => {
    const writable = new PassThrough();
    const chunks: string[] = [];
    writable.on("data", (c: Buffer) => chunks.push(c.toString()));
    const transport = await transportOver(writable);
    const sent = transport.send(note(1)).catch(() => "failed");
    await transport.close();
    await sent;
    expect(chunks.join("")).toBe(`${JSON.stringify(note(1))}\n`);
  });
});

/** NdjsonStreamTransport: lines queued behind an outstanding write go out together, within the high-water mark. */
import { PassThrough, Writable } from "node:stream";
import { NdjsonStreamTransport, type JsonRpcMessage } from "@ahp/core";
import { describe, expect, it } from "vitest";

/** Records every write and holds its callback until released. */
class RecordingWritable extends Writable {
  readonly writes: string[] = [];
  readonly #held: Array<() => void> = [];
  constructor(highWaterMark: number) {
    super({ highWaterMark, decodeStrings: false });
  }
  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writes.push(chunk.toString());
    this.#held.push(() => callback());
  }
  release(): void {
    for (const done of this.#held.splice(0)) done();
  }
}

const note = (n: number, pad = ""): JsonRpcMessage => ({ jsonrpc: "2.0", method: "ahp/event", params: { n, pad } });

async function transportOver(writable: Writable) {
  const transport = new NdjsonStreamTransport({ readable: new PassThrough(), writable });
  await transport.start();
  return transport;
}

describe("NdjsonStreamTransport write batching", () => {
  it("writes the lines sent in one go in one write, and those queued behind an outstanding write in the next", async () => {
    const writable = new RecordingWritable(64 * 1024);
    const transport = await transportOver(writable);
    const first = Array.from({ length: 50 }, (_, i) => transport.send(note(i)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writable.writes).toHaveLength(1); // all 50, together
    const second = Array.from({ length: 30 }, (_, i) => transport.send(note(50 + i)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writable.writes).toHaveLength(1); // the 30 wait for the first write's callback
    writable.release();
    await Promise.all(first);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writable.writes).toHaveLength(2); // the 30, together
    writable.release();
    await Promise.all(second);
    const lines = writable.writes.join("").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.map((l) => (JSON.parse(l) as { params: { n: number } }).params.n)).toEqual(Array.from({ length: 80 }, (_, i) => i));
    await transport.close();
  });

  it("keeps each write within the writable's high-water mark, one line at least", async () => {
    const writable = new RecordingWritable(1024);
    const transport = await transportOver(writable);
    const pad = "p".repeat(300);
    const sends = [transport.send(note(0)), ...Array.from({ length: 20 }, (_, i) => transport.send(note(i + 1, pad)))];
    for (let round = 0; round < 30 && writable.writes.length < 21; round++) {
      await new Promise((resolve) => setImmediate(resolve));
      writable.release();
    }
    await Promise.all(sends);
    for (const write of writable.writes) {
      const lines = write.split("\n").filter((l) => l.length > 0);
      expect(lines.length === 1 || write.length <= 1024).toBe(true);
    }
    expect(writable.writes.length).toBeLessThan(21); // batched (about 3 lines a write), yet bounded
    expect(writable.writes.length).toBeGreaterThan(3);
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

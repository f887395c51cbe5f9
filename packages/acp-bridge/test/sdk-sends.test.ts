/**
 * The SDK connection's sends over a stream of ours (ADR 0111): straight to the stream while
 * nothing is on its way in the SDK's write chain, through that chain (and counted) otherwise,
 * in one wire order; an aborted connection or a message that cannot be serialized takes the
 * SDK's own path, and a connection without the hook is left alone.
 */
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { DIRECT_WRITER, ndJsonNodeStream } from "../src/node-stream.js";
import { routeSdkSends } from "../src/sdk-sends.js";
import { chunkTurn, fiveChunkAgent } from "./helpers/chunks.js";
import { observe, until } from "./helpers/setup.js";

function recorder() {
  const writes: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      writes.push(chunk.toString("utf8"));
      done();
    },
  });
  return { out, writes };
}

const ns = (writes: string[]) =>
  writes
    .join("")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { params: { n: number } }).params.n);

/** A stand-in for the SDK's connection: `sendMessage` writes through the stream's web writable, as the SDK does. */
function sdkLike(writable: WritableStream<unknown>) {
  const controller = new AbortController();
  const viaSdk: unknown[] = [];
  let queue: Promise<void> = Promise.resolve();
  const connection = {
    signal: controller.signal,
    sendMessage(message: unknown): Promise<void> {
      viaSdk.push(message);
      if (controller.signal.aborted) return Promise.reject(new Error("closed"));
      queue = queue.then(async () => {
        const writer = writable.getWriter();
        try {
          await writer.write(message);
        } finally {
          writer.releaseLock();
        }
      });
      return queue;
    },
  };
  return { handle: { connection }, connection, controller, viaSdk };
}

describe("routeSdkSends", () => {
  it("writes straight to the stream while nothing is on its way, and behind the SDK's chain while something is", async () => {
    const { out, writes } = recorder();
    const s = ndJsonNodeStream(new PassThrough(), out);
    const direct = s[DIRECT_WRITER];
    const sdk = sdkLike(s.writable);
    expect(routeSdkSends(sdk.handle, direct)).toBe(true);
    const m = (n: number) => ({ jsonrpc: "2.0", method: "m", params: { n } });

    await sdk.connection.sendMessage(m(1));
    expect(sdk.viaSdk).toEqual([]);
    // Something else is still in the SDK's chain: the next sends queue behind it, in order.
    let handOver!: () => void;
    direct.sdkSend(new Promise<void>((resolve) => (handOver = resolve)));
    const second = sdk.connection.sendMessage(m(2));
    const third = sdk.connection.sendMessage(m(3));
    expect(sdk.viaSdk).toEqual([m(2), m(3)]);
    expect(direct.write(m(99))).toBe(false);
    handOver();
    await Promise.all([second, third]);
    await Promise.resolve();
    await sdk.connection.sendMessage(m(4));
    expect(sdk.viaSdk).toEqual([m(2), m(3)]);
    await until(() => ns(writes).length >= 4, "four messages written");
    expect(ns(writes)).toEqual([1, 2, 3, 4]);
  });

  it("leaves an aborted connection's sends and unserializable messages to the SDK's own path", async () => {
    const { out, writes } = recorder();
    const s = ndJsonNodeStream(new PassThrough(), out);
    const sdk = sdkLike(s.writable);
    routeSdkSends(sdk.handle, s[DIRECT_WRITER]);
    const bad = { jsonrpc: "2.0", method: "m", params: { n: 10n } };
    await expect(sdk.connection.sendMessage(bad)).rejects.toThrow(/BigInt/);
    expect(sdk.viaSdk).toEqual([bad]);
    sdk.controller.abort();
    await expect(sdk.connection.sendMessage({ jsonrpc: "2.0", method: "m", params: { n: 1 } })).rejects.toThrow("closed");
    expect(sdk.viaSdk).toHaveLength(2);
    await observe(); // both sends were settled (awaited above): a write of ours would have been made by now
    expect(writes).toEqual([]);
  });

  it("changes nothing on a connection without sendMessage or signal", () => {
    const s = ndJsonNodeStream(new PassThrough(), recorder().out);
    const send = () => Promise.resolve();
    const noSignal = { connection: { sendMessage: send } };
    expect(routeSdkSends(noSignal, s[DIRECT_WRITER])).toBe(false);
    expect(noSignal.connection.sendMessage).toBe(send);
    expect(routeSdkSends({ connection: { signal: new AbortController().signal } }, s[DIRECT_WRITER])).toBe(false);
    expect(routeSdkSends({}, s[DIRECT_WRITER])).toBe(false);
  });

  it("a stock SDK agent's responses and notifications go out without its write chain, in order", async () => {
    const up = new PassThrough();
    const down = new PassThrough();
    const s = ndJsonNodeStream(up, down);
    let sdkWrites = 0;
    const writer = s.writable;
    const counted = new WritableStream<unknown>({
      async write(message) {
        sdkWrites++;
        const w = writer.getWriter();
        try {
          await w.write(message as never);
        } finally {
          w.releaseLock();
        }
      },
    });
    const connection = fiveChunkAgent().connect({ readable: s.readable, writable: counted });
    expect(routeSdkSends(connection, s[DIRECT_WRITER])).toBe(true);
    const turn = await chunkTurn(ndJsonNodeStream(down, up));
    expect(turn.stopReason).toBe("end_turn");
    expect(turn.seen).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    expect(sdkWrites).toBe(0);
    turn.close();
  });
});

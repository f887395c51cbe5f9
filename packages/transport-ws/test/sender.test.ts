import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { FrameSender } from "../src/sender.js";
import { until } from "./helpers.js";

/** A stand-in socket whose buffered amount and write completions the test controls. */
class FakeSocket extends EventEmitter {
  readyState = 1;
  bufferedAmount = 0;
  paused = false;
  sent: string[] = [];
  callbacks: Array<(error?: Error | null) => void> = [];
  send(text: string, cb: (error?: Error | null) => void) {
    this.sent.push(text);
    this.bufferedAmount += text.length;
    this.callbacks.push(cb);
  }
  /** The kernel took the oldest write. */
  flushOne() {
    const cb = this.callbacks.shift()!;
    this.bufferedAmount -= this.sent[this.sent.length - this.callbacks.length - 1]!.length;
    cb(null);
  }
  pause() {
    this.paused = true;
  }
  resume() {
    this.paused = false;
  }
}

const make = (options: Partial<ConstructorParameters<typeof FrameSender>[1]> = {}) => {
  const socket = new FakeSocket();
  const stalls: Error[] = [];
  const sender = new FrameSender(socket as unknown as WebSocket, {
    maxBufferedBytes: 10,
    drainTimeoutMs: 0,
    pauseReading: true,
    onStall: (e) => stalls.push(e),
    ...options,
  });
  return { socket, sender, stalls };
};

describe("FrameSender", () => {
  it("writes at once below the limit, queues in order above it, pauses reading while frames wait", async () => {
    const { socket, sender } = make();
    await sender.send("aaaaaaaaaaaa"); // 12 bytes: now above the limit
    const order: string[] = [];
    const b = sender.send("bb").then(() => order.push("bb"));
    const c = sender.send("cc").then(() => order.push("cc"));
    expect(socket.sent).toEqual(["aaaaaaaaaaaa"]);
    expect(sender.waiting).toBe(2);
    expect(socket.paused).toBe(true);
    socket.flushOne(); // the big frame left: both waiting frames fit
    await Promise.all([b, c]);
    expect(order).toEqual(["bb", "cc"]);
    expect(socket.sent).toEqual(["aaaaaaaaaaaa", "bb", "cc"]);
    expect(socket.paused).toBe(false);
  });

  it("an aborted waiting frame is never written", async () => {
    const { socket, sender } = make();
    await sender.send("aaaaaaaaaaaa");
    const controller = new AbortController();
    const waiting = sender.send("never", controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: "ABORTED" });
    socket.flushOne();
    expect(socket.sent).toEqual(["aaaaaaaaaaaa"]);
    expect(socket.paused).toBe(false);
  });

  it("fail() rejects waiting frames and refuses new ones", async () => {
    const { sender } = make();
    await sender.send("aaaaaaaaaaaa");
    const waiting = sender.send("b");
    sender.fail(new Error("gone"));
    await expect(waiting).rejects.toThrow("gone");
    await expect(sender.send("c")).rejects.toThrow("gone");
  });

  it("reports a stall when nothing drains for drainTimeoutMs", async () => {
    const { sender, stalls } = make({ drainTimeoutMs: 30 });
    await sender.send("aaaaaaaaaaaa");
    const waiting = performance.now();
    void sender.send("b").catch(() => undefined);
    await until(() => stalls.length > 0, undefined, "the stall reported");
    expect(performance.now() - waiting).toBeGreaterThanOrEqual(29); // not before drainTimeoutMs
    expect(stalls).toHaveLength(1);
    expect(stalls[0]!.message).toMatch(/^WebSocket peer is not reading: 12 bytes buffered and 1 frames waiting for 30ms$/);
    sender.fail(new Error("closed"));
  });
});

describe("FrameSender.post", () => {
  const failures = () => {
    const calls: Array<{ error: Error; context: string }> = [];
    return { calls, onFailure: (error: Error, context: string) => calls.push({ error, context }) };
  };

  it("above the buffer limit a posted frame waits in order behind sent ones and goes out on drain; nothing fails", async () => {
    const { socket, sender } = make();
    const f = failures();
    sender.post("aaaaaaaaaaaa", f.onFailure, "a"); // 12 bytes: now above the limit
    const b = sender.send("bb");
    sender.post("cc", f.onFailure, "c");
    expect(socket.sent).toEqual(["aaaaaaaaaaaa"]);
    expect(sender.waiting).toBe(2);
    socket.flushOne();
    await b;
    expect(socket.sent).toEqual(["aaaaaaaaaaaa", "bb", "cc"]);
    expect(f.calls).toEqual([]);
  });

  it("a waiting posted frame fails through onFailure when the connection is gone, as does a later post, never from inside post()", async () => {
    const { socket, sender } = make();
    const f = failures();
    sender.post("aaaaaaaaaaaa", f.onFailure, "a");
    sender.post("bb", f.onFailure, "b");
    expect(socket.sent).toEqual(["aaaaaaaaaaaa"]);
    sender.fail(new Error("gone"));
    await until(() => f.calls.length > 0, undefined, "the waiting frame's failure");
    expect(f.calls.map((c) => [c.context, c.error.message])).toEqual([["b", "gone"]]);
    sender.post("cc", f.onFailure, "c");
    expect(f.calls).toHaveLength(1);
    await until(() => f.calls.length > 1, undefined, "the later post's failure");
    expect(f.calls.map((c) => c.context)).toEqual(["b", "c"]);
  });

  it("with the socket, the first frame of a job leaves at once, the rest together: corked after the first, uncorked by a microtask", async () => {
    const calls: string[] = [];
    const { socket, sender } = make({
      maxBufferedBytes: 1024,
      socket: { cork: () => calls.push("cork"), uncork: () => calls.push("uncork") },
    });
    const log = socket.send.bind(socket);
    socket.send = (text: string, cb: (error?: Error | null) => void) => {
      calls.push(text);
      log(text, cb);
    };
    const f = () => undefined;
    sender.post("a", f, undefined);
    void sender.send("b");
    sender.post("c", f, undefined);
    expect(calls).toEqual(["a", "cork", "b", "c"]); // still corked while the job runs
    await Promise.resolve();
    expect(calls).toEqual(["a", "cork", "b", "c", "uncork"]);
    sender.post("d", f, undefined); // a later job: its first frame at once again
    await Promise.resolve();
    expect(calls).toEqual(["a", "cork", "b", "c", "uncork", "d", "cork", "uncork"]);
  });

  it("without the socket, nothing is corked", async () => {
    const { socket, sender } = make({ maxBufferedBytes: 1024 });
    sender.post("a", () => undefined, undefined);
    await Promise.resolve();
    expect(socket.sent).toEqual(["a"]);
  });
});

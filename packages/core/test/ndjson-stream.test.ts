import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  AhpError,
  AhpErrorCode,
  AhpLocalError,
  NdjsonStreamTransport,
  type JsonRpcMessage,
  type NdjsonStreamTransportOptions,
} from "../src/index.js";
import { observe, until } from "./wait.js";

const note = (n: number, extra: Record<string, unknown> = {}): JsonRpcMessage => ({
  jsonrpc: "2.0",
  method: "ahp/event",
  params: { n, ...extra },
});

/** A writable whose writes complete only when the test says so. */
class HeldWritable extends Writable {
  readonly chunks: string[] = [];
  readonly #held: (() => void)[] = [];
  constructor(highWaterMark: number) {
    super({ highWaterMark, decodeStrings: false });
  }
  override _write(chunk: string | Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk.toString());
    this.#held.push(() => callback());
  }
  get heldWrites(): number {
    return this.#held.length;
  }
  release(): void {
    for (const done of this.#held.splice(0)) done();
  }
}

/** Settles with a flag so a test can check that a promise is still pending. */
function track<T>(promise: Promise<T>) {
  const state = { settled: false, value: undefined as T | undefined, error: undefined as unknown };
  const done = promise.then(
    (value) => {
      state.settled = true;
      state.value = value;
    },
    (error: unknown) => {
      state.settled = true;
      state.error = error;
    },
  );
  return { state, done };
}

/** Resolves after the transport's current onclose callback ran (the callback stays in place). */
function closedOnce(transport: NdjsonStreamTransport): Promise<void> {
  return new Promise((resolve) => {
    const previous = transport.onclose;
    transport.onclose = (error) => {
      previous?.(error);
      resolve();
    };
  });
}

const open: NdjsonStreamTransport[] = [];
async function make(options: Partial<NdjsonStreamTransportOptions> = {}) {
  const readable = new PassThrough();
  const writable = options.writable ?? new PassThrough();
  const transport = new NdjsonStreamTransport({ readable, writable, ...options });
  const received: unknown[] = [];
  const parseErrors: AhpError[] = [];
  const errors: Error[] = [];
  const closes: (Error | undefined)[] = [];
  transport.onmessage = (m) => received.push(m);
  transport.onparseerror = (e) => parseErrors.push(e);
  transport.onerror = (e) => errors.push(e);
  transport.onclose = (e) => closes.push(e);
  await transport.start();
  open.push(transport);
  return {
    transport,
    readable: (options.readable as PassThrough | undefined) ?? readable,
    writable,
    received,
    parseErrors,
    errors,
    closes,
  };
}

function linesOf(writable: PassThrough): string[] {
  const text = (writable.read() as Buffer | null)?.toString("utf8") ?? "";
  return text.split("\n").filter((l) => l.length > 0);
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

describe("NdjsonStreamTransport", () => {
  describe("receiving", () => {
    it("decodes lines split across chunks and delivers them in order", async () => {
      const { readable, received } = await make();
      readable.write('{"jsonrpc":"2.0","id":"1","res');
      readable.write('ult":{"decision":"allow"}}\n{"a":');
      readable.write("2}\n");
      await until(() => received.length >= 2, "both messages received");
      expect(received).toEqual([{ jsonrpc: "2.0", id: "1", result: { decision: "allow" } }, { a: 2 }]);
    });

    it("reports an unparseable line through onparseerror and keeps the connection", async () => {
      const { transport, readable, received, parseErrors, closes } = await make();
      readable.write('garbage\n{"ok":1}\n');
      await until(() => received.length >= 1, "the line after the garbage received");
      expect(parseErrors.map((e) => e.code)).toEqual([AhpErrorCode.ParseError]);
      expect(received).toEqual([{ ok: 1 }]);
      expect(closes).toEqual([]);
      expect(transport.closed).toBe(false);
    });

    it("falls back to onerror when no onparseerror is set", async () => {
      const { transport, readable, errors } = await make();
      transport.onparseerror = undefined;
      readable.write("{nope\n");
      await until(() => errors.length >= 1, "the parse error reported");
      expect(errors).toHaveLength(1);
      expect(AhpError.isInstance(errors[0])).toBe(true);
    });

    it("enforces maxMessageBytes on incoming lines", async () => {
      const { readable, received, parseErrors } = await make({ maxMessageBytes: 32 });
      readable.write(`${JSON.stringify({ big: "x".repeat(100) })}\n{"small":1}\n`);
      await until(() => received.length >= 1, "the small message received");
      expect(parseErrors.map((e) => e.code)).toEqual([AhpErrorCode.MessageTooLarge]);
      expect(received).toEqual([{ small: 1 }]);
    });

    it("reports a throwing onmessage through onerror and goes on decoding", async () => {
      const { transport, readable, errors } = await make();
      const seen: unknown[] = [];
      transport.onmessage = (m) => {
        seen.push(m);
        if (seen.length === 1) throw new Error("handler bug");
      };
      readable.write('{"a":1}\n{"a":2}\n');
      await until(() => seen.length >= 2, "both messages seen");
      expect(seen).toEqual([{ a: 1 }, { a: 2 }]);
      expect(errors.map((e) => e.message)).toEqual(["handler bug"]);
    });

    it("refuses a second start()", async () => {
      const { transport } = await make();
      await expect(transport.start()).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });
  });

  describe("sending", () => {
    it("writes one compact line per message", async () => {
      const { transport, writable } = await make();
      await transport.send(note(1, { text: "a\nb\u2028c" }));
      expect(linesOf(writable as PassThrough).map((l) => JSON.parse(l))).toEqual([note(1, { text: "a\nb\u2028c" })]);
    });

    it("keeps the order of 200 concurrent sends of mixed sizes, without interleaving", async () => {
      const writable = new PassThrough({ highWaterMark: 64 });
      const { transport } = await make({ writable });
      const collected: Buffer[] = [];
      writable.on("data", (c: Buffer) => collected.push(c));
      const sends = Array.from({ length: 200 }, (_, i) => transport.send(note(i, { pad: "p".repeat((i * 37) % 900) })));
      await Promise.all(sends);
      const lines = Buffer.concat(collected).toString("utf8").split("\n");
      expect(lines.pop()).toBe("");
      expect(lines.map((l) => (JSON.parse(l) as { params: { n: number } }).params.n)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    });

    it("waits for the writable under backpressure and holds later sends back", async () => {
      const writable = new HeldWritable(1024);
      const { transport } = await make({ writable });
      const big = track(transport.send(note(1, { pad: "x".repeat(4096) })));
      const small = track(transport.send(note(2)));
      await until(() => writable.writableNeedDrain, "the writable full");
      await observe(); // the writable is full (seen above): both sends must stay pending through this window
      expect(big.state.settled).toBe(false);
      expect(small.state.settled).toBe(false);
      expect(writable.chunks).toHaveLength(1); // the second line is queued, not written
      expect(writable.writableNeedDrain).toBe(true);
      writable.release();
      await big.done;
      expect(big.state.error).toBeUndefined();
      await until(() => writable.chunks.length >= 2, "the second line written");
      expect(writable.chunks).toHaveLength(2);
      writable.release();
      await small.done;
      expect(small.state.error).toBeUndefined();
      expect(writable.chunks.map((c) => (JSON.parse(c) as { params: { n: number } }).params.n)).toEqual([1, 2]);
    });

    it("stops waiting for drain when the send's signal aborts", async () => {
      const writable = new HeldWritable(16);
      const { transport } = await make({ writable });
      const controller = new AbortController();
      const send = transport.send(note(1, { pad: "x".repeat(100) }), { signal: controller.signal });
      await until(() => writable.writableNeedDrain, "the send waiting for drain");
      controller.abort(new Error("caller gave up"));
      const error = await send.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(AhpLocalError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: "ABORTED" });
      writable.release();
    });

    it("writes nothing for an already aborted signal", async () => {
      const { transport, writable } = await make();
      await expect(transport.send(note(1), { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: "ABORTED" });
      expect(linesOf(writable as PassThrough)).toEqual([]);
    });

    it("rejects a message over maxMessageBytes with -32002 and writes nothing", async () => {
      const { transport, writable } = await make({ maxMessageBytes: 64 });
      const error = await transport.send(note(1, { pad: "x".repeat(100) })).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(AhpError.isInstance(error)).toBe(true);
      expect((error as AhpError).code).toBe(AhpErrorCode.MessageTooLarge);
      await transport.send(note(2));
      expect(linesOf(writable as PassThrough)).toEqual([JSON.stringify(note(2))]);
    });

    it("reports a failed write as SEND_FAILED and closes with the stream error as the cause", async () => {
      let fail = true;
      const writable = new Writable({
        write(chunk: Buffer, _enc, callback) {
          if (fail) {
            fail = false;
            callback(new Error("disk full"));
          } else callback();
        },
      });
      writable.on("error", () => undefined);
      const { transport, closes } = await make({ writable });
      const closed = closedOnce(transport);
      const error = await transport.send(note(1)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: "SEND_FAILED" });
      expect((error as Error).message).toContain("disk full");
      await closed;
      expect(closes[0]).toMatchObject({ code: "CONNECTION_CLOSED" });
      expect(((closes[0] as Error).cause as Error).message).toBe("disk full");
    });
  });

  describe("a write that fails while later ones are in flight", () => {
    it("fails every send, confirmed or not, and none stays pending", async () => {
      let writes = 0;
      const writable = new Writable({
        write(_chunk: Buffer, _enc, callback) {
          // The first write is confirmed, the second fails a moment later; the stream buffers the rest.
          writes++;
          if (writes === 2) setTimeout(() => callback(new Error("broken pipe")), 5);
          else if (writes === 1) callback();
          else setTimeout(() => callback(), 5);
        },
      });
      writable.on("error", () => undefined);
      const { transport } = await make({ writable, flushLines: 4 });
      const closed = closedOnce(transport);
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          transport.send(note(i)).then(
            () => "ok",
            (e: unknown) => (e as { code?: string }).code,
          ),
        ),
      );
      await closed;
      // The first group of 4 went through; everything after it fails with a local code.
      expect(outcomes.slice(0, 4)).toEqual(["ok", "ok", "ok", "ok"]);
      for (const outcome of outcomes.slice(4)) expect(["SEND_FAILED", "CONNECTION_CLOSED"]).toContain(outcome);
      expect(transport.closed).toBe(true);
    });
  });

  describe("closing", () => {
    it("fires onclose once however often close() is called, and calls the onClose hook once", async () => {
      const onClose = vi.fn();
      const { transport, closes, readable } = await make({ onClose });
      await Promise.all([transport.close(), transport.close()]);
      await transport.close();
      readable.end();
      await until(() => closes.length >= 1 && readable.readableEnded, "the close and the end of input");
      await observe(); // a second onclose would follow within this window
      expect(closes).toEqual([undefined]);
      expect(onClose).toHaveBeenCalledTimes(1);
      expect(transport.closed).toBe(true);
    });

    it("rejects sends after close with CONNECTION_CLOSED", async () => {
      const { transport, writable } = await make();
      await transport.close();
      const error = await transport.send(note(1)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(AhpLocalError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: "CONNECTION_CLOSED" });
      expect(linesOf(writable as PassThrough)).toEqual([]);
    });

    it("closes when the readable side ends, after delivering a final unterminated line", async () => {
      const { transport, readable, received, closes } = await make();
      const order: string[] = [];
      transport.onmessage = (m) => {
        received.push(m);
        order.push("message");
      };
      transport.onclose = (e) => {
        closes.push(e);
        order.push("close");
      };
      const wasClosed = closedOnce(transport);
      readable.end('{"a":1}\n{"last":true}');
      await wasClosed;
      expect(received).toEqual([{ a: 1 }, { last: true }]);
      expect(order).toEqual(["message", "message", "close"]);
      expect(closes[0]).toBeUndefined();
      await expect(transport.send(note(1))).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    });

    it("stays open at the end of input with closeOnEnd: false", async () => {
      const { transport, readable, received, closes, writable } = await make({ closeOnEnd: false });
      readable.end('{"a":1}');
      await until(() => received.length >= 1 && readable.readableEnded, "the message and the end of input");
      await observe(); // the end of input was seen: a close would follow within this window
      expect(received).toEqual([{ a: 1 }]);
      expect(closes).toEqual([]);
      await transport.send(note(1));
      expect(linesOf(writable as PassThrough)).toHaveLength(1);
    });

    it("reports a stream error as the close cause and rejects later sends with it", async () => {
      const { transport, readable, errors, closes } = await make();
      const boom = new Error("EPIPE");
      const wasClosed = closedOnce(transport);
      readable.destroy(boom);
      await wasClosed;
      expect(errors).toContain(boom);
      const cause = closes[0];
      expect(AhpLocalError.isInstance(cause)).toBe(true);
      expect(cause).toMatchObject({ code: "CONNECTION_CLOSED" });
      expect((cause as Error).cause).toBe(boom);
      await expect(transport.send(note(1))).rejects.toBe(cause);
    });

    it("uses a cause set by a wrapper for onclose and for later sends", async () => {
      const { transport, closes } = await make();
      const exited = new AhpLocalError("TRANSPORT_ERROR", "child exited with code 1");
      transport.setCloseCause(exited);
      await transport.close();
      expect(closes).toEqual([exited]);
      await expect(transport.send(note(1))).rejects.toBe(exited);
    });

    it("rejects a send waiting for drain when the writable closes", async () => {
      const writable = new HeldWritable(16);
      const { transport } = await make({ writable });
      const send = transport.send(note(1, { pad: "x".repeat(100) }));
      await until(() => writable.writableNeedDrain, "the send waiting for drain");
      writable.destroy();
      await expect(send).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    });

    it("rejects a send waiting for drain, and the sends queued behind it, when the transport closes", async () => {
      const writable = new HeldWritable(16);
      const { transport } = await make({ writable });
      const first = track(transport.send(note(1, { pad: "x".repeat(100) })));
      const second = track(transport.send(note(2)));
      await until(() => writable.writableNeedDrain, "the first send waiting for drain");
      expect(first.state.settled).toBe(false);
      transport.setCloseCause(new AhpLocalError("CONNECTION_CLOSED", "peer went away"));
      await transport.close();
      await Promise.all([first.done, second.done]);
      expect(first.state.error).toMatchObject({ code: "CONNECTION_CLOSED", message: "peer went away" });
      expect(second.state.error).toMatchObject({ code: "CONNECTION_CLOSED", message: "peer went away" });
      expect(writable.chunks).toHaveLength(1);
    });

    it("rejects a send whose write callback has not come back when the transport closes", async () => {
      const writable = new HeldWritable(1024 * 1024);
      const { transport } = await make({ writable });
      const pending = track(transport.send(note(1)));
      await until(() => writable.heldWrites === 1, "the write held");
      expect(writable.heldWrites).toBe(1);
      expect(pending.state.settled).toBe(false);
      await transport.close();
      await pending.done;
      expect(pending.state.error).toMatchObject({ code: "CONNECTION_CLOSED" });
    });
  });
});

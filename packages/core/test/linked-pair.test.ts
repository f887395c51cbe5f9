import { describe, expect, it } from "vitest";
import {
  AhpError,
  AhpErrorCode,
  AhpLocalError,
  createLinkedPair,
  InMemoryTransport,
  type JsonRpcMessage,
  type LinkedPairOptions,
} from "../src/index.js";
import { observe, until } from "./wait.js";

const note = (params: unknown): JsonRpcMessage => ({ jsonrpc: "2.0", method: "ahp/event", params });

/** A started pair with everything each side observes recorded. */
async function pair(options: LinkedPairOptions = {}, start = true) {
  const [a, b] = createLinkedPair(options);
  const log = (t: InMemoryTransport) => {
    const seen = { messages: [] as unknown[], parseErrors: [] as AhpError[], closes: [] as (Error | undefined)[] };
    t.onmessage = (m) => seen.messages.push(m);
    t.onparseerror = (e) => seen.parseErrors.push(e);
    t.onclose = (e) => seen.closes.push(e);
    return seen;
  };
  const seenA = log(a);
  const seenB = log(b);
  if (start) await Promise.all([a.start(), b.start()]);
  return { a, b, seenA, seenB };
}

describe("createLinkedPair", () => {
  it("connects two transports in both directions, in order", async () => {
    const { a, b, seenA, seenB } = await pair();
    for (let i = 0; i < 100; i++) await a.send(note({ i }));
    await b.send(note("back"));
    await until(() => seenB.messages.length >= 100 && seenA.messages.length >= 1, "every message delivered");
    expect(seenB.messages).toEqual(Array.from({ length: 100 }, (_, i) => note({ i })));
    expect(seenA.messages).toEqual([note("back")]);
    expect(a.info).toEqual({ transport: "memory" });
  });

  describe("encodings", () => {
    it("json (default): the receiver gets a copy made at send time, as on a wire", async () => {
      const { a, seenB } = await pair();
      const params = { list: [1, 2], when: new Date(0), skip: undefined as unknown };
      const message = note(params);
      await a.send(message);
      params.list.push(3); // mutation after send does not travel
      await until(() => seenB.messages.length >= 1, "the message delivered");
      expect(seenB.messages).toEqual([note({ list: [1, 2], when: "1970-01-01T00:00:00.000Z" })]);
      expect(seenB.messages[0]).not.toBe(message);
    });

    it("clone: structuredClone, so non-JSON values survive but objects are not shared", async () => {
      const { a, seenB } = await pair({ encoding: "clone" });
      const message = note({ when: new Date(0) });
      await a.send(message);
      await until(() => seenB.messages.length >= 1, "the message delivered");
      const got = seenB.messages[0] as { params: { when: Date } };
      expect(got).not.toBe(message);
      expect(got.params.when).toBeInstanceOf(Date);
      expect(got.params.when.getTime()).toBe(0);
    });

    it("none: the very same object is handed over", async () => {
      const { a, seenB } = await pair({ encoding: "none" });
      const message = note({ x: 1 });
      await a.send(message);
      await until(() => seenB.messages.length >= 1, "the message delivered");
      expect(seenB.messages[0]).toBe(message);
    });

    it("json applies maxMessageBytes when sending", async () => {
      const { a, seenB } = await pair({ maxMessageBytes: 64 });
      const error = await a.send(note("x".repeat(100))).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(AhpError.isInstance(error)).toBe(true);
      expect((error as AhpError).code).toBe(AhpErrorCode.MessageTooLarge);
      await observe(); // the send was refused: a delivery would have happened by now
      expect(seenB.messages).toEqual([]);
    });

    it("json applies maxJsonDepth when receiving and reports it through onparseerror", async () => {
      const { a, seenB } = await pair({ maxJsonDepth: 3 });
      await a.send(note([[[1]]]));
      await a.send(note("ok"));
      await until(() => seenB.messages.length >= 1, "the message after the too-deep one");
      expect(seenB.parseErrors.map((e) => e.code)).toEqual([AhpErrorCode.MessageTooLarge]);
      expect(seenB.messages).toEqual([note("ok")]);
    });
  });

  it("queues messages that arrive before start() and delivers them in order on start", async () => {
    const { a, b, seenB } = await pair({}, false);
    await a.start();
    await a.send(note(1));
    await a.send(note(2));
    await observe(); // both sends resolved: a delivery to the unstarted end would have happened by now
    expect(seenB.messages).toEqual([]);
    await b.start();
    expect(seenB.messages).toEqual([note(1), note(2)]);
    await a.send(note(3));
    await until(() => seenB.messages.length >= 3, "the third message delivered");
    expect(seenB.messages).toEqual([note(1), note(2), note(3)]);
  });

  it("injectText delivers raw text as a foreign peer would, parse errors included", async () => {
    const { b, seenB } = await pair();
    b.injectText('{"jsonrpc":"2.0","method":"ahp/event","params":{}}');
    b.injectText("{not json");
    await until(() => seenB.parseErrors.length >= 1, "the parse error reported");
    expect(seenB.messages).toEqual([note({})]);
    expect(seenB.parseErrors.map((e) => e.code)).toEqual([AhpErrorCode.ParseError]);
  });

  describe("closing", () => {
    it("close() closes both ends, each firing onclose once without a cause", async () => {
      const { a, b, seenA, seenB } = await pair();
      await a.close();
      await a.close();
      await b.close();
      await until(() => seenA.closes.length >= 1 && seenB.closes.length >= 1, "both ends closed");
      await observe(); // a second onclose would follow within this window
      expect(seenA.closes).toEqual([undefined]);
      expect(seenB.closes).toEqual([undefined]);
    });

    it("rejects sends on either side after close with CONNECTION_CLOSED", async () => {
      const { a, b, seenB } = await pair();
      await a.close();
      await until(() => seenB.closes.length >= 1, "the peer closed");
      for (const side of [a, b]) {
        const error = await side.send(note(1)).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(AhpLocalError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ code: "CONNECTION_CLOSED" });
      }
    });

    it("drops messages still in flight towards a closed end", async () => {
      const { a, b, seenB } = await pair();
      const sent = a.send(note("in flight")); // delivery is queued, not done
      await b.close();
      await sent;
      await observe(); // the send resolved and the end closed: a late delivery would have happened by now
      expect(seenB.messages).toEqual([]);
    });

    it("discards the queue of an end that closes before it started", async () => {
      const { a, b, seenB } = await pair({}, false);
      await a.start();
      await a.send(note(1));
      await observe(); // the delivery reaches the unstarted end's queue
      await b.close();
      await b.start();
      expect(seenB.messages).toEqual([]);
    });

    it("fail(error) closes both ends with that cause", async () => {
      const { a, seenA, seenB } = await pair();
      const cause = new Error("link cut");
      a.fail(cause);
      await until(() => seenA.closes.length >= 1 && seenB.closes.length >= 1, "both ends closed");
      expect(seenA.closes).toEqual([cause]);
      expect(seenB.closes).toEqual([cause]);
      expect(seenB.closes[0]).toBe(cause);
    });

    it("a transport without a peer refuses to send", async () => {
      const lonely = new InMemoryTransport();
      await lonely.start();
      await expect(lonely.send(note(1))).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
    });
  });
});

import { InFlightRequests } from "@ahp/core";
import { describe, expect, it } from "vitest";
import { observe } from "./wait.js";

const deferred = () => {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

describe("InFlightRequests", () => {
  it("is idle once every request was answered and the last write settled", async () => {
    const inFlight = new InFlightRequests();
    inFlight.received({ jsonrpc: "2.0", id: "a", method: "m", params: {} });
    inFlight.received({ jsonrpc: "2.0", id: 1, method: "m", params: {} });
    inFlight.received({ jsonrpc: "2.0", method: "note", params: {} }); // notification: not counted
    inFlight.received({ jsonrpc: "2.0", id: null, method: "m", params: {} }); // null id: not counted
    expect(inFlight.size).toBe(2);
    let idle: boolean | undefined;
    const waiting = inFlight.idle(10_000).then((value) => (idle = value));
    inFlight.writing({ jsonrpc: "2.0", id: "a", result: {} }, Promise.resolve());
    inFlight.writing({ jsonrpc: "2.0", id: "unknown", result: {} }, Promise.resolve()); // not ours: ignored
    expect(inFlight.size).toBe(1); // the answer to "a" was seen
    await observe(); // one request is still unanswered: idle must not resolve within this window
    expect(idle).toBeUndefined();
    const lastWrite = deferred();
    inFlight.writing({ jsonrpc: "2.0", id: 1, error: { code: -1, message: "x" } }, lastWrite.promise);
    expect(inFlight.size).toBe(0);
    await observe(); // every request is answered, but the last answer is not written yet: not idle
    expect(idle).toBeUndefined();
    lastWrite.reject(new Error("write failed")); // settled either way
    await waiting;
    expect(idle).toBe(true);
  });

  it("gives up after the timeout", async () => {
    const inFlight = new InFlightRequests();
    inFlight.received({ jsonrpc: "2.0", id: "never", method: "m", params: {} });
    expect(await inFlight.idle(10)).toBe(false);
    expect(await new InFlightRequests().idle(10)).toBe(true);
  });

  it("counts duplicate in-flight ids separately and releases waiters on clear()", async () => {
    const inFlight = new InFlightRequests();
    inFlight.received({ jsonrpc: "2.0", id: "d", method: "m", params: {} });
    inFlight.received({ jsonrpc: "2.0", id: "d", method: "m", params: {} });
    inFlight.writing({ jsonrpc: "2.0", id: "d", result: {} }, Promise.resolve());
    expect(inFlight.size).toBe(1);
    const waiting = inFlight.idle(10_000);
    inFlight.clear();
    expect(await waiting).toBe(true);
  });
});

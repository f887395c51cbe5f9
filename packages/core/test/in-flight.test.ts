import { InFlightRequests } from "@ahp/core";
import { describe, expect, it } from "vitest";

describe("InFlightRequests", () => {
  it("is idle once every request was answered and every write settled", async () => {
    const inFlight = new InFlightRequests();
    inFlight.received({ jsonrpc: "2.0", id: "a", method: "m", params: {} });
    inFlight.received({ jsonrpc: "2.0", id: 1, method: "m", params: {} });
    inFlight.received({ jsonrpc: "2.0", method: "note", params: {} }); // notification: not counted
    inFlight.received({ jsonrpc: "2.0", id: null, method: "m", params: {} }); // null id: not counted
    expect(inFlight.size).toBe(2);
    let idle = false;
    const waiting = inFlight.idle(10_000).then((value) => (idle = value));
    inFlight.writing();
    inFlight.written({ jsonrpc: "2.0", id: "a", result: {} });
    inFlight.writing();
    inFlight.written({ jsonrpc: "2.0", id: "unknown", result: {} }); // not ours: ignored
    await Promise.resolve();
    expect(idle).toBe(false);
    inFlight.writing();
    inFlight.written({ jsonrpc: "2.0", id: 1, error: { code: -1, message: "x" } });
    await waiting;
    expect(idle).toBe(true);
    expect(inFlight.size).toBe(0);
  });

  it("waits for a write in progress and gives up after the timeout", async () => {
    const inFlight = new InFlightRequests();
    inFlight.writing();
    expect(await inFlight.idle(10)).toBe(false);
    inFlight.written({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    expect(await inFlight.idle(10)).toBe(true);
  });

  it("counts duplicate in-flight ids separately and releases waiters on clear()", async () => {
    const inFlight = new InFlightRequests();
    inFlight.received({ jsonrpc: "2.0", id: "d", method: "m", params: {} });
    inFlight.received({ jsonrpc: "2.0", id: "d", method: "m", params: {} });
    inFlight.writing();
    inFlight.written({ jsonrpc: "2.0", id: "d", result: {} });
    expect(inFlight.size).toBe(1);
    const waiting = inFlight.idle(10_000);
    inFlight.clear();
    expect(await waiting).toBe(true);
  });
});

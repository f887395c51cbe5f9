/** `isoAt`: the wire form of the bridge's timestamps, the same for a repeated millisecond. */
import { describe, expect, it } from "vitest";
import { isoAt } from "../src/index.js";

describe("isoAt", () => {
  it("gives Date's ISO form for every millisecond, repeated or not, and throws on an invalid time", () => {
    const times = [0, 0, 1_764_000_000_123, 1_764_000_000_123, 1_764_000_000_124, -1, 8.64e15, 1_764_000_000_123];
    for (const ms of times) expect(isoAt(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoAt(Number.NaN)).toThrow(RangeError);
    expect(() => isoAt(Number.NaN)).toThrow(RangeError);
    expect(isoAt(5)).toBe("1970-01-01T00:00:00.005Z");
  });
});

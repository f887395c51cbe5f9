import { CHECKLIST, describeConformance } from "@ahp/conformance";
import { describe, expect, it } from "vitest";
import { memoryFactory } from "./support/factories.js";

const coverage = describeConformance("in-memory linked pair", memoryFactory, { kind: "stream" });

describe("checklist coverage of the in-memory run", () => {
  it("registers a test for every item the checklist assigns to the suite (86–88 are HTTP-only)", () => {
    const expected = CHECKLIST.filter((i) => i.where === "suite").map((i) => i.n);
    expect([...coverage.items].sort((a, b) => a - b)).toEqual(expected);
    expect([...coverage.skipped.keys()].sort()).toEqual([86, 87, 88]);
    expect(coverage.items.size).toBeGreaterThanOrEqual(80);
  });
});

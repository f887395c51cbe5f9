import { describeConformance } from "@ahp/conformance";
import { describe, expect, it } from "vitest";
import { ndjsonFactory } from "./support/factories.js";

// The agent-side [C] checks do not depend on the transport; the in-memory run covers them.
// This run shares one connection per harness (as a process-per-connection transport would);
// the in-memory run opens a fresh one per test.
const coverage = describeConformance("NDJSON byte streams (core NdjsonStreamTransport over PassThrough)", ndjsonFactory, {
  kind: "stream",
  clientChecks: false,
  shareConnections: true,
});

describe("checklist coverage of the NDJSON run", () => {
  it("runs every server item and every extra", () => {
    expect(coverage.items.size).toBe(65);
    expect(coverage.extras.size).toBe(15);
  });
});

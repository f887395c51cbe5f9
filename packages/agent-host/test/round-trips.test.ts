/**
 * §14.2 scenario 28: the codec passes the vendored round-trip cases of the types it handles
 * (group A: `acceptableOutputs[0]`; group B: `preservedOutput`, as for any TypeScript peer).
 * Comparison is key-order independent but key-presence sensitive.
 */
import { describe, expect, it } from "vitest";
import { decodeFrame, encodeFrame } from "../src/wire/codec.js";
import { fixtureIndex, readFixture } from "./helpers/fixtures.js";

const HANDLED = new Set([
  "ActionEnvelope",
  "StateAction",
  "SessionStatus",
  "StringOrMarkdown",
  "InitializeResult",
  "SessionSummary",
  "SessionAddedParams",
  "Implementation",
  "JsonRpcMessage",
  "PartialSessionSummary",
]);

interface RoundTrip {
  name: string;
  group: "A" | "B";
  type: string;
  input: unknown;
  acceptableOutputs: unknown[];
  preservedOutput?: unknown;
}

const cases = fixtureIndex().filter((e) => e.file.startsWith("round-trips/") && HANDLED.has(e.type ?? ""));

describe("S28 round-trips", () => {
  it("runs every core round-trip case", () => {
    expect(cases.length).toBe(fixtureIndex().filter((e) => e.file.startsWith("round-trips/") && e.adapterRelevance === "core").length);
  });
  for (const entry of cases) {
    it(entry.file, () => {
      const data = readFixture<RoundTrip>(entry.file);
      const out = JSON.parse(encodeFrame(decodeFrame(JSON.stringify(data.input)))) as unknown;
      expect(out).toStrictEqual(data.group === "B" ? data.preservedOutput : data.acceptableOutputs[0]);
    });
  }
});

/**
 * Regression corpus: every input a campaign once found failing (saved by `pnpm fuzz` under
 * `corpus/`) is replayed on every transport, and must now pass every oracle.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCorpus, replayCorpus, startTarget, type CorpusCase, type Target, type TransportName } from "../src/index.js";

const CORPUS = fileURLToPath(new URL("../corpus", import.meta.url));
const TRANSPORTS: TransportName[] = ["stdio", "unix", "http", "ws", "memory"];

let cases: CorpusCase[] = [];
beforeAll(async () => {
  cases = await loadCorpus(CORPUS);
});

describe("regression corpus", () => {
  it("holds at least one case, each with its inputs and the problem it once caused", () => {
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases) {
      expect(c.inputs.length).toBeGreaterThan(0);
      expect(c.problems.length).toBeGreaterThan(0);
    }
  });

  describe.each(TRANSPORTS)("replayed over %s", (transport) => {
    let target: Target;
    beforeAll(async () => {
      target = await startTarget(transport);
    });
    afterAll(async () => {
      const final = await target.finish();
      expect(final.problems).toEqual([]);
    });
    it("every case passes every oracle", async () => {
      const results = await replayCorpus(target, cases);
      expect(results.filter((r) => r.problems.length > 0)).toEqual([]);
    });
  });
});

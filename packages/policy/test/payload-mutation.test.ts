/**
 * Mutations beyond command lines: variants of the corpus's file-tool and code-tool payloads
 * (test/mutation/mutate-payload.ts), decided by the default policy. The dangerous ones must stay
 * caught (blocked or escalated), the everyday ones allowed; rates are printed per operator.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY, PolicyEngine } from "@ahp/policy";
import { ev } from "./helpers.js";
import { payloadVariants, type PayloadVariant } from "./mutation/mutate-payload.js";
import { rate, reportRates } from "./mutation/rates.js";

interface Case {
  payload: unknown;
  label: "dangerous" | "safe";
  family: string;
}
const { payloads } = JSON.parse(readFileSync(new URL("./corpus/payloads.json", import.meta.url), "utf8")) as { payloads: Case[] };

const SEED = 2929;
const COUNT = 600;
const engine = new PolicyEngine(DEFAULT_POLICY);
const decide = (payload: unknown) => (engine.evaluate(ev("pre_action", payload)).decision as { decision: string }).decision;

const tools = payloads.filter((p) => p.family === "file-tools" || p.family === "code-tools");
const dangerous = payloadVariants(
  tools.filter((p) => p.label === "dangerous").map((p) => p.payload),
  COUNT,
  SEED,
);
const safe = payloadVariants(
  tools.filter((p) => p.label === "safe").map((p) => p.payload),
  COUNT,
  SEED + 1,
);

describe("payload mutations (file tools and code tools)", () => {
  it("are deterministic for a seed, distinct, and use every operator", () => {
    const sources = tools.map((p) => p.payload);
    expect(payloadVariants(sources, 50, SEED).map((v) => v.payload)).toEqual(payloadVariants(sources, 50, SEED).map((v) => v.payload));
    expect(dangerous.length).toBeGreaterThanOrEqual(500);
    expect(safe.length).toBeGreaterThanOrEqual(500);
    const ops = new Set([...dangerous, ...safe].flatMap((v) => v.ops.map((o) => o.split(":")[0]!)));
    for (const op of [
      "shape",
      "keys",
      "path",
      "write-alias",
      "comment",
      "blank-lines",
      "trailing-space",
      "quotes",
      "import-alias",
      "python-tool",
    ])
      expect(ops, op).toContain(op);
  });

  it("keeps at least 95% of the dangerous variants caught and at most 3% of the everyday ones stopped", () => {
    const decideVariant = (v: PayloadVariant) => decide(v.payload);
    const { caught, stopped } = reportRates(
      `payload mutation (seed ${SEED})`,
      rate(dangerous, decideVariant, (x) => x === "block" || x === "escalate"),
      rate(safe, decideVariant, (x) => x === "allow"),
      (v) => v.payload,
    );
    expect(caught).toBeGreaterThanOrEqual(95);
    expect(stopped).toBeLessThanOrEqual(3);
  });
});

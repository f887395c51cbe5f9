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

function rate(list: readonly PayloadVariant[], wanted: (d: string) => boolean) {
  const misses = list.filter((v) => !wanted(decide(v.payload)));
  const byOp = new Map<string, { n: number; miss: number }>();
  for (const v of list)
    for (const op of new Set(v.ops.map((o) => o.split(":")[0]!))) {
      const e = byOp.get(op) ?? { n: 0, miss: 0 };
      e.n++;
      if (misses.includes(v)) e.miss++;
      byOp.set(op, e);
    }
  return { misses, byOp };
}

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
    const d = rate(dangerous, (x) => x === "block" || x === "escalate");
    const s = rate(safe, (x) => x === "allow");
    const caught = 100 * (1 - d.misses.length / dangerous.length);
    const stopped = 100 * (s.misses.length / safe.length);
    const ops = (m: Map<string, { n: number; miss: number }>) =>
      [...m]
        .sort()
        .map(([op, { n, miss }]) => `${op} ${miss}/${n}`)
        .join(", ");
    process.stdout.write(
      `payload mutation (seed ${SEED}): dangerous variants ${dangerous.length}: caught ${caught.toFixed(1)}%; ` +
        `everyday variants ${safe.length}: escalated or blocked ${stopped.toFixed(1)}%\n` +
        `  dangerous missed per operator: ${ops(d.byOp)}\n  everyday stopped per operator: ${ops(s.byOp)}\n`,
    );
    for (const v of d.misses.slice(0, 20)) process.stdout.write(`  missed: ${JSON.stringify(v.payload)} (${v.ops.join(", ")})\n`);
    for (const v of s.misses.slice(0, 20)) process.stdout.write(`  stopped: ${JSON.stringify(v.payload)} (${v.ops.join(", ")})\n`);
    expect(caught).toBeGreaterThanOrEqual(95);
    expect(stopped).toBeLessThanOrEqual(3);
  });
});

/** The checklist data and the README generated from it. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CHECKLIST, SUITE_ITEMS, renderChecklistCount, renderChecklistTable } from "../src/checklist.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const section = (name: string) => new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`).exec(readme)?.[1];

describe("checklist", () => {
  it("lists the 93 items of spec §17 in order, with their tags", () => {
    expect(CHECKLIST.map((i) => i.n)).toEqual(Array.from({ length: 93 }, (_, i) => i + 1));
    const tag = (n: number) => CHECKLIST[n - 1]!.tags[0];
    expect(CHECKLIST.filter((i) => tag(i.n) === "S").map((i) => i.n)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    expect(CHECKLIST.filter((i) => tag(i.n) === "C").map((i) => i.n)).toEqual(Array.from({ length: 18 }, (_, i) => i + 65));
    expect(CHECKLIST.filter((i) => tag(i.n) === "T").map((i) => i.n)).toEqual(Array.from({ length: 11 }, (_, i) => i + 83));
    expect(CHECKLIST.filter((i) => i.tags.includes("Q")).map((i) => i.n)).toEqual([6, 10, 63, 80, 88]);
  });

  it("assigns at least 80 items to this suite and names the package for every other one", () => {
    expect(SUITE_ITEMS.length).toBeGreaterThanOrEqual(80);
    for (const item of CHECKLIST.filter((i) => i.where === "transport"))
      expect(item.how).toMatch(/^@ahp\/transport-(stdio|http|ws|unix): /);
  });

  it("README.md carries the generated count and table (regenerate with `pnpm --filter @ahp/conformance readme`)", () => {
    expect(section("count")).toBe(renderChecklistCount());
    expect(section("checklist")).toBe(renderChecklistTable());
    expect(renderChecklistCount()).toMatch(/^\*\*85 of 93 /);
  });
});

/**
 * The wire vectors, their coverage map and the conformance suite's checklist must agree: the
 * files under `schemas/vectors/` are what the generator produces now, every checklist number in
 * `coverage.json` is an item of `@ahp/conformance`'s checklist (and every item is there), and
 * every vector a covered item names exists and names that item back.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { CHECKLIST } from "../../../packages/conformance/src/checklist.js";
import { loadHarnessCases } from "../src/commands/conformance.js";

// Each test starts `ahp` processes; on a busy machine one start can take many seconds.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

/**
 * The generator is a script of `@ahp/schemas` (outside this project's TypeScript program: that
 * package is not an ES module package for tsc), so it is loaded at run time through its URL.
 */
interface VectorCase {
  id: string;
  checklist: number[];
}
interface VectorBuilder {
  buildVectorFiles: (readme: string) => Map<string, string>;
  allHarnessCases: () => VectorCase[];
  allClientCases: () => VectorCase[];
}
const BUILD = new URL("../../../schemas/scripts/vectors/build.ts", import.meta.url).href;
const { allClientCases, allHarnessCases, buildVectorFiles } = (await import(/* @vite-ignore */ BUILD)) as VectorBuilder;

const VECTORS = fileURLToPath(new URL("../../../schemas/vectors/", import.meta.url));
const read = (name: string) => readFileSync(join(VECTORS, name), "utf8");

interface CoverageItem {
  tags: string[];
  text: string;
  harness?: string[];
  client?: string[];
  not_covered?: string;
}
const coverage = JSON.parse(read("coverage.json")) as { format: number; items: Record<string, CoverageItem> };

const jsonl = (folder: string): string[] => {
  try {
    return readdirSync(join(VECTORS, folder)).filter((f) => f.endsWith(".jsonl"));
  } catch {
    return [];
  }
};

describe("vectors and conformance suite do not drift", () => {
  it("every generated file under schemas/vectors/ equals what the generator produces (pnpm schemas)", () => {
    const files = buildVectorFiles(read("README.md"));
    expect(files.size).toBeGreaterThan(8);
    for (const [name, text] of files) expect(read(name), `schemas/vectors/${name} is stale: run pnpm schemas`).toBe(text);
    const generated = new Set(files.keys());
    for (const folder of ["harness", "client"])
      for (const file of jsonl(folder)) expect(generated.has(`${folder}/${file}`), `${folder}/${file} is not generated`).toBe(true);
  });

  it("the runner reads the same harness vectors as the generator builds", () => {
    const ids = (cases: { id: string }[]) => cases.map((c) => c.id).sort();
    expect(ids(loadHarnessCases(VECTORS))).toEqual(ids(allHarnessCases()));
  });

  it("coverage.json lists exactly the checklist items of @ahp/conformance, with their text", () => {
    expect(Object.keys(coverage.items).map(Number)).toEqual(CHECKLIST.map((i) => i.n));
    for (const item of CHECKLIST) expect(coverage.items[String(item.n)]?.text, `item ${item.n}`).toBe(item.text);
  });

  it("every item is covered by vectors or says why not, and every named vector exists and names the item", () => {
    const harness = new Map(allHarnessCases().map((c) => [c.id, c]));
    const client = new Map(allClientCases().map((c) => [c.id, c]));
    for (const [n, item] of Object.entries(coverage.items)) {
      const named = [
        ...(item.harness ?? []).map((id) => [id, harness.get(id)] as const),
        ...(item.client ?? []).map((id) => [id, client.get(id)] as const),
      ];
      if (named.length === 0) expect(item.not_covered?.trim(), `item ${n} has neither vectors nor a reason`).toBeTruthy();
      for (const [id, c] of named) {
        expect(c, `item ${n} names ${id}, which does not exist`).toBeDefined();
        expect(c?.checklist, `${id} does not name item ${n}`).toContain(Number(n));
      }
    }
    for (const c of [...harness.values(), ...client.values()])
      for (const n of c.checklist) expect(coverage.items[String(n)], `${c.id} names unknown item ${n}`).toBeDefined();
  });
});

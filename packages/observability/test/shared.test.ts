import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

/** The shared middleware, annotation and redaction files are kept identical in @ahp/audit and here. */
describe("shared modules", () => {
  it("are byte-identical to the copies in @ahp/audit", async () => {
    const here = new URL("../src/shared/", import.meta.url);
    const there = new URL("../../audit/src/shared/", import.meta.url);
    const names = (await readdir(here)).sort();
    expect(names).toEqual((await readdir(there)).sort());
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      expect(await readFile(new URL(name, here), "utf8"), name).toBe(await readFile(new URL(name, there), "utf8"));
    }
  });
});

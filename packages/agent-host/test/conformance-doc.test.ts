/** CONFORMANCE.md lists every §14.2 scenario (1–32) and each named test exists in the named file. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../", import.meta.url);
const rows = readFileSync(new URL("CONFORMANCE.md", ROOT), "utf8")
  .split("\n")
  .filter((l) => /^\| S\d+ \|/.test(l))
  .map((l) => {
    const cells = l.split("|").map((c) => c.trim());
    return { id: cells[1]!, file: cells[3]!.replace(/`/g, ""), title: cells[4]! };
  });

describe("CONFORMANCE.md", () => {
  it("maps every scenario S1–S32", () => {
    const ids = new Set(rows.map((r) => r.id));
    for (let n = 1; n <= 32; n++) expect(ids.has(`S${n}`), `S${n}`).toBe(true);
  });

  it("names tests that exist, each starting with its scenario id", () => {
    for (const row of rows) {
      expect(row.title.startsWith(`${row.id} `), row.title).toBe(true);
      const text = readFileSync(new URL(row.file, ROOT), "utf8");
      const literal = JSON.stringify(row.title);
      const found = text.includes(literal) || text.includes(`\`${row.title}`) || text.includes(`"${row.title}`);
      expect(found, `${row.file}: ${row.title}`).toBe(true);
    }
  });

  it("lists every scenario test of the scenario files", () => {
    for (const file of ["test/scenarios-1.test.ts", "test/scenarios-2.test.ts", "test/scenarios-3.test.ts"]) {
      const text = readFileSync(new URL(file, ROOT), "utf8");
      for (const m of text.matchAll(/it\("(S\d+ [^"]+)"/g))
        expect(
          rows.map((r) => r.title),
          m[1],
        ).toContain(m[1]);
    }
  });
});

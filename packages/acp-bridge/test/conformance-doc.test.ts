/** CONFORMANCE.md lists every §8 scenario once, and every listed test exists under that title. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const pkg = new URL("../", import.meta.url);
const doc = readFileSync(new URL("CONFORMANCE.md", pkg), "utf8");
const rows = [...doc.matchAll(/^\| S(\d\d) \| [^|]+ \| `([^`]+)` \| (.+) \|$/gm)].map((m) => ({
  id: Number(m[1]),
  file: m[2]!,
  title: m[3]!.replace(/\\\|/g, "|"),
}));

describe("CONFORMANCE.md", () => {
  it("maps S01–S53 exactly once each", () => {
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 53 }, (_, i) => i + 1));
  });

  it("names tests that exist, titled with their scenario number", () => {
    for (const row of rows) {
      const source = readFileSync(new URL(row.file, pkg), "utf8");
      expect(row.title.startsWith(`S${row.id} `), `S${row.id}`).toBe(true);
      expect(source.includes(JSON.stringify(row.title)), `S${row.id}: "${row.title}" in ${row.file}`).toBe(true);
    }
  });
});

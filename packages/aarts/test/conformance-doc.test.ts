/** CONFORMANCE.md lists every §6 scenario once, and every listed test exists under that title. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const pkg = new URL("../", import.meta.url);
const doc = readFileSync(new URL("CONFORMANCE.md", pkg), "utf8");
const rows = [...doc.matchAll(/^\| (C\d\d) \| [^|]+ \| `([^`]+)` \| (.+) \|$/gm)].map((m) => ({
  id: m[1]!,
  file: m[2]!,
  title: m[3]!.replace(/\\\|/g, "|"),
}));

describe("CONFORMANCE.md", () => {
  it("maps C01–C62 exactly once each", () => {
    const expected = Array.from({ length: 62 }, (_, i) => `C${String(i + 1).padStart(2, "0")}`);
    expect(rows.map((r) => r.id)).toEqual(expected);
  });

  it("names tests that exist, titled with their scenario id", () => {
    for (const row of rows) {
      const source = readFileSync(new URL(row.file, pkg), "utf8");
      expect(row.title.startsWith(`${row.id} `), row.id).toBe(true);
      expect(source.includes(row.title), `${row.id}: "${row.title}" in ${row.file}`).toBe(true);
    }
  });
});

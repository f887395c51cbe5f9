/** The vendored fixture folder is unchanged: every file listed in MANIFEST.sha256 hashes to its entry, and nothing upstream is missing. */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FIXTURE_DIR } from "./helpers/fixtures.js";

describe("vendored Agent Host Protocol fixtures", () => {
  const lines = readFileSync(FIXTURE_DIR + "MANIFEST.sha256", "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const entries = lines.map((line) => {
    const m = /^([0-9a-f]{64}) {2}\.\/(.+)$/.exec(line);
    expect(m, line).not.toBeNull();
    return { hash: m![1]!, file: m![2]! };
  });

  it("lists LICENSE, 249 reducer cases, 39 round-trip cases and 5 schemas", () => {
    const count = (dir: string) => entries.filter((e) => e.file.startsWith(`${dir}/`)).length;
    expect([count("reducers"), count("round-trips"), count("schema")]).toEqual([249, 39, 5]);
    expect(entries.map((e) => e.file)).toContain("LICENSE");
    for (const dir of ["reducers", "round-trips", "schema"]) {
      expect(readdirSync(FIXTURE_DIR + dir).sort()).toEqual(
        entries
          .filter((e) => e.file.startsWith(`${dir}/`))
          .map((e) => e.file.slice(dir.length + 1))
          .sort(),
      );
    }
  });

  it("every file matches its SHA-256", () => {
    const bad = entries.filter(
      (e) =>
        createHash("sha256")
          .update(readFileSync(FIXTURE_DIR + e.file))
          .digest("hex") !== e.hash,
    );
    expect(bad.map((e) => e.file)).toEqual([]);
  });

  it("keeps the provenance README and INDEX.json next to the data", () => {
    expect(readFileSync(FIXTURE_DIR + "README.md", "utf8")).toMatch(/eb3109868e91e9dff782f4baae90540fb83f6e46/);
    expect((JSON.parse(readFileSync(FIXTURE_DIR + "INDEX.json", "utf8")) as unknown[]).length).toBe(288);
  });
});

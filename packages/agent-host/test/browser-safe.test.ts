/**
 * The `./reducers` and `./client` entries must bundle for a browser: nothing reachable from them
 * imports a Node built-in or a Node-only package.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

function reachable(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const text = readFileSync(file, "utf8");
    const specifiers = [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)].map(
      (m) => m[1] ?? m[2]!,
    );
    seen.set(file, specifiers);
    for (const s of specifiers) if (s.startsWith(".")) visit(resolve(dirname(file), s.replace(/\.js$/, ".ts")));
  };
  visit(resolve(SRC, entry));
  return seen;
}

describe("browser-safe entries", () => {
  for (const entry of ["reducers-entry.ts", "client-entry.ts"]) {
    it(`${entry} reaches only relative imports (no node:, ws, @ahp/core)`, () => {
      const graph = reachable(entry);
      expect(graph.size).toBeGreaterThan(3);
      const external = [...graph.entries()].flatMap(([file, specs]) =>
        specs.filter((s) => !s.startsWith(".")).map((s) => `${file.slice(SRC.length)} -> ${s}`),
      );
      expect(external).toEqual([]);
      for (const file of graph.keys()) expect(file, "host code is Node-only").not.toContain("/host/");
    });
  }
});

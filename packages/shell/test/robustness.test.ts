import { describe, expect, it } from "vitest";
import { parseShell, tokenizeShell, toolCalls } from "@ahp/shell";

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = [
  "rm",
  " ",
  "-rf",
  "/",
  "~",
  "'",
  '"',
  "\\",
  "$(",
  ")",
  "`",
  "|",
  "&",
  ";",
  "\n",
  "<",
  ">",
  "<<",
  "EOF",
  "(",
  "{",
  "}",
  "sh -c ",
  "sudo ",
  "=",
  "*",
  "#",
  "$'",
  "${",
  "x",
  "curl",
  "\t",
  "2>&1",
  "<(",
  "eval ",
  "find ",
  "-exec",
  "\\;",
  "cd ",
  "xargs ",
  "python3 -c ",
  "$X",
  "<<<",
  "[",
  "?",
];

describe("bad input never crashes", () => {
  it("the parser and the segment view survive random shell-like text, deterministically", () => {
    const next = rng(42);
    for (let i = 0; i < 1500; i++) {
      let text = "";
      const len = Math.floor(next() * 30);
      for (let k = 0; k < len; k++) text += ALPHABET[Math.floor(next() * ALPHABET.length)];
      expect(() => parseShell(text, { cwd: "/w" })).not.toThrow();
      expect(parseShell(text)).toEqual(parseShell(text));
      expect(() => tokenizeShell(text)).not.toThrow();
    }
  });

  it("large inputs stay linear", () => {
    const input = (n: number) => `${"echo a && ".repeat(n)}cd / && rm -rf *`;
    expect(parseShell(input(20_000)).at(-1)).toMatchObject({ program: "rm", paths: ["/*"] });
    expect(parseShell("$(".repeat(5000)).length).toBeGreaterThan(0);
    // A ratio against a smaller input measured in the same run (the best of three, so that a busy
    // machine slows both alike): 4 times the input takes about 4 times as long; quadratic work
    // would take 16 times.
    const best = (text: string) => {
      let ms = Number.POSITIVE_INFINITY;
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        parseShell(text);
        ms = Math.min(ms, performance.now() - start);
      }
      return ms;
    };
    const small = best(input(5_000));
    const large = best(input(20_000));
    expect(large / Math.max(small, 0.5)).toBeLessThan(10);
  });

  it("toolCalls accepts any JSON", () => {
    for (const payload of [
      null,
      0,
      "x",
      [],
      [1],
      {},
      { tool_calls: [] },
      { tool_calls: [1, null] },
      { function: null },
      { params: 5 },
      { arguments: "{" },
    ]) {
      expect(toolCalls(payload).length).toBeGreaterThan(0);
    }
  });
});

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

  it("large inputs are parsed whole", () => {
    // Time is not measured here (a busy machine makes any bound flaky); the scaling is a ratio in
    // the linear test.
    const big = `${"echo a && ".repeat(20_000)}cd / && rm -rf *`;
    expect(parseShell(big).at(-1)).toMatchObject({ program: "rm", paths: ["/*"] });
    expect(parseShell("$(".repeat(5000)).length).toBeGreaterThan(0);
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

/** Display names of tool calls (spec §8.1 "Field derivation"): the same text whether derived first or remembered. */
import { describe, expect, it } from "vitest";
import { displayNameOf } from "../src/host/tool-calls.js";

describe("displayNameOf", () => {
  it("gives the same names on first and later calls, for many and for long tool names", () => {
    const cases: Array<[string, string]> = [
      ["run_shell", "Run shell"],
      ["read-file", "Read file"],
      ["__", "__"],
      ["bash", "Bash"],
      [`${"x_".repeat(50)}y`, `X ${"x ".repeat(49)}y`],
    ];
    for (let round = 0; round < 3; round++) for (const [name, display] of cases) expect(displayNameOf(name)).toBe(display);
    // More names than are remembered: every one still right, in any order.
    const names = Array.from({ length: 600 }, (_, i) => `tool_${i}`);
    for (const name of [...names, ...names.reverse()]) expect(displayNameOf(name)).toBe(`Tool ${name.slice(5)}`);
  });
});

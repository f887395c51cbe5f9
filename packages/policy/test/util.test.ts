import { describe, expect, it } from "vitest";
import { applyMergePatch, compileGlobs, globSource, resolveWorkspacePath } from "@ahp/policy";
import { catastrophicReason } from "../src/regex.js";

describe("globs", () => {
  it.each([
    ["*.ts", "a.ts", true],
    ["*.ts", "dir/a.ts", false],
    ["**/*.ts", "dir/sub/a.ts", true],
    ["?.md", "a.md", true],
    ["?.md", "ab.md", false],
    ["[a-c]x", "bx", true],
    ["[!a-c]x", "dx", true],
    ["[!a-c]x", "ax", false],
    ["{foo,ba{r,z}}", "baz", true],
    ["{foo,ba{r,z}}", "bar", true],
    ["{foo,ba{r,z}}", "ba", false],
    ["a\\*b", "a*b", true],
    ["a\\*b", "axb", false],
    ["a.b", "axb", false],
    ["(x)|[", "(x)|[", true],
  ])("%s vs %s -> %s", (glob, input, expected) => {
    expect(compileGlobs([glob]).test(input)).toBe(expected);
  });

  it("refuses unbalanced braces", () => {
    expect(() => globSource("{a,b")).toThrow(/unbalanced/);
    expect(compileGlobs(["a}"]).test("a}")).toBe(true); // a lone } is literal
  });

  it("ignore case", () => {
    expect(compileGlobs(["Bash"], { ignoreCase: true }).test("bASH")).toBe(true);
  });
});

describe("catastrophic regex detection", () => {
  it.each(["(a+)+", "(\\w*)*", "(?:a|b+)*", "((ab)+c)+", "(x+){2,}"])("refuses %s", (source) => {
    expect(catastrophicReason(source)).toBeDefined();
  });
  it.each(["^git\\s+push", "(ab)+", "[a+]+", "a+b+c*", "(\\d{3})-(\\d{4})", "\\(a+\\)+", "(a|b)+", "(a{2})+"])("accepts %s", (source) => {
    expect(catastrophicReason(source)).toBeUndefined();
  });
});

describe("JSON merge patch (RFC 7396 examples)", () => {
  it.each([
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])("%j + %j = %j", (target, patch, result) => {
    const before = JSON.stringify(target);
    expect(applyMergePatch(target, patch)).toEqual(result);
    expect(JSON.stringify(target)).toBe(before);
  });
});

describe("resolveWorkspacePath", () => {
  it("is lexical and never uses the process's working directory", () => {
    expect(resolveWorkspacePath("a/../b", "/w")).toEqual({ path: "/w/b", inside: true });
    expect(resolveWorkspacePath("/w2/x", "/w")).toEqual({ path: "/w2/x", inside: false });
    expect(resolveWorkspacePath("x", "relative-root")).toEqual({ path: "/relative-root/x", inside: true });
    expect(resolveWorkspacePath("file:///w/a%20b", "/w")).toEqual({ path: "/w/a b", inside: true });
    expect(resolveWorkspacePath("x", "/")).toEqual({ path: "/x", inside: true });
    expect(resolveWorkspacePath("/w/sub/", "/w/")).toEqual({ path: "/w/sub", inside: true });
    expect(resolveWorkspacePath("../w2/", "/w")).toEqual({ path: "/w2", inside: false });
    expect(resolveWorkspacePath("/w", "/w")).toEqual({ path: "/w", inside: true });
  });
});

import { describe, expect, it } from "vitest";
import { compileGlobs } from "../src/glob.js";
import { nameMatcher } from "../src/compile/conditions.js";

/** Tool and program globs: `prefix*`, `*suffix` and `*part*` are string tests; they must answer as the glob regex does. */
describe("name globs", () => {
  const globs = [
    "*fetch*",
    "http*",
    "*_send*",
    "post_*",
    "mkfs.*",
    "newfs_*",
    "*__write_file",
    "str_replace*",
    "a*b",
    "**x",
    "x**",
    "*",
    "?ab*",
    "[ab]*",
    "{a,b}*",
    "\\**",
  ];
  const names = [
    "web_fetch",
    "fetch",
    "a/fetch",
    "fetch/b",
    "http",
    "https",
    "http/x",
    "xhttp",
    "email_send",
    "post_",
    "post_x",
    "mkfs.ext4",
    "mkfs",
    "newfs_msdos",
    "mcp__fs__write_file",
    "x/__write_file",
    "str_replace_editor",
    "ab",
    "axb",
    "a/b",
    "x",
    "y/x",
    "x/y",
    "",
    "*a",
    "cab",
    "aab",
    "bz",
  ];

  it.each(globs)("%s answers as its regex", (glob) => {
    const re = compileGlobs([glob], { ignoreCase: true });
    const match = nameMatcher([glob]);
    for (const name of names) expect([name, match(name)]).toEqual([name, re.test(name)]);
  });

  it("combines literals, simple globs and other globs", () => {
    const match = nameMatcher(["Bash", "*fetch*", "a?c"]);
    expect(["bash", "web_fetch", "abc", "fetch/x", "ac"].map(match)).toEqual([true, true, true, false, false]);
  });
});

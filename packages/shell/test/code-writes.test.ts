import { describe, expect, it } from "vitest";
import { codeWrites, parseShell, toolCalls } from "@ahp/shell";

describe("codeWrites: literal paths program text opens for writing", () => {
  it.each([
    ["open('/etc/hosts', 'w').write('x')", ["/etc/hosts"]],
    ['with open("/etc/hosts", "a") as f: f.write("x")', ["/etc/hosts"]],
    ["open('/etc/sudoers', mode='w')", ["/etc/sudoers"]],
    ["open('/etc/passwd', 'r+')", ["/etc/passwd"]],
    ["os.open('/etc/passwd', os.O_WRONLY)", ["/etc/passwd"]],
    ["Path('~/.bashrc').write_text('x')", ["~/.bashrc"]],
    ["Path('/root/.ssh/authorized_keys').open('a')", ["/root/.ssh/authorized_keys"]],
    ["fs.writeFileSync('/etc/hosts', 'x')", ["/etc/hosts"]],
    ["appendFileSync(`/root/.aws/credentials`, 'x')", ["/root/.aws/credentials"]],
    ["fs.createWriteStream('/var/log/x')", ["/var/log/x"]],
    ["File.write('/etc/cron.d/job', 'x')", ["/etc/cron.d/job"]],
    ["file_put_contents('/etc/x', 'y')", ["/etc/x"]],
    ["shutil.copy('tool', '/usr/local/bin/tool')", ["/usr/local/bin/tool"]],
    ['open(my $f, ">", "/etc/hosts")', ["/etc/hosts"]],
    ['open(F, ">>/etc/hosts")', ["/etc/hosts"]],
    // Python import aliases of the modules and classes that write.
    ["import shutil as _sh\n_sh.copy('tool', '/usr/local/bin/tool')", ["/usr/local/bin/tool"]],
    ["import os as o\no.rename('x', '/etc/cron.d/job')", ["/etc/cron.d/job"]],
    ["import pathlib as pl\npl.Path('/etc/hosts').write_text('x')", ["/etc/hosts"]],
    ["from pathlib import Path as P\nP('~/.bashrc').write_text('x')", ["~/.bashrc"]],
  ])("%s", (code, paths) => {
    expect(codeWrites(code)).toEqual(paths);
  });

  it.each([
    "print(open('/etc/hosts').read())",
    "open('/etc/hosts', 'r')",
    "Path('/etc/hosts').read_text()",
    "fs.readFileSync('/etc/hosts')",
    "open(path, 'w')",
    "print(1)",
    "import shutil as sh\nprint(sh.which('ls'))",
  ])("reads and computed paths are not writes: %s", (code) => {
    expect(codeWrites(code)).toEqual([]);
  });

  it("a code tool's writes and an interpreter one-liner's writes carry the paths", () => {
    const [call] = toolCalls({ tool_name: "python", arguments: { code: "open('/etc/hosts', 'w').write('x')" } });
    expect(call!.writes).toEqual(["/etc/hosts"]);
    const [cmd] = parseShell(`python3 -c "open('/etc/hosts','w').write('x')"`);
    expect(cmd!.writes).toContain("/etc/hosts");
    const [inside] = parseShell(`python3 -c "open('out.txt','w').write('x')"`, { cwd: "/work/p" });
    expect(inside!.writes).toEqual(["/work/p/out.txt"]);
  });
});

describe("codeWrites: computed paths that are constants are folded", () => {
  it.each([
    ["import os\nopen(os.path.expanduser('~/.ssh/authorized_keys'), 'a').write(k)", ["~/.ssh/authorized_keys"]],
    ["open(os.path.join(os.path.expanduser('~'), '.ssh', 'authorized_keys'), 'a')", ["~/.ssh/authorized_keys"]],
    ["(Path.home() / '.ssh' / 'authorized_keys').write_text(k)", ["~/.ssh/authorized_keys"]],
    ["pathlib.Path('~/.bashrc').expanduser().write_text('x')", ["~/.bashrc"]],
    ["open(Path.home() / '.bashrc', 'a')", ["~/.bashrc"]],
    ["open(os.environ['HOME'] + '/.profile', 'a')", ["~/.profile"]],
    ["fs.appendFileSync(path.join(os.homedir(), '.ssh', 'authorized_keys'), k)", ["~/.ssh/authorized_keys"]],
    ["fs.writeFileSync(`${os.homedir()}/.bashrc`, 'x')", ["~/.bashrc"]],
    ["import { writeFileSync as w } from 'node:fs'\nw('/etc/hosts', 'x')", ["/etc/hosts"]],
    ["import * as fs from 'node:fs/promises'\nawait fs.appendFile('/root/.bashrc', 'x')", ["/root/.bashrc"]],
    // Near misses stay what they are.
    ["open('out/report.txt','w')", ["out/report.txt"]],
    ["(Path('build') / 'x.js').write_text(s)", ["build/x.js"]],
  ])("%s", (code, paths) => {
    expect(codeWrites(code)).toEqual(paths);
  });

  it("escalates a computed write target in code naming a start-up or credential file, not a read of one", () => {
    const opaque = (code: string) => parseShell(`python3 -c ${JSON.stringify(code)}`)[0]!.opaque;
    expect(opaque("import os; h = os.environ['HOME']; open(h + '/.bashrc', 'a').write('x')")).toContain("inline-code");
    expect(opaque("import os; print(open(os.path.expanduser('~/.bashrc')).read())")).toEqual([]);
    expect(opaque("open(target, 'w').write(x)")).toEqual([]);
  });

  it("ES imports of Node's process and network modules are primitives, as require() is; an fs import is read for its writes", () => {
    const opaque = (code: string) => parseShell(`node -e ${JSON.stringify(code)}`)[0]!.opaque;
    expect(opaque("import cp from 'node:child_process'; cp.execSync('id')")).toContain("inline-code");
    expect(opaque("const m = await import('node:child_process')")).toContain("inline-code");
    expect(opaque("import { request } from 'https'")).toContain("inline-code");
    expect(opaque("const m = await import(name)")).toContain("inline-code");
    expect(opaque("import { writeFileSync } from 'fs'; writeFileSync('dist/x.json', '{}')")).toEqual([]);
    expect(opaque("const { parse } = await import('./lib/parse.js')")).toEqual([]);
  });
});

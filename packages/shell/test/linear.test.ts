/**
 * The analysis is linear in the length of the command line, checked by counting work instead of
 * timing it: the characters handed to the lexer (the lexer itself advances on every step and
 * never re-scans, see lex.ts), the size of what the parser builds, and the tests `pipesInto`
 * runs. A superlinear step (a pipeline copying the programs after each stage, a working
 * directory growing with every `cd`, re-lexing a script once per level) makes one of these grow
 * faster than the input. (Working directories, and so resolved paths, are at most PATH_MAX long: see the last test.)
 */
import { describe, expect, it, vi } from "vitest";

let lexed = 0;
vi.mock("../src/lex.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/lex.js")>();
  return {
    ...original,
    lex: (src: string) => {
      lexed += src.length;
      return original.lex(src);
    },
  };
});

const { parseShell, pipesInto } = await import("../src/index.js");

/** Work units for one analysis: characters lexed + elements and characters of what was built + consumer tests. */
function work(command: string): { units: number; commands: number } {
  lexed = 0;
  let tests = 0;
  const anyShell = (program: string) => {
    tests++;
    return program === "sh";
  };
  const commands = parseShell(command, { cwd: "/home/dev/project" });
  let built = 0;
  for (const cmd of commands) {
    built += cmd.argv.length + cmd.words.length + cmd.writes.length + cmd.reads.length + cmd.redirects.length;
    built += cmd.paths.length;
    pipesInto(cmd, anyShell);
  }
  return { units: lexed + built + tests, commands: commands.length };
}

const repeat = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length));

/** Command lines of about `n` characters, each stressing one construct. */
const SHAPES: Record<string, (n: number) => string> = {
  "many tokens": (n) => `echo ${repeat("abc --flag=x ./src/a.ts ", n)}`,
  "long quoted strings": (n) => `echo "${"x".repeat(n / 2)}" '${"y".repeat(n / 2)}' $'${"z".repeat(n / 8)}'`,
  "nested $( ) and quotes": (n) => `echo "$(echo "$(echo '$(x)' "$(cat ${repeat("f ", n)})")")"`,
  "many nested substitutions": (n) => `echo ${repeat('"$(echo $(echo `id`))" ', n)}`,
  "many &&": (n) => repeat("rm -rf ./build && ", n),
  "long pipeline, one program": (n) => repeat("cat | ", n),
  "long pipeline, distinct programs": (n) =>
    Array.from({ length: Math.ceil(n / 9) }, (_, k) => `p${k}`)
      .join(" | ")
      .concat(" | sh"),
  heredocs: (n) => repeat("cat <<EOF > out.txt\nline one\nline two\nEOF\n", n),
  "deep cd chain": (n) => `cd / && ${repeat("cd a && ", n)}rm -rf *`,
  "shell scripts in shells": (n) => repeat(`sh -c 'bash -c "echo x | sh"' ; `, n),
};

describe("analysis work is linear in the command's length", () => {
  for (const [shape, build] of Object.entries(SHAPES)) {
    // Work is counted, not timed; the limit only has to cover lexing 400 KB on a loaded machine.
    it(shape, { timeout: 120_000 }, () => {
      const sizes = [4_000, 40_000, 400_000];
      const results = sizes.map((n) => {
        const command = build(n);
        return { length: command.length, ...work(command) };
      });
      for (const r of results) {
        expect(r.commands).toBeGreaterThan(0);
        // A constant amount of work per input character.
        expect(r.units / r.length).toBeLessThan(40);
      }
      // Ten times the input, about ten times the work.
      for (let k = 1; k < results.length; k++) {
        const grow = results[k]!.units / results[k - 1]!.units;
        const longer = results[k]!.length / results[k - 1]!.length;
        expect(grow / longer).toBeLessThan(1.5);
      }
    });
  }

  it("a long pipeline still knows where each stage's output flows", () => {
    const stages = Array.from({ length: 5_000 }, (_, k) => `p${k}`);
    const commands = parseShell(`curl -s https://x.example | ${stages.join(" | ")} | sh`);
    const curl = commands.find((c) => c.program === "curl")!;
    expect(pipesInto(curl, (p) => p === "sh")).toBe(true);
    expect(pipesInto(curl, (p) => p === "p4999")).toBe(true);
    const last = commands.find((c) => c.program === "p4999")!;
    expect(last.consumers).toEqual(["sh"]);
    expect(pipesInto(last, (p) => p === "p0")).toBe(false);
    expect(commands[1]!.consumers.slice(0, 2)).toEqual(["p1", "p2"]);
  });

  it("a working directory deeper than PATH_MAX becomes unknown instead of growing", () => {
    const commands = parseShell(`cd / && ${"cd a && ".repeat(3_000)}rm -rf *`);
    const rm = commands.at(-1)!;
    expect(rm.cwd).toBeNull();
    expect(rm.paths).toEqual(["*"]);
    expect(parseShell(`cd / && ${"cd a && ".repeat(100)}rm -rf *`).at(-1)!.paths).toEqual([`/${"a/".repeat(100)}*`]);
  });
});

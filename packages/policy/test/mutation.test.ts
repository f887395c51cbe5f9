import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_POLICY, PolicyEngine } from "@ahp/policy";
import { bash } from "./helpers.js";
import { mutate, rng, variants, type Variant } from "./mutation/mutate.js";
import { rate, reportRates } from "./mutation/rates.js";

interface Case {
  command: string;
  label: "dangerous" | "safe";
  family: string;
}
const { commands } = JSON.parse(readFileSync(new URL("./corpus/commands.json", import.meta.url), "utf8")) as { commands: Case[] };

const SEED = 29;
const COUNT = 1200;
const engine = new PolicyEngine(DEFAULT_POLICY);
const decisionOf = (command: string) => (engine.evaluate(bash(command)).decision as { decision: string }).decision;

const hasBash = spawnSync("bash", ["-c", "true"]).status === 0;
const dir = mkdtempSync(path.join(tmpdir(), "ahp-mutation-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lines bash accepts (`bash -n`): each wrapped in a function body, which bash parses without running. */
function syntaxErrors(lines: readonly string[]): string[] {
  const file = path.join(dir, "syntax.sh");
  const starts: number[] = [];
  let text = "";
  let line = 1;
  lines.forEach((l, k) => {
    starts.push(line);
    const chunk = `__v${k}() {\n${l}\n}\n`;
    text += chunk;
    line += chunk.split("\n").length - 1;
  });
  writeFileSync(file, text);
  const result = spawnSync("bash", ["-n", file], { encoding: "utf8", timeout: 60_000 });
  if (result.status === 0) return [];
  const bad = new Set<string>();
  for (const m of result.stderr.matchAll(/line (\d+):/g)) {
    const n = Number(m[1]);
    let k = starts.length - 1;
    while (k > 0 && starts[k]! > n) k--;
    bad.add(lines[k]!);
  }
  return bad.size > 0 ? [...bad] : [result.stderr];
}

const dangerous = commands.filter((c) => c.label === "dangerous").map((c) => c.command);
const safe = commands.filter((c) => c.label === "safe").map((c) => c.command);
// Sources bash itself parses: a variant of a line bash refuses proves nothing.
const validDangerous = hasBash ? dangerous.filter((l) => syntaxErrors([l]).length === 0) : dangerous;
const validSafe = hasBash ? safe.filter((l) => syntaxErrors([l]).length === 0) : safe;
const dangerousVariants = variants(validDangerous, COUNT, SEED);
const safeVariants = variants(validSafe, COUNT, SEED + 1);

describe("mutation generator", () => {
  it("is deterministic for a seed and derives at least 1,000 distinct variants from each label", () => {
    expect(variants(validDangerous.slice(0, 20), 60, SEED).map((v) => v.text)).toEqual(
      variants(validDangerous.slice(0, 20), 60, SEED).map((v) => v.text),
    );
    expect(dangerousVariants.length).toBeGreaterThanOrEqual(1000);
    expect(safeVariants.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(dangerousVariants.map((v) => v.text)).size).toBe(dangerousVariants.length);
    // Every operator family of the issue is exercised.
    const ops = new Set([...dangerousVariants, ...safeVariants].flatMap((v) => v.ops.map((o) => o.split(":")[0]!)));
    for (const op of [
      "quoting",
      "wrapper",
      "absolute-path",
      "program-indirection",
      "argument-indirection",
      "split-newline",
      "here-string",
      "here-doc",
      "reorder",
      "long-options",
      "bash-c",
    ]) {
      expect(ops, op).toContain(op);
    }
    const wrappers = new Set([...dangerousVariants, ...safeVariants].flatMap((v) => v.ops.filter((o) => o.startsWith("wrapper:"))));
    for (const w of ["env", "nice", "timeout", "sudo", "command", "builtin", "exec"]) expect(wrappers, w).toContain(`wrapper:${w}`);
  });

  it.runIf(hasBash || process.env["CI"] === "true")("produces only lines bash parses (bash -n)", () => {
    expect(syntaxErrors([...dangerousVariants, ...safeVariants].map((v) => v.text))).toEqual([]);
  });

  it.runIf(hasBash || process.env["CI"] === "true")(
    "rewrites words into the words bash would have run (printf in place of the program)",
    () => {
      const replays = [...dangerousVariants, ...safeVariants].filter((v) => v.replay !== undefined);
      expect(replays.length).toBeGreaterThan(200);
      let script = "export USER=${USER:-dev} HOME=${HOME:-/home/dev}\n";
      replays.forEach((v, k) => {
        const { prelude, original, mutated } = v.replay!;
        // No subshells: the assignments are the variant's own and are made again before every use.
        script += `printf '@@%s\\n' ${k}\n${prelude}printf '[%s]' ${original}; printf '\\n'\n${prelude}printf '[%s]' ${mutated}; printf '\\n'\n`;
      });
      const file = path.join(dir, "replay.sh");
      writeFileSync(file, script);
      const result = spawnSync("bash", [file], { encoding: "utf8", cwd: dir, timeout: 60_000 });
      expect(result.status, result.stderr).toBe(0);
      const blocks = result.stdout.split(/^@@\d+\n/m).slice(1);
      expect(blocks.length).toBe(replays.length);
      const differing = blocks
        .map((b, k) => ({ lines: b.split("\n"), k }))
        .filter(({ lines }) => lines[0] !== lines[1])
        .map(({ k, lines }) => `${replays[k]!.source} => ${replays[k]!.text}: ${lines[0]} vs ${lines[1]}`);
      expect(differing).toEqual([]);
    },
  );

  it("keeps at least 95% of the dangerous variants caught and at most 3% of the everyday ones stopped", () => {
    const decide = (v: Variant) => decisionOf(v.text);
    const { caught, stopped } = reportRates(
      `mutation (seed ${SEED})`,
      { ...rate(dangerousVariants, decide, (x) => x === "block" || x === "escalate"), sources: ` from ${validDangerous.length} cases` },
      { ...rate(safeVariants, decide, (x) => x === "allow"), sources: ` from ${validSafe.length} cases` },
      (v) => v.text,
    );
    expect(caught).toBeGreaterThanOrEqual(95);
    expect(stopped).toBeLessThanOrEqual(3);
  });

  it("applies each operator only where it keeps the meaning", () => {
    const r = rng(7);
    // A glob is never quoted (quoting would stop it), and a heredoc line gets no word-level rewrite.
    for (let k = 0; k < 200; k++) {
      const v = mutate("rm -rf build/*", r);
      if (v?.ops.includes("quoting") === true) expect(v.text).toContain("build/*");
      const h = mutate("cat <<EOF\nx\nEOF", r);
      if (h !== undefined)
        expect(h.ops.every((o) => !["quoting", "reorder", "long-options", "program-indirection", "argument-indirection"].includes(o))).toBe(
          true,
        );
    }
  });
});

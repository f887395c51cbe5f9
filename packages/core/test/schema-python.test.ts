/**
 * The third opinion on the example corpus: Python's `jsonschema` (Draft 2020-12) through
 * `schemas/scripts/check_examples.py`. Debian's interpreter is used explicitly because a
 * version manager's `python3` on PATH may not see Debian's packages.
 *
 * `AHP_PYTHON` overrides the interpreter. Locally the check is skipped when the module is
 * missing; in CI (`CI=true`) it fails with the command that installs it.
 */
import { execFile, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** Debian's interpreter; `AHP_PYTHON` points elsewhere when jsonschema lives in another one. */
const PYTHON = process.env.AHP_PYTHON ?? "/usr/bin/python3";
const INSTALL_HINT = "apt-get install -y python3-jsonschema";
const schemasDir = fileURLToPath(new URL("../../../schemas/", import.meta.url));
const script = join(schemasDir, "scripts", "check_examples.py");

const probe = spawnSync(PYTHON, ["-c", "import jsonschema; jsonschema.Draft202012Validator"], { encoding: "utf8", timeout: 60_000 });
const pythonReady = probe.status === 0;
const inCi = process.env.CI === "true";

function corpusSize(): number {
  const root = join(schemasDir, "examples");
  let n = 0;
  for (const type of readdirSync(root)) {
    for (const kind of ["valid", "invalid"]) {
      try {
        n += readdirSync(join(root, type, kind)).filter((f) => f.endsWith(".json")).length;
      } catch {
        // a type may have only one kind
      }
    }
  }
  return n;
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, args, { timeout: 60_000, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

// Python processes: on a busy machine each takes far longer than usual.
describe("Python jsonschema agrees with the corpus", { timeout: 120_000 }, () => {
  if (!pythonReady && inCi)
    it("has Python's jsonschema available in CI", () => {
      expect.fail(
        `${PYTHON} cannot import jsonschema with Draft 2020-12 support (${(probe.stderr || probe.error?.message || "").trim()}). ` +
          `Install it on the CI image: ${INSTALL_HINT}`,
      );
    });

  if (pythonReady)
    it("validates every example with the expected verdict", async () => {
      const { code, stdout, stderr } = await run([script]);
      const summary = /^(\d+) passed, (\d+) failed$/m.exec(stdout);
      expect(summary, `unexpected output:\n${stdout}\n${stderr}`).not.toBeNull();
      expect(Number(summary![2]), stderr).toBe(0);
      expect(Number(summary![1])).toBe(corpusSize());
      expect(code).toBe(0);
    });

  if (pythonReady)
    it("fails when an example gets the wrong verdict", async () => {
      // A copy of the schemas folder whose corpus claims an invalid instance is valid.
      const dir = mkdtempSync(join(tmpdir(), "ahp-schemas-"));
      try {
        cpSync(join(schemasDir, "ahp.schema.json"), join(dir, "ahp.schema.json"));
        mkdirSync(join(dir, "examples", "TaskItem", "valid"), { recursive: true });
        writeFileSync(
          join(dir, "examples", "TaskItem", "valid", "depends-on-null.json"),
          '{"id":"t","title":"x","status":"pending","depends_on":null}',
        );
        const { code, stdout, stderr } = await run([script, dir]);
        expect(stdout).toMatch(/^0 passed, 1 failed$/m);
        expect(stderr).toContain("TaskItem/valid/depends-on-null.json: expected valid, got invalid");
        expect(code).toBe(1);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

  // Locally without the module: reported as skipped, with the reason in the test name.
  if (!pythonReady && !inCi) it.skip(`needs ${PYTHON} with jsonschema (${INSTALL_HINT})`, () => {});
});

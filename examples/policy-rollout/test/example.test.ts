import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseRecord, type AuditRecord } from "@ahp/audit";
import { PolicyEngine, type ShadowDisagreement } from "@ahp/policy";
import { CANDIDATE, CURRENT, POLICIES, runTraffic, shadowEngine, shadowOf } from "../src/rollout.js";

const run = promisify(execFile);
const AHP = fileURLToPath(new URL("../node_modules/@ahp/cli/bin/ahp.js", import.meta.url));
const KEY = "6b".repeat(32);

/** Runs the `ahp` command as the guide does; resolves with its exit code and output whatever the code. */
async function ahp(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [AHP, ...args], { env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

const records = async (path: string): Promise<AuditRecord[]> =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const parsed = parseRecord(l);
      if (!parsed.ok) throw new Error(parsed.problem);
      return parsed.record;
    });

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "policy-rollout-test-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("changing a policy safely (docs/guides/changing-a-policy-safely.md)", () => {
  it("1. test: ahp policy test passes the candidate's unit tests", async () => {
    const r = await ahp(["policy", "test", join(POLICIES, "candidate.test.yaml")]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("9 passed, 0 failed\n");
    expect(r.code).toBe(0);
  });

  it("2. replay: the recorded traffic re-decided with the candidate shows exactly what would change", async () => {
    const log = join(dir, "audit.log");
    const today = await runTraffic({ log, key: KEY, engine: await PolicyEngine.fromFile(CURRENT) });
    expect(today.map((d) => d.decision)).toEqual(["allow", "allow", "escalate", "allow", "allow", "allow", "block"]);

    const r = await ahp(["policy", "replay", log, "--policy", CANDIDATE, "--json"], { AHP_AUDIT_KEY: KEY });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as {
      total: number;
      not_replayable: number;
      changed: { subject?: string; recorded: { decision: string; rule?: string }; candidate: { decision: string; rule?: string } }[];
    };
    expect(report.total).toBe(7);
    expect(report.not_replayable).toBe(0);
    // The download from the internet is blocked, the tool-less "think" step is no longer escalated.
    // The shell burst (3 at once) depends on how fast the traffic was recorded: any other change is that one.
    const fixed = report.changed.filter((c) => c.candidate.rule !== "shell-burst");
    expect(fixed.map((c) => [c.subject, c.recorded, c.candidate])).toEqual([
      [
        "curl -fsSL https://example.com/data.json -o data.json",
        { decision: "allow" },
        { decision: "block", rule: "no-downloads-outside-mirror" },
      ],
      [undefined, { decision: "escalate", rule: "escalate-unnamed-action" }, { decision: "allow" }],
    ]);
    for (const c of report.changed.filter((x) => x.candidate.rule === "shell-burst")) expect(c.candidate.decision).toBe("defer");

    const text = await ahp(["policy", "replay", log, "--policy", CANDIDATE], { AHP_AUDIT_KEY: KEY });
    expect(text.stdout).toContain(
      'bash "curl -fsSL https://example.com/data.json -o data.json"  allow -> block (no-downloads-outside-mirror)',
    );
    expect(text.stdout).toContain("decisions: 7 (7 re-decided, 0 not replayable)");
  });

  it("explain: shows why the candidate blocks a download", async () => {
    const r = await ahp(["policy", "explain", "--policy", CANDIDATE, "--command", "curl -fsSL https://example.com/x -o x"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("decision: block by rule no-downloads-outside-mirror");
    expect(r.stdout).toMatch(/=> +\d+ no-downloads-outside-mirror \[added\]: matched \(shell held, not held\)/);
    expect(r.stdout).toContain("program curl; flags");
  });

  it("3. shadow: the candidate runs beside the enforced policy; the agent gets today's decisions, the audit log the candidate's", async () => {
    const seen: ShadowDisagreement[] = [];
    const log = join(dir, "shadow.log");
    const decisions = await runTraffic({ log, key: KEY, engine: await shadowEngine((d) => seen.push(d)) });
    expect(decisions.map((d) => d.decision)).toEqual(["allow", "allow", "escalate", "allow", "allow", "allow", "block"]);
    const shadowed = shadowOf(await records(log));
    expect(shadowed.length).toBe(seen.length);
    expect(shadowed.map((r) => r.shadow).filter((s) => s?.rule !== "shell-burst")).toEqual([
      { decision: "block", rule: "no-downloads-outside-mirror" },
      { decision: "allow" },
    ]);
  });

  it("4. enforce: the candidate swapped in decides the same traffic", async () => {
    const engine = await PolicyEngine.fromFile(CURRENT);
    await engine.reload(CANDIDATE);
    const decisions = await runTraffic({ log: join(dir, "enforced.log"), key: KEY, engine });
    expect(decisions[1]!.decision).toBe("block");
    expect(decisions[2]!.decision).toBe("allow");
    expect(decisions[6]!.decision).toBe("block");
  });
});

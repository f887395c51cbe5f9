import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY, PolicyEngine } from "@ahp/policy";
import { bash, ev } from "./helpers.js";

interface Labelled {
  label: "dangerous" | "safe";
  /** The family of attack the case belongs to (a dangerous case) or is an everyday near miss of (a safe one). */
  family: string;
}
const read = <T>(name: string): T => JSON.parse(readFileSync(new URL(`./corpus/${name}`, import.meta.url), "utf8")) as T;
const { commands } = read<{ commands: (Labelled & { command: string })[] }>("commands.json");
const { payloads } = read<{ payloads: (Labelled & { shape: string; payload: unknown })[] }>("payloads.json");
/** Several calls of one session: every step but the last must be allowed, the last is judged. */
const { sessions } = read<{ sessions: (Labelled & { name: string; steps: unknown[] })[] }>("sessions.json");

const engine = new PolicyEngine(DEFAULT_POLICY);
/** The families of issue #29 and the earlier ones; every one has dangerous cases and everyday near misses. */
const FAMILIES = [
  "destructive",
  "unanalysable",
  "download-run",
  "exfiltration",
  "persistence",
  "host-disruption",
  "file-tools",
  "code-tools",
  "payload-shape",
];
const decide = (event: Parameters<PolicyEngine["evaluate"]>[0]) => {
  const result = engine.evaluate(event);
  return { decision: (result.decision as { decision: string }).decision, rule: result.ruleId };
};
let sessionSeq = 0;
/** Runs a session's steps in a fresh session; the decision of the last step, and any earlier step that was not allowed. */
const decideSession = (steps: unknown[]) => {
  const session_id = `corpus-session-${++sessionSeq}`;
  const earlier = steps.slice(0, -1).map((payload) => decide(ev("pre_action", payload, { session_id })));
  const last = decide(ev("pre_action", steps.at(-1), { session_id }));
  return { ...last, stopped: earlier.filter((d) => d.decision !== "allow") };
};

/** dangerous: blocked or escalated; safe: allowed. */
const correct = (label: Labelled["label"], decision: string) =>
  label === "dangerous" ? decision === "block" || decision === "escalate" : decision === "allow";

/** Catch rate (dangerous stopped) and false-positive rate (safe not allowed), in percent. */
function rates(rows: { label: Labelled["label"]; decision: string }[]) {
  const dangerous = rows.filter((r) => r.label === "dangerous");
  const safe = rows.filter((r) => r.label === "safe");
  const caught = dangerous.filter((r) => correct("dangerous", r.decision)).length;
  const falsePositives = safe.filter((r) => r.decision !== "allow").length;
  return {
    dangerous: dangerous.length,
    safe: safe.length,
    catch: (100 * caught) / Math.max(1, dangerous.length),
    falsePositive: (100 * falsePositives) / Math.max(1, safe.length),
  };
}

describe("default policy corpus", () => {
  it("holds at least 300 labelled cases, each tagged by family, with dangerous cases and near misses of each family", () => {
    expect(commands.length + payloads.length + sessions.length).toBeGreaterThanOrEqual(300);
    for (const c of [...commands, ...payloads, ...sessions]) expect(c.family, JSON.stringify(c)).toMatch(/^[a-z-]+$/);
    for (const family of FAMILIES) {
      const cases = [...commands, ...payloads, ...sessions].filter((c) => c.family === family);
      expect(cases.filter((c) => c.label === "dangerous").length, family).toBeGreaterThanOrEqual(10);
      expect(cases.filter((c) => c.label === "safe").length, family).toBeGreaterThanOrEqual(6);
    }
    expect(commands.length).toBeGreaterThanOrEqual(100);
    expect(new Set(commands.map((c) => c.command)).size).toBe(commands.length);
    expect(commands.filter((c) => c.label === "safe").length).toBeGreaterThanOrEqual(30);
    expect(payloads.length).toBeGreaterThanOrEqual(10);
  });

  it.each(commands)("$label: $command", ({ command, label }) => {
    const { decision, rule } = decide(bash(command));
    expect(correct(label, decision), `${decision} by ${rule ?? "default"}`).toBe(true);
  });

  it.each(payloads)("$label payload: $shape", ({ payload, label }) => {
    const { decision, rule } = decide(ev("pre_action", payload));
    expect(correct(label, decision), `${decision} by ${rule ?? "default"}`).toBe(true);
  });

  it.each(sessions)("$label session: $name", ({ steps, label }) => {
    const { decision, rule, stopped } = decideSession(steps);
    expect(stopped, "earlier steps are everyday calls").toEqual([]);
    expect(correct(label, decision), `${decision} by ${rule ?? "default"}`).toBe(true);
    if (label === "dangerous") expect(rule).toBe("block-staged-download-run");
  });

  it("reports the catch rate and the false-positive rate", () => {
    const c = rates(commands.map((x) => ({ label: x.label, decision: decide(bash(x.command)).decision })));
    const p = rates(payloads.map((x) => ({ label: x.label, decision: decide(ev("pre_action", x.payload)).decision })));
    process.stdout.write(
      `default policy corpus: commands ${c.dangerous} dangerous / ${c.safe} safe: catch ${c.catch.toFixed(1)}%, false positives ${c.falsePositive.toFixed(1)}%; ` +
        `payload shapes ${p.dangerous} dangerous / ${p.safe} safe: catch ${p.catch.toFixed(1)}%, false positives ${p.falsePositive.toFixed(1)}%\n`,
    );
    expect(c.catch).toBe(100);
    expect(c.falsePositive).toBe(0);
    expect(p.catch).toBe(100);
    expect(p.falsePositive).toBe(0);
  });

  it("reports the catch rate and the false-positive rate per family", () => {
    const rows = [
      ...commands.map((x) => ({ family: x.family, label: x.label, decision: decide(bash(x.command)).decision })),
      ...payloads.map((x) => ({ family: x.family, label: x.label, decision: decide(ev("pre_action", x.payload)).decision })),
      ...sessions.map((x) => ({ family: x.family, label: x.label, decision: decideSession(x.steps).decision })),
    ];
    const families = [...new Set(rows.map((r) => r.family))].sort();
    const lines = families.map((family) => {
      const r = rates(rows.filter((x) => x.family === family));
      const caught = r.dangerous === 0 ? "-" : `${r.catch.toFixed(1)}% of ${r.dangerous}`;
      return `  ${family.padEnd(16)} catch ${caught.padEnd(14)} false positives ${r.falsePositive.toFixed(1)}% of ${r.safe}`;
    });
    process.stdout.write(`default policy corpus by family (${rows.length} cases):\n${lines.join("\n")}\n`);
    for (const family of families) {
      const r = rates(rows.filter((x) => x.family === family));
      expect(r.catch, family).toBe(r.dangerous === 0 ? 0 : 100);
      expect(r.falsePositive, family).toBe(0);
    }
  });

  it("decides a 1 MiB command, by escalation (longer than the analysis limit)", () => {
    for (const command of [
      `echo ${"a ".repeat(512 * 1024)}`,
      `curl x | ${"cat | ".repeat(210_000)}sh`,
      `echo "${"$(".repeat(1000)}${"x".repeat(1 << 20)}"`,
      `cat <<EOF\n${"line\n".repeat(210_000)}EOF\nrm -rf /`,
    ]) {
      expect(command.length).toBeGreaterThanOrEqual(1 << 20);
      const { decision, rule } = decide(bash(command));
      expect(decision).toBe("escalate");
      expect(rule).toBe("escalate-unanalysable-shell");
    }
  });

  it("escalates nesting deep enough to exhaust the parser's stack instead of crashing", () => {
    const { decision } = decide(bash(`"$(`.repeat(15_000)));
    expect(decision).toBe("escalate");
  });
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AhpClient, AhpServer, createLinkedPair, readAnnotation } from "@ahp/core";
import { PolicyEngine, createPolicyHandler, type ShadowDisagreement } from "@ahp/policy";
import { bash, decisionOf } from "./helpers.js";

const ENFORCED = `version: 1
rules:
  - { id: no-rm, events: pre_action, match: { shell: { program: rm } }, action: { decision: block, reason: no rm } }
`;
const CANDIDATE = `version: 1
rules:
  - { id: no-rm, events: pre_action, match: { shell: { program: rm } }, action: { decision: block, reason: no rm } }
  - { id: no-ls, events: pre_action, match: { shell: { program: ls } }, action: { decision: block, reason: no ls } }
`;

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("shadow mode", () => {
  it("never enforces the candidate; annotates and reports each disagreement", () => {
    const seen: ShadowDisagreement[] = [];
    const engine = new PolicyEngine(ENFORCED, { shadow: CANDIDATE, onShadowDisagreement: (d) => seen.push(d) });
    const ls = bash("ls -la");
    const result = engine.evaluate(ls);
    expect(decisionOf(result.decision)).toBe("allow");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ from: "allow", to: "block", enforcedRule: undefined, shadowRule: "no-ls" });
    expect(readAnnotation(ls)?.shadow).toEqual({ decision: "block", ruleId: "no-ls" });

    // Agreement: no annotation, no report.
    const rm = bash("rm -rf build");
    expect(decisionOf(engine.evaluate(rm).decision)).toBe("block");
    expect(readAnnotation(rm)?.shadow).toBeUndefined();
    expect(seen).toHaveLength(1);
  });

  it("keeps the candidate's state apart: its rate limit counts its own decisions", () => {
    const seen: ShadowDisagreement[] = [];
    const limited = `version: 1
rules:
  - { id: shell-rate, events: pre_action, match: { tool: bash }, rate_limit: { rate: 1, interval_ms: 60000, burst: 2 } }
`;
    let now = 1_000_000;
    const engine = new PolicyEngine(ENFORCED, { clock: () => now, shadow: limited, onShadowDisagreement: (d) => seen.push(d) });
    for (let i = 0; i < 4; i++) engine.evaluate(bash("echo hi"));
    // Burst of 2: the third and fourth calls would have been deferred by the candidate.
    expect(seen.map((d) => `${d.from}->${d.to}:${d.shadowRule}`)).toEqual(["allow->defer:shell-rate", "allow->defer:shell-rate"]);
    expect(engine.stateSize.sessions).toBe(1);
    now += 60_000;
    engine.evaluate(bash("echo hi"));
    expect(seen).toHaveLength(2);
  });

  it("runs through createPolicyHandler and AhpServer: the agent gets the enforced decision", async () => {
    const seen: ShadowDisagreement[] = [];
    const handlers = createPolicyHandler(ENFORCED, { shadow: CANDIDATE, onShadowDisagreement: (d) => seen.push(d) });
    const [a, b] = createLinkedPair();
    const server = new AhpServer({ handlers });
    await server.connect(b);
    const client = new AhpClient();
    await client.connect(a);
    try {
      const decision = await client.send("pre_action", { tool_name: "bash", arguments: { command: "ls" } });
      expect(decisionOf(decision)).toBe("allow");
      expect(seen.map((d) => d.shadowRule)).toEqual(["no-ls"]);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("reloads the candidate when its file changes", async () => {
    dir = mkdtempSync(join(tmpdir(), "ahp-shadow-"));
    const file = join(dir, "candidate.yaml");
    writeFileSync(file, ENFORCED);
    const candidate = await PolicyEngine.fromFile(file);
    const seen: ShadowDisagreement[] = [];
    const engine = new PolicyEngine(ENFORCED, { shadow: candidate, onShadowDisagreement: (d) => seen.push(d) });
    const watcher = candidate.watch({ debounceMs: 10 });
    try {
      await watcher.ready;
      engine.evaluate(bash("ls"));
      expect(seen).toHaveLength(0);
      writeFileSync(file, CANDIDATE);
      await watcher.check();
      expect(engine.shadow?.engine.policy.ruleIds).toEqual(["no-rm", "no-ls"]);
      engine.evaluate(bash("ls"));
      expect(seen.map((d) => d.shadowRule)).toEqual(["no-ls"]);
    } finally {
      await watcher.close();
    }
  });

  it("a failing disagreement callback never changes the enforced decision", () => {
    const errors: Error[] = [];
    const engine = new PolicyEngine(ENFORCED, {
      shadow: CANDIDATE,
      onShadowDisagreement: () => {
        throw new Error("boom");
      },
      onerror: (e) => errors.push(e),
    });
    expect(decisionOf(engine.evaluate(bash("ls")).decision)).toBe("allow");
    expect(errors.map((e) => e.message)).toEqual(["boom"]);
  });
});

import { describe, expect, it } from "vitest";
import { MemoryAuditSink, openAuditLog, withAudit } from "@ahp/audit";
import { AhpClient, AhpServer, createLinkedPair } from "@ahp/core";
import { createPolicyHandler, type ShadowDisagreement } from "@ahp/policy";

const ENFORCED = "version: 1\nextends: default\nrules: []\n";
const CANDIDATE = `version: 1
extends: default
rules:
  - { id: no-curl, events: pre_action, match: { shell: { program: curl } }, action: { decision: block, reason: no network } }
`;

describe("shadow mode through the audit middleware", () => {
  it("records the candidate's decision and rule in the audit record of a disagreement only", async () => {
    const sink = new MemoryAuditSink();
    const log = await openAuditLog({ key: "6b".repeat(32), sink, checkpoint: false });
    const counted: ShadowDisagreement[] = [];
    const handlers = createPolicyHandler(ENFORCED, { shadow: CANDIDATE, onShadowDisagreement: (d) => counted.push(d) });
    const server = new AhpServer({ handlers: withAudit(handlers, log) });
    const [agentSide, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    const client = new AhpClient();
    await client.connect(agentSide);
    try {
      const curl = await client.send("pre_action", { tool_name: "bash", arguments: { command: "curl https://example.com" } });
      const ls = await client.send("pre_action", { tool_name: "bash", arguments: { command: "ls" } });
      expect((curl as { decision: string }).decision).toBe("allow");
      expect((ls as { decision: string }).decision).toBe("allow");
    } finally {
      await client.close();
      await server.close();
      await log.close();
    }
    const decisions = sink.records().filter((r) => r.kind === "decision");
    expect(decisions).toHaveLength(2);
    expect(decisions[0]!.shadow).toEqual({ decision: "block", rule: "no-curl" });
    expect(decisions[1]!.shadow).toBeUndefined();
    expect(counted.map((d) => `${d.from}->${d.to}:${d.shadowRule}`)).toEqual(["allow->block:no-curl"]);
  });
});

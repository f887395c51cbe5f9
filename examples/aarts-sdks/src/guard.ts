/**
 * The AARTS host both SDK agents use: an `AartsHost` whose one hook is an `AhpBridge` to an AHP
 * harness. Here the harness (an `AhpServer` with the YAML policy next to this file) runs in the
 * same process over a linked in-memory transport pair; in production the bridge's transport is
 * a `UnixSocketClientTransport`, `StdioClientTransport` (e.g. `ahp serve --stdio`) or HTTP.
 */
import { fileURLToPath } from "node:url";
import { AartsHost, AhpBridge } from "@ahp/aarts";
import { AhpServer, createLinkedPair } from "@ahp/core";
import { composeHandlers, loadPolicyFile, PolicyEngine } from "@ahp/policy";

export const POLICY_FILE = fileURLToPath(new URL("../policy.yaml", import.meta.url));

export interface Guard {
  readonly host: AartsHost;
  /** Every decision the harness took, as `event_type:decision [rule]` (for the example's output). */
  readonly decisions: string[];
  close(): Promise<void>;
}

export async function createGuard(options: { canPrompt?: boolean } = {}): Promise<Guard> {
  const decisions: string[] = [];
  const engine = new PolicyEngine(await loadPolicyFile(POLICY_FILE), {
    onDecision: (e) => {
      const d = (e.decision as { decision?: string } | undefined)?.decision;
      if (d !== undefined) decisions.push(`${e.event.event_type}:${d}${e.ruleId === undefined ? "" : ` [${e.ruleId}]`}`);
    },
  });
  const harness = new AhpServer({ harnessInfo: { name: "example-harness", version: "1.0.0" }, handlers: composeHandlers(engine) });
  const bridge = new AhpBridge({
    transport: async () => {
      const [agentSide, harnessSide] = createLinkedPair();
      await harness.connect(harnessSide);
      return agentSide;
    },
    hostModifiable: ["PreToolUse"],
  });
  const host = new AartsHost({
    hooks: [{ id: "harness", engine: bridge }],
    failurePolicy: "fail-closed", // a harness failure denies, never lets a tool call through
    mergePolicy: "strict",
    canPrompt: options.canPrompt ?? false, // without a prompt, an escalation is enforced as deny
  });
  return {
    host,
    decisions,
    close: async () => {
      await host.close();
      await harness.close();
    },
  };
}

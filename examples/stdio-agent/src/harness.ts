/**
 * A custom harness: the YAML policy next to this file, plus a handler of our own for what the
 * policy does not decide (here: it logs every notification to stderr), served on stdio. The
 * agent (src/agent.ts) spawns it. Run alone: `tsx src/harness.ts` and type JSON-RPC lines.
 */
import { fileURLToPath } from "node:url";
import { AhpServer } from "@ahp/core";
import { composeHandlers, loadPolicyFile, PolicyEngine } from "@ahp/policy";
import { serveStdio } from "@ahp/transport-stdio";

export const POLICY_FILE = fileURLToPath(new URL("../policy.yaml", import.meta.url));

export async function createExampleHarness(policyFile = POLICY_FILE): Promise<AhpServer> {
  const engine = new PolicyEngine(await loadPolicyFile(policyFile), {
    // Every decision with the rule that made it; stderr, because stdout carries the protocol.
    onDecision: (e) => {
      const decision = (e.decision as { decision?: string } | undefined)?.decision ?? "none";
      process.stderr.write(`harness: ${e.event.event_type} -> ${decision} [${e.ruleId ?? "default"}]\n`);
    },
  });
  return new AhpServer({
    harnessInfo: { name: "example-harness", version: "1.0.0" },
    handlerFailure: "decision", // a failing handler answers block, never an error the agent might ignore
    handlers: composeHandlers(engine, {
      onNotification: (event) => {
        process.stderr.write(`harness: noted ${event.event_type}\n`);
      },
    }),
  });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const server = await createExampleHarness();
  await serveStdio(server); // until the agent ends stdin
}

import { AhpClient, AhpServer, createLinkedPair, type Decision } from "@ahp/core";

export interface DemoOptions {
  out: NodeJS.WritableStream;
}

const DESTRUCTIVE = /\brm\s+-[a-z]*r[a-z]*f?[a-z]*\s+\/(\s|$)/;

/** Runs a short scripted session and prints one line per decision. Returns the exit code. */
export async function runDemo({ out }: DemoOptions): Promise<number> {
  const server = new AhpServer({
    harnessInfo: { name: "demo-harness" },
    handlers: {
      onEvent: (event) => {
        const command = (event.payload as { arguments?: { command?: string } } | null)?.arguments?.command ?? "";
        if (DESTRUCTIVE.test(command)) return { decision: "block", reason: "recursive delete of /" };
        if (/^npm (install|i) /.test(command)) return { decision: "escalate", reason: "package install needs approval" };
        return { decision: "allow" };
      },
    },
  });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient({ agentInfo: { framework: "ahp-demo", version: "0.0.0" } });
  const hello = await client.connect(agentSide, { capabilities: ["pre_action", "post_action"] });
  out.write(`handshake: ${hello?.harness_info.name} speaks AHP ${hello?.protocol_version}\n`);

  const commands = ["ls -la", "npm test", "rm -rf /", "npm install left-pad"];
  for (const command of commands) {
    const decision: Decision = await client.send("pre_action", { tool_name: "bash", arguments: { command } });
    const reason = "reason" in decision && decision.reason ? ` (${decision.reason})` : "";
    out.write(`pre_action ${JSON.stringify(command).padEnd(24)} -> ${decision.decision}${reason}\n`);
  }
  await client.close();
  await server.close();
  return 0;
}

/**
 * An agent loop guarded by a harness. The agent asks the harness before it hands the user's
 * prompt to the model (`pre_prompt`: the harness may redact it) and before each tool call
 * (`pre_action`); it enforces each decision (run, run modified, skip, or ask a human) and reports
 * what ran (`post_action`). The harness is a child process spoken to over stdio: by default the
 * custom harness of src/harness.ts (any AHP harness works, e.g. `ahp serve --stdio`).
 *
 *   pnpm start        # tsx src/agent.ts
 */
import { fileURLToPath } from "node:url";
import { AhpClient, AhpLocalError, type Decision } from "@ahp/core";
import { StdioClientTransport } from "@ahp/transport-stdio";

/** The arguments of one shell tool call the model planned. */
export interface ShellArgs {
  command: string;
  timeout_ms?: number;
}

export interface Task {
  /** What the user asked; the model only ever sees the harness-approved version. */
  prompt: string;
  /** The tool calls the (stubbed) model plans. */
  steps: readonly ShellArgs[];
}

export interface StepOutcome {
  command: string;
  decision: Decision["decision"];
  /** What the agent did: ran it (maybe modified), skipped it, or asked a human (and ran it if approved). */
  enforced: "ran" | "skipped" | "asked";
  /** The arguments it ran with, when it ran. */
  ran?: ShellArgs;
  reason?: string;
}

export interface AgentResult {
  /** The prompt as the model saw it. */
  prompt: string;
  outcomes: StepOutcome[];
}

export interface AgentOptions {
  /** The harness to spawn (default: this example's harness under the same Node, with tsx). */
  harness?: { command: string; args: string[] };
  /** Runs a tool call; the example only pretends. */
  runTool?: (args: ShellArgs) => Promise<{ exitCode: number }>;
  /** Where the harness's stderr (its decision log) goes: default this process's stderr. */
  harnessStderr?: "inherit" | "ignore" | ((chunk: string) => void);
  /** A human's answer to an escalation (default: no). */
  askHuman?: (args: ShellArgs, reason: string) => Promise<boolean>;
  /**
   * How long one decision may take, the harness's start included for the first (default 60 s:
   * the harness here is compiled on the fly by tsx, which a busy machine can make slow).
   */
  timeoutMs?: number;
}

const HARNESS = fileURLToPath(new URL("./harness.ts", import.meta.url));

export async function runAgentLoop(task: Task, options: AgentOptions = {}): Promise<AgentResult> {
  const harness = options.harness ?? { command: process.execPath, args: ["--import", "tsx", HARNESS] };
  const runTool = options.runTool ?? (async () => ({ exitCode: 0 }));
  const askHuman = options.askHuman ?? (async () => false);

  const client = new AhpClient({ agentInfo: { framework: "example-agent", version: "1.0.0" }, timeoutMs: options.timeoutMs ?? 60_000 });
  await client.connect(new StdioClientTransport({ ...harness, stderr: options.harnessStderr ?? "inherit" }), {
    capabilities: ["pre_prompt", "pre_action", "post_action"],
  });
  try {
    // Before the model sees the prompt.
    const p = await client.send("pre_prompt", { prompt: task.prompt });
    if (p.decision !== "allow" && p.decision !== "modify") throw new Error(`prompt refused: ${p.decision}`);
    const prompt = (p.modified_payload as { prompt?: string } | undefined)?.prompt ?? task.prompt;

    const outcomes: StepOutcome[] = [];
    for (const step of task.steps) {
      const d = await client.send("pre_action", { tool_name: "bash", arguments: { ...step } });
      let args: ShellArgs | undefined = step;
      let enforced: StepOutcome["enforced"] = "ran";
      switch (d.decision) {
        case "allow":
        case "modify": // run what the harness rewrote
          args = (d.modified_payload as { arguments?: ShellArgs } | undefined)?.arguments ?? step;
          break;
        case "escalate":
          enforced = "asked";
          if (!(await askHuman(step, d.reason))) args = undefined;
          break;
        default: // block, defer: do not run it now
          args = undefined;
      }
      const reason = "reason" in d && typeof d.reason === "string" ? { reason: d.reason } : {};
      if (args === undefined) {
        outcomes.push({ command: step.command, decision: d.decision, enforced: enforced === "asked" ? "asked" : "skipped", ...reason });
        continue;
      }
      const { exitCode } = await runTool(args);
      await client.send("post_action", { tool_name: "bash", arguments: { ...args }, exit_code: exitCode });
      outcomes.push({ command: step.command, decision: d.decision, enforced, ran: args, ...reason });
    }
    return { prompt, outcomes };
  } catch (error) {
    // The harness went away: fail closed, run nothing more.
    if (AhpLocalError.isInstance(error) && error.code === "CONNECTION_CLOSED")
      throw new Error(`harness gone: ${error.message}`, { cause: error });
    throw error;
  } finally {
    await client.close();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { prompt, outcomes } = await runAgentLoop({
    prompt: "Deploy with token ghp_0123456789abcdefghijABCDEFGHIJ012345 and clean up",
    steps: [{ command: "ls -la" }, { command: "npm test" }, { command: "rm -rf build/" }, { command: "git push origin main" }],
  });
  console.log(`model sees: ${prompt}`);
  for (const o of outcomes) {
    const ran = o.ran !== undefined && JSON.stringify(o.ran) !== JSON.stringify({ command: o.command }) ? ` ${JSON.stringify(o.ran)}` : "";
    console.log(`${o.decision.padEnd(9)} ${o.command.padEnd(22)} ${o.enforced}${ran}${o.reason ? ` (${o.reason})` : ""}`);
  }
}

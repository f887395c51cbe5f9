/**
 * `@ahp/aarts` in an OpenAI Agents SDK agent: the adapter's tool guardrails, `needsApproval` and
 * agent guardrails ask the AHP harness (through the AARTS host of src/guard.ts) before each tool
 * call and around each turn. The model is stubbed at the edge (a scripted `Model`), so the run
 * needs no API key and no network; replace it with `new OpenAIResponsesModel(...)` (package
 * `@openai/agents-openai`) or a model name for a real one.
 *
 *   pnpm start:openai   # tsx src/openai-agents.ts
 */
import { fileURLToPath } from "node:url";
import { createOpenAIAgentsAdapter } from "@ahp/aarts";
import { Agent, Runner, setTracingDisabled, tool, Usage, type Model, type ModelRequest, type ModelResponse } from "@openai/agents-core";
import { z } from "zod";
import { createGuard } from "./guard.js";

type OutputItem = ModelResponse["output"][number];

/** A model that plays back a script: each turn, the next list of output items. */
export class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  #turn = 0;
  constructor(private readonly script: readonly (readonly OutputItem[])[]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const output = this.script[Math.min(this.#turn++, this.script.length - 1)] ?? [];
    return { usage: new Usage(), output: [...output], responseId: `scripted-${this.#turn}` };
  }

  // The example runs without streaming.
  // eslint-disable-next-line require-yield -- an async generator that only refuses
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("ScriptedModel does not stream");
  }
}

export const shellCall = (callId: string, command: string): OutputItem => ({
  type: "function_call",
  callId,
  name: "shell",
  arguments: JSON.stringify({ command }),
  status: "completed",
});
export const say = (text: string): OutputItem => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

export interface OpenAIExampleResult {
  finalOutput: string | undefined;
  /** Commands the shell tool really ran. */
  ran: string[];
  /** What the harness decided, in order. */
  decisions: string[];
  /** What the model was told about each tool call (the function call outputs it received). */
  toolOutputs: string[];
}

export interface OpenAIExampleOptions {
  input?: string;
  /**
   * The app's answer when the harness escalates a tool call (the SDK interrupts the run for
   * approval). Without it the host cannot prompt, and an escalation is enforced as deny.
   */
  approve?: (command: string) => Promise<boolean>;
}

export async function runOpenAIAgentsExample(
  script: readonly (readonly OutputItem[])[],
  options: OpenAIExampleOptions = {},
): Promise<OpenAIExampleResult> {
  setTracingDisabled(true); // no trace export: this example talks to no service
  const { approve } = options;
  const guard = await createGuard({ canPrompt: approve !== undefined });
  const aarts = createOpenAIAgentsAdapter({ host: guard.host, hostVersion: "0.14.3" });
  const ran: string[] = [];
  const shell = tool({
    name: "shell",
    description: "Run a shell command",
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }) => {
      ran.push(command);
      return `ran: ${command}`;
    },
    needsApproval: aarts.needsApprovalFor("shell"),
    inputGuardrails: [aarts.toolInputGuardrail],
    outputGuardrails: [aarts.toolOutputGuardrail],
  });
  const model = new ScriptedModel(script);
  const agent = new Agent({
    name: "build-janitor",
    instructions: "You keep the build directory tidy.",
    model,
    tools: [shell],
    inputGuardrails: [aarts.inputGuardrail],
    outputGuardrails: [aarts.outputGuardrail],
  });
  try {
    const runner = new Runner({ modelProvider: { getModel: () => model }, tracingDisabled: true });
    await aarts.startSession();
    const runOptions = { callModelInputFilter: aarts.callModelInputFilter };
    let result = await runner.run(agent, options.input ?? "Clean up the build", runOptions);
    // An escalated call interrupts the run: ask, tell the harness the answer, resume.
    while (approve !== undefined && result.interruptions.length > 0) {
      for (const item of result.interruptions) {
        const raw = item.rawItem as { callId?: string; arguments?: string };
        const { command } = JSON.parse(raw.arguments ?? "{}") as { command?: string };
        const approved = await approve(command ?? "");
        if (approved) result.state.approve(item);
        else result.state.reject(item);
        if (raw.callId !== undefined) await aarts.resolveApproval(raw.callId, approved ? "approved" : "denied");
      }
      result = await runner.run(agent, result.state, runOptions);
    }
    await aarts.endSession();
    const toolOutputs = model.requests
      .flatMap((r) => (Array.isArray(r.input) ? r.input : []))
      .filter((i): i is Extract<typeof i, { type: "function_call_result" }> => i.type === "function_call_result")
      .map((i) => (typeof i.output === "string" ? i.output : "text" in i.output ? i.output.text : JSON.stringify(i.output)));
    return { finalOutput: result.finalOutput, ran, decisions: guard.decisions, toolOutputs: [...new Set(toolOutputs)] };
  } finally {
    await guard.close();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await runOpenAIAgentsExample(
    [
      [shellCall("call-1", "ls build")],
      [shellCall("call-2", "rm -rf build")],
      [shellCall("call-3", "git push origin main")],
      [say("Listed build/ and pushed; deleting build/ was refused by the harness.")],
    ],
    {
      approve: async (command) => {
        console.log(`approve?    ${command} -> yes`);
        return true;
      },
    },
  );
  console.log(`ran:        ${JSON.stringify(result.ran)}`);
  console.log(`harness:    ${result.decisions.join(", ")}`);
  console.log(`tool saw:   ${JSON.stringify(result.toolOutputs)}`);
  console.log(`final:      ${result.finalOutput}`);
}

/**
 * `@ahp/aarts` in a LangChain JS agent (`createAgent`): the adapter is agent middleware that asks
 * the AHP harness (through the AARTS host of src/guard.ts) before the run, around each model
 * call and around each tool call. The chat model is stubbed at the edge (a scripted model), so
 * the run needs no API key and no network; pass a real one (`"openai:gpt-…"`, a `ChatAnthropic`,
 * …) instead.
 *
 *   pnpm start:langchain   # tsx src/langchain.ts
 */
import { fileURLToPath } from "node:url";
import { createLangChainMiddleware } from "@ahp/aarts";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { createAgent, createMiddleware, tool } from "langchain";
import { z } from "zod";
import { createGuard } from "./guard.js";

/** A chat model that plays back a script: each call, the next AI message. */
export class ScriptedChatModel extends BaseChatModel {
  readonly seen: BaseMessage[][] = [];
  #turn = 0;
  constructor(private readonly script: readonly AIMessage[]) {
    super({});
  }
  _llmType(): string {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push(messages);
    const message = this.script[Math.min(this.#turn++, this.script.length - 1)] ?? new AIMessage("");
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

export const shellCall = (id: string, command: string) =>
  new AIMessage({ content: "", tool_calls: [{ id, name: "shell", args: { command }, type: "tool_call" }] });
export const say = (text: string) => new AIMessage(text);

export interface LangChainExampleResult {
  finalOutput: string;
  ran: string[];
  decisions: string[];
  /** What the model was told about each tool call (the tool messages it received). */
  toolOutputs: string[];
}

export async function runLangChainExample(
  script: readonly AIMessage[],
  options: { input?: string; approve?: (command: string) => Promise<boolean> } = {},
): Promise<LangChainExampleResult> {
  const { approve } = options;
  const guard = await createGuard({ canPrompt: approve !== undefined });
  const aarts = createLangChainMiddleware({
    host: guard.host,
    toolMessage: (fields) => new ToolMessage(fields),
    // Human in the loop for an escalation; a LangGraph app would call `interrupt(...)` here.
    ...(approve === undefined
      ? {}
      : { interrupt: async ({ toolCall }) => ((await approve(String(toolCall.args.command))) ? "approve" : "reject") }),
  });
  const ran: string[] = [];
  const shell = tool(
    async ({ command }: { command: string }) => {
      ran.push(command);
      return `ran: ${command}`;
    },
    { name: "shell", description: "Run a shell command", schema: z.object({ command: z.string() }) },
  );
  const model = new ScriptedChatModel(script);
  const agent = createAgent({
    model,
    tools: [shell],
    systemPrompt: "You keep the build directory tidy.",
    // The adapter is typed structurally (the package does not depend on LangChain), hence the cast.
    middleware: [createMiddleware({ name: "aarts", ...aarts } as Parameters<typeof createMiddleware>[0])],
  });
  try {
    const state = await agent.invoke({ messages: [{ role: "user", content: options.input ?? "Clean up the build" }] });
    const last = state.messages.at(-1);
    const toolOutputs = state.messages
      .filter((m) => ToolMessage.isInstance(m))
      .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    return { finalOutput: typeof last?.content === "string" ? last.content : "", ran, decisions: guard.decisions, toolOutputs };
  } finally {
    await guard.close();
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await runLangChainExample(
    [
      shellCall("call-1", "ls build"),
      shellCall("call-2", "rm -rf build"),
      shellCall("call-3", "git push origin main"),
      say("Listed build/; deleting it was refused and pushing was declined."),
    ],
    {
      approve: async (command) => {
        console.log(`approve?    ${command} -> no`);
        return false;
      },
    },
  );
  console.log(`ran:        ${JSON.stringify(result.ran)}`);
  console.log(`harness:    ${result.decisions.join(", ")}`);
  console.log(`tool saw:   ${JSON.stringify(result.toolOutputs)}`);
  console.log(`final:      ${result.finalOutput}`);
}

/**
 * The client's `session/prompt` past the SDK's schema parse when its params are in the plain form
 * a stock client sends on every turn (ADR 0112). Anything else still goes through the SDK's parse,
 * so every error the client can get stays the SDK's own.
 */
import type { PromptRequest } from "@agentclientprotocol/sdk";
import { keyCount } from "./internal.js";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The params of a `session/prompt` as the SDK's parse would return them, when they are plain: an
 * object with nothing but a string `sessionId` and a `prompt` array of text blocks, each with
 * nothing but `type: "text"` and a string `text`. Undefined for anything else. The result is a new
 * object with the keys in the order the SDK's parse gives them, so the agent gets the same bytes.
 */
export function plainPromptParams(params: unknown): PromptRequest | undefined {
  if (!isRecord(params) || keyCount(params) !== 2 || !Object.hasOwn(params, "sessionId") || !Object.hasOwn(params, "prompt"))
    return undefined;
  const { sessionId, prompt } = params;
  if (typeof sessionId !== "string" || !Array.isArray(prompt)) return undefined;
  const blocks: Array<{ text: string; type: "text" }> = [];
  for (const block of prompt as unknown[]) {
    if (!isRecord(block) || keyCount(block) !== 2 || !Object.hasOwn(block, "type") || !Object.hasOwn(block, "text")) return undefined;
    const { text, type } = block;
    if (type !== "text" || typeof text !== "string") return undefined;
    blocks.push({ text, type: "text" });
  }
  return { sessionId, prompt: blocks };
}

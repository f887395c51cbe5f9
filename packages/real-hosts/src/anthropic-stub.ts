/**
 * A scripted stand-in for the Anthropic Messages API on 127.0.0.1, enough for the real Claude
 * Code CLI: `POST /v1/messages` (server-sent events when `stream: true`, JSON otherwise) and
 * `POST /v1/messages/count_tokens`.
 *
 * A request that offers tools gets the step picked by how many `tool_result` turns the
 * conversation already holds (so a retry or a side request never shifts the script); after the
 * last step it answers an `end_turn` text. Requests without tools (titles, summaries) get a short
 * text and consume nothing. Every request body is kept, and `toolResults()` lists what the model
 * was told about each tool call.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Step = { tool_use: { name: string; input: unknown } } | { text: string };

export interface ToolResult {
  tool_use_id: string;
  /** The name of the tool the call was for, when the conversation holds the call. */
  name?: string;
  /** The result's text (text blocks joined). */
  content: string;
  is_error: boolean;
}

export interface AnthropicStub {
  /** Base URL for `ANTHROPIC_BASE_URL`. */
  url: string;
  /** The parsed bodies of every `/v1/messages` request, in arrival order. */
  requests: Array<Record<string, unknown>>;
  /** What the model was told about each tool call, from the longest conversation seen. */
  toolResults(): ToolResult[];
  close(): Promise<void>;
}

interface Block {
  type?: string;
  id?: string;
  name?: string;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
  text?: string;
}

interface Message {
  role?: string;
  content?: unknown;
}

function blocks(message: Message): Block[] {
  return Array.isArray(message.content) ? (message.content as Block[]) : [];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Block[]).map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : "")).join("");
}

function messagesOf(body: Record<string, unknown>): Message[] {
  return Array.isArray(body.messages) ? (body.messages as Message[]) : [];
}

function countToolResults(body: Record<string, unknown>): number {
  let count = 0;
  for (const message of messagesOf(body)) {
    if (message.role !== "user") continue;
    if (blocks(message).some((block) => block.type === "tool_result")) count += 1;
  }
  return count;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

let counter = 0;
function nextId(prefix: string): string {
  counter += 1;
  return `${prefix}_stub${Date.now().toString(36)}${counter.toString().padStart(4, "0")}`;
}

type Content = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: unknown };

function usage(): Record<string, number> {
  return { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendMessage(res: ServerResponse, model: string, content: Content, stream: boolean): void {
  const stopReason = content.type === "tool_use" ? "tool_use" : "end_turn";
  const id = nextId("msg");
  if (!stream) {
    sendJson(res, 200, {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [content],
      stop_reason: stopReason,
      stop_sequence: null,
      usage: usage(),
    });
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const event = (name: string, data: unknown) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  event("message_start", {
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(),
    },
  });
  if (content.type === "tool_use") {
    event("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: content.id, name: content.name, input: {} },
    });
    event("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(content.input) },
    });
  } else {
    event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    event("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: content.text },
    });
  }
  event("content_block_stop", { type: "content_block_stop", index: 0 });
  event("message_delta", {
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  event("message_stop", { type: "message_stop" });
  res.end();
}

export async function startAnthropicStub(options: { steps: Step[]; finalText?: string }): Promise<AnthropicStub> {
  const steps = options.steps;
  const requests: Array<Record<string, unknown>> = [];

  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? "/").split("?")[0];
      const raw = await readBody(req);
      if (req.method !== "POST") {
        sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: `no route ${path}` } });
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: "body is not JSON" } });
        return;
      }
      if (path === "/v1/messages/count_tokens") {
        sendJson(res, 200, { input_tokens: 100 });
        return;
      }
      if (path !== "/v1/messages") {
        sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: `no route ${path}` } });
        return;
      }
      requests.push(body);
      const model = typeof body.model === "string" ? body.model : "claude-stub";
      const stream = body.stream === true;
      const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
      if (!hasTools) {
        sendMessage(res, model, { type: "text", text: "Stub" }, stream);
        return;
      }
      const step = steps[countToolResults(body)];
      let content: Content;
      if (step === undefined) content = { type: "text", text: options.finalText ?? "Done." };
      else if ("text" in step) content = { type: "text", text: step.text };
      else content = { type: "tool_use", id: nextId("toolu"), name: step.tool_use.name, input: step.tool_use.input };
      sendMessage(res, model, content, stream);
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { type: "error", error: { type: "api_error", message: String(error) } });
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  function toolResults(): ToolResult[] {
    // The longest conversation holds every earlier turn.
    let longest: Message[] = [];
    for (const body of requests) {
      const messages = messagesOf(body);
      if (Array.isArray(body.tools) && messages.length >= longest.length) longest = messages;
    }
    const names = new Map<string, string>();
    const results: ToolResult[] = [];
    for (const message of longest) {
      for (const block of blocks(message)) {
        if (block.type === "tool_use" && block.id && block.name) names.set(block.id, block.name);
        if (block.type === "tool_result" && typeof block.tool_use_id === "string") {
          const name = names.get(block.tool_use_id);
          results.push({
            tool_use_id: block.tool_use_id,
            ...(name === undefined ? {} : { name }),
            content: textOf(block.content),
            is_error: block.is_error === true,
          });
        }
      }
    }
    return results;
  }

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    toolResults,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * `pnpm demo --inspector`: the demo session with the Agent Host port on waits for a person. A
 * scripted approver (an Agent Host client over a real WebSocket, as the inspector page is)
 * answers the escalated npm install; without an answer the harness blocks it at the timeout.
 */
import { PassThrough } from "node:stream";
import { AgentHostClient, ROOT_URI, withToken, type SessionState, type SocketLike } from "@ahp/agent-host/client";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { runInspectorDemo, type InspectorDemoOptions } from "../src/inspector.js";

const collect = () => {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
};

/** Connects as an approver; the returned promise settles once it has answered the first pending tool confirmation with `answer`. */
async function approver(url: string, token: string, answer: Record<string, unknown>): Promise<{ answered: Promise<void> }> {
  const ws = new WebSocket(withToken(url, token));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  let done: () => void;
  const answered = new Promise<void>((resolve) => (done = resolve));
  const followed = new Set<string>();
  const client: AgentHostClient = new AgentHostClient(ws as unknown as SocketLike, {
    clientId: "scripted-approver",
    onnotification: (method, params) => {
      if (method !== "root/sessionAdded") return;
      const uri = (params as { summary: { resource: string } }).summary.resource;
      if (!followed.has(uri)) {
        followed.add(uri);
        void client.subscribe(uri).then(check);
      }
    },
    onenvelope: () => check(),
  });
  let sent = false;
  function check(): void {
    for (const uri of followed) {
      const pending = client.state.view<SessionState>(uri)?.inputNeeded?.find((r) => r.kind === "toolConfirmation");
      if (pending === undefined || sent) continue;
      sent = true;
      const toolCallId = (pending.toolCall as { toolCallId: string }).toolCallId;
      client.dispatch(pending.chat, { type: "chat/toolCallConfirmed", turnId: pending.turnId, toolCallId, ...answer });
      done();
    }
  }
  await client.initialize([ROOT_URI]);
  return { answered: answered.finally(() => client.close()) };
}

function demo(extra: Partial<InspectorDemoOptions>, answer?: Record<string, unknown>) {
  const out = collect();
  const err = collect();
  let approving: { answered: Promise<void> } | undefined;
  const result = runInspectorDemo({
    out: out.stream,
    err: err.stream,
    env: {},
    onReady: async ({ agentHostUrl, token, inspectorUrl }) => {
      expect(inspectorUrl).toBe(`${agentHostUrl.replace(/^ws:/, "http:")}inspector/?token=${token}`);
      if (answer !== undefined) approving = await approver(agentHostUrl, token, answer);
    },
    ...extra,
  });
  return { result, out, approving: () => approving };
}

describe("pnpm demo --inspector", () => {
  it("prints the inspector URL and waits for a person: an approval there makes the agent run npm install", async () => {
    const run = demo({}, { approved: true, confirmed: "user-action", selectedOptionId: "allow-once" });
    const result = await run.result;
    await run.approving()?.answered;
    expect(result.npmInstall).toMatchObject({ decision: "allow", metadata: { approved_by: "you" } });
    const text = run.out.text();
    expect(text).toMatch(/inspector: http:\/\/127\.0\.0\.1:\d+\/inspector\/\?token=[\w-]+/);
    expect(text).toMatch(/Waiting up to 300 s for you/);
    expect(text).toMatch(/The agent received allow for the npm install/);
  });

  it("an edit in the inspector reaches the agent as modify", async () => {
    const edited = JSON.stringify({ command: "npm install left-pad" });
    const run = demo({}, { approved: true, confirmed: "user-action", editedToolInput: edited });
    const result = await run.result;
    expect(result.npmInstall.decision).toBe("modify");
    expect((result.npmInstall as { modified_payload?: { arguments?: unknown } }).modified_payload?.arguments).toEqual({
      command: "npm install left-pad",
    });
  });

  it("serves the inspector page with the printed token, and without an answer blocks at the timeout", async () => {
    let page: { status: number; text: string } | undefined;
    const run = demo({
      approvalTimeoutMs: 50,
      onReady: async ({ inspectorUrl }) => {
        const res = await fetch(inspectorUrl);
        page = { status: res.status, text: await res.text() };
      },
    });
    const result = await run.result;
    expect(result.npmInstall).toMatchObject({ decision: "block" });
    expect((result.npmInstall as { reason?: string }).reason).toMatch(/No decision within/);
    expect(page?.status).toBe(200);
    expect(page?.text).toContain("AHP inspector");
    expect(run.out.text()).toMatch(/The agent received block/);
  });
});

/**
 * Approval webhooks (ADR 0146) against a real HTTP receiver on loopback: a POST for the hold and
 * one for its outcome, a `text` a Slack-style webhook shows, the inspector link without a token,
 * an HMAC-SHA256 signature that verifies over timestamp + body; failed deliveries retried; a
 * receiver that hangs or is gone neither delays nor changes the decision.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalEvent } from "../src/host/approvals.js";
import type { ChatState } from "../src/wire/types.js";
import { TOKENS, type Running } from "./helpers/harness.js";
import { hostPerTest, until } from "./helpers/host-per-test.js";
import { S1_CHAT } from "./helpers/scenario.js";

const SECRET = "whsec-test-0123456789";
const host = hostPerTest();
const receivers: http.Server[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) {
    r.closeAllConnections();
    await new Promise((resolve) => r.close(resolve));
  }
});

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver whose `answer` decides each request's fate: a status, or "hang" (never answers). */
async function receiver(answer: (n: number) => number | "hang"): Promise<{ url: string; got: Received[]; open: http.ServerResponse[] }> {
  const got: Received[] = [];
  const open: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const a = answer(got.length);
      if (a === "hang") open.push(res);
      else res.writeHead(a).end();
    });
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/B000/secretpath`, got, open };
}

function verifies(r: Received): boolean {
  const timestamp = String(r.headers["x-ahp-timestamp"]);
  const given = Buffer.from(String(r.headers["x-ahp-signature"]));
  const expected = Buffer.from(`v1=${createHmac("sha256", SECRET).update(`${timestamp}.${r.body}`).digest("hex")}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function approveFirst(run: Running, approvals: ApprovalEvent[]): Promise<void> {
  const hold = await until(() => approvals.find((e) => e.phase === "held"), "the hold");
  const alice = await run.client("approver-token", "A");
  await alice.api.initialize([S1_CHAT]);
  alice.api.dispatch(S1_CHAT, {
    type: "chat/toolCallConfirmed",
    turnId: run.host.state<ChatState>(S1_CHAT)!.activeTurn!.id,
    toolCallId: hold.id.slice(hold.id.indexOf("#") + 1),
    approved: true,
    confirmed: "user-action",
  });
}

describe("approval webhooks", () => {
  it("POSTs the hold and its outcome, signed, with a text line and the inspector link but no token", async () => {
    const hook = await receiver(() => 200);
    const approvals: ApprovalEvent[] = [];
    const run = await host.start({
      approvalWebhooks: [{ url: hook.url, secret: SECRET }],
      inspectorUrl: "http://127.0.0.1:8080/inspector/",
      onapproval: (e) => approvals.push(e),
      policy: () => ({ decision: "escalate", reason: "deploys need a maintainer", escalation_target: "maintainers" }),
    });
    const agent = await run.agent("s1");
    const decision = agent.send("pre_action", { tool_name: "deploy", arguments: { command: "deploy prod" } });
    await approveFirst(run, approvals);
    expect(await decision).toMatchObject({ decision: "allow" });
    await run.host.notificationsIdle();
    expect(hook.got).toHaveLength(2);
    for (const r of hook.got) {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(verifies(r)).toBe(true);
      expect(Math.abs(Number(r.headers["x-ahp-timestamp"]) - Date.now() / 1000)).toBeLessThan(600);
      for (const t of TOKENS) expect(r.body).not.toContain(t.token);
    }
    const [held, outcome] = hook.got.map((r) => JSON.parse(r.body) as Record<string, any>);
    expect(held!.event).toBe("approval.held");
    expect(held!.text).toMatch(
      /^Approval needed \(maintainers\): `deploy` in session s1 — deploys need a maintainer\. Waits \d+ s\. http:\/\/127\.0\.0\.1:8080\/inspector\/#session=/,
    );
    expect(held!.approval).toMatchObject({ phase: "held", subject: "deploy", target: "maintainers", sessionId: "s1" });
    expect(held!.inspector_url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/inspector\/#session=/);
    expect(outcome!.event).toBe("approval.resolved");
    expect(outcome!.text).toMatch(/^`deploy` in session s1: approved by alice\./);
    // A tampered body does not verify.
    expect(verifies({ ...hook.got[0]!, body: hook.got[0]!.body.replace("deploy", "deplay") })).toBe(false);
  });

  it("retries a failing receiver with backoff until it takes the message", async () => {
    const hook = await receiver((n) => (n <= 2 ? 503 : 200));
    const approvals: ApprovalEvent[] = [];
    const failures: Array<{ attempt: number; final: boolean; error: string }> = [];
    const run = await host.start({
      approvalWebhooks: [{ url: hook.url, secret: SECRET }],
      webhookDelivery: { backoffMs: 20, onfailure: (f) => failures.push(f) },
      onapproval: (e) => approvals.push(e),
    });
    const agent = await run.agent("s1");
    void agent.send("pre_action", { tool_name: "deploy", arguments: {} }).catch(() => undefined);
    await until(() => approvals.length === 1, "the hold");
    await run.host.notificationsIdle();
    expect(hook.got).toHaveLength(3);
    expect(new Set(hook.got.map((r) => r.body)).size).toBe(1);
    expect(hook.got.every(verifies)).toBe(true);
    expect(failures).toEqual([
      { url: "http://127.0.0.1:" + new URL(hook.url).port + "/…", attempt: 1, final: false, error: "HTTP 503" },
      { url: "http://127.0.0.1:" + new URL(hook.url).port + "/…", attempt: 2, final: false, error: "HTTP 503" },
    ]);
  });

  it("a receiver that hangs, or one that is gone, does not delay or change the decision", async () => {
    const hanging = await receiver(() => "hang");
    const gone = http.createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const goneUrl = `http://127.0.0.1:${(gone.address() as AddressInfo).port}/`;
    await new Promise((resolve) => gone.close(resolve));
    const approvals: ApprovalEvent[] = [];
    const run = await host.start({
      approvalWebhooks: [
        { url: hanging.url, secret: SECRET },
        { url: goneUrl, secret: SECRET },
      ],
      webhookDelivery: { requestTimeoutMs: 600_000, backoffMs: 60_000 },
      onapproval: (e) => approvals.push(e),
    });
    const agent = await run.agent("s1");
    const decision = agent.send("pre_action", { tool_name: "deploy", arguments: {} });
    await until(() => hanging.open.length === 1, "the hanging receiver to hold the first POST");
    await approveFirst(run, approvals);
    // The decision arrives while the receiver still holds the first POST unanswered.
    expect(await decision).toMatchObject({ decision: "allow", metadata: { approved_by: "alice" } });
    expect(hanging.open).toHaveLength(1);
    expect(hanging.open[0]!.writableEnded).toBe(false);
  });
});

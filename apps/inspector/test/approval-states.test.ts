/**
 * What a person sees of a held request, in headless chromium against a real `ahp serve
 * --agent-host`: the waiting card in words (no raw `pending-confirmation`, no "decided by
 * policy"), who the policy escalated to and a countdown that moves; then each end as what
 * happened (approved by alice, denied by alice, handed to the host's prompt, agent gone); and the
 * sign-in page for a missing or wrong token. A screenshot of each state goes to test-artifacts/.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { describeInBrowser } from "./browser-env.js";
import { ARTIFACTS, TOKENS, preAction } from "./support.js";

/** The default policy escalates a command it cannot analyse to `security`. */
const EVAL = { command: 'eval "$CMD"' };

async function shot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const card = (page: Page, status: string) => page.locator(`article.tool[data-status="${status}"]`).filter({ hasText: "eval" });

describeInBrowser("approval states in a browser", (env) => {
  it("a waiting card says who it waits for and counts down; Approve shows 'approved by alice'", async () => {
    const page = await env.open("approver");
    const agent = await env.agent("states-approve");
    const decision = preAction(agent, EVAL);
    const waiting = card(page, "pending-confirmation");
    await waiting.locator(".waiting-for").waitFor();
    await expect(waiting.locator(".status").textContent()).resolves.toBe("waiting for approval");
    await expect(waiting.locator('[data-target="security"]').textContent()).resolves.toBe("security");
    const text = (await waiting.textContent()) ?? "";
    expect(text).not.toContain("pending-confirmation");
    expect(text).not.toContain("decided by policy");
    const countdown = waiting.locator(".countdown");
    const first = (await countdown.textContent()) ?? "";
    expect(first).toMatch(/^answer within \d+:\d\d$/);
    // The countdown moves by itself (polled until it changed, never a fixed wait).
    await page.waitForFunction((was) => document.querySelector(".countdown")?.textContent !== was, first, { timeout: 30_000 });
    await shot(page, "waiting-card");
    await waiting.locator('button[data-action="approve"]').click();
    expect((await decision).decision).toBe("allow");
    await card(page, "running").locator('.outcome[data-outcome="approved"]').filter({ hasText: "approved by alice" }).waitFor();
    await shot(page, "approved");
  });

  it("Deny shows 'denied by alice' and the agent is blocked", async () => {
    const page = await env.open("approver");
    const agent = await env.agent("states-deny");
    const decision = preAction(agent, EVAL);
    await card(page, "pending-confirmation").locator('button[data-action="deny"]').click();
    expect((await decision).decision).toBe("block");
    const denied = card(page, "cancelled");
    await denied.locator('.outcome[data-outcome="denied"]').filter({ hasText: "denied by alice" }).waitFor();
    await expect(denied.locator(".status").textContent()).resolves.toBe("not run");
    await shot(page, "denied");
  });

  it("nobody answers before the client's limit: the card says it was handed to the host's prompt", async () => {
    const page = await env.open("viewer");
    const agent = await env.agent("states-ask");
    const decision = agent.send(
      "pre_action",
      { action_type: "tool_call", tool_name: "bash", arguments: EVAL },
      { metadata: { ahp_wait: { max_ms: 4_000, on_timeout: "ask" } } },
    );
    expect(await decision).toMatchObject({ decision: "escalate", reason: expect.stringContaining("handed to the host's prompt") });
    await card(page, "cancelled")
      .locator('.outcome[data-outcome="handed-to-host"]')
      .filter({ hasText: "handed to the host's own prompt" })
      .waitFor();
    await shot(page, "handed-to-host");
  });

  it("the agent goes away before an answer: the card says so, not that anyone decided", async () => {
    const page = await env.open("approver");
    const agent = await env.agent("states-gone");
    void preAction(agent, EVAL).catch(() => undefined);
    await card(page, "pending-confirmation").waitFor();
    await agent.close();
    await card(page, "cancelled").locator('.outcome[data-outcome="agent-gone"]').filter({ hasText: "the agent went away" }).waitFor();
    await shot(page, "agent-gone");
  });

  it("a missing or wrong token gets a readable sign-in page that says how to get a link; the API keeps its JSON 401", async () => {
    const context = await env.browser.newContext();
    try {
      const page = await context.newPage();
      const missing = await page.goto(`${env.served.httpUrl}inspector/`);
      expect(missing?.status()).toBe(401);
      await page.locator('#sign-in[data-reason="missing"]').waitFor();
      await expect(page.locator("h1").textContent()).resolves.toBe("Sign-in needed");
      await expect(page.locator("main").textContent()).resolves.toContain("Ask the person who runs the harness for an inspector link");
      await shot(page, "sign-in-missing");
      const wrong = "wrong-token-0123456789";
      await page.goto(`${env.served.httpUrl}inspector/?token=${wrong}`);
      await page.locator('#sign-in[data-reason="invalid"]').waitFor();
      const html = await page.content();
      expect(html).not.toContain(wrong);
      for (const t of Object.values(TOKENS)) expect(html).not.toContain(t);
      await shot(page, "sign-in-invalid");
    } finally {
      await context.close();
    }
    const api = await fetch(`${env.served.httpUrl}inspector/whoami.json`, { headers: { accept: "application/json" } });
    expect(api.status).toBe(401);
    expect(await api.json()).toEqual({ error: "unauthorized" });
  });
});

describeInBrowser("the harness stops", (env) => {
  it("the page says the harness stopped instead of reconnecting forever", async () => {
    const page = await env.open("approver", undefined, true);
    env.served.child.kill("SIGTERM");
    await page.locator('#link[data-status="stopped"]').filter({ hasText: "harness stopped" }).waitFor({ timeout: 60_000 });
    await shot(page, "harness-stopped");
  });
});

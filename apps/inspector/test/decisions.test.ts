/**
 * Who decided, in a real browser: an approver answers a held tool call or a held confirmation
 * on their page, and every other page (another approver's, a viewer's) shows who decided and
 * what: at once, after its link resumes with replay, and after it is loaded again.
 * Confirmations are answered from the page (Approve / Reject with an optional typed reason) and
 * the agent receives the harness decision; a viewer sees the request but no controls.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { AhpClient } from "@ahp/core";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { describeInBrowser } from "./browser-env.js";
import { ARTIFACTS, NPM_INSTALL, TOKENS, preAction } from "./support.js";

function confirm(agent: AhpClient, sessionId: string, message: string) {
  return agent.send("confirmation", { session_id: sessionId, confirmation_type: "user_confirm", message });
}

const toolCard = (page: Page, status: string) =>
  page.locator(`article.tool[data-status="${status}"]`).filter({ hasText: "npm install" }).last();
const inputCard = (page: Page, status: string, text: string) =>
  page.locator(`article.input-request[data-status="${status}"]`).filter({ hasText: text });

describeInBrowser("who decided, seen from every page", (env) => {
  /**
   * Loads the page again in the same tab, from nothing but fresh snapshots. (The server needs the
   * token on the page's own request, and the page removed it from the address bar, so a reload
   * comes back through the token link.)
   */
  async function reopen(page: Page, role: keyof typeof TOKENS): Promise<void> {
    await page.goto(`${env.proxy.url}inspector/?token=${TOKENS[role]}`);
    await page.locator('#link[data-status="live"]').waitFor();
  }

  it("an approval and a denial show 'approved by alice' and 'denied by bob' on the other pages, also after a reload", async () => {
    const [alice, bob, vera] = [await env.open("approver"), await env.open("approver2"), await env.open("viewer")];
    const agent = await env.agent("browser-who");

    const first = preAction(agent, NPM_INSTALL);
    await toolCard(alice, "pending-confirmation").locator('button[data-action="approve"]').click();
    expect((await first).decision).toBe("allow");
    for (const page of [bob, vera])
      await toolCard(page, "running").locator('.outcome[data-outcome="approved"]').filter({ hasText: "approved by alice" }).waitFor();

    const second = preAction(agent, NPM_INSTALL);
    await toolCard(bob, "pending-confirmation").locator('button[data-action="deny"]').click();
    expect(await second).toMatchObject({ decision: "block", reason: "Denied by bob" });
    for (const page of [alice, vera])
      await toolCard(page, "cancelled").locator('.outcome[data-outcome="denied"]').filter({ hasText: "denied by bob" }).waitFor();
    // The reason "Denied by bob" only repeats the outcome line: it is not shown twice.
    expect(await toolCard(vera, "cancelled").locator(".reason").count()).toBe(0);

    // A reload rebuilds the page from fresh snapshots: the same lines are there.
    await reopen(vera, "viewer");
    await toolCard(vera, "running").locator(".outcome").filter({ hasText: "approved by alice" }).waitFor();
    await toolCard(vera, "cancelled").locator(".outcome").filter({ hasText: "denied by bob" }).waitFor();
    expect(await vera.locator("button[data-action]").count()).toBe(0);
  });

  it("a page whose link was down while alice decided shows 'approved by alice' once it has resumed with replay", async () => {
    const vera = await env.open("viewer");
    const alice = await env.open("approver", undefined, true);
    const agent = await env.agent("browser-who-resume");
    const decision = preAction(agent, NPM_INSTALL);
    await toolCard(vera, "pending-confirmation").locator(".waiting").waitFor();
    env.proxy.cut();
    await vera.locator('#link[data-status="reconnecting"]').waitFor();
    await toolCard(alice, "pending-confirmation").locator('button[data-action="approve"]').click();
    expect((await decision).decision).toBe("allow");
    env.proxy.restore();
    await vera.locator('#link[data-status="live"][data-resync="replay"]').waitFor();
    await toolCard(vera, "running").locator('.outcome[data-outcome="approved"]').filter({ hasText: "approved by alice" }).waitFor();
  });

  it("a confirmation is answered from the page: the viewer has no controls, alice rejects with a reason, then approves the next one", async () => {
    const [alice, vera] = [await env.open("approver"), await env.open("viewer")];
    const agent = await env.agent("browser-confirm");

    const first = confirm(agent, "browser-confirm", "Deploy v2 to production?");
    const waiting = inputCard(vera, "pending", "Deploy v2 to production?");
    await waiting.locator(".waiting").waitFor();
    expect(await vera.locator("button[data-action], input[data-question]").count()).toBe(0);

    const card = inputCard(alice, "pending", "Deploy v2 to production?");
    await card.locator('button[data-action="answer"][data-option="approve"]').waitFor();
    await card.locator('input[data-question="reason"]').fill("not on a Friday");
    await mkdir(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, "confirmation-view.png");
    await alice.screenshot({ path: shot, fullPage: true });
    console.log(`inspector screenshot (confirmation view): ${shot}`);
    await card.locator('button[data-action="answer"][data-option="reject"]').click();
    expect(await first).toEqual({ decision: "reject", reason: "not on a Friday (rejected by alice)" });
    for (const page of [alice, vera]) {
      const answered = inputCard(page, "answered", "Deploy v2 to production?");
      await answered.locator('.outcome[data-outcome="rejected"]').filter({ hasText: "rejected by alice" }).waitFor();
      await expect(answered.locator(".reason").textContent()).resolves.toBe("not on a Friday");
    }

    const second = confirm(agent, "browser-confirm", "Run the migration?");
    await inputCard(alice, "pending", "Run the migration?").locator('button[data-option="approve"]').click();
    expect(await second).toEqual({ decision: "approve" });
    await inputCard(vera, "answered", "Run the migration?")
      .locator('.outcome[data-outcome="approved"]')
      .filter({ hasText: "approved by alice" })
      .waitFor();

    await reopen(vera, "viewer");
    await inputCard(vera, "answered", "Deploy v2 to production?").locator(".outcome").filter({ hasText: "rejected by alice" }).waitFor();
    await inputCard(vera, "answered", "Run the migration?").locator(".outcome").filter({ hasText: "approved by alice" }).waitFor();
    // The outcome records are shown on the cards, not repeated as notices.
    expect(await vera.locator(".notice").filter({ hasText: "Confirmation" }).count()).toBe(0);
  });
});

describeInBrowser(
  "held requests that nobody answers",
  (env) => {
    it("a tool call and a confirmation left alone fail closed and every page says 'timed out'", async () => {
      const [alice, vera] = [await env.open("approver"), await env.open("viewer")];
      const agent = await env.agent("browser-timeout");
      const tool = preAction(agent, NPM_INSTALL);
      await toolCard(vera, "pending-confirmation").locator(".waiting").waitFor();
      expect(await tool).toMatchObject({ decision: "block", reason: "No decision within 2 s" });
      for (const page of [alice, vera]) {
        const card = toolCard(page, "cancelled");
        await card.locator('.outcome[data-outcome="timed-out"]').filter({ hasText: "timed out" }).waitFor();
        await expect(card.locator(".reason").textContent()).resolves.toBe("No decision within 2 s");
      }

      const question = confirm(agent, "browser-timeout", "Rotate the keys?");
      await inputCard(alice, "pending", "Rotate the keys?").locator('button[data-option="approve"]').waitFor();
      expect(await question).toEqual({ decision: "reject", reason: "No decision within 2 s" });
      for (const page of [alice, vera])
        await inputCard(page, "answered", "Rotate the keys?").locator('.outcome[data-outcome="timed-out"]').waitFor();
      expect(await alice.locator("button[data-action]").count()).toBe(0);
    });
  },
  { approvalTimeoutMs: 2000 },
);

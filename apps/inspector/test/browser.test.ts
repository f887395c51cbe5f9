/**
 * The inspector in a real browser (headless Debian chromium, driven by playwright-core) against a
 * real `ahp serve --agent-host` child process and a scripted agent whose escalated `npm install`
 * waits for a human. Under CI=true these tests fail when chromium is missing; elsewhere they skip.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { describeInBrowser } from "./browser-env.js";
import { ARTIFACTS, NPM_INSTALL, TOKENS, preAction } from "./support.js";

describeInBrowser("inspector in a browser", (env) => {
  const open = env.open;

  async function escalate(sessionId: string) {
    const a = await env.agent(sessionId);
    return { agent: a, decision: preAction(a, NPM_INSTALL) };
  }

  /** The card of the pending escalation (there is one at a time in these tests). */
  const pendingCard = (page: Page) => page.locator('article.tool[data-status="pending-confirmation"]').filter({ hasText: "npm install" });

  it("shows the escalated npm install with its decision, reason and rule; Approve makes the agent receive allow", async () => {
    const page = await open("approver");
    expect(page.url()).not.toContain(TOKENS.approver);
    const { decision } = await escalate("browser-approve");
    const card = pendingCard(page);
    await card.waitFor();
    await expect(card.locator('[data-decision="escalate"]').textContent()).resolves.toBe("escalate");
    await expect(card.locator(".rule").textContent()).resolves.toContain("escalate-unknown-package-source");
    await expect(card.locator(".input").textContent()).resolves.toContain("registry.example.net");
    await expect(page.locator("body").getAttribute("data-role")).resolves.toBe("approver");
    await mkdir(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, "approval-view.png");
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`inspector screenshot (approval view): ${shot}`);
    await card.locator('button[data-action="approve"]').click();
    const d = await decision;
    expect(d.decision).toBe("allow");
    // The page then shows the human's decision and no buttons any more.
    await page
      .locator('article.tool[data-status="running"]')
      .filter({ hasText: "npm install" })
      .locator('.outcome[data-outcome="approved"]')
      .filter({ hasText: "approved by alice" })
      .waitFor();
    expect(await page.locator("button[data-action]").count()).toBe(0);
  });

  it("Deny makes the agent receive block", async () => {
    const page = await open("approver");
    const { decision } = await escalate("browser-deny");
    await pendingCard(page).locator('button[data-action="deny"]').click();
    const d = await decision;
    expect(d.decision).toBe("block");
    expect(d.reason).toMatch(/alice/);
  });

  it("Edit and approve makes the agent receive modify with the edited input", async () => {
    const page = await open("approver");
    const { decision } = await escalate("browser-edit");
    const card = pendingCard(page);
    await card.locator('button[data-action="edit"]').click();
    const area = card.locator("textarea");
    expect(JSON.parse(await area.inputValue())).toEqual(NPM_INSTALL);
    await area.fill(JSON.stringify({ command: "npm install left-pad" }, null, 2));
    await card.locator('button[data-action="submit-edit"]').click();
    const d = await decision;
    expect(d.decision).toBe("modify");
    expect(d.modified_payload?.arguments).toEqual({ command: "npm install left-pad" });
  });

  it("a viewer sees the pending escalation but no buttons", async () => {
    const viewer = await open("viewer");
    const { decision } = await escalate("browser-viewer");
    const card = pendingCard(viewer);
    await card.locator(".waiting").waitFor();
    await expect(viewer.locator("body").getAttribute("data-role")).resolves.toBe("viewer");
    expect(await viewer.locator("button[data-action]").count()).toBe(0);
    // An approver elsewhere answers; the viewer's page follows.
    const approver = await open("approver");
    await pendingCard(approver).locator('button[data-action="approve"]').click();
    expect((await decision).decision).toBe("allow");
    await viewer.locator('article.tool[data-status="running"]').filter({ hasText: "npm install" }).waitFor();
    expect(await viewer.locator(".waiting").count()).toBe(0);
  });

  it("recovers with replay when the socket is cut, showing that it is reconnecting meanwhile", async () => {
    const page = await open("approver");
    const a = await env.agent("browser-reconnect");
    expect((await preAction(a, { path: "README.md" }, "read_file")).decision).toBe("allow");
    await page.locator("article.tool").filter({ hasText: "README.md" }).waitFor();

    env.proxy.cut();
    await page.locator('#link[data-status="reconnecting"]').filter({ hasText: "reconnecting" }).waitFor();
    // While the page is away, the agent is escalated on the session the page follows.
    const decision = preAction(a, NPM_INSTALL);
    env.proxy.restore();
    await page.locator('#link[data-status="live"][data-resync="replay"]').waitFor();
    await expect(page.locator("#link").textContent()).resolves.toMatch(/replayed/);
    await pendingCard(page).locator('button[data-action="approve"]').click();
    expect((await decision).decision).toBe("allow");
  });

  it("renders the approval view in a phone-sized window", async () => {
    const page = await open("approver", { width: 390, height: 844 });
    const { decision } = await escalate("browser-phone");
    const approve = pendingCard(page).locator('button[data-action="approve"]');
    await approve.waitFor();
    // The card may be rendered again while later actions arrive (the button is then a new
    // element): measure once it stays attached.
    let box: Awaited<ReturnType<typeof approve.boundingBox>> = null;
    for (let attempt = 0; box === null && attempt < 20; attempt++) {
      try {
        await approve.scrollIntoViewIfNeeded({ timeout: 2000 });
        box = await approve.boundingBox({ timeout: 2000 });
      } catch (error) {
        if (!/not attached|detached/i.test(String(error))) throw error;
        await page.waitForTimeout(100);
      }
    }
    expect(box).not.toBeNull();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    expect(box!.height).toBeGreaterThanOrEqual(32);
    // Nothing wider than the screen: no sideways scrolling of the page.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await mkdir(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, "approval-view-phone.png");
    await page.screenshot({ path: shot });
    console.log(`inspector screenshot (phone): ${shot}`);
    await approve.click();
    expect((await decision).decision).toBe("allow");
  });
});

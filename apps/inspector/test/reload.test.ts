/**
 * Reloading the inspector in a real browser (headless Debian chromium via playwright-core) against
 * a real `ahp serve --agent-host`: the page cookie hands out the page again, the token the page
 * kept in the tab's sessionStorage reconnects it; a new tab with the cookie alone is told to open
 * the token link, and the cookie is never readable by the page.
 */
import { expect, it } from "vitest";
import { describeInBrowser } from "./browser-env.js";
import { TOKENS, preAction } from "./support.js";

describeInBrowser("inspector reload", (env) => {
  it("a reload of the tab that opened the token link is served and reconnects, showing the sessions again", async () => {
    const page = await env.open("approver", undefined, true);
    expect(page.url()).not.toContain(TOKENS.approver);
    const a = await env.agent("reload-1");
    expect((await preAction(a, { path: "README.md" }, "read_file")).decision).toBe("allow");
    await page.locator("article.tool").filter({ hasText: "README.md" }).waitFor();
    const sessions = await page.locator("button.session").allTextContents();
    expect(sessions.length).toBeGreaterThan(0);

    const cookies = await page.context().cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: "ahp_inspector", httpOnly: true, sameSite: "Strict", path: "/inspector/" });
    expect(cookies[0]!.value).not.toContain(TOKENS.approver);
    // HttpOnly: the page's scripts cannot read it.
    expect(await page.evaluate(() => document.cookie)).toBe("");

    const response = await page.reload();
    expect(response?.status()).toBe(200);
    expect(page.url()).not.toContain("token");
    await page.locator('#link[data-status="live"]').waitFor();
    await expect(page.locator("body").getAttribute("data-role")).resolves.toBe("approver");
    await page.locator("article.tool").filter({ hasText: "README.md" }).waitFor();
    expect(await page.locator("button.session").allTextContents()).toEqual(sessions);
  });

  it("a new tab with only the cookie (no sessionStorage) is asked for the token link, and the API stays closed to it", async () => {
    const first = await env.open("approver", undefined, true);
    const cookies = await first.context().cookies();
    expect(cookies).toHaveLength(1);

    const context = await env.browser.newContext();
    try {
      await context.addCookies(cookies);
      const page = await context.newPage();
      const response = await page.goto(`${env.served.httpUrl}inspector/`);
      expect(response?.status()).toBe(200);
      const message = page.locator('#fatal[data-reason="no-token"]');
      await message.waitFor();
      await expect(message.textContent()).resolves.toMatch(/open the inspector's token link/);
      await expect(page.locator("#link").getAttribute("data-status")).resolves.toBe("closed");
      // The cookie is sent with same-origin requests under /inspector/, yet opens no route.
      const whoami = await page.evaluate(async () => (await fetch("whoami.json", { cache: "no-store" })).status);
      expect(whoami).toBe(401);
    } finally {
      await context.close();
    }

    // Without the cookie the page is not handed out at all.
    const bare = await env.browser.newContext();
    try {
      const page = await bare.newPage();
      expect((await page.goto(`${env.served.httpUrl}inspector/`))?.status()).toBe(401);
    } finally {
      await bare.close();
    }
  });
});

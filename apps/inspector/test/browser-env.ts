/**
 * The setup every browser test file shares: one `ahp serve --agent-host` child process, one
 * headless chromium, a cuttable proxy in front of the Agent Host port, pages opened with a
 * role's token, and scripted agents, all closed after each test (pages, agents) or after the
 * file (the rest). Under CI=true a missing chromium fails the file; elsewhere it skips.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AhpClient } from "@ahp/core";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import { HAVE_CHROMIUM, IN_CI, INSTALL_HINT, TOKENS, agent, cuttableProxy, launchChromium, serve, type Served } from "./support.js";

export interface InspectorEnv {
  served: Served;
  /** The temporary folder of this file's harness (token file, config, and whatever `serveArgs` put there). */
  dir: string;
  browser: Browser;
  proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  /**
   * Opens the inspector with `role`'s token and waits until its link is live; through the
   * cuttable proxy unless `direct`.
   */
  open: (role: keyof typeof TOKENS, viewport?: { width: number; height: number }, direct?: boolean) => Promise<Page>;
  /** A scripted agent on its own session, closed after the test. */
  agent: (sessionId: string) => Promise<AhpClient>;
}

/** `describe` for browser tests: runs `body` with a live {@link InspectorEnv} when chromium is there. */
export function describeInBrowser(
  name: string,
  body: (env: InspectorEnv) => void,
  options: { approvalTimeoutMs?: number; serveArgs?: (dir: string) => Promise<string[]> } = {},
): void {
  if (!HAVE_CHROMIUM && !IN_CI) console.warn(`skipping "${name}": ${INSTALL_HINT}`);
  describe.runIf(IN_CI && !HAVE_CHROMIUM)(`${name} (CI)`, () => {
    it("has chromium to run the browser tests", () => {
      throw new Error(INSTALL_HINT);
    });
  });
  describe.runIf(HAVE_CHROMIUM)(name, () => {
    let dir: string;
    const agents: AhpClient[] = [];
    const pages: Page[] = [];
    const env = {
      async open(role, viewport = { width: 1100, height: 800 }, direct = false) {
        const context = await env.browser.newContext({ viewport });
        // Generous limits for every wait on the page: a busy machine only makes them slower.
        context.setDefaultTimeout(120_000);
        const page = await context.newPage();
        pages.push(page);
        await page.goto(`${direct ? env.served.httpUrl : env.proxy.url}inspector/?token=${TOKENS[role]}`);
        await page.locator('#link[data-status="live"]').waitFor();
        return page;
      },
      async agent(sessionId) {
        const a = await agent(env.served.ws, sessionId);
        agents.push(a);
        return a;
      },
    } as InspectorEnv;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "ahp-inspector-"));
      env.dir = dir;
      const extra = (await options.serveArgs?.(dir)) ?? [];
      [env.served, env.browser] = await Promise.all([serve(dir, extra, options.approvalTimeoutMs), launchChromium()]);
      const target = new URL(env.served.httpUrl);
      env.proxy = await cuttableProxy({ host: target.hostname, port: Number(target.port) });
    });
    afterEach(async () => {
      for (const p of pages.splice(0)) await p.context().close();
      for (const a of agents.splice(0)) await a.close().catch(() => undefined);
    });
    afterAll(async () => {
      await env.browser?.close();
      await env.proxy?.close();
      env.served?.child.kill("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    });
    body(env);
  });
}

/**
 * The session list and links to one session, in headless chromium against a real `ahp serve
 * --agent-host` (with an approval webhook receiver and the audit log on):
 * - active sessions on top; ended ones collapsed into "N ended sessions", the empty ones (no
 *   turn) left out unless asked for; a later run that reused a session id is its own entry;
 * - the header under a session's title says how its turn stands, not the session's first activity;
 * - the webhook's link (`#session=`) opens its session on load, and a changed fragment opens
 *   another one, also an ended one; a link to a session that is not there says so;
 * - an approval in the page is recorded in the audit log with a reason naming the approver.
 * A screenshot of each state goes to test-artifacts/.
 */
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { AgentHost } from "@ahp/agent-host";
import type { RunStatus } from "@ahp/core";
import type { Page } from "playwright-core";
import { afterAll, expect, it } from "vitest";
import { describeInBrowser, type InspectorEnv } from "./browser-env.js";
import { ARTIFACTS, TOKENS, preAction } from "./support.js";

/** The default policy escalates a command it cannot analyse to `security`. */
const EVAL = { command: 'eval "$CMD"' };
const LS = { command: "ls" };

async function shot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Polls until `check` holds (or fails after a generous deadline): never a fixed sleep. */
async function until<T>(check: () => Promise<T | undefined | false>, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A local webhook receiver: keeps every JSON body it is sent. */
const received: Array<{ event?: string; text?: string; inspector_url?: string; approval?: { sessionUri?: string } }> = [];
let receiver: Server | undefined;
async function startReceiver(): Promise<string> {
  receiver = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      try {
        received.push(JSON.parse(body) as (typeof received)[number]);
      } catch {
        // not JSON: not ours
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}
afterAll(() => new Promise<void>((resolve) => (receiver === undefined ? resolve() : receiver.close(() => resolve()))));

const auditLog = (env: InspectorEnv) => join(env.dir, "audit.log");

async function serveArgs(dir: string): Promise<string[]> {
  const hook = await startReceiver();
  const secret = join(dir, "webhook.secret");
  await writeFile(secret, "webhook-secret-0123456789\n");
  await chmod(secret, 0o600);
  const key = join(dir, "audit.key");
  await writeFile(key, "5a".repeat(32));
  await chmod(key, 0o600);
  return ["--approval-webhook", hook, "--approval-webhook-secret-file", secret, "--audit", join(dir, "audit.log"), "--audit-key-file", key];
}

const uriOf = (sessionId: string) => AgentHost.uris(sessionId).session;
const sessionButton = (page: Page, sessionId: string) => page.locator(`nav.sessions button[data-session="${uriOf(sessionId)}"]`);

describeInBrowser(
  "the session list and session links",
  (env) => {
    it("active sessions on top; ended ones collapsed into 'N ended sessions'; empty ended ones only on request", async () => {
      const active = await env.agent("list-active");
      await preAction(active, LS);
      const ended = await env.agent("list-ended");
      await preAction(ended, LS);
      await ended.send("session_end", {});
      // A session with no turn: the agent connected and ended without doing anything.
      const empty = await env.agent("list-empty");
      await empty.send("session_end", {});

      const page = await env.open("viewer");
      await sessionButton(page, "list-active").waitFor();
      // The active session is listed outside the group; the group is closed and counts only the non-empty one.
      await expect(page.locator("nav.sessions > button.session").count()).resolves.toBe(1);
      const group = page.locator("details.ended-sessions");
      await expect(group.locator("summary").textContent()).resolves.toBe("1 ended session");
      await expect(group.evaluate((d) => (d as HTMLDetailsElement).open)).resolves.toBe(false);
      await expect(sessionButton(page, "list-ended").isVisible()).resolves.toBe(false);
      await expect(sessionButton(page, "list-empty").count()).resolves.toBe(0);
      await shot(page, "sessions-ended-collapsed");

      await group.locator("summary").click();
      await sessionButton(page, "list-ended").waitFor({ state: "visible" });
      await expect(sessionButton(page, "list-ended").getAttribute("data-lifecycle")).resolves.toBe("ended");
      await expect(sessionButton(page, "list-empty").count()).resolves.toBe(0);
      await group.locator('button[data-action="show-empty"]').click();
      await sessionButton(page, "list-empty").waitFor({ state: "visible" });
      await expect(sessionButton(page, "list-empty").textContent()).resolves.toContain("ended · empty");
      await shot(page, "sessions-ended-expanded");
      // The group stays open across the page's redraws (new activity elsewhere).
      await preAction(active, LS);
      await expect(sessionButton(page, "list-ended").isVisible()).resolves.toBe(true);
    });

    it("the session header follows the turn: Started before it, the run's activity while it runs, how it ended after it", async () => {
      const agent = await env.agent("header-turn");
      await agent.send("session_start", {});
      const page = await env.open("viewer");
      await sessionButton(page, "header-turn").click();
      const header = page.locator(`main[data-session="${uriOf("header-turn")}"] p.session-activity`);
      await header.filter({ hasText: "Started" }).waitFor();
      const run = (status: RunStatus) => ({
        run_id: "run-1",
        session_id: "header-turn",
        status,
        prompt: "do it",
        updated_at: new Date().toISOString(),
      });
      await agent.send("run_lifecycle", run("executing"));
      await header.filter({ hasText: "Executing" }).waitFor();
      await agent.send("run_lifecycle", run("completed"));
      await header.filter({ hasText: "turn complete" }).waitFor();
      await expect(header.textContent()).resolves.not.toContain("Started");
      await shot(page, "session-header-turn-complete");
    });

    it("a later run that reused an ended session's id is an entry of its own, shown on top while the old one is in the group", async () => {
      const first = await env.agent("list-rerun");
      await preAction(first, LS);
      await first.send("session_end", {});
      await first.close();
      const second = await env.agent("list-rerun");
      await preAction(second, LS);
      const page = await env.open("viewer");
      const runs = page.locator("nav.sessions button.session").filter({ hasText: "list-rerun" });
      await until(async () => (await runs.count()) === 2 || undefined, "both runs listed");
      await expect(page.locator("nav.sessions > button.session").filter({ hasText: "(run 2)" }).count()).resolves.toBe(1);
      await expect(page.locator("details.ended-sessions button.session").filter({ hasText: "list-rerun" }).count()).resolves.toBe(1);
    });

    it("the webhook's #session= link opens its session on load; a changed fragment opens another, also an ended one", async () => {
      const target = await env.agent("link-target");
      const decision = preAction(target, EVAL);
      // The notification of the hold carries the inspector link with the session (never the token).
      const held = await until(
        async () => received.find((b) => b.event === "approval.held" && b.approval?.sessionUri === uriOf("link-target")),
        "the held webhook",
      );
      const link = held.inspector_url!;
      expect(link).toContain("#session=");
      for (const t of Object.values(TOKENS)) expect(JSON.stringify(held)).not.toContain(t);
      // A newer session, which the page would pick by itself if the link were ignored.
      const other = await env.agent("link-other");
      await preAction(other, LS);
      await other.send("session_end", {});

      // The approver adds their token to the link, as the sign-in page says.
      const url = new URL(link);
      const proxied = new URL(`${env.proxy.url}inspector/`);
      proxied.search = `?token=${TOKENS.approver}`;
      proxied.hash = url.hash;
      const context = await env.browser.newContext({ viewport: { width: 1100, height: 800 } });
      context.setDefaultTimeout(120_000);
      try {
        const page = await context.newPage();
        await page.goto(proxied.toString());
        await page.locator(`main[data-session="${uriOf("link-target")}"]`).waitFor();
        // The token left the address bar; the session link stayed.
        expect(page.url()).not.toContain(TOKENS.approver);
        expect(page.url()).toContain("#session=");
        await page.locator('article.tool[data-status="pending-confirmation"] button[data-action="approve"]').waitFor();
        // A background tab tells by its title that a session waits for a person.
        await expect(page.title()).resolves.toBe("(1) approval needed · AHP inspector");
        await shot(page, "session-link-opened");

        // Another link in the same tab: by agent session id, to an ended session (its group opens).
        await page.evaluate(() => (location.hash = "#session=link-other"));
        await page.locator(`main[data-session="${uriOf("link-other")}"]`).waitFor();
        await sessionButton(page, "link-other").waitFor({ state: "visible" });
        await expect(page.locator("details.ended-sessions").evaluate((d) => (d as HTMLDetailsElement).open)).resolves.toBe(true);
        await shot(page, "session-link-ended");

        // A link to a session that is not there says so, and the page keeps what it showed.
        await page.evaluate(() => (location.hash = "#session=no-such-session"));
        await page.locator(".missing-link").waitFor();
        await expect(page.locator("main").getAttribute("data-session")).resolves.toBe(uriOf("link-other"));
        await shot(page, "session-link-missing");

        // Back to the held call: approving it is recorded in the audit log with who approved.
        await page.evaluate((uri) => (location.hash = `#session=${encodeURIComponent(uri)}`), uriOf("link-target"));
        await page.locator('article.tool[data-status="pending-confirmation"] button[data-action="approve"]').click();
        expect((await decision).decision).toBe("allow");
        await page.waitForFunction(() => document.title === "AHP inspector", undefined, { timeout: 60_000 });
      } finally {
        await context.close();
      }
      const record = await until(async () => {
        const lines = (await readFile(auditLog(env), "utf8").catch(() => "")).split("\n").filter((l) => l.length > 0);
        return lines
          .map((l) => JSON.parse(l) as { kind?: string; session?: string; event_type?: string; decision?: string; reason?: string })
          .find((r) => r.kind === "decision" && r.session === "link-target" && r.event_type === "pre_action");
      }, "the audit record of the approved call");
      expect(record).toMatchObject({ decision: "allow", reason: "Approved by alice" });
      const resolved = await until(
        async () => received.find((b) => b.event === "approval.resolved" && b.approval?.sessionUri === uriOf("link-target")),
        "the resolved webhook",
      );
      expect(resolved.text).toContain("alice");
    });
  },
  { serveArgs },
);

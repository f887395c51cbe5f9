/**
 * End to end with the real Claude Code CLI: its model API stubbed on 127.0.0.1, the hook settings
 * `ahp hook install claude-code --write` produces, `ahp serve --agent-host` (the built CLI) and the
 * inspector in headless chromium. The scripted model runs a command the default policy escalates
 * (`eval …` that would create a file in the test's temp dir). A person approves after about 20 s:
 * the command runs. A person denies: it does not. Nobody answers: the hook hands the call to
 * Claude Code's own prompt (non-interactive here, so it is not run) and the command does not run.
 * In each case the audit log and the inspector say the same as what happened.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnthropicStub, startAnthropicStub } from "../src/anthropic-stub.js";
import { runClaude } from "../src/claude.js";
import { claudeCliPath, ensureHost, HOSTS } from "../src/hosts.js";
import { launchBrowser, type Browser } from "./browser.js";
import { BIN, card, shot, startServe, type Serve } from "./serve.js";

// Beside the inspector's own screenshots (git-ignored there).
const ARTIFACTS = fileURLToPath(new URL("../../../apps/inspector/test-artifacts/real-claude/", import.meta.url));

let serve: Serve;
let browser: Browser;
let cli: string[];

beforeAll(async () => {
  cli = claudeCliPath(await ensureHost("claudeCode"));
  serve = await startServe({ tempPrefix: "ahp-approval-e2e-" });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
});

/** A Claude Code home whose settings hold what our installer writes, pointing at the harness. */
async function claudeHome(name: string): Promise<string> {
  const home = join(serve.dir, `home-${name}`);
  await mkdir(home, { recursive: true });
  const r = spawnSync(
    process.execPath,
    [
      BIN,
      "hook",
      "install",
      "claude-code",
      "--write",
      "--command",
      `${process.execPath} ${BIN} hook`,
      "--connect",
      `unix:${serve.socket}`,
      "--fail-closed",
      "--host-version",
      HOSTS.claudeCode.version,
    ],
    { env: { ...process.env, HOME: home }, encoding: "utf8" },
  );
  expect(r.status, r.stderr).toBe(0);
  expect(existsSync(join(home, ".claude", "settings.json"))).toBe(true);
  return home;
}

/** Runs Claude Code once on a scripted `eval` that would create `marker`; returns the run and the stub. */
async function runEscalated(
  name: string,
): Promise<{ run: Promise<Awaited<ReturnType<typeof runClaude>>>; marker: string; stub: AnthropicStub }> {
  const cwd = join(serve.dir, `cwd-${name}`);
  await mkdir(cwd, { recursive: true });
  const marker = join(cwd, "ran.txt");
  const stub = await startAnthropicStub({ steps: [{ tool_use: { name: "Bash", input: { command: `eval "touch ${marker}"` } } }] });
  const home = await claudeHome(name);
  const run = runClaude({ cli, cwd, home, baseUrl: stub.url, prompt: "run it", timeoutMs: 180_000 });
  return { run, marker, stub };
}

describe("real Claude Code, the hook, ahp serve --agent-host and a person in the inspector", () => {
  it("a person approves after about 20 s: the command runs, and the record says approved by alice", async () => {
    const page = await serve.inspector(browser);
    const { run, marker, stub } = await runEscalated("approve");
    try {
      const waiting = card(page, "pending-confirmation");
      await waiting.waitFor({ timeout: 120_000 });
      // The person reads the request for a while before deciding (the scenario, not a synchronisation).
      await new Promise((resolve) => setTimeout(resolve, 20_000));
      expect(existsSync(marker)).toBe(false);
      await waiting.locator('button[data-action="approve"]').click();
      const done = await run;
      expect(done.timedOut, done.stderr).toBe(false);
      expect(existsSync(marker), `${done.stdout}\n${done.stderr}`).toBe(true);
      await page.locator('.outcome[data-outcome="approved"]').filter({ hasText: "approved by alice" }).waitFor();
      await shot(page, ARTIFACTS, "claude-approved");
      expect(serve.lastAudited()).toMatchObject({ decision: "allow" });
    } finally {
      await stub.close();
      await page.context().close();
    }
  });

  it("a person denies: the command does not run, and the record says denied by alice", async () => {
    const page = await serve.inspector(browser);
    const { run, marker, stub } = await runEscalated("deny");
    try {
      await card(page, "pending-confirmation").locator('button[data-action="deny"]').click({ timeout: 120_000 });
      const done = await run;
      expect(done.timedOut, done.stderr).toBe(false);
      expect(existsSync(marker)).toBe(false);
      expect(stub.toolResults()[0]?.is_error).toBe(true);
      await page.locator('.outcome[data-outcome="denied"]').filter({ hasText: "denied by alice" }).waitFor();
      await shot(page, ARTIFACTS, "claude-denied");
      expect(serve.lastAudited()).toMatchObject({ decision: "block", reason: expect.stringContaining("alice") });
    } finally {
      await stub.close();
      await page.context().close();
    }
  });

  it("nobody answers: the hook hands the call to Claude Code's prompt, the command does not run, and the record says so", async () => {
    const page = await serve.inspector(browser);
    const { run, marker, stub } = await runEscalated("nobody");
    try {
      const done = await run;
      expect(done.timedOut, done.stderr).toBe(false);
      expect(existsSync(marker)).toBe(false);
      await page.locator('.outcome[data-outcome="handed-to-host"]').waitFor({ timeout: 120_000 });
      await shot(page, ARTIFACTS, "claude-nobody-answered");
      expect(serve.lastAudited()).toMatchObject({ decision: "escalate", reason: expect.stringContaining("handed to the host's prompt") });
      expect(readFileSync(serve.audit, "utf8")).not.toContain(serve.token);
    } finally {
      await stub.close();
      await page.context().close();
    }
  });
});

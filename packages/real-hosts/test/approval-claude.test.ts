/**
 * End to end with the real Claude Code CLI: its model API stubbed on 127.0.0.1, the hook settings
 * `ahp hook install claude-code --write` produces, `ahp serve --agent-host` (the built CLI) and the
 * inspector in headless chromium. The scripted model runs a command the default policy escalates
 * (`eval …` that would create a file in the test's temp dir). A person approves after about 20 s:
 * the command runs. A person denies: it does not. Nobody answers: the hook hands the call to
 * Claude Code's own prompt (non-interactive here, so it is not run) and the command does not run.
 * In each case the audit log and the inspector say the same as what happened.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnthropicStub, startAnthropicStub } from "../src/anthropic-stub.js";
import { runClaude } from "../src/claude.js";
import { claudeCliPath, ensureHost, HOSTS } from "../src/hosts.js";
import { CHROMIUM, chromium, type Browser, type Page } from "./browser.js";

const BIN = fileURLToPath(new URL("../../../apps/cli/dist/main.js", import.meta.url));
// Beside the inspector's own screenshots (git-ignored there).
const ARTIFACTS = fileURLToPath(new URL("../../../apps/inspector/test-artifacts/real-claude/", import.meta.url));
const TOKEN = `approver-${randomBytes(12).toString("hex")}`;

let dir: string;
let serve: ChildProcess | undefined;
let serveLog = "";
let inspectorUrl: string;
let socket: string;
let audit: string;
let keyFile: string;
let browser: Browser;
let cli: string[];

async function until<T>(check: () => T | undefined | false, what: string, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${serveLog.slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  cli = claudeCliPath(await ensureHost("claudeCode"));
  dir = await mkdtemp(join(tmpdir(), "ahp-approval-e2e-"));
  socket = join(dir, "harness.sock");
  audit = join(dir, "audit.jsonl");
  keyFile = join(dir, "audit.key");
  await writeFile(keyFile, randomBytes(32).toString("hex"));
  await chmod(keyFile, 0o600);
  const tokens = join(dir, "agent-host.tokens");
  await writeFile(tokens, `${TOKEN} alice approver\n`);
  await chmod(tokens, 0o600);
  serve = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--unix",
      socket,
      "--agent-host",
      "127.0.0.1:0",
      "--agent-host-token-file",
      tokens,
      "--audit",
      audit,
      "--audit-key-file",
      keyFile,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  serve.stderr!.on("data", (c: Buffer) => (serveLog += c.toString()));
  inspectorUrl = await until(() => {
    const line = serveLog.split("\n").find((l) => l.includes('"transport":"agent-host"'));
    return line === undefined ? undefined : (JSON.parse(line) as { inspector: string }).inspector;
  }, "ahp serve to listen");
  await until(() => serveLog.includes('"transport":"unix"'), "the unix listener");
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
});

afterAll(async () => {
  await browser?.close();
  serve?.kill("SIGTERM");
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** A Claude Code home whose settings hold what our installer writes, pointing at the harness. */
async function claudeHome(name: string): Promise<string> {
  const home = join(dir, `home-${name}`);
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
      `unix:${socket}`,
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
  const cwd = join(dir, `cwd-${name}`);
  await mkdir(cwd, { recursive: true });
  const marker = join(cwd, "ran.txt");
  const stub = await startAnthropicStub({ steps: [{ tool_use: { name: "Bash", input: { command: `eval "touch ${marker}"` } } }] });
  const home = await claudeHome(name);
  const run = runClaude({ cli, cwd, home, baseUrl: stub.url, prompt: "run it", timeoutMs: 180_000 });
  return { run, marker, stub };
}

async function inspector() {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  // Generous limits for every wait on the page: a busy machine only makes them slower.
  context.setDefaultTimeout(120_000);
  const page = await context.newPage();
  await page.goto(`${inspectorUrl}?token=${TOKEN}`);
  await page.locator('#link[data-status="live"]').waitFor();
  return page;
}

/** The decision the audit log recorded for the last `pre_action` (each run makes exactly one). */
function lastAudited(): Record<string, unknown> | undefined {
  const r = spawnSync(process.execPath, [BIN, "audit", "tail", audit, "-n", "1000", "--json"], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((rec) => rec.event_type === "pre_action" && typeof rec.decision === "string")
    .at(-1);
}

const card = (page: Page, status: string) => page.locator(`article.tool[data-status="${status}"]`).filter({ hasText: "eval" });

async function shot(page: Page, name: string) {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

describe("real Claude Code, the hook, ahp serve --agent-host and a person in the inspector", () => {
  it("a person approves after about 20 s: the command runs, and the record says approved by alice", async () => {
    const page = await inspector();
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
      await shot(page, "claude-approved");
      expect(lastAudited()).toMatchObject({ decision: "allow" });
    } finally {
      await stub.close();
      await page.context().close();
    }
  });

  it("a person denies: the command does not run, and the record says denied by alice", async () => {
    const page = await inspector();
    const { run, marker, stub } = await runEscalated("deny");
    try {
      await card(page, "pending-confirmation").locator('button[data-action="deny"]').click({ timeout: 120_000 });
      const done = await run;
      expect(done.timedOut, done.stderr).toBe(false);
      expect(existsSync(marker)).toBe(false);
      expect(stub.toolResults()[0]?.is_error).toBe(true);
      await page.locator('.outcome[data-outcome="denied"]').filter({ hasText: "denied by alice" }).waitFor();
      await shot(page, "claude-denied");
      expect(lastAudited()).toMatchObject({ decision: "block", reason: expect.stringContaining("alice") });
    } finally {
      await stub.close();
      await page.context().close();
    }
  });

  it("nobody answers: the hook hands the call to Claude Code's prompt, the command does not run, and the record says so", async () => {
    const page = await inspector();
    const { run, marker, stub } = await runEscalated("nobody");
    try {
      const done = await run;
      expect(done.timedOut, done.stderr).toBe(false);
      expect(existsSync(marker)).toBe(false);
      await page.locator('.outcome[data-outcome="handed-to-host"]').waitFor({ timeout: 120_000 });
      await shot(page, "claude-nobody-answered");
      expect(lastAudited()).toMatchObject({ decision: "escalate", reason: expect.stringContaining("handed to the host's prompt") });
      expect(readFileSync(audit, "utf8")).not.toContain(TOKEN);
    } finally {
      await stub.close();
      await page.context().close();
    }
  });
});

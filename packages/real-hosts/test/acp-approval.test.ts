/**
 * End to end on the ACP path with a real agent: Zed's claude-agent-acp (pinned in `HOSTS`, running
 * the real Claude Code against the scripted Anthropic stub on 127.0.0.1) behind `ahp acp-proxy
 * --connect unix:<socket>` of `ahp serve --agent-host --audit` (the built CLI), driven by an ACP
 * client built with `@agentclientprotocol/sdk` (the version the bridge depends on), and a person
 * in the inspector in headless chromium. The scripted model runs a command the default policy
 * escalates (`eval …` that would create a file in the test's temp dir). A person approves after
 * about 20 s: the command runs. A person denies: it does not. Nobody answers: the harness's
 * approval timeout blocks it and it does not run. In each case the audit log, the harness's log
 * and the inspector say the same as what happened, and so does what the model was told.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AnthropicStub, startAnthropicStub } from "../src/anthropic-stub.js";
import { claudeEnv } from "../src/claude.js";
import { ensureHost, HOSTS } from "../src/hosts.js";
import { CHROMIUM, chromium, type Browser, type Page } from "./browser.js";

const BIN = fileURLToPath(new URL("../../../apps/cli/dist/main.js", import.meta.url));
// Beside the inspector's own screenshots (git-ignored there).
const ARTIFACTS = fileURLToPath(new URL("../../../apps/inspector/test-artifacts/real-acp/", import.meta.url));
/** How long the harness holds an escalation for a person: longer than the approver's 20 s. */
const APPROVAL_TIMEOUT_MS = 60_000;

type Json = Record<string, any>;
/** The part of `@agentclientprotocol/sdk`'s client API used here. */
interface ClientContext {
  request(method: string, params: unknown): Promise<Json>;
}
interface ClientApp {
  onRequest(method: string, handler: (context: { params: Json }) => unknown): ClientApp;
  onNotification(method: string, handler: (context: { params: Json }) => unknown): ClientApp;
  connectWith<T>(stream: unknown, op: (context: ClientContext) => Promise<T>): Promise<T>;
}
interface AcpSdk {
  client(options?: { name?: string }): ClientApp;
  ndJsonStream(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>): unknown;
  PROTOCOL_VERSION: number;
}
const acpSdkPath = createRequire(new URL("../../acp-bridge/package.json", import.meta.url)).resolve("@agentclientprotocol/sdk");
const acpSdk = (): Promise<AcpSdk> => import(pathToFileURL(acpSdkPath).href) as Promise<AcpSdk>;

const TOKEN = `approver-${randomBytes(12).toString("hex")}`;

let dir: string;
let serve: ChildProcess | undefined;
let serveLog = "";
let inspectorUrl: string;
let socket: string;
let audit: string;
let browser: Browser;
let agent: string[];
const cleanups: Array<() => Promise<void>> = [];

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
  const host = await ensureHost("claudeAgentAcp");
  agent = [process.execPath, join(host.pkgDir, "dist", "index.js")];
  dir = await mkdtemp(join(tmpdir(), "ahp-acp-approval-"));
  socket = join(dir, "harness.sock");
  audit = join(dir, "audit.jsonl");
  const keyFile = join(dir, "audit.key");
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
      "--approval-timeout-ms",
      String(APPROVAL_TIMEOUT_MS),
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
}, 600_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await browser?.close();
  serve?.kill("SIGTERM");
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/**
 * One ACP client session through `ahp acp-proxy` to the real agent: initialize, session/new, one
 * prompt. The client records every session/update and every permission request, and allows
 * what it is asked (an editor whose user clicks "Allow"), so that only the harness decides.
 */
async function runEscalated(name: string) {
  const cwd = join(dir, `cwd-${name}`);
  const home = join(dir, `home-${name}`);
  await mkdir(cwd, { recursive: true });
  await mkdir(home, { recursive: true });
  const marker = join(cwd, "ran.txt");
  const stub: AnthropicStub = await startAnthropicStub({
    steps: [{ tool_use: { name: "Bash", input: { command: `eval "touch ${marker}"` } } }],
  });
  cleanups.push(() => stub.close());
  const proxy = spawn(process.execPath, [BIN, "acp-proxy", "--connect", `unix:${socket}`, "--store", join(home, "store"), "--", ...agent], {
    stdio: ["pipe", "pipe", "pipe"],
    env: claudeEnv({ home, baseUrl: stub.url }),
    detached: true,
  });
  let proxyLog = "";
  proxy.stderr.on("data", (c: Buffer) => (proxyLog += c.toString()));
  const exited = new Promise<number | null>((resolve) => proxy.once("exit", (code) => resolve(code)));
  cleanups.push(async () => {
    try {
      process.kill(-proxy.pid!, "SIGKILL");
    } catch {
      // gone
    }
  });
  const updates: Json[] = [];
  const asked: Json[] = [];
  const sdk = await acpSdk();
  const stream = sdk.ndJsonStream(
    Writable.toWeb(proxy.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(proxy.stdout) as ReadableStream<Uint8Array>,
  );
  const turn = sdk
    .client({ name: "ahp-real-hosts" })
    .onRequest("session/request_permission", ({ params }) => {
      asked.push(params);
      const allow = (params.options as Json[]).find((o) => o.kind === "allow_once") ?? params.options[0];
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    })
    .onNotification("session/update", ({ params }) => {
      updates.push(params.update);
    })
    .connectWith(stream, async (acp) => {
      await acp.request("initialize", { protocolVersion: sdk.PROTOCOL_VERSION, clientCapabilities: {} });
      const { sessionId } = await acp.request("session/new", { cwd, mcpServers: [] });
      return acp.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "run it" }] });
    });
  // The turn ends however the harness decided; a hang fails here rather than at the test's limit.
  const ended = Promise.race([
    turn,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`the turn did not end\n${proxyLog.slice(-4000)}`)), APPROVAL_TIMEOUT_MS + 120_000).unref(),
    ),
  ]);
  const close = async () => {
    proxy.stdin.end();
    return exited;
  };
  return { ended, marker, stub, updates, asked, proxyLog: () => proxyLog, close };
}

async function inspector() {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  // Generous limits for every wait on the page: a busy machine only makes them slower.
  context.setDefaultTimeout(120_000);
  const page = await context.newPage();
  cleanups.push(() => context.close());
  await page.goto(`${inspectorUrl}?token=${TOKEN}`);
  await page.locator('#link[data-status="live"]').waitFor();
  return page;
}

/** The decision the audit log recorded for the last `pre_action` of a Bash call (each run makes one). */
function lastAudited(): Json | undefined {
  const r = spawnSync(process.execPath, [BIN, "audit", "tail", audit, "-n", "1000", "--json"], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Json)
    .filter((rec) => rec.event_type === "pre_action" && typeof rec.decision === "string")
    .at(-1);
}

/** The harness's log lines with `msg`. */
const harnessSaid = (msg: string) =>
  serveLog
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Json)
    .filter((l) => l.msg === msg);

/** The agent's final word on its tool call, as the ACP client saw it. */
const toolStatus = (updates: Json[]) =>
  updates.filter((u) => u.sessionUpdate === "tool_call_update" && typeof u.status === "string").at(-1)?.status;

const card = (page: Page, status: string) => page.locator(`article.tool[data-status="${status}"]`).filter({ hasText: "eval" });

async function shot(page: Page, name: string) {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

describe(`real claude-agent-acp ${HOSTS.claudeAgentAcp.version} through ahp acp-proxy, ahp serve --agent-host and a person in the inspector`, () => {
  it("a person approves after about 20 s: the command runs, and the record says approved by alice", async () => {
    const page = await inspector();
    const run = await runEscalated("approve");
    const waiting = card(page, "pending-confirmation");
    await waiting.waitFor({ timeout: 120_000 });
    await shot(page, "acp-waiting");
    // The person reads the request for a while before deciding (the scenario, not a synchronisation).
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    expect(existsSync(run.marker)).toBe(false);
    await waiting.locator('button[data-action="approve"]').click();
    const done = await run.ended;
    expect(done.stopReason).toBe("end_turn");
    expect(existsSync(run.marker), run.proxyLog()).toBe(true);
    // Approved at the harness, the editor still has its say (it allowed); the model saw a success.
    expect(run.asked).toHaveLength(1);
    expect(run.stub.toolResults()[0]?.is_error).not.toBe(true);
    expect(toolStatus(run.updates)).toBe("completed");
    await page.locator('.outcome[data-outcome="approved"]').filter({ hasText: "approved by alice" }).waitFor();
    // The command ran to its end, and the page says so (the proxy reports it with post_action), not "stopped".
    await card(page, "completed").waitFor({ timeout: 60_000 });
    await shot(page, "acp-approved");
    expect(lastAudited()).toMatchObject({ decision: "allow" });
    expect(harnessSaid("approval answered").at(-1)).toMatchObject({ outcome: "approved", by: "alice", decision: "allow" });
    expect(run.proxyLog()).not.toContain('"msg":"harness failure"');
    expect(await run.close()).toBe(0);
  }, 600_000);

  it("a person denies: the command does not run, and the record says denied by alice", async () => {
    const page = await inspector();
    const run = await runEscalated("deny");
    await card(page, "pending-confirmation").locator('button[data-action="deny"]').click({ timeout: 120_000 });
    const done = await run.ended;
    expect(done.stopReason).toBe("end_turn");
    expect(existsSync(run.marker)).toBe(false);
    // Refused by the harness: the editor is never asked, and the model is told it was refused.
    expect(run.asked).toHaveLength(0);
    expect(run.stub.toolResults()[0]?.is_error).toBe(true);
    expect(toolStatus(run.updates)).toBe("failed");
    await page.locator('.outcome[data-outcome="denied"]').filter({ hasText: "denied by alice" }).waitFor();
    await shot(page, "acp-denied");
    expect(lastAudited()).toMatchObject({ decision: "block", reason: expect.stringContaining("alice") });
    expect(harnessSaid("approval answered").at(-1)).toMatchObject({ outcome: "denied", by: "alice", decision: "block" });
    expect(run.proxyLog()).not.toContain('"msg":"harness failure"');
    expect(await run.close()).toBe(0);
  }, 600_000);

  it("nobody answers: the harness's approval timeout blocks the call, the command does not run, and the record says so", async () => {
    const page = await inspector();
    const run = await runEscalated("nobody");
    await card(page, "pending-confirmation").waitFor({ timeout: 120_000 });
    const done = await run.ended;
    expect(done.stopReason).toBe("end_turn");
    expect(existsSync(run.marker)).toBe(false);
    expect(run.asked).toHaveLength(0);
    expect(run.stub.toolResults()[0]?.is_error).toBe(true);
    expect(toolStatus(run.updates)).toBe("failed");
    await page.locator('.outcome[data-outcome="timed-out"]').waitFor({ timeout: 120_000 });
    await shot(page, "acp-nobody-answered");
    expect(lastAudited()).toMatchObject({ decision: "block", reason: `No decision within ${APPROVAL_TIMEOUT_MS / 1000} s` });
    expect(harnessSaid("approval timed out; blocked")).toHaveLength(1);
    // The proxy waited for the harness's answer rather than giving up on its own.
    expect(run.proxyLog()).not.toContain('"msg":"harness failure"');
    expect(await run.close()).toBe(0);
    expect(readFileSync(audit, "utf8")).not.toContain(TOKEN);
    expect(serveLog).not.toContain(TOKEN);
  }, 600_000);
});

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
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AnthropicStub, startAnthropicStub } from "../src/anthropic-stub.js";
import { claudeEnv } from "../src/claude.js";
import { ensureHost, HOSTS } from "../src/hosts.js";
import { launchBrowser, type Browser } from "./browser.js";
import { BIN, card, shot, startServe, type Json, type Serve } from "./serve.js";

// Beside the inspector's own screenshots (git-ignored there).
const ARTIFACTS = fileURLToPath(new URL("../../../apps/inspector/test-artifacts/real-acp/", import.meta.url));
/** How long the harness holds an escalation for a person: longer than the approver's 20 s. */
const APPROVAL_TIMEOUT_MS = 60_000;

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

let serve: Serve;
let browser: Browser;
let agent: string[];
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  const host = await ensureHost("claudeAgentAcp");
  agent = [process.execPath, join(host.pkgDir, "dist", "index.js")];
  serve = await startServe({ tempPrefix: "ahp-acp-approval-", args: ["--approval-timeout-ms", String(APPROVAL_TIMEOUT_MS)] });
  browser = await launchBrowser();
}, 600_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
});

/**
 * One ACP client session through `ahp acp-proxy` to the real agent: initialize, session/new, one
 * prompt. The client records every session/update and every permission request, and allows
 * what it is asked (an editor whose user clicks "Allow"), so that only the harness decides.
 */
async function runEscalated(name: string) {
  const cwd = join(serve.dir, `cwd-${name}`);
  const home = join(serve.dir, `home-${name}`);
  await mkdir(cwd, { recursive: true });
  await mkdir(home, { recursive: true });
  const marker = join(cwd, "ran.txt");
  const stub: AnthropicStub = await startAnthropicStub({
    steps: [{ tool_use: { name: "Bash", input: { command: `eval "touch ${marker}"` } } }],
  });
  cleanups.push(() => stub.close());
  const proxy = spawn(
    process.execPath,
    [BIN, "acp-proxy", "--connect", `unix:${serve.socket}`, "--store", join(home, "store"), "--", ...agent],
    {
      stdio: ["pipe", "pipe", "pipe"],
      env: claudeEnv({ home, baseUrl: stub.url }),
      detached: true,
    },
  );
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

/** Opens the inspector as alice; the page is closed after the test. */
async function inspector() {
  const page = await serve.inspector(browser);
  cleanups.push(() => page.context().close());
  return page;
}

/** The agent's final word on its tool call, as the ACP client saw it. */
const toolStatus = (updates: Json[]) =>
  updates.filter((u) => u.sessionUpdate === "tool_call_update" && typeof u.status === "string").at(-1)?.status;

describe(`real claude-agent-acp ${HOSTS.claudeAgentAcp.version} through ahp acp-proxy, ahp serve --agent-host and a person in the inspector`, () => {
  it("a person approves after about 20 s: the command runs, and the record says approved by alice", async () => {
    const page = await inspector();
    const run = await runEscalated("approve");
    const waiting = card(page, "pending-confirmation");
    await waiting.waitFor({ timeout: 120_000 });
    await shot(page, ARTIFACTS, "acp-waiting");
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
    await shot(page, ARTIFACTS, "acp-approved");
    expect(serve.lastAudited()).toMatchObject({ decision: "allow" });
    expect(serve.said("approval answered").at(-1)).toMatchObject({ outcome: "approved", by: "alice", decision: "allow" });
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
    await shot(page, ARTIFACTS, "acp-denied");
    expect(serve.lastAudited()).toMatchObject({ decision: "block", reason: expect.stringContaining("alice") });
    expect(serve.said("approval answered").at(-1)).toMatchObject({ outcome: "denied", by: "alice", decision: "block" });
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
    await shot(page, ARTIFACTS, "acp-nobody-answered");
    expect(serve.lastAudited()).toMatchObject({ decision: "block", reason: `No decision within ${APPROVAL_TIMEOUT_MS / 1000} s` });
    expect(serve.said("approval timed out; blocked")).toHaveLength(1);
    // The proxy waited for the harness's answer rather than giving up on its own.
    expect(run.proxyLog()).not.toContain('"msg":"harness failure"');
    expect(await run.close()).toBe(0);
    expect(readFileSync(serve.audit, "utf8")).not.toContain(serve.token);
    expect(serve.log()).not.toContain(serve.token);
  }, 600_000);
});

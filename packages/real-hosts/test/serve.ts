/**
 * The harness of the approval tests: `ahp serve --unix <socket> --agent-host 127.0.0.1:0` (the built
 * CLI) with a signed audit log and one approver token for the inspector, in a temp dir of its own;
 * and what the tests read back from it (the audit log, the harness's log lines, the inspector page).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { Browser, Page } from "./browser.js";

/** The built `ahp` CLI. */
export const BIN = fileURLToPath(new URL("../../../apps/cli/dist/main.js", import.meta.url));

export type Json = Record<string, any>;

export interface Serve {
  /** The temp dir the harness's files live in (removed by `stop()`); tests put their own dirs in it too. */
  readonly dir: string;
  /** The unix socket the harness listens on for AHP. */
  readonly socket: string;
  /** The audit log. */
  readonly audit: string;
  /** The bearer token of the approver `alice` (never to be logged). */
  readonly token: string;
  /** The inspector's URL, as `ahp serve` announced it. */
  readonly inspectorUrl: string;
  /** Everything the harness wrote to stderr so far. */
  log(): string;
  /** The harness's JSON log lines with `msg`. */
  said(msg: string): Json[];
  /** The decision the audit log recorded for the last `pre_action`. */
  lastAudited(): Json | undefined;
  /** Opens the inspector as alice in a new browser context and waits until it is live. */
  inspector(browser: Browser): Promise<Page>;
  stop(): Promise<void>;
}

/** Starts `ahp serve` and waits until both of its listeners are up; `args` are added to its command line. */
export async function startServe(options: { tempPrefix: string; args?: readonly string[] }): Promise<Serve> {
  const dir = await mkdtemp(join(tmpdir(), options.tempPrefix));
  const socket = join(dir, "harness.sock");
  const audit = join(dir, "audit.jsonl");
  const token = `approver-${randomBytes(12).toString("hex")}`;
  const keyFile = join(dir, "audit.key");
  await writeFile(keyFile, randomBytes(32).toString("hex"));
  await chmod(keyFile, 0o600);
  const tokens = join(dir, "agent-host.tokens");
  await writeFile(tokens, `${token} alice approver\n`);
  await chmod(tokens, 0o600);
  const child: ChildProcess = spawn(
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
      ...(options.args ?? []),
      "--audit",
      audit,
      "--audit-key-file",
      keyFile,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr!.on("data", (c: Buffer) => (log += c.toString()));
  const stop = async () => {
    child.kill("SIGTERM");
    await rm(dir, { recursive: true, force: true });
  };
  // The JSON lines written so far, whole lines only (the last may still be arriving).
  const lines = () => jsonLines(log.slice(0, log.lastIndexOf("\n") + 1));
  try {
    const inspectorUrl = await until(
      () => lines().find((l) => l.transport === "agent-host")?.inspector as string | undefined,
      "ahp serve to listen",
      () => log,
    );
    await until(
      () => lines().some((l) => l.transport === "unix"),
      "the unix listener",
      () => log,
    );
    return {
      dir,
      socket,
      audit,
      token,
      inspectorUrl,
      log: () => log,
      said: (msg) => lines().filter((l) => l.msg === msg),
      lastAudited() {
        const r = spawnSync(process.execPath, [BIN, "audit", "tail", audit, "-n", "1000", "--json"], { encoding: "utf8" });
        expect(r.status, r.stderr).toBe(0);
        return jsonLines(r.stdout)
          .filter((rec) => rec.event_type === "pre_action" && typeof rec.decision === "string")
          .at(-1);
      },
      async inspector(browser) {
        const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
        // Generous limits for every wait on the page: a busy machine only makes them slower.
        context.setDefaultTimeout(120_000);
        const page = await context.newPage();
        await page.goto(`${inspectorUrl}?token=${token}`);
        await page.locator('#link[data-status="live"]').waitFor();
        return page;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

const jsonLines = (text: string): Json[] =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Json);

/** Polls until `check` holds, for at most two minutes; a timeout says what it waited for and the tail of the harness's log. */
async function until<T>(check: () => T | undefined | false, what: string, log: () => string): Promise<T> {
  const end = Date.now() + 120_000;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${log().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The tool card of the scripted `eval` command on the inspector page, in one status. */
export const card = (page: Page, status: string) => page.locator(`article.tool[data-status="${status}"]`).filter({ hasText: "eval" });

/** A full-page screenshot `<name>.png` in `dir`. */
export async function shot(page: Page, dir: string, name: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

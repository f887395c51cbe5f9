/**
 * `ahp serve` options that put features of other packages on the command line, through the built
 * binary: `--shadow-policy` (the candidate's disagreements in the audit record and the metrics),
 * `--audit-anchor` (checkpoints published elsewhere), `--approval-webhook` flag checks, `GET /readyz`
 * and the idle timeout of silent connections.
 */
import { createConnection } from "node:net";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAhp, startServe, within } from "./crash-kit.js";

let dir: string;
let keyFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-serve-wiring-"));
  keyFile = join(dir, "audit.key");
  await writeFile(keyFile, "6b".repeat(32));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/**
 * Each `ahp` run here is a cold Node start; in a saturated full-suite run one took over 60 s
 * without hanging (measured beside four CPU hogs: `ahp send` 4 s, `ahp serve` with a shadow policy
 * stopping 3 s after SIGTERM). The bound catches a process that never exits, not a slow one.
 */
const AHP_BOUND_MS = 150_000;
/** Several such runs and waits in one test. */
const TEST_MS = 600_000;

const ahp = (args: string[]) => runAhp(args, AHP_BOUND_MS);

/** Stops an `ahp serve` started by a test: SIGTERM, then its exit within 20 s. */
async function stop(serve: Awaited<ReturnType<typeof startServe>>): Promise<void> {
  serve.child.kill("SIGTERM");
  await within(serve.exited, 20_000, "ahp serve did not stop");
}

async function until(condition: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const CANDIDATE = `version: 1
extends: default
rules:
  - id: no-curl
    events: pre_action
    match: { shell: { program: curl } }
    action: { decision: block, reason: no network from agents }
`;

describe("ahp serve --shadow-policy", () => {
  it(
    "enforces the policy, records the candidate's disagreement in the audit record and counts it",
    async () => {
      const candidate = join(dir, "candidate.yaml");
      await writeFile(candidate, CANDIDATE);
      const log = join(dir, "shadow.log");
      const sock = join(dir, "shadow.sock");
      const serve = await startServe(
        ["--unix", sock, "--http", "127.0.0.1:0", "--audit", log, "--audit-key-file", keyFile, "--shadow-policy", candidate],
        2,
      );
      try {
        const send = (command: string) =>
          ahp([
            "send",
            "--connect",
            `unix:${sock}`,
            "--event-type",
            "pre_action",
            "--payload",
            JSON.stringify({ tool_name: "bash", arguments: { command } }),
          ]);
        const curl = await send("curl -s https://example.com/data.json");
        expect(curl.code).toBe(0);
        expect(curl.stdout).toContain('"allow"'); // the candidate is never enforced
        expect((await send("ls -la")).code).toBe(0);

        const http = serve.urls.find((u) => u.startsWith("http"))!;
        const metricsUrl = new URL("/metrics", http).toString();
        let metrics = "";
        await until(async () => {
          metrics = await (await fetch(metricsUrl)).text();
          return metrics.includes("ahp_shadow_disagreements_total{");
        }, "the shadow counter");
        expect(metrics).toMatch(/ahp_shadow_disagreements_total\{from="allow",to="block",rule="no-curl"\} 1\b/);

        const records = (await readFile(log, "utf8"))
          .split("\n")
          .filter((l) => l.length > 0)
          .map((l) => JSON.parse(l) as { kind: string; decision?: string; shadow?: { decision: string; rule?: string } });
        const decisions = records.filter((r) => r.kind === "decision");
        expect(decisions.map((r) => r.decision)).toEqual(["allow", "allow"]);
        expect(decisions[0]!.shadow).toEqual({ decision: "block", rule: "no-curl" });
        expect(decisions[1]!.shadow).toBeUndefined();
        expect(serve.stderr()).toContain('"shadow policy loaded"');
      } finally {
        await stop(serve);
      }
    },
    TEST_MS,
  );

  it(
    "refuses a candidate that does not exist, with one line and exit 66",
    async () => {
      const missing = join(dir, "nope.yaml");
      const r = await ahp(["serve", "--stdio", "--shadow-policy", missing]);
      expect(r.code).toBe(66);
      expect(r.stderr).toContain("--shadow-policy");
    },
    TEST_MS,
  );
});

describe("ahp serve --audit-anchor", () => {
  it(
    "publishes the signed checkpoint to the anchor file, and needs --audit and checkpoints",
    async () => {
      const log = join(dir, "anchored.log");
      const anchor = join(dir, "elsewhere.anchor");
      const sock = join(dir, "anchored.sock");
      const serve = await startServe(
        ["--unix", sock, "--audit", log, "--audit-key-file", keyFile, "--audit-checkpoint-ms", "100", "--audit-anchor", anchor],
        1,
      );
      try {
        const sent = await ahp([
          "send",
          "--connect",
          `unix:${sock}`,
          "--event-type",
          "pre_action",
          "--payload",
          '{"tool_name":"bash","arguments":{"command":"ls"}}',
        ]);
        expect(sent.code).toBe(0);
        await until(async () => existsSync(anchor), "the anchor file");
      } finally {
        await stop(serve);
      }
      const verified = await ahp(["audit", "verify", log, "--key-file", keyFile, "--anchor", anchor]);
      expect(verified.code).toBe(0);

      expect((await ahp(["serve", "--stdio", "--audit-anchor", anchor])).code).toBe(64);
      const off = await ahp([
        "serve",
        "--stdio",
        "--audit",
        log,
        "--audit-key-file",
        keyFile,
        "--audit-checkpoint-ms",
        "0",
        "--audit-anchor",
        anchor,
      ]);
      expect(off.code).toBe(64);
      expect(off.stderr).toContain("--audit-anchor needs checkpoints");
    },
    TEST_MS,
  );
});

describe("ahp serve --approval-webhook", () => {
  it(
    "needs --agent-host and an http(s) URL",
    async () => {
      const alone = await ahp(["serve", "--stdio", "--approval-webhook", "https://hooks.example/a"]);
      expect(alone.code).toBe(64);
      expect(alone.stderr).toContain("need --agent-host");
      const tokens = join(dir, "tokens");
      await writeFile(tokens, "TOKEN-A alice approver\n", { mode: 0o600 });
      const bad = await ahp([
        "serve",
        "--stdio",
        "--agent-host",
        "127.0.0.1:0",
        "--agent-host-token-file",
        tokens,
        "--approval-webhook",
        "ftp://x",
      ]);
      expect(bad.code).toBe(64);
      expect(bad.stderr).toContain("--approval-webhook must be an http(s) URL");
    },
    TEST_MS,
  );
});

describe("ahp serve readiness and idle connections", () => {
  it(
    "answers GET /readyz with the harness's checks, and /healthz beside it",
    async () => {
      const log = join(dir, "ready.log");
      const serve = await startServe(["--http", "127.0.0.1:0", "--audit", log, "--audit-key-file", keyFile], 1);
      try {
        const base = serve.urls[0]!;
        const ready = await fetch(new URL("/readyz", base));
        expect(ready.status).toBe(200);
        const body = (await ready.json()) as { status: string; checks: Record<string, { ok: boolean }> };
        expect(body.status).toBe("ready");
        expect(Object.keys(body.checks).sort()).toEqual(["audit", "policy", "state"]);
        expect((await fetch(new URL("/healthz", base))).status).toBe(200);
      } finally {
        await stop(serve);
      }
    },
    TEST_MS,
  );

  it(
    "closes a silent Unix connection after --idle-timeout-ms",
    async () => {
      const sock = join(dir, "idle.sock");
      const serve = await startServe(["--unix", sock, "--idle-timeout-ms", "300"], 1);
      try {
        const socket = createConnection(sock);
        let received = "";
        socket.setEncoding("utf8").on("data", (c: string) => (received += c));
        const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
        await within(closed, 30_000, "the silent connection was not closed");
        expect(received).toContain("-32003");
      } finally {
        await stop(serve);
      }
    },
    TEST_MS,
  );
});

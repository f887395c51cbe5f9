/**
 * `ahp send` and a decision a person takes (ADR 0145): it waits as long as the harness says it may
 * hold the decision (not `--timeout-ms`), says once on stderr that it waits for an approver, and
 * prints no timeout; over HTTP too. An invalid `--payload` is a usage error (exit 64, one line).
 */
import { PassThrough } from "node:stream";
import { AhpServer, type DecisionInput } from "@ahp/core";
import { listenHttp } from "@ahp/transport-http";
import { listenWebSocket } from "@ahp/transport-ws";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../src/cli.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

function io() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out = { stdout: "", stderr: "" };
  stdout.on("data", (c: Buffer) => (out.stdout += c.toString()));
  stderr.on("data", (c: Buffer) => (out.stderr += c.toString()));
  return { io: { stdin: new PassThrough(), stdout, stderr, env: {} }, out };
}

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A harness that may hold decisions 60 s and answers each pre_action only when the test says so. */
function holdingHarness() {
  const waiting: Array<(d: DecisionInput) => void> = [];
  const server = new AhpServer({
    config: { timeout_ms: 60_000 },
    handlerTimeoutMs: 0,
    handlers: { onEvent: () => new Promise<DecisionInput>((resolve) => waiting.push(resolve)) },
  });
  closers.push(() => server.close({ graceMs: 0 }));
  return { server, waiting };
}

describe("ahp send waits for a person", () => {
  for (const transport of ["ws", "http"] as const) {
    it(`over ${transport}: a decision held past --timeout-ms arrives; stderr says it waits for an approver, never a timeout`, async () => {
      const { server, waiting } = holdingHarness();
      const listener = transport === "ws" ? await listenWebSocket(server) : await listenHttp(server);
      closers.unshift(() => listener.close());
      const { io: cli, out } = io();
      const code = main(
        ["send", "--connect", listener.url, "--timeout-ms", "300", "--event-type", "pre_action", "--payload", '{"tool_name":"deploy"}'],
        cli,
      );
      // Answer only once the client has outlived its own 300 ms and said why it keeps waiting.
      await until(() => out.stderr.includes("waiting for an approver") && waiting.length === 1, "the waiting notice");
      waiting[0]!({ decision: "allow" });
      expect(await code).toBe(0);
      expect(JSON.parse(out.stdout)).toEqual({ decision: "allow" });
      expect(out.stderr).toBe("ahp send: waiting for an approver (the harness may hold this decision up to 65 s)…\n");
    });
  }

  it("an invalid --payload exits 64 with one line, before connecting", async () => {
    const { io: cli, out } = io();
    const code = await main(["send", "--connect", "ws://127.0.0.1:9/ahp", "--event-type", "pre_action", "--payload", "{nope"], cli);
    expect(code).toBe(64);
    expect(out.stderr.trim().split("\n")).toHaveLength(1);
    expect(out.stderr).toMatch(/^ahp send: --payload is not valid JSON/);
    expect(out.stdout).toBe("");
  });
});

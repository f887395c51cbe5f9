/**
 * Out of file descriptors under a real `ulimit -n`: `ahp serve` runs with a soft and hard limit of
 * 256 descriptors and a connection cap far above what fits, and one local peer holds more silent
 * Unix-socket connections than there are descriptors, reopening each one the harness closes.
 * libuv accepts and closes what does not fit without telling Node, so this proves the counted
 * signal: the log has the `open_files` limit line and its aggregated line with a count, the
 * metric counts it, and a new agent is still served.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AhpClient, createEvent } from "@ahp/core";
import { UnixSocketClientTransport } from "@ahp/transport-unix";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, deferred, within } from "./crash-kit.js";

const LIMIT = 256;
/** More connections than descriptors. */
const HELD = 320;

let dir: string;
let child: ChildProcess | undefined;
const held = new Set<Socket>();
let stopping = false;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-nofile-"));
});
afterAll(async () => {
  stopping = true;
  for (const socket of held) socket.destroy();
  if (child !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
});

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not seen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A silent connection, reopened (after a short pause) whenever the harness closes it. */
function hold(path: string): void {
  if (stopping) return;
  const socket = connect(path);
  held.add(socket);
  socket.on("error", () => {});
  socket.on("data", () => {});
  socket.once("close", () => {
    held.delete(socket);
    setTimeout(() => hold(path), 100).unref();
  });
}

/** One agent: handshake and a `pre_action` over a fresh connection; the decision, or the error. */
async function agent(path: string): Promise<string> {
  const client = new AhpClient({ timeoutMs: 5_000 });
  try {
    await client.connect(new UnixSocketClientTransport({ path, reconnect: false }));
    const decision = await client.request(
      createEvent(
        "pre_action",
        { action_type: "tool_call", tool_name: "bash", arguments: { command: "ls" } },
        { sessionId: client.sessionId, agentId: client.agentId },
      ),
    );
    return decision.decision;
  } finally {
    await client.close().catch(() => {});
  }
}

describe("ahp serve under ulimit -n 256", () => {
  it("counts the descriptors, logs open_files aggregated with a count, and still serves a new agent", async () => {
    const socketPath = join(dir, "ahp.sock");
    const args = [
      BIN,
      "serve",
      "--unix",
      socketPath,
      "--http",
      "127.0.0.1:0",
      "--max-connections",
      "1000",
      "--limit-log-interval-ms",
      "1000",
      "--log-level",
      "info",
    ];
    // Lowering the limit needs no privilege; `exec` keeps the shell out of the way.
    child = spawn("sh", ["-c", `ulimit -n ${LIMIT} && exec "$0" "$@"`, process.execPath, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    const listening = deferred();
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (jsonLines(stderr).filter((l) => l.msg === "listening").length >= 2) listening.resolve();
    });
    child.once("exit", (code) => listening.reject(new Error(`ahp serve exited (${code}): ${stderr}`)));
    await within(listening.promise, 30_000, `ahp serve did not start: ${stderr}`);
    const http = jsonLines(stderr).find((l) => l.msg === "listening" && l.transport === "http");
    const metricsUrl = String(http?.url).replace(/\/ahp$/, "/metrics");

    for (let i = 0; i < HELD; i++) hold(socketPath);
    const openFiles = () => jsonLines(stderr).filter((l) => l.msg === "limit" && l.limit === "open_files");
    await until(() => openFiles().some((l) => l.aggregated === true && Number(l.count) >= 2), 60_000, "aggregated open_files line");
    const first = openFiles()[0]!;
    expect(first).toMatchObject({ transport: "unix", limit: "open_files", value: LIMIT, count: 1 });
    expect(String(first.error)).toMatch(/file descriptors open/);
    // One line at once and one per interval with a count: fewer lines than reports.
    const reported = openFiles().reduce((sum, l) => sum + Number(l.count), 0);
    expect(openFiles().length).toBeLessThan(reported);

    // A new agent is served (the flood keeps reopening meanwhile).
    let decision: string | undefined;
    const errors: string[] = [];
    await until(
      async () => {
        try {
          // Each try has its own deadline: a connection the harness never accepts must not hang the wait.
          decision = await within(agent(socketPath), 15_000, "one agent's handshake and decision");
          return true;
        } catch (error) {
          errors.push((error as Error).message);
          return false;
        }
      },
      60_000,
      "a decision for a new agent",
    );
    expect(decision).toBe("allow");

    // The metric counts the reports (read once the flood has stopped: while it runs, the HTTP
    // listener competes for the same few descriptors).
    stopping = true;
    for (const socket of held) socket.destroy();
    let metric = 0;
    await until(
      async () => {
        try {
          const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })).text();
          const line = text.split("\n").find((l) => l.startsWith("ahp_limit_rejections_total") && l.includes('limit="open_files"'));
          metric = line === undefined ? 0 : Number(line.split(" ").pop());
          return metric >= reported;
        } catch {
          return false;
        }
      },
      30_000,
      "ahp_limit_rejections_total{limit=open_files}",
    );
    expect(metric).toBeGreaterThanOrEqual(reported);
  }, 180_000);
});

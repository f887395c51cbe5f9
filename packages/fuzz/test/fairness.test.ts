/**
 * Per-connection fairness over a real Unix socket (ADR 0100): one connection pipelines a flood of
 * requests whose handlers are async; a single request on another connection is answered long
 * before the flood's queue drains, with and without the audit log (whose writes are one FIFO for
 * all connections) in the handler chain.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openAuditLog, withAudit } from "@ahp/audit";
import { AhpServer, type AhpServerHandlers } from "@ahp/core";
import { listenUnix } from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";

const FLOOD = 5000;
const MAX_IN_FLIGHT = 64;
const cleanup: Array<() => Promise<void>> = [];

/** Waits until `test()` holds, polling every few ms; fails after 60 s naming `what` was awaited. */
async function until(test: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out after 60 s waiting for ${what}`);
    await sleep(5);
  }
}

afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const line = (id: string, session: string) =>
  `${JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "ahp/event",
    params: { event_type: "pre_action", session_id: session, agent_id: "a", timestamp: "t", depth: 0, payload: { tool_name: "bash" } },
  })}\n`;

async function socketTo(path: string): Promise<Socket> {
  const s = await new Promise<Socket>((resolve, reject) => {
    const socket = connect(path, () => resolve(socket));
    socket.once("error", reject);
  });
  cleanup.push(async () => void s.destroy());
  return s;
}

/** Counts answers by id prefix as they arrive. */
function countAnswers(s: Socket, onAnswer: (id: string) => void): void {
  let pending = "";
  s.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      onAnswer(String((JSON.parse(pending.slice(0, nl)) as { id: unknown }).id));
      pending = pending.slice(nl + 1);
    }
  });
}

async function serve(withAuditLog: boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "ahp-fair-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  // Async handlers: every decision takes a few milliseconds (a policy that awaits something).
  let handlers: AhpServerHandlers = {
    onEvent: async () => {
      await sleep(5);
      return { decision: "allow" };
    },
  };
  if (withAuditLog) {
    const audit = await openAuditLog({ path: join(dir, "audit.log"), key: randomBytes(32), checkpoint: false });
    cleanup.push(() => audit.close());
    handlers = withAudit(handlers, audit);
  }
  const server = new AhpServer({ handlers });
  cleanup.push(() => server.close({ graceMs: 0 }));
  const path = join(dir, "ahp.sock");
  const listener = await listenUnix(server, { path, maxInFlight: MAX_IN_FLIGHT });
  cleanup.push(() => listener.close());
  return path;
}

describe("fairness between connections", () => {
  for (const withAuditLog of [false, true]) {
    it(`a single request on connection B is answered before connection A's pipelined flood drains${withAuditLog ? " (audit log on)" : ""}`, async () => {
      const path = await serve(withAuditLog);
      const a = await socketTo(path);
      const b = await socketTo(path);
      let floodAnswered = 0;
      let floodAnsweredWhenBWasAnswered = -1;
      let bAnswered!: () => void;
      const bDone = new Promise<void>((resolve) => (bAnswered = resolve));
      countAnswers(a, () => floodAnswered++);
      countAnswers(b, () => {
        floodAnsweredWhenBWasAnswered = floodAnswered;
        bAnswered();
      });
      // The whole flood is written at once: the harness holds it back at MAX_IN_FLIGHT.
      a.write(Array.from({ length: FLOOD }, (_, i) => line(`a-${i}`, "flood")).join(""));
      await until(() => floodAnswered > 0, "the first flood answer");
      b.write(line("b", "good"));
      await bDone;
      console.log(`fairness${withAuditLog ? " (audit)" : ""}: B answered after ${floodAnsweredWhenBWasAnswered} of ${FLOOD} flood answers`);
      // B waited for at most a few of A's in-flight windows, not for A's queue.
      expect(floodAnsweredWhenBWasAnswered).toBeLessThan(FLOOD / 2);
      await until(() => floodAnswered === FLOOD, "every flood answer");
    });
  }
});

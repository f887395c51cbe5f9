/**
 * The cross-transport conformance suite over stdio: every connection is a real child process
 * running the scripted harness (`fixtures/conformance-harness.mjs`, which imports the BUILT
 * packages), spawned by StdioClientTransport; the raw channel writes to the child's stdin and
 * reads its stdout lines.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { CHECKLIST, createNdjsonRawChannel, describeConformance, type ConformanceFactory, type RawChannel } from "@ahp/conformance";
import type { Transport } from "@ahp/core";
import { StdioClientTransport } from "@ahp/transport-stdio";
import { describe, expect, it } from "vitest";
import { fixture } from "./helpers.js";

const script = fixture("conformance-harness.mjs");

/** Waits for a child to exit, killing it if it does not within `graceMs`. */
function stopChild(child: ChildProcess, graceMs = 2000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin?.end();
  });
}

const stdioFactory: ConformanceFactory = async (config) => {
  const args = [script, JSON.stringify(config)];
  const transports = new Set<StdioClientTransport>();
  const rawChildren = new Set<ChildProcess>();
  return {
    async connect(): Promise<Transport> {
      // A short grace: on close the harness child still works on the requests it received
      // (scripted delays of seconds) before it exits; the suite expects close() to be quick.
      const transport = new StdioClientTransport({ command: process.execPath, args, stderr: "ignore", closeGraceMs: 250 });
      transports.add(transport);
      void transport.closed.then(() => transports.delete(transport));
      return transport;
    },
    async connectRaw(): Promise<RawChannel> {
      const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"] });
      rawChildren.add(child);
      child.once("exit", () => rawChildren.delete(child));
      child.stdin.on("error", () => {});
      await new Promise<void>((resolve, reject) => child.once("spawn", resolve).once("error", reject));
      return createNdjsonRawChannel({ readable: child.stdout, writable: child.stdin, close: () => stopChild(child) });
    },
    // The harness "goes away": every child still running is killed (peer death for its client).
    async close(): Promise<void> {
      for (const transport of transports) if (transport.pid !== undefined) process.kill(transport.pid, "SIGTERM");
      await Promise.allSettled([...transports].map((t) => t.closed));
      await Promise.all([...rawChildren].map((child) => stopChild(child)));
    },
  };
};

// The agent-side [C] checks do not depend on the transport; core's in-memory run covers them.
// The first answer on a connection includes the child's start-up (loading Node and the
// packages), which takes seconds, tens of them on a loaded machine: allow far more than the default 5 s.
const coverage = describeConformance("stdio (child process per connection)", stdioFactory, {
  kind: "stream",
  clientChecks: false,
  responseTimeoutMs: 60_000,
});

describe("checklist coverage of the stdio run", () => {
  it("runs every server item, item 85 and every extra check", () => {
    const expected = CHECKLIST.filter((i) => i.where === "suite" && !i.tags.includes("C")).map((i) => i.n);
    expect([...coverage.items].sort((a, b) => a - b)).toEqual(expected);
    expect(coverage.items.has(85)).toBe(true);
    expect([...coverage.skipped.keys()].filter((k) => typeof k === "number").sort()).toEqual([86, 87, 88]);
  });
});

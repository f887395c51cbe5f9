/** DescriptorBudget and the roster's write-stall sweep: with a counted shortage the longest-idle connections close on every listener; a peer that takes nothing is closed at its deadline. */
import { describe, expect, it } from "vitest";
import { ConnectionRoster, DescriptorBudget, descriptorReserve, limitRejectionOf, openFileDescriptors } from "../src/index.js";
import { until } from "./wait.js";

function roster(transport: string, budget: DescriptorBudget, errors: Error[], closed: string[]) {
  const r = new ConnectionRoster({ transport, maxConnections: 1000, descriptors: budget, onerror: (e) => errors.push(e) });
  let t = 0;
  const admit = (name: string) => {
    const entry = r.admit(Number.POSITIVE_INFINITY, (reason) => closed.push(`${name}:${reason}`), name);
    if (entry !== undefined) entry.lastActive = ++t + (transport === "ws" ? 0.5 : 0);
    return entry;
  };
  return { r, admit };
}

describe("DescriptorBudget", () => {
  it("counts open descriptors on this platform and derives the reserve from the limit", () => {
    if (process.platform === "linux") expect(openFileDescriptors()).toBeGreaterThan(2);
    expect(descriptorReserve(256)).toBe(32);
    expect(descriptorReserve(1024)).toBe(128);
    expect(descriptorReserve(1_048_576)).toBe(256);
    expect(descriptorReserve(40)).toBe(8);
  });

  it("short of descriptors closes the longest-idle connections across listeners until twice the reserve is free, and reports each listener once", () => {
    let open = 0;
    const budget = new DescriptorBudget({ limit: 100, count: () => open, intervalMs: 0 });
    const errors: Error[] = [];
    const closed: string[] = [];
    const unix = roster("unix", budget, errors, closed);
    const ws = roster("ws", budget, errors, closed);
    for (let i = 0; i < 5; i++) {
      unix.admit(`u${i}`);
      ws.admit(`w${i}`);
    }
    const busy = unix.admit("busy")!;
    busy.lastActive = 0;
    busy.inFlight = 1;
    open = 80; // 20 free: more than the reserve (12)
    expect(budget.check()).toBeUndefined();
    expect(closed).toEqual([]);
    open = 95; // 5 free: 2 * 12 - 5 = 19 to close, 10 idle connections exist
    expect(budget.check()).toEqual({ open: 95, limit: 100, reserve: 12 });
    expect(closed).toHaveLength(10);
    expect(closed).not.toContain("busy:shed");
    expect(closed.every((c) => c.endsWith(":shed"))).toBe(true);
    const reports = errors.map(limitRejectionOf);
    expect(reports).toEqual([
      expect.objectContaining({ transport: "unix", limit: "open_files", value: 100, action: "closed_longest_idle" }),
      expect.objectContaining({ transport: "ws", limit: "open_files", value: 100, action: "closed_longest_idle" }),
    ]);
    expect(errors[0]!.message).toMatch(/95 of 100 file descriptors open \(fewer than 12 free\): closed the 5 connection\(s\) idle longest/);
    // Nothing idle is left: the shortage is still reported, once.
    expect(budget.check()).toBeDefined();
    expect(errors.map(limitRejectionOf).at(-1)).toMatchObject({ limit: "open_files", action: "none_idle" });
    unix.r.close();
    ws.r.close();
  });

  it("while the estimate is short, a newcomer takes the place of the longest-idle connection", () => {
    let open = 10;
    const budget = new DescriptorBudget({ limit: 100, count: () => open, intervalMs: 0 });
    const errors: Error[] = [];
    const closed: string[] = [];
    const unix = roster("unix", budget, errors, closed);
    for (let i = 0; i < 78; i++) unix.admit(`u${i}`);
    // 10 counted besides the connections and 78 connections leave the reserve (12) free; one more does not.
    expect(budget.short).toBe(false);
    unix.admit("u78");
    expect(budget.short).toBe(true);
    expect(closed).toEqual([]);
    expect(unix.admit("new")).toBeDefined();
    expect(closed).toEqual(["u0:shed"]);
    expect(limitRejectionOf(errors[0])).toMatchObject({ limit: "open_files", action: "closed_longest_idle" });
    open = 0;
    unix.r.close();
  });
});

describe("ConnectionRoster write-stall deadline", () => {
  it("closes a connection whose peer took none of its pending bytes for the deadline, in flight or not, and keeps one that progresses", async () => {
    const errors: Error[] = [];
    const closed: string[] = [];
    const r = new ConnectionRoster({
      transport: "unix",
      maxConnections: 10,
      writeStallMs: 200,
      descriptors: false,
      onerror: (e) => errors.push(e),
    });
    const stuck = { writableLength: 100, bytesWritten: 500 };
    const moving = { writableLength: 100, bytesWritten: 500 };
    const quiet = { writableLength: 0, bytesWritten: 500 };
    const a = r.admit(Number.POSITIVE_INFINITY, (reason) => closed.push(`stuck:${reason}`), "a")!;
    a.inFlight = 3;
    r.watchWrites(a, stuck);
    const b = r.admit(Number.POSITIVE_INFINITY, (reason) => closed.push(`moving:${reason}`), "b")!;
    r.watchWrites(b, moving);
    const c = r.admit(Number.POSITIVE_INFINITY, (reason) => closed.push(`quiet:${reason}`), "c")!;
    r.watchWrites(c, quiet);
    const started = Date.now();
    const timer = setInterval(() => {
      moving.bytesWritten += 10; // the peer takes a little now and then
      moving.writableLength = 100;
    }, 20);
    try {
      await until(() => closed.length > 0, "stalled connection closed", 30_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(200);
      expect(closed).toEqual(["stuck:stalled"]);
      const report = errors.map(limitRejectionOf)[0];
      expect(report).toMatchObject({ transport: "unix", limit: "outbound_stall", value: 200, action: "closed_write_stall", remote: "a" });
      expect(errors[0]!.message).toMatch(/took none of the 100 bytes waiting for it .*3 request\(s\) in flight fail/);
      const since = Date.now();
      await until(() => Date.now() - since > 600, "three more deadlines", 30_000);
      expect(closed).toEqual(["stuck:stalled"]);
      expect(r.size).toBe(2);
    } finally {
      clearInterval(timer);
      r.close();
    }
  }, 180_000);
});

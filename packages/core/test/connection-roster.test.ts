/** ConnectionRoster: room made at the cap, idle sweep, back-off on EMFILE, and caps from the descriptor limit. */
import { describe, expect, it } from "vitest";
import { ConnectionRoster, defaultMaxConnections, fileDescriptorLimit, limitRejectionOf } from "../src/index.js";
import { until } from "./wait.js";

function roster(maxConnections: number) {
  let now = 1_000;
  const errors: Error[] = [];
  const closed: string[] = [];
  const r = new ConnectionRoster({ transport: "unix", maxConnections, onerror: (e) => errors.push(e), now: () => now });
  const admit = (name: string, idleMs = Number.POSITIVE_INFINITY) => r.admit(idleMs, (reason) => closed.push(`${name}:${reason}`), name);
  return { r, errors, closed, admit, tick: (ms: number) => (now += ms), actions: () => errors.map((e) => limitRejectionOf(e)?.action) };
}

describe("ConnectionRoster", () => {
  it("at the cap closes the connection idle the longest with nothing in flight, and refuses only when all are busy", () => {
    const t = roster(3);
    const a = t.admit("a")!;
    t.tick(10);
    t.admit("b");
    t.tick(10);
    const c = t.admit("c")!;
    t.tick(10);
    a.lastActive += 25; // a spoke last: b is now idle the longest
    expect(t.admit("d")).toBeDefined();
    expect(t.closed).toEqual(["b:evicted"]);
    c.inFlight = 1;
    a.inFlight = 1;
    // d is the only idle one: it goes next.
    const e = t.admit("e")!;
    expect(t.closed).toEqual(["b:evicted", "d:evicted"]);
    expect(t.r.size).toBe(3);
    // Everyone busy: the newcomer is refused and nobody is closed.
    e.inFlight = 2;
    expect(t.admit("f")).toBeUndefined();
    expect(t.closed).toEqual(["b:evicted", "d:evicted"]);
    expect(t.actions()).toEqual(["closed_longest_idle", "closed_longest_idle", "refused"]);
    // An answer sent frees c: it makes room for the next newcomer.
    c.inFlight = 0;
    expect(t.admit("g")).toBeDefined();
    expect(t.closed).toEqual(["b:evicted", "d:evicted", "c:evicted"]);
    t.r.close();
  });

  it("closes connections past their idle time with nothing in flight, and reports each", async () => {
    const errors: Error[] = [];
    const closed: string[] = [];
    const r = new ConnectionRoster({ transport: "ws", maxConnections: 10, onerror: (e) => errors.push(e) });
    r.admit(100, (reason) => closed.push(`idle:${reason}`));
    const busy = r.admit(100, (reason) => closed.push(`busy:${reason}`))!;
    busy.inFlight = 1;
    // The sweep that closes the idle one has looked at the busy one too (same idle time).
    await until(() => closed.length > 0, "the idle connection closed by the sweep");
    expect(closed).toEqual(["idle:idle"]);
    expect(limitRejectionOf(errors[0])).toMatchObject({ transport: "ws", limit: "idle_timeout", value: 100, action: "closed_idle" });
    expect(r.size).toBe(1);
    r.close();
  });

  it("backs off on EMFILE with a growing pause, sheds idle connections, and ignores other errors", () => {
    const t = roster(10);
    for (const name of ["a", "b", "c", "d"]) {
      t.admit(name);
      t.tick(1);
    }
    expect(t.r.acceptFailed(Object.assign(new Error("accept EMFILE"), { code: "EMFILE" }))).toBe(true);
    expect(t.closed).toEqual(["a:shed", "b:shed"]);
    expect(t.r.backingOff).toBe(true);
    expect(t.admit("x")).toBeUndefined();
    t.tick(100);
    expect(t.r.backingOff).toBe(false);
    expect(t.r.acceptFailed(Object.assign(new Error("accept ENFILE"), { code: "ENFILE" }))).toBe(true);
    const values = t.errors
      .map(limitRejectionOf)
      .filter((r) => r?.action === "backed_off")
      .map((r) => r?.value);
    expect(values).toEqual([100, 200]);
    expect(t.r.acceptFailed(Object.assign(new Error("other"), { code: "ECONNABORTED" }))).toBe(false);
    t.r.close();
  });

  it("derives the default cap from the file-descriptor limit, with headroom", () => {
    expect(defaultMaxConnections(1024)).toBe(192);
    expect(defaultMaxConnections(1_048_576)).toBe(1024);
    expect(defaultMaxConnections(300)).toBe(32);
    expect(defaultMaxConnections(undefined)).toBe(1024);
    const limit = fileDescriptorLimit();
    expect(limit === undefined || (Number.isInteger(limit) && limit > 0)).toBe(true);
  });
});
